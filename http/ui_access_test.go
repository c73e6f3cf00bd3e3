package http

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// TestUIFilesAccessAndRequests walks the whole flow on the pages, as the
// people involved use it: an editor closes a public work's files on its
// access page (the record stays open); a signed-out reader sees the
// record, a notice and a link to sign in, and no page; a signed-in reader
// asks for the files with a message; the collection's manager finds the
// request on the requests page and grants it until a date; the reader then
// sees the pages; the manager ends the access on the work's access page;
// a second request is refused with a reply, which the reader reads. Bad
// forms answer 400 and store nothing.
func TestUIFilesAccessAndRequests(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	c := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Theses")}})[0]
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{c.ID}, Metadata: titled("A thesis on harbours")}})[0]
	pages := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: titled("Title page")},
		{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: titled("p. 1")}})
	e.addUser("reader", shelfmark.ScopeWrite)
	e.addUser("keeper", shelfmark.ScopeWrite)
	e.grantRoles(c.ID, []api.GrantJSON{{Principal: "user:keeper", Role: "manager"}})
	path := "/works/" + string(w.ID)
	anonSees := func(id shelfmark.ID) bool {
		t.Helper()
		return e.do("GET", "/api/v1/resources/"+string(id), nil, anonymously...).Status == 200
	}

	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)
	p := admin.get(path + "/access")
	if p.Status != 200 || !strings.Contains(p.Body, `id="files-public" name="files" value="public" checked`) {
		t.Fatalf("the access page: %d %.3000s", p.Status, p.Body)
	}
	version := func() string { return strconv.FormatInt(find(t, e.testEnv, w.ID).Version, 10) }
	// bad forms store nothing
	for _, bad := range []url.Values{
		{"visibility": {"public"}, "files": {"everyone"}},
		{"visibility": {"public"}, "files": {"private"}, "files_embargo": {"soon"}},
		{"visibility": {"public"}, "files": {"private"}, "files_embargo": {"2001-01-01"}},
	} {
		bad.Set("version", version())
		if p := admin.post(path+"/access", bad); p.Status != 400 {
			t.Errorf("access form %v: %d, want 400", bad, p.Status)
		}
	}
	if !anonSees(pages[0].ID) {
		t.Fatal("a refused form closed the files")
	}
	until := time.Now().AddDate(1, 0, 0).UTC().Format(time.DateOnly)
	if p := admin.post(path+"/access", url.Values{"version": {version()}, "visibility": {"public"}, "files": {"private"}, "files_embargo": {until}}); p.Status != 303 {
		t.Fatalf("closing the files: %d %.2000s", p.Status, p.Body)
	}
	if !anonSees(w.ID) || anonSees(pages[0].ID) || anonSees(pages[1].ID) {
		t.Fatal("after the files were closed: the record is hidden, or a page shows")
	}
	if p := admin.get(path + "/access"); !strings.Contains(p.Body, `value="private" checked`) || !strings.Contains(p.Body, `name="files_embargo" type="date" value="`+until+`"`) {
		t.Fatalf("the access page does not show the files' access: %.4000s", p.Body)
	}

	// a signed-out reader: the record, the notice, the way to sign in
	anon := newVisitor(t, e.testEnv)
	p = anon.get(path)
	if p.Status != 200 || !strings.Contains(p.Body, "A thesis on harbours") || !strings.Contains(p.Body, `id="files-closed"`) ||
		!strings.Contains(p.Body, "closed until "+until) || !strings.Contains(p.Body, `/login?next=`) || strings.Contains(p.Body, "Title page") {
		t.Fatalf("the work page signed out: %d %.4000s", p.Status, p.Body)
	}

	// a signed-in reader asks
	reader := newVisitor(t, e.testEnv)
	reader.signIn("reader", "reader-password")
	p = reader.get(path)
	if !strings.Contains(p.Body, `action="/works/`+string(w.ID)+`/access-requests"`) {
		t.Fatalf("no request form for the reader: %.4000s", p.Body)
	}
	if p := reader.post(path+"/access-requests", url.Values{"message": {"For my own thesis on ports."}}); p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=accessrequested") {
		t.Fatalf("asking: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := reader.get(path + "?notice=accessrequested"); !strings.Contains(p.Body, "Your request was sent") || !strings.Contains(p.Body, "waiting for a decision") ||
		strings.Contains(p.Body, `/access-requests"`) {
		t.Fatalf("the work page after asking: %.4000s", p.Body)
	}
	// the reader sees no request to decide; the manager does
	if p := reader.get("/access-requests"); p.Status != 200 || strings.Contains(p.Body, "For my own thesis") {
		t.Fatalf("the reader's requests page: %d, shows the request: %v", p.Status, strings.Contains(p.Body, "For my own thesis"))
	}
	keeper := newVisitor(t, e.testEnv)
	keeper.signIn("keeper", "keeper-password")
	p = keeper.get("/access-requests")
	m := regexp.MustCompile(`action="/access-requests/(\d+)"`).FindStringSubmatch(p.Body)
	if p.Status != 200 || m == nil || !strings.Contains(p.Body, "For my own thesis on ports.") || !strings.Contains(p.Body, "reader asked on") ||
		!strings.Contains(p.Body, "A thesis on harbours") {
		t.Fatalf("the manager's requests page: %d %.4000s", p.Status, p.Body)
	}
	decide := "/access-requests/" + m[1]
	for _, bad := range []url.Values{{"decision": {"maybe"}}, {"decision": {"grant"}, "until": {"next week"}}} {
		if p := keeper.post(decide, bad); p.Status != 400 {
			t.Errorf("decision %v: %d, want 400", bad, p.Status)
		}
	}
	if p := reader.post(decide, url.Values{"decision": {"grant"}, "until": {until}}); p.Status != 403 {
		t.Errorf("the reader grants her own request: %d, want 403", p.Status)
	}
	last := time.Now().AddDate(0, 0, 14).UTC().Format(time.DateOnly)
	if p := keeper.post(decide, url.Values{"decision": {"grant"}, "until": {last}, "reply": {"Two weeks."}}); p.Status != 303 {
		t.Fatalf("granting: %d %.2000s", p.Status, p.Body)
	}
	if p := keeper.post(decide, url.Values{"decision": {"refuse"}}); p.Status != 409 {
		t.Errorf("deciding twice: %d, want 409", p.Status)
	}
	if p := keeper.get("/access-requests?state=granted"); !strings.Contains(p.Body, "Granted until "+last) {
		t.Errorf("the granted tab: %.4000s", p.Body)
	}
	if p := reader.get(path); strings.Contains(p.Body, `id="files-closed"`) || !strings.Contains(p.Body, "Title page") {
		t.Fatalf("the work page after the grant: %.4000s", p.Body)
	}
	// the manager ends it on the access page
	p = keeper.get(path + "/access")
	if !strings.Contains(p.Body, "reader, until "+last) || !strings.Contains(p.Body, `action="/works/`+string(w.ID)+`/access/revoke"`) {
		t.Fatalf("the access page lists no grant: %.4000s", p.Body)
	}
	if p := keeper.post(path+"/access/revoke", url.Values{"principal": {"user:reader"}}); p.Status != 303 {
		t.Fatalf("ending the access: %d", p.Status)
	}
	if p := reader.get(path); !strings.Contains(p.Body, `id="files-closed"`) {
		t.Fatal("the reader still reads the files after the access ended")
	}
	// asked again, refused with a reply
	reader.get(path)
	reader.post(path+"/access-requests", url.Values{"message": {"Please, again."}})
	p = keeper.get("/access-requests")
	m = regexp.MustCompile(`action="/access-requests/(\d+)"`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("the second request is not listed: %.3000s", p.Body)
	}
	if p := keeper.post("/access-requests/"+m[1], url.Values{"decision": {"refuse"}, "reply": {"Not before the defence."}}); p.Status != 303 {
		t.Fatalf("refusing: %d", p.Status)
	}
	if p := reader.get(path); !strings.Contains(p.Body, "was refused") || !strings.Contains(p.Body, "Not before the defence.") ||
		!strings.Contains(p.Body, `access-requests"`) {
		t.Fatalf("the work page after a refusal: %.4000s", p.Body)
	}
}

// TestUIDepositFilesClosed: a deposit whose form closes the files to
// signed-in readers until a date shows its record to everyone and its
// page to no one signed out; a file added later becomes a page as closed
// as the first; a choice that is not one, or a date that is not one, is a
// 400 that stores nothing.
func TestUIDepositFilesClosed(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	b := be.signedIn("writer")
	b.get("/deposit")
	if p := b.get("/deposit"); !strings.Contains(p.Body, `id="files-public" name="files_access" value="public" checked`) {
		t.Fatalf("the deposit form has no choice of who may read the files: %.3000s", p.Body)
	}
	until := time.Now().AddDate(0, 6, 0).UTC().Format(time.DateOnly)
	form := func(access, embargo string) url.Values {
		f := metaFields("title", "A closed thesis")
		f.Set("collection", string(be.C))
		f.Set("visibility", "public")
		f.Set("files_access", access)
		f.Set("files_embargo", embargo)
		return f
	}
	file := []namedBytes{{name: "thesis.txt", mediaType: "text/plain", data: []byte("the text of the thesis")}}
	for _, bad := range [][2]string{{"everyone", ""}, {"authenticated", "soon"}} {
		b.get("/deposit")
		if p := postDeposit(b, form(bad[0], bad[1]), file, true); p.Status != 400 {
			t.Errorf("files %v: %d, want 400", bad, p.Status)
		}
	}
	b.get("/deposit")
	p := postDeposit(b, form("authenticated", until), file, true)
	id := locationID(t, p)
	anonSees := func(id shelfmark.ID) bool {
		t.Helper()
		return be.do("GET", "/api/v1/resources/"+string(id), nil, anonymously...).Status == 200
	}
	kids := children(t, be.testEnv, id)
	if len(kids) != 1 || !anonSees(id) || anonSees(kids[0]) {
		t.Fatalf("after the deposit: pages %v, record shown %v, page shown %v", kids, anonSees(id), len(kids) == 1 && anonSees(kids[0]))
	}
	// (the page is shown private while its embargo runs)
	if page := find(t, be.testEnv, kids[0]); page.Embargo == nil || page.Embargo.UTC().Format(time.DateOnly) != until {
		t.Fatalf("the page's own access: %s until %v", page.Visibility, page.Embargo)
	}
	if a, ok, err := be.repo.FilesAccess(shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test")), id); err != nil || !ok || a.Visibility != shelfmark.Authenticated {
		t.Fatalf("the files' access as stored: %+v, %v, %v", a, ok, err)
	}
	b.get("/works/" + string(id) + "/pages")
	if p := b.postMultipart("/works/"+string(id)+"/files", nil, map[string]map[string][]byte{"files": {"appendix.txt": []byte("an appendix")}}); p.Status != 303 {
		t.Fatalf("adding a file: %d", p.Status)
	}
	kids = children(t, be.testEnv, id)
	if len(kids) != 2 {
		t.Fatalf("pages after adding: %v", kids)
	}
	if page := find(t, be.testEnv, kids[1]); page.Embargo == nil || page.Embargo.UTC().Format(time.DateOnly) != until || anonSees(kids[1]) {
		t.Fatalf("the added page's own access: %s until %v", page.Visibility, page.Embargo)
	}
}
