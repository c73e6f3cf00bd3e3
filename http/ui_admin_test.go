package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/ui"
)

// adminJobsEnv makes an environment whose characterize queue holds two
// jobs (a work with two files), and returns it with the repository's
// system context.
func adminJobsEnv(t *testing.T) (*testEnv, context.Context) {
	t.Helper()
	e := newEnv(t, Options{})
	ctx := context.Background()
	work, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "p.tif", MediaType: "image/tiff", Size: 1, SHA256: fmt.Sprintf("%064x", i), Use: "original"}}); err != nil {
			t.Fatal(err)
		}
	}
	return e, ctx
}

// queueCount returns the counts of a queue as the engine reports them.
func queueCount(t *testing.T, e *testEnv, queue string) shelfmark.QueueCount {
	t.Helper()
	counts, err := e.repo.QueueCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if c.Queue == queue {
			return c
		}
	}
	t.Fatalf("no queue %s in %+v", queue, counts)
	return shelfmark.QueueCount{}
}

// adminVisitor is a browser signed in as the environment's administrator.
func adminVisitor(t *testing.T, e *testEnv) *visitor {
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	return b
}

// TestUIAdminAccess: the dashboard shows an administrator the queues and
// their counts; a signed-out browser is sent to sign in, a signed-in
// reader who is no administrator gets a 403 page, on every admin page.
func TestUIAdminAccess(t *testing.T) {
	e, _ := adminJobsEnv(t)
	e.addUser("ann", shelfmark.ScopeWrite)
	pages := []string{"/admin", "/admin/events", "/admin/jobs/characterize?state=failed", "/admin/users", "/admin/tokens?user=ann", "/admin/audit"}

	anon := newVisitor(t, e)
	for _, path := range pages {
		p := anon.get(path)
		if p.Status != 303 || p.Header.Get("Location") != "/login?next="+url.QueryEscape(path) {
			t.Errorf("anonymous GET %s: %d Location %q", path, p.Status, p.Header.Get("Location"))
		}
	}
	ann := newVisitor(t, e)
	ann.signIn("ann", "ann-password")
	for _, path := range pages {
		if p := ann.get(path); p.Status != 403 || !strings.Contains(p.Body, "for administrators") {
			t.Errorf("non-admin GET %s: %d %.300s", path, p.Status, p.Body)
		}
	}
	if p := ann.get("/"); strings.Contains(p.Body, `href="/admin"`) {
		t.Error("the navigation offers a non-admin the administration")
	}
	// a non-admin's forms change nothing
	ann.get("/")
	if p := ann.post("/admin/queues/ocr/pause", url.Values{"back": {"/admin"}}); p.Status != 403 {
		t.Errorf("non-admin pause: %d", p.Status)
	}
	if p := ann.post("/admin/users", url.Values{"name": {"mallory"}, "admin": {"1"}}); p.Status != 403 {
		t.Errorf("non-admin add user: %d", p.Status)
	}
	if queueCount(t, e, "ocr").Paused {
		t.Error("a non-admin paused a queue")
	}

	b := adminVisitor(t, e)
	p := b.get("/admin")
	if p.Status != 200 {
		t.Fatalf("GET /admin: %d %.500s", p.Status, p.Body)
	}
	for _, want := range []string{`<h1>Administration</h1>`, `data-k="characterize.queued">2<`, `data-k="ocr.queued">0<`,
		`href="/admin/jobs/characterize?state=failed"`, `action="/admin/queues/ocr/pause"`, "No bulk ingest", "users.", `data-events="/admin/events"`,
		`aria-current="page">Administration`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(p.Body, "<script>") || strings.Contains(p.Body, " style=") || strings.Contains(p.Body, " onclick=") {
		t.Error("the dashboard has inline script or style")
	}
	// the storage: the database file and the file system of the store
	if !strings.Contains(p.Body, "(sqlite)") || !strings.Contains(p.Body, "File system of the content store") {
		t.Errorf("dashboard storage: %s", regexp.MustCompile(`(?s)<section aria-labelledby="h-storage">.*?</section>`).FindString(p.Body))
	}
	// in German
	if p := b.get("/admin?lang=de"); !strings.Contains(p.Body, "<h1>Verwaltung</h1>") || !strings.Contains(p.Body, "Auftragswarteschlangen") {
		t.Errorf("German dashboard: %.300s", p.Body)
	}
}

// TestUIAdminQueues: pausing and resuming a queue from the dashboard
// changes what the engine reports; a failed job is listed with its
// reason and retried by its button; a forged form changes nothing.
func TestUIAdminQueues(t *testing.T) {
	e, ctx := adminJobsEnv(t)
	b := adminVisitor(t, e)
	b.get("/admin")

	// a forged form: no token, or another browser's
	other := newVisitor(t, e)
	other.get("/login")
	for _, token := range []string{"", other.csrf} {
		if p := b.post("/admin/queues/ocr/pause", url.Values{"csrf": {token}}); p.Status != 403 || !strings.Contains(p.Body, "reload the page") {
			t.Errorf("forged pause (token %q): %d %.300s", token, p.Status, p.Body)
		}
	}
	if queueCount(t, e, "ocr").Paused {
		t.Fatal("a forged form paused the queue")
	}

	p := b.post("/admin/queues/ocr/pause", url.Values{"back": {"/admin"}})
	if p.Status != 303 || p.Header.Get("Location") != "/admin?notice=paused&queue=ocr" {
		t.Fatalf("pause: %d %q %.300s", p.Status, p.Header.Get("Location"), p.Body)
	}
	if !queueCount(t, e, "ocr").Paused {
		t.Fatal("ocr not paused")
	}
	p = b.get(p.Header.Get("Location"))
	if !strings.Contains(p.Body, "The queue ocr is paused") {
		t.Errorf("no notice after pausing: %.1000s", p.Body)
	}
	if !regexp.MustCompile(`<span class="badge paused" data-show="ocr.paused">`).MatchString(p.Body) ||
		!regexp.MustCompile(`action="/admin/queues/ocr/resume" data-show="ocr.paused">`).MatchString(p.Body) {
		t.Error("the dashboard does not show ocr paused with its resume button")
	}
	if p := b.post("/admin/queues/ocr/resume", url.Values{"back": {"//evil.example/"}}); p.Status != 303 || p.Header.Get("Location") != "/admin?notice=resumed&queue=ocr" {
		t.Fatalf("resume: %d %q", p.Status, p.Header.Get("Location"))
	}
	if queueCount(t, e, "ocr").Paused {
		t.Fatal("ocr still paused")
	}
	if p := b.post("/admin/queues/nosuch/pause", nil); p.Status != 404 {
		t.Errorf("pause of no queue: %d", p.Status)
	}

	// a failed job, with its reason, and its retry
	jobs, err := e.repo.ClaimJobs(ctx, shelfmark.Claim{Queue: "characterize", Worker: "w", N: 1, Now: timeNowPlus(), Lease: timeNowPlus()})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	if err := e.repo.FailJob(ctx, jobs[0], fmt.Errorf("identify p.tif: <corrupt>")); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/admin"); !strings.Contains(p.Body, `data-k="characterize.failed">1<`) {
		t.Error("the dashboard does not count the failed job")
	}
	p = b.get("/admin/jobs/characterize?state=failed")
	id := fmt.Sprint(jobs[0].ID)
	if p.Status != 200 || !strings.Contains(p.Body, "identify p.tif: &lt;corrupt&gt;") || !strings.Contains(p.Body, `name="id" value="`+id+`"`) {
		t.Fatalf("failures page: %d %.2000s", p.Status, p.Body)
	}
	for _, bad := range []string{"?state=bogus", "?after=x", "?after=-1"} {
		if p := b.get("/admin/jobs/characterize" + bad); p.Status != 400 {
			t.Errorf("jobs page %s: %d", bad, p.Status)
		}
	}
	if p := b.get("/admin/jobs/nosuch"); p.Status != 404 {
		t.Errorf("jobs of no queue: %d", p.Status)
	}
	if p := b.post("/admin/queues/characterize/retry", url.Values{"id": {"x"}}); p.Status != 400 {
		t.Errorf("retry of a bad id: %d", p.Status)
	}
	p = b.post("/admin/queues/characterize/retry", url.Values{"id": {id}, "back": {"/admin/jobs/characterize?state=failed"}})
	if p.Status != 303 || p.Header.Get("Location") != "/admin/jobs/characterize?n=1&notice=retried&queue=characterize&state=failed" {
		t.Fatalf("retry: %d %q", p.Status, p.Header.Get("Location"))
	}
	if c := queueCount(t, e, "characterize"); c.Failed != 0 || c.Queued != 2 {
		t.Fatalf("after retry: %+v", c)
	}
	if p := b.get(p.Header.Get("Location")); !strings.Contains(p.Body, "1 failed jobs put back in the queue characterize") || !strings.Contains(p.Body, "No jobs in this state.") {
		t.Errorf("after retry: %.1500s", p.Body)
	}
	// the queued jobs are listed too
	if p := b.get("/admin/jobs/characterize?state=queued"); strings.Count(p.Body, "<code>") != 2 {
		t.Errorf("queued jobs page: %.1500s", p.Body)
	}
}

// TestUIAdminUsers: an administrator adds a user, sets its groups,
// disables it (its token stops working) and enables it again.
func TestUIAdminUsers(t *testing.T) {
	e := newEnv(t, Options{})
	b := adminVisitor(t, e)
	p := b.get("/admin/users")
	if p.Status != 200 || !strings.Contains(p.Body, "<th scope=\"row\">admin</th>") {
		t.Fatalf("users page: %d %.1000s", p.Status, p.Body)
	}
	p = b.post("/admin/users", url.Values{"name": {"bea"}, "password": {"bea-password"}, "groups": {"staff, readers"}})
	if p.Status != 303 || p.Header.Get("Location") != "/admin/users?name=bea&notice=added" {
		t.Fatalf("add user: %d %q %.300s", p.Status, p.Header.Get("Location"), p.Body)
	}
	p = b.get(p.Header.Get("Location"))
	if !strings.Contains(p.Body, "The user bea was added.") || !strings.Contains(p.Body, `value="readers, staff"`) {
		t.Errorf("users page after adding: %.3000s", p.Body)
	}
	// a refused form is shown again with why, as it was filled in (but
	// the password)
	p = b.post("/admin/users", url.Values{"name": {"bea"}, "password": {"secret-pw"}, "groups": {"x"}, "admin": {"1"}})
	if p.Status != 409 || !strings.Contains(p.Body, `There is a user &#34;bea&#34; already.`) || !strings.Contains(p.Body, `id="new-name" name="name" value="bea"`) ||
		!strings.Contains(p.Body, `name="admin" value="1" checked`) || strings.Contains(p.Body, "secret-pw") {
		t.Errorf("adding bea again: %d %.3000s", p.Status, p.Body)
	}
	if p := b.post("/admin/users", url.Values{"name": {"<b>"}}); p.Status != 400 || !strings.Contains(p.Body, `value="&lt;b&gt;"`) || !strings.Contains(p.Body, `aria-invalid="true"`) {
		t.Errorf("a bad name: %d", p.Status)
	}
	tok := newToken(t, e.accounts, "bea", shelfmark.ScopeWrite)
	e.do("GET", "/api/v1/me", nil, as(tok)...).want(t, 200)

	if p := b.post("/admin/users/bea/groups", url.Values{"groups": {"editors"}}); p.Status != 303 {
		t.Fatalf("set groups: %d %.300s", p.Status, p.Body)
	}
	var me struct{ Groups []string }
	json.Unmarshal(e.do("GET", "/api/v1/me", nil, as(tok)...).want(t, 200).Body, &me)
	if len(me.Groups) != 1 || me.Groups[0] != "editors" {
		t.Errorf("groups after setting: %v", me.Groups)
	}

	if p := b.post("/admin/users/bea/disabled", url.Values{"disabled": {"1"}}); p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=disabled") {
		t.Fatalf("disable: %d %q", p.Status, p.Header.Get("Location"))
	}
	e.do("GET", "/api/v1/me", nil, as(tok)...).want(t, 401)
	if p := b.get("/admin/users"); !strings.Contains(p.Body, `<input type="hidden" name="disabled" value="0">`) {
		t.Error("the users page offers no enabling of the disabled user")
	}
	if p := b.post("/admin/users/bea/disabled", url.Values{"disabled": {"maybe"}}); p.Status != 400 {
		t.Errorf("disabled=maybe: %d", p.Status)
	}
	if p := b.post("/admin/users/nobody/disabled", url.Values{"disabled": {"1"}}); p.Status != 404 {
		t.Errorf("disable nobody: %d", p.Status)
	}
	if p := b.post("/admin/users/bea/disabled", url.Values{"disabled": {"0"}}); p.Status != 303 {
		t.Fatalf("enable: %d", p.Status)
	}
	e.do("GET", "/api/v1/me", nil, as(tok)...).want(t, 200)
	if p := b.get("/admin/users?after=x"); p.Status != 400 {
		t.Errorf("users after=x: %d", p.Status)
	}
}

// TestUIAdminUsersPaging: the users page is read a page at a time.
func TestUIAdminUsersPaging(t *testing.T) {
	e := newEnv(t, Options{})
	for i := 0; i < adminPageSize+3; i++ {
		if _, err := e.accounts.AddUser(context.Background(), fmt.Sprintf("u%03d", i), "", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := adminVisitor(t, e)
	p := b.get("/admin/users")
	next := regexp.MustCompile(`href="(/admin/users\?after=[0-9]+)" rel="next"`).FindStringSubmatch(p.Body)
	if n := strings.Count(p.Body, `<th scope="row">`); n != adminPageSize || next == nil {
		t.Fatalf("first page: %d users, next %v", n, next)
	}
	p = b.get(next[1])
	if n := strings.Count(p.Body, `<th scope="row">`); n != 4 || strings.Contains(p.Body, `rel="next"`) || !strings.Contains(p.Body, ">u052<") {
		t.Fatalf("second page: %d users %.300s", n, p.Body)
	}
}

// TestUIAdminTokens: a token made from the page is shown once, works,
// is listed by its hint only, and stops working once revoked.
func TestUIAdminTokens(t *testing.T) {
	e := newEnv(t, Options{})
	e.addUser("cat", shelfmark.ScopeWrite)
	b := adminVisitor(t, e)
	p := b.get("/admin/tokens?user=cat")
	if p.Status != 200 || !strings.Contains(p.Body, "API tokens of cat") {
		t.Fatalf("tokens page: %d %.500s", p.Status, p.Body)
	}
	p = b.post("/admin/tokens", url.Values{"user": {"cat"}, "scope": {"read"}, "expires": {"30d"}, "note": {"<harvester>"}})
	if p.Status != 201 {
		t.Fatalf("create token: %d %.500s", p.Status, p.Body)
	}
	m := regexp.MustCompile(`id="secret" class="mono" value="(smk_[^"]+)"`).FindStringSubmatch(p.Body)
	if m == nil || !strings.Contains(p.Body, "shown only this once") || !strings.Contains(p.Body, "&lt;harvester&gt;") {
		t.Fatalf("the new token's page: %.2000s", p.Body)
	}
	if cc := p.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the secret's page may be kept: Cache-Control %q", cc)
	}
	secret := m[1]
	var me struct{ User, Scope string }
	json.Unmarshal(e.do("GET", "/api/v1/me", nil, as(secret)...).want(t, 200).Body, &me)
	if me.User != "cat" || me.Scope != "read" {
		t.Errorf("the new token is %+v", me)
	}
	p = b.get("/admin/tokens?user=cat")
	if strings.Contains(p.Body, secret) || strings.Contains(p.Body, secret[len(secret)-12:]) {
		t.Fatal("the tokens page shows the secret")
	}
	key := regexp.MustCompile(`action="/admin/tokens/([0-9]+)/revoke"`).FindAllStringSubmatch(p.Body, -1)
	if len(key) != 2 || !strings.Contains(p.Body, "&lt;harvester&gt;") {
		t.Fatalf("tokens listed: %v %.2000s", key, p.Body)
	}
	// bad input
	for _, f := range []url.Values{{"user": {"cat"}, "expires": {"yesterday"}, "note": {"n1"}}, {"user": {"cat"}, "scope": {"root"}, "note": {"n2"}},
		{"user": {"cat"}, "note": {strings.Repeat("x", 201)}}} {
		p := b.post("/admin/tokens", f)
		if p.Status != 400 || !strings.Contains(p.Body, `class="error-message" role="alert"`) || !strings.Contains(p.Body, `name="note" value="`+f.Get("note")+`"`) {
			t.Errorf("create token %v: %d %.2000s", f, p.Status, p.Body)
		}
	}
	if p := b.post("/admin/tokens", url.Values{"user": {"nobody"}}); p.Status != 404 {
		t.Errorf("a token of nobody: %d", p.Status)
	}
	// revoking: the newest token is listed first
	p = b.post("/admin/tokens/"+key[0][1]+"/revoke", url.Values{"user": {"cat"}})
	if p.Status != 303 || p.Header.Get("Location") != "/admin/tokens?name=cat&notice=revoked&user=cat" {
		t.Fatalf("revoke: %d %q %.300s", p.Status, p.Header.Get("Location"), p.Body)
	}
	e.do("GET", "/api/v1/me", nil, as(secret)...).want(t, 401)
	if p := b.get(p.Header.Get("Location")); !strings.Contains(p.Body, "Revoked") || !strings.Contains(p.Body, "The token of cat was revoked.") {
		t.Errorf("after revoking: %.2000s", p.Body)
	}
	if p := b.post("/admin/tokens/x/revoke", url.Values{"user": {"cat"}}); p.Status != 404 {
		t.Errorf("revoke token x: %d", p.Status)
	}
}

// TestUIAdminAudit: the audit trail is listed newest first, filtered by
// actor and resource, a page at a time.
func TestUIAdminAudit(t *testing.T) {
	e := newEnv(t, Options{})
	c, err := e.accounts.Authenticate(context.Background(), e.admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := shelfmark.WithCaller(context.Background(), c)
	for i := 0; i < adminPageSize+2; i++ {
		if _, err := e.accounts.AddUser(ctx, fmt.Sprintf("a%03d", i), "", false, nil); err != nil {
			t.Fatal(err)
		}
	}
	b := adminVisitor(t, e)
	p := b.get("/admin/audit")
	if p.Status != 200 || !strings.Contains(p.Body, "<code>user.add</code>") || !strings.Contains(p.Body, "user a051") {
		t.Fatalf("audit page: %d %.2000s", p.Status, p.Body)
	}
	// newest first: the last user added comes before the first
	if i, k := strings.Index(p.Body, "user a051"), strings.Index(p.Body, "user a010"); i < 0 || k < 0 || i > k {
		t.Errorf("not newest first: a051 at %d, a010 at %d", i, k)
	}
	next := regexp.MustCompile(`href="(/admin/audit\?cursor=[0-9]+)" rel="next"`).FindStringSubmatch(p.Body)
	if next == nil {
		t.Fatal("no next page")
	}
	if p := b.get(strings.ReplaceAll(next[1], "&amp;", "&")); p.Status != 200 || !strings.Contains(p.Body, "user a000") {
		t.Errorf("older entries: %d", p.Status)
	}
	if p := b.get("/admin/audit?actor=nobody"); !strings.Contains(p.Body, "No entries.") {
		t.Error("the actor filter lets others' entries through")
	}
	if p := b.get("/admin/audit?actor=admin&after=2000-01-01"); !strings.Contains(p.Body, "user a051") {
		t.Error("the filters hide the admin's entries")
	}
	for _, bad := range []string{"?after=yesterday", "?resource=not-an-id!", "?cursor=x"} {
		if p := b.get("/admin/audit" + bad); p.Status != 400 {
			t.Errorf("audit %s: %d", bad, p.Status)
		}
	}
}

// TestUIAdminEvents: the event stream sends the counts at once, keeps
// sending while it lasts, and ends.
func TestUIAdminEvents(t *testing.T) {
	e, _ := adminJobsEnv(t)
	e.srv.ui.SetEventTimes(400*time.Millisecond, 20*time.Millisecond)
	b := adminVisitor(t, e)
	p := b.get("/admin/events") // reads until the server ends the stream
	if p.Status != 200 || p.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("events: %d %q %.300s", p.Status, p.Header.Get("Content-Type"), p.Body)
	}
	if !strings.HasPrefix(p.Body, "retry: 5000\nevent: status\ndata: {") || !strings.HasSuffix(p.Body, "event: end\ndata: {}\n\n") {
		t.Fatalf("events: %q", p.Body)
	}
	first := strings.SplitN(strings.SplitN(p.Body, "data: ", 2)[1], "\n", 2)[0]
	var ev adminEvent
	if err := json.Unmarshal([]byte(first), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Text["characterize.queued"] != "2" || ev.Text["ocr.failed"] != "0" || ev.Flags["ocr.paused"] || ev.Flags["runs"] {
		t.Errorf("first event: %+v", ev)
	}
	// a HEAD request ends at once (with the stream's hour to run)
	e.srv.ui.SetEventTimes(time.Hour, 20*time.Millisecond)
	req, err := http.NewRequest("HEAD", e.ts.URL+"/admin/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := b.send(req); p.Status != 200 || p.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" || p.Body != "" {
		t.Errorf("HEAD: %d %q %q", p.Status, p.Header.Get("Content-Type"), p.Body)
	}
	// the client reads no body of a HEAD: the server's metrics tell
	// whether the handler ended
	ended := `shelfmark_http_requests_total{code="200",method="HEAD",route="GET /admin/events"} 1`
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(string(e.do("GET", "/metrics", nil).Body), ended); {
		if time.Now().After(deadline) {
			t.Fatal("the HEAD request's handler is still running after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// more than the first event came (a status when something changed,
	// a comment otherwise), however slow the machine
	if n := strings.Count(p.Body, "event: status") + strings.Count(p.Body, ": ping"); n < 2 {
		t.Errorf("only %d events in %q", n, p.Body)
	}
}

// TestAdminDoneCounts: the dashboard reads the workers' finished jobs
// from the metrics.
func TestAdminDoneCounts(t *testing.T) {
	// the dashboard reads the workers' finished jobs from the metrics
	m := NewMetrics(nil, nil)
	m.ObserveJob("ocr", "done", time.Millisecond)
	m.ObserveJob("ocr", "done", time.Millisecond)
	m.ObserveJob("ocr", "failed", time.Millisecond)
	if got := ui.DoneCounts(m.jobSeconds); got["ocr"] != 2 {
		t.Errorf("done counts %v", got)
	}
}

// TestUIAdminStorage: the dashboard shows the database's size on both
// backends (the file and its log for SQLite, pg_database_size for
// PostgreSQL) and the file system of the content store.
func TestUIAdminStorage(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		b := adminVisitor(t, e.testEnv)
		p := b.get("/admin")
		storage := regexp.MustCompile(`(?s)<section aria-labelledby="h-storage">.*?</section>`).FindString(p.Body)
		if !regexp.MustCompile(`<dd>[0-9.]+ [kMG]?B \(` + backend + `\)</dd>`).MatchString(storage) {
			t.Errorf("no database size: %s", storage)
		}
		if !strings.Contains(storage, "File system of the content store") || !regexp.MustCompile(`used of [0-9.]+ [kMGTP]?B`).MatchString(storage) {
			t.Errorf("no file system of the content store: %s", storage)
		}
	})
}

// TestUIAdminEventsShutdown: an open event stream ends when the server
// shuts down, instead of holding the shutdown up until it would have
// ended.
func TestUIAdminEventsShutdown(t *testing.T) {
	e := newEnv(t, Options{})
	e.srv.ui.SetEventTimes(time.Hour, 0)
	b := adminVisitor(t, e)
	req, err := http.NewRequest("GET", e.ts.URL+"/admin/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *b.c
	c.Timeout = time.Minute // far beyond what ending takes, far short of the stream's hour
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || line != "retry: 5000\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	if err := e.srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(rd)
	if err != nil || !strings.HasSuffix(string(rest), "event: end\ndata: {}\n\n") {
		t.Fatalf("after shutdown: %v %.300q", err, rest)
	}
}
