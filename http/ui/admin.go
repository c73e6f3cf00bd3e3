package ui

// This file serves the administrators' dashboard: the job queues with
// their counts, rates, failures and the buttons that pause, resume and
// retry them, the bulk ingests in progress, the storage in use and the
// accounts, kept live by a stream of server-sent events (static/admin.js;
// without script the page is a snapshot with a link to read it again).
// Users, tokens and the audit trail have pages of their own
// (admin_accounts.go). Every page and form is for administrators only,
// and every change goes through the same JobQueue and AccountService
// calls as the REST API, which judge the caller themselves.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// adminPageSize is the rows of a page of jobs, users or audit entries.
const adminPageSize = 50

// uiAdminRoutes are the routes of this file and of admin_accounts.go.
func (s adminPages) uiAdminRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/admin", Handle: s.uiWrap(s.adminDashboard)},
		{Method: "GET", Pattern: "/admin/events", Handle: s.uiWrap(s.adminEvents)},
		{Method: "GET", Pattern: "/admin/jobs/{queue}", Handle: s.uiWrap(s.adminJobs)},
		{Method: "POST", Pattern: "/admin/queues/{queue}/pause", Handle: s.uiForm(s.adminQueueAction("pause"))},
		{Method: "POST", Pattern: "/admin/queues/{queue}/resume", Handle: s.uiForm(s.adminQueueAction("resume"))},
		{Method: "POST", Pattern: "/admin/queues/{queue}/retry", Handle: s.uiForm(s.adminQueueAction("retry"))},
		{Method: "GET", Pattern: "/admin/users", Handle: s.uiWrap(s.adminUsers)},
		{Method: "POST", Pattern: "/admin/users", Handle: s.uiForm(s.adminAddUser)},
		{Method: "POST", Pattern: "/admin/users/{name}/disabled", Handle: s.uiForm(s.adminSetDisabled)},
		{Method: "POST", Pattern: "/admin/users/{name}/groups", Handle: s.uiForm(s.adminSetGroups)},
		{Method: "GET", Pattern: "/admin/tokens", Handle: s.uiWrap(s.adminTokens)},
		{Method: "POST", Pattern: "/admin/tokens", Handle: s.uiForm(s.adminCreateToken)},
		{Method: "POST", Pattern: "/admin/tokens/{id}/revoke", Handle: s.uiForm(s.adminRevokeToken)},
		{Method: "GET", Pattern: "/admin/audit", Handle: s.uiWrap(s.adminAudit)},
		{Method: "GET", Pattern: "/admin/fixity", Handle: s.uiWrap(s.adminFixity)}, // admin_fixity.go
		{Method: "GET", Pattern: "/admin/usage", Handle: s.uiWrap(s.adminUsage)},   // admin_usage.go
		{Method: "GET", Pattern: "/admin/usage.csv", Handle: s.uiWrap(s.adminUsageCSV)},
	}
}

// requireAdminPage refuses a caller who is not an administrator with an
// admin-scoped credential: a signed-out browser is sent to sign in, anyone
// else gets a 403 page. (The engine's calls refuse them too; this keeps
// the parts of a page that are not engine calls, such as the ingest runs,
// from anyone else.)
func requireAdminPage(r *http.Request) error {
	c, err := kit.SignedIn(r, "The administration pages")
	if err != nil {
		return err
	}
	if !c.IsAdmin() {
		return shelfmark.Errorf(shelfmark.EFORBIDDEN, "The administration pages are for administrators (signed in, or with an admin-scoped token).")
	}
	return nil
}

// adminQueue is one queue on the dashboard.
type adminQueue struct {
	shelfmark.QueueCount
	// Rate is the jobs finished a second over the last minute, written
	// for the page's language ("" until it is known).
	Rate string
	// Limit is the queue's backlog limit ("" when there is none or the
	// server has no back-pressure); Over is set while uploads wait for the
	// queue; Refused counts the uploads this server refused for it.
	Limit   string
	Over    bool
	Refused int64
}

// adminRun is one bulk ingest on the dashboard.
type adminRun struct {
	ingestRunView
	// StateText is the run's state in the page's language.
	StateText string
	// Processed is Done + Failed; CountText says all three counts in
	// words.
	Processed int64
	CountText string
}

// adminStatus is the live part of the dashboard: what the page shows at
// first and each event updates.
type adminStatus struct {
	// NoQueue is set when the server has no job queue.
	NoQueue bool
	Queues  []adminQueue
	// Backlog is set when the server holds uploads back for its queues'
	// backlogs: the table then has their limits and refusals.
	Backlog bool
	Runs    []adminRun
	// Spark is the throughput sparkline (points of an SVG polyline, in a
	// box of sparkW × sparkH), SparkText says what it shows.
	Spark     string
	SparkText string
	// At is when the status was read, for the page's language.
	At string
	// Requests is the admission of requests (admin_requests.go).
	Requests adminRequests
}

// adminDashboardData is the content of the dashboard.
type adminDashboardData struct {
	// Section is the part of the administration pages shown (for their
	// navigation): "dashboard", "jobs", "users", "tokens" or "audit".
	Section string
	Status  *adminStatus
	Storage storageUse
	// Users counts the accounts read (at most maxUserCount: More is set
	// when there are more); Admins and Disabled count among them.
	Users, Admins, Disabled int
	More                    bool
	// Damaged counts the files fixity found damaged (admin_fixity.go).
	Damaged        int64
	SparkW, SparkH int
	// Facets are the repository's search facets, in their order
	// (kit.Deps.SearchFacets).
	Facets []adminFacet
}

// adminFacet is a search facet as the dashboard lists it: its name, its
// label on the search page and the predicates of its values (none for a
// built-in facet).
type adminFacet struct {
	Name, Label string
	Predicates  []string
}

// maxUserCount bounds the accounts the dashboard counts.
const maxUserCount = 1000

// sparkline's box.
const (
	sparkW = 240
	sparkH = 48
)

// maxRuns bounds the ingest runs the dashboard lists.
const maxRuns = 20

// adminDashboard handles GET /admin.
func (s adminPages) adminDashboard(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	p := s.page(w, r, "admin.title")
	p.Nav = "admin"
	p.Notice = s.adminNotice(p, r)
	st, err := s.adminStatus(r, p)
	if err != nil {
		return err
	}
	d := &adminDashboardData{Section: "dashboard", Status: st, Storage: s.storage(r.Context()), SparkW: sparkW, SparkH: sparkH,
		Damaged: s.damagedFiles(r.Context())}
	for _, f := range s.deps.SearchFacets {
		d.Facets = append(d.Facets, adminFacet{Name: f.Name, Label: searchFacetLabel(p, f), Predicates: f.Predicates})
	}
	if acc, err := s.deps.AccountService(); err == nil {
		users, err := acc.Users(r.Context(), 0, maxUserCount)
		if err != nil {
			return err
		}
		d.Users, d.More = len(users), len(users) == maxUserCount
		for _, u := range users {
			if u.Admin {
				d.Admins++
			}
			if u.Disabled {
				d.Disabled++
			}
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "admin", p)
}

// adminStatus reads the live part of the dashboard.
func (s adminPages) adminStatus(r *http.Request, p *uiPage) (*adminStatus, error) {
	st := &adminStatus{}
	now := s.now()
	st.At = now.UTC().Format("15:04:05 UTC")
	jq, err := s.deps.JobQueue()
	if err != nil {
		st.NoQueue = true
	} else {
		counts, err := jq.QueueCounts(r.Context())
		if err != nil {
			return nil, err
		}
		rates := s.dash.observe(now, s.dash.doneCounts(s.opts.JobSeconds))
		var refused map[string]int64
		if s.opts.Backlog != nil {
			st.Backlog, refused = true, s.opts.Backlog.Refused()
		}
		for _, c := range counts {
			q := adminQueue{QueueCount: c}
			if rates.Known {
				q.Rate = p.T("admin.rate", formatRate(p.Lang, rates.PerQueue[c.Queue]))
			}
			if b := s.opts.Backlog; b != nil {
				if n := b.Limit(c.Queue); n > 0 {
					q.Limit = strconv.FormatInt(n, 10)
				}
				q.Over, q.Refused = b.Over(c.Queue), refused[c.Queue]
			}
			st.Queues = append(st.Queues, q)
		}
		st.Spark, st.SparkText = sparkline(p, rates)
	}
	st.Requests = s.adminRequestStatus(p, now)
	runs := bulkPages(s).ingestRuns()
	if len(runs) > maxRuns {
		runs = runs[:maxRuns]
	}
	for _, run := range runs {
		st.Runs = append(st.Runs, adminRun{ingestRunView: run, StateText: runState(p, run.State), Processed: run.Done + run.Failed,
			CountText: p.T("admin.run.count", run.Done, run.Failed, run.Total)})
	}
	return st, nil
}

// runState names a run's state in the page's language.
func runState(p *uiPage, state string) string {
	switch state {
	case "preview":
		return p.T("admin.run.preview")
	case "running":
		return p.T("admin.run.running")
	case "done":
		return p.T("admin.run.done")
	case "failed":
		return p.T("admin.run.failed")
	case "cancelled":
		return p.T("admin.run.cancelled")
	}
	return state
}

// formatRate writes a rate with one decimal, in the language's way.
func formatRate(lang string, v float64) string {
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
	if lang == "de" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// sparkline draws the rates of the last minute as the points of a
// polyline, scaled to their highest, and says in words what it shows.
func sparkline(p *uiPage, r jobRates) (string, string) {
	if !r.Known || len(r.Series) == 0 {
		return "", p.T("admin.spark.none")
	}
	top := 0.0
	for _, v := range r.Series {
		top = max(top, v)
	}
	n := len(r.Series)
	return polyline(r.Series, top), p.T("admin.spark.text", int(math.Round(r.Span)), formatRate(p.Lang, r.Series[n-1]), formatRate(p.Lang, top))
}

// adminEvent is the data of one "status" event: the texts of the
// elements the page marks with data-k, the flags of those it marks with
// data-show and data-hide, the ingest runs and the sparkline.
type adminEvent struct {
	Text  map[string]string `json:"text"`
	Flags map[string]bool   `json:"flags"`
	Runs  []adminEventRun   `json:"runs"`
	Spark string            `json:"spark"`
	// ReqAdmitted and ReqRefused are the request chart's lines.
	ReqAdmitted string `json:"reqAdmitted"`
	ReqRefused  string `json:"reqRefused"`
}

// adminEventRun is one ingest run of an event.
type adminEventRun struct {
	ID        string `json:"id"`
	User      string `json:"user"`
	Started   string `json:"started"`
	State     string `json:"state"`
	Done      int64  `json:"done"`
	Failed    int64  `json:"failed"`
	Total     int64  `json:"total"`
	Processed int64  `json:"processed"`
	Count     string `json:"count"`
}

// event turns the status into the data of an event.
func (st *adminStatus) event() *adminEvent {
	ev := &adminEvent{Text: map[string]string{"at": st.At, "spark": st.SparkText}, Flags: map[string]bool{}, Spark: st.Spark, Runs: []adminEventRun{}}
	for _, q := range st.Queues {
		k := q.Queue + "."
		for name, n := range map[string]int64{"queued": q.Queued, "ready": q.Ready, "running": q.Running, "failed": q.Failed} {
			ev.Text[k+name] = strconv.FormatInt(n, 10)
		}
		ev.Text[k+"rate"] = q.Rate
		ev.Text[k+"refusedup"] = strconv.FormatInt(q.Refused, 10)
		ev.Flags[k+"paused"] = q.Paused
		ev.Flags[k+"over"] = q.Over
		ev.Flags[k+"failed"] = q.Failed > 0
	}
	st.Requests.requestEvent(ev)
	ev.Flags["runs"] = len(st.Runs) > 0
	for _, run := range st.Runs {
		ev.Runs = append(ev.Runs, adminEventRun{ID: run.ID, User: run.User, Started: run.Started.UTC().Format("2006-01-02 15:04 UTC"),
			State: run.StateText, Done: run.Done, Failed: run.Failed, Total: run.Total, Processed: run.Processed, Count: run.CountText})
	}
	return ev
}

// adminEvents handles GET /admin/events: a stream of server-sent events,
// a "status" event at once and then every few seconds while something
// changed (a comment line otherwise, to keep the connection alive). The
// stream ends after a few minutes, or when the server shuts down, with an
// "end" event; the browser's EventSource then opens a new one, so
// connections of closed tabs do not pile up.
func (s adminPages) adminEvents(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	p := s.page(w, r, "")
	st, err := s.adminStatus(r, p)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")       // a proxy in front must not hold events back
	h.Set(gzhttp.HeaderNoCompression, "1") // small events, each sent at once
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	rc := http.NewResponseController(w)
	send := func(chunk string) error {
		// every write has a deadline of its own: the server's write
		// timeout is for responses that end sooner. A connection's
		// deadline is by the wall clock the network reads, not by
		// Deps.Now (a test's clock would set it in the past).
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if _, err := fmt.Fprint(w, chunk); err != nil {
			return err
		}
		return rc.Flush()
	}
	status := func(st *adminStatus) (string, error) {
		b, err := json.Marshal(st.event())
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	last, err := status(st)
	if err != nil {
		return err
	}
	if err := send("retry: 5000\nevent: status\ndata: " + last + "\n\n"); err != nil {
		return nil // the browser went away
	}
	tick := time.NewTicker(s.dash.streamEvery())
	defer tick.Stop()
	end := time.NewTimer(s.dash.streamFor())
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-end.C:
			_ = send("event: end\ndata: {}\n\n")
			return nil
		case <-s.dash.done():
			_ = send("event: end\ndata: {}\n\n")
			return nil
		case <-tick.C:
		}
		st, err := s.adminStatus(r, p)
		if err != nil {
			if r.Context().Err() == nil {
				s.log.Warn("dashboard events", "err", err)
			}
			return nil
		}
		data, err := status(st)
		if err != nil {
			return nil
		}
		chunk := ": ping\n\n"
		if data != last {
			chunk, last = "event: status\ndata: "+data+"\n\n", data
		}
		if err := send(chunk); err != nil {
			return nil
		}
	}
}

// adminJobsData is the content of a page of a queue's jobs.
type adminJobsData struct {
	Section string
	Queue   string
	// State is the jobs' state: "failed", "queued" or "running".
	State string
	Jobs  []adminJob
	// Next is the after of the next page ("" on the last one).
	Next string
	// Back is this page's address, for the forms to return to.
	Back string
}

// adminJob is one job on the page.
type adminJob struct {
	*shelfmark.Job
	ResourceID shelfmark.ID
}

// adminJobs handles GET /admin/jobs/{queue}?state=failed&after=: a page
// of the queue's jobs in a state (failed by default), by id, with why
// they failed and a button to retry each, or all.
func (s adminPages) adminJobs(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	jq, q, err := s.deps.NamedQueue(r)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	f := shelfmark.JobFilter{Queue: q, State: shelfmark.JobState(qv.Get("state")), Limit: adminPageSize}
	switch f.State {
	case "":
		f.State = shelfmark.JobFailed
	case shelfmark.JobQueued, shelfmark.JobRunning, shelfmark.JobFailed:
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "state must be queued, running or failed, not %q.", clipText(string(f.State), 40))
	}
	if v := qv.Get("after"); v != "" {
		if f.After, err = strconv.ParseInt(v, 10, 64); err != nil || f.After < 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "after must be a job id, not %q.", clipText(v, 40))
		}
	}
	jobs, err := jq.ListJobs(r.Context(), f)
	if err != nil {
		return err
	}
	titleKey := map[shelfmark.JobState]string{shelfmark.JobFailed: "admin.jobs.title.failed", shelfmark.JobQueued: "admin.jobs.title.queued",
		shelfmark.JobRunning: "admin.jobs.title.running"}[f.State]
	p := s.page(w, r, titleKey, q)
	p.Nav = "admin"
	p.Notice = s.adminNotice(p, r)
	d := &adminJobsData{Section: "jobs", Queue: q, State: string(f.State), Back: "/admin/jobs/" + q + "?state=" + string(f.State)}
	for _, j := range jobs {
		d.Jobs = append(d.Jobs, adminJob{Job: j, ResourceID: s.deps.Resources.IDs().Encode(j.Resource)})
	}
	if len(jobs) == f.Limit {
		d.Next = strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "admin_jobs", p)
}

// clipText shortens a value quoted in a message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// maxRetryIDs bounds the jobs one retry form names.
const maxRetryIDs = 1000

// adminQueueAction handles POST /admin/queues/{queue}/{pause,resume,retry}:
// the queue is paused or resumed, or its failed jobs (those the form names
// as id, or all) put back; the browser goes back to the page it came
// from (the form's back) with a notice.
func (s adminPages) adminQueueAction(action string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := requireAdminPage(r); err != nil {
			return err
		}
		jq, q, err := s.deps.NamedQueue(r)
		if err != nil {
			return err
		}
		notice := url.Values{"queue": {q}}
		switch action {
		case "pause", "resume":
			if err := jq.PauseQueue(r.Context(), q, action == "pause"); err != nil {
				return err
			}
			notice.Set("notice", action+"d")
		case "retry":
			vs := r.PostForm["id"]
			if len(vs) > maxRetryIDs {
				return shelfmark.Errorf(shelfmark.EINVALID, "id: %d jobs; at most %d are retried at once.", len(vs), maxRetryIDs)
			}
			var ids []int64
			for _, v := range vs {
				id, err := strconv.ParseInt(v, 10, 64)
				if err != nil || id <= 0 {
					return shelfmark.Errorf(shelfmark.EINVALID, "id: %q is not a job id.", clipText(v, 40))
				}
				ids = append(ids, id)
			}
			n, err := jq.RetryFailedJobs(r.Context(), q, ids)
			if err != nil {
				return err
			}
			notice.Set("notice", "retried")
			notice.Set("n", strconv.FormatInt(n, 10))
		}
		http.Redirect(w, r, withNotice(r.PostForm.Get("back"), "/admin", notice), http.StatusSeeOther)
		return nil
	}
}

// withNotice returns back (a path of this site, see returnPath, else
// def) with the notice's parameters in its query.
func withNotice(back, def string, notice url.Values) string {
	back = kit.ReturnPathOr(back, def)
	if back == "/" {
		back = def
	}
	u, err := url.Parse(back)
	if err != nil {
		u = &url.URL{Path: def}
	}
	q := u.Query()
	for _, k := range []string{"notice", "queue", "n", "name"} {
		q.Del(k)
	}
	for k, v := range notice {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// adminNotice is the one-line notice a page shows after a form sent the
// browser back to it; the query names one of a fixed set of notices, so a
// link cannot make a page say anything else.
func (s adminPages) adminNotice(p *uiPage, r *http.Request) string {
	qv := r.URL.Query()
	queue := qv.Get("queue")
	if !shelfmark.ValidQueue(queue) {
		queue = ""
	}
	name := clipText(qv.Get("name"), kit.MaxNameBytes)
	n, _ := strconv.ParseInt(qv.Get("n"), 10, 64)
	switch qv.Get("notice") {
	case "paused":
		if queue != "" {
			return p.T("admin.notice.paused", queue)
		}
	case "resumed":
		if queue != "" {
			return p.T("admin.notice.resumed", queue)
		}
	case "retried":
		if queue != "" {
			return p.T("admin.notice.retried", n, queue)
		}
	case "added":
		return p.T("admin.notice.added", name)
	case "disabled":
		return p.T("admin.notice.disabled", name)
	case "enabled":
		return p.T("admin.notice.enabled", name)
	case "groups":
		return p.T("admin.notice.groups", name)
	case "revoked":
		return p.T("admin.notice.revoked", name)
	}
	return ""
}
