package ui

// This file runs the changes of the workspace (POST /workspace/change):
// one change (a visibility, an embargo, a collection to add to or take
// out of, deletion) applied to the works chosen on a page, or to every
// work that matches the list's filters, by Repository.ChangeWorks in the
// background as the user who asked, one work at a time, and a page that
// shows its progress and, at the end, each work the change was refused
// for with the reason (/workspace/runs/{run}). Every change is audited as
// the single change it is, with the run's name as the request, so the
// audit trail shows a run's changes together. The runs are kept in the
// memory of this server process, as the bulk ingests are: a run is seen
// on the server that ran it, a restart forgets it (the changes made stay
// made) and stops it where it was.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

const (
	// workspaceMaxRuns bounds the runs a server keeps (the oldest ended
	// one is forgotten first); workspaceMaxRunning those running at once.
	workspaceMaxRuns    = 64
	workspaceMaxRunning = 4
	// workspaceWait is how long a change's request waits for its run
	// before the browser is sent to the run's page (a change of the works
	// of one page is usually done by then).
	workspaceWait = 2 * time.Second
)

// workspaceRuns is the registry of runs; its zero value with now set is
// ready.
type workspaceRuns struct {
	now  func() time.Time // the server's clock
	mu   sync.Mutex
	runs []*workspaceRun
	wg   sync.WaitGroup
	// stop ends the runs (Close); nil until the first run.
	stop context.CancelFunc
	ctx  context.Context
}

// workspaceRun is one change being applied.
type workspaceRun struct {
	ID string
	// User is who started it (only they see it), Change the change's
	// value (workspaceChanges) and Target the collection or date it names.
	User           int64
	Change, Target string
	// Chosen is how many works were chosen (0: every match of Filters).
	Chosen  int
	Filters workspaceFilters
	// Plan is a batch edit's plan (Change "csv"), shown until confirmed.
	Plan   *shelfmark.BatchEditPlan
	done   chan struct{}
	caller shelfmark.Caller

	mu sync.Mutex
	// Started is when the run was started (zero: not yet).
	Started  time.Time
	progress shelfmark.WorkChangeProgress
	ended    time.Time
	err      string
}

// running reports whether the run was started and has not ended.
func (r *workspaceRun) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.Started.IsZero() && r.ended.IsZero()
}

// snapshot returns the run's progress, whether it ended, and its error.
func (r *workspaceRun) snapshot() (shelfmark.WorkChangeProgress, time.Time, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.progress
	p.Failures = slices.Clone(p.Failures)
	return p, r.ended, r.err
}

// applyFunc applies a run's change as the caller of ctx, telling its
// progress.
type applyFunc func(ctx context.Context, progress func(shelfmark.WorkChangeProgress)) (shelfmark.WorkChangeProgress, error)

// add registers a run of the caller of ctx, not yet started (a batch
// edit's preview waits for its confirmation so), forgetting the oldest
// run that is not running when the registry is full.
func (rs *workspaceRuns) add(ctx context.Context, run *workspaceRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	run.ID = newRunID()
	run.done = make(chan struct{})
	run.caller = *shelfmark.CallerFrom(ctx)
	run.caller.Request = "workspace-" + run.ID
	if len(rs.runs) >= workspaceMaxRuns {
		if i := slices.IndexFunc(rs.runs, func(r *workspaceRun) bool { return !r.running() }); i >= 0 {
			rs.runs = slices.Delete(rs.runs, i, i+1)
		}
	}
	rs.runs = append(rs.runs, run)
}

// launch starts a registered run in the background with the identity of
// the caller who registered it (a context of its own, so the request's
// end does not stop it). EUNAVAILABLE when workspaceMaxRunning runs are
// running; ECONFLICT when the run was started already.
func (rs *workspaceRuns) launch(run *workspaceRun, apply applyFunc) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	running := 0
	for _, r := range rs.runs {
		if r.running() {
			running++
		}
	}
	if running >= workspaceMaxRunning {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "%d changes of many works are running on this server; try again when one has ended.", running)
	}
	run.mu.Lock()
	started := !run.Started.IsZero()
	if !started {
		run.Started = rs.now()
	}
	run.mu.Unlock()
	if started {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "This change was started already.")
	}
	if rs.ctx == nil {
		rs.ctx, rs.stop = context.WithCancel(context.Background())
	}
	runCtx := shelfmark.WithCaller(rs.ctx, &run.caller)
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer close(run.done)
		p, err := apply(runCtx, func(p shelfmark.WorkChangeProgress) {
			run.mu.Lock()
			run.progress = p
			run.mu.Unlock()
		})
		run.mu.Lock()
		defer run.mu.Unlock()
		run.progress = p
		run.progress.Failures = slices.Clone(p.Failures)
		run.ended = rs.now()
		if err != nil {
			run.err = shelfmark.ErrorMessage(err)
			if errors.Is(err, context.Canceled) {
				run.err = "The server stopped the change before its end."
			}
		}
	}()
	return nil
}

// find returns the run id started by user, or nil.
func (rs *workspaceRuns) find(id string, user int64) *workspaceRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.runs {
		if r.ID == id && r.User == user {
			return r
		}
	}
	return nil
}

// close stops the runs and waits for them until ctx ends.
func (rs *workspaceRuns) close(ctx context.Context) {
	rs.mu.Lock()
	if rs.stop != nil {
		rs.stop()
	}
	rs.mu.Unlock()
	done := make(chan struct{})
	go func() { rs.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// workspaceChange handles POST /workspace/change: the change (change,
// with until for an embargo and target for a collection), applied to the
// works chosen (apply=chosen, each an id) or to every work that matches
// the filters sent with the form (apply=all). Deletion needs confirm. A
// form that is wrong comes back to the list with the reason.
func (s *Handler) workspaceChange(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := shelfmark.CallerFrom(ctx)
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Changing works takes a signed-in user: sign in.")
	}
	if err := shelfmark.RequireWrite(ctx, "change works"); err != nil {
		return err
	}
	f := r.PostForm
	filters := readWorkspaceFilters(f)
	run := &workspaceRun{User: c.User, Change: f.Get("change"), Filters: filters}
	ch, err := s.workspaceChangeOf(f, run)
	var ids []shelfmark.ID
	if err == nil {
		ids, err = workspaceChosen(f)
	}
	var q shelfmark.WorkspaceQuery
	if err == nil {
		q, err = filters.query()
	}
	if err != nil {
		return s.workspaceRefused(w, r, filters, err)
	}
	run.Chosen = len(ids)
	s.runs.add(ctx, run)
	err = s.runs.launch(run, func(ctx context.Context, progress func(shelfmark.WorkChangeProgress)) (shelfmark.WorkChangeProgress, error) {
		return s.deps.Resources.ChangeWorks(ctx, q, ids, ch, progress)
	})
	if err != nil {
		return err
	}
	return s.awaitRun(w, r, run)
}

// awaitRun waits a little for a run to end (workspaceWait), then sends
// the browser to its page.
func (s *Handler) awaitRun(w http.ResponseWriter, r *http.Request, run *workspaceRun) error {
	ctx := r.Context()
	select {
	case <-run.done:
	case <-time.After(workspaceWait):
	case <-ctx.Done():
	}
	http.Redirect(w, r, "/workspace/runs/"+run.ID, http.StatusSeeOther)
	return nil
}

// workspaceChosen reads the form's choice of works: the ids chosen
// (apply=chosen, at most MaxPageSize) or none for every match (apply=all).
func workspaceChosen(f url.Values) ([]shelfmark.ID, error) {
	switch f.Get("apply") {
	case "all":
		return nil, nil
	case "chosen", "":
	default:
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "apply: %q is neither the chosen works nor all that match.", f.Get("apply"))
	}
	raw := f["id"]
	if len(raw) == 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "No work was chosen: tick the works to change, or choose every work that matches.")
	}
	if len(raw) > shelfmark.MaxPageSize {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "%d works were chosen; at most %d are changed at once by choosing them (choose every work that matches instead).", len(raw), shelfmark.MaxPageSize)
	}
	ids := make([]shelfmark.ID, 0, len(raw))
	for _, v := range raw {
		id := shelfmark.ID(strings.TrimSpace(v))
		if id.Check() != nil {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "id: %q is not a work's id.", v)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// workspaceChangeOf reads the change of the form, and notes what it
// names on run.
func (s *Handler) workspaceChangeOf(f url.Values, run *workspaceRun) (shelfmark.WorkChange, error) {
	var ch shelfmark.WorkChange
	switch run.Change {
	case "public", "authenticated", "private":
		v := shelfmark.Visibility(run.Change)
		ch.Visibility = &v
	case "embargo":
		until := strings.TrimSpace(f.Get("until"))
		t, err := time.Parse(time.DateOnly, until)
		if err != nil {
			return ch, shelfmark.Errorf(shelfmark.EINVALID, "until: %q is not a date (YYYY-MM-DD); an embargo ends on a date.", until)
		}
		if !t.After(s.now()) {
			return ch, shelfmark.Errorf(shelfmark.EINVALID, "until: %s has passed; an embargo ends on a date ahead.", until)
		}
		run.Target = until
		e := &t
		ch.Embargo = &e
	case "lift":
		var none *time.Time
		ch.Embargo = &none
	case "add", "remove":
		target := shelfmark.ID(strings.TrimSpace(f.Get("target")))
		if target == "" {
			return ch, shelfmark.Errorf(shelfmark.EINVALID, "target: choose the collection to %s.", map[string]string{"add": "add the works to", "remove": "take the works out of"}[run.Change])
		}
		if target.Check() != nil {
			return ch, shelfmark.Errorf(shelfmark.EINVALID, "target: %q is not a collection's id.", target)
		}
		run.Target = string(target)
		if run.Change == "add" {
			ch.AddTo = target
		} else {
			ch.RemoveFrom = target
		}
	case "set":
		ch.Field = strings.TrimSpace(f.Get("field"))
		for _, v := range strings.Split(f.Get("values"), "|") {
			if v = strings.TrimSpace(v); v != "" {
				ch.Values = append(ch.Values, v)
			}
		}
		if err := ch.Check(); err != nil {
			return ch, err
		}
		run.Target = ch.Field + ": " + strings.Join(ch.Values, " | ")
	case "delete":
		if f.Get("confirm") != "1" {
			return ch, shelfmark.Errorf(shelfmark.EINVALID, "confirm: deleting works takes the box that says so ticked.")
		}
		ch.Delete = true
	default:
		return ch, shelfmark.Errorf(shelfmark.EINVALID, "change: %q is not a change; the changes are %s.", run.Change, strings.Join(workspaceChanges, ", "))
	}
	return ch, nil
}

// workspaceRefused shows the list again with the reason a change was
// refused (400).
func (s *Handler) workspaceRefused(w http.ResponseWriter, r *http.Request, f workspaceFilters, err error) error {
	if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		return err
	}
	return s.workspaceList(w, r, f, "", shelfmark.ErrorMessage(err))
}

// workspaceRunData is the content of /workspace/runs/{run}.
type workspaceRunData struct {
	Run      *workspaceRun
	Progress shelfmark.WorkChangeProgress
	Ended    bool
	Err      string
	// Done is how many works were changed or refused; Percent its share
	// of the chosen works (0 for every match, whose number is not known
	// ahead).
	Done, Percent int
	// TargetTitle names the collection of an add or remove.
	TargetTitle string
	// Back is the list the change was made from.
	Back string
	// Preview marks a batch edit's plan waiting for its confirmation;
	// Changed and Refused are its rows of each kind (at most
	// workspacePreviewRows each).
	Preview          bool
	Changed, Refused []shelfmark.BatchEditRow
}

// workspaceRunPage handles GET /workspace/runs/{run}: a run's progress,
// to the user who started it (404 to anyone else).
func (s *Handler) workspaceRunPage(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "A change's progress is shown to the user who made it: sign in.")
	}
	run := s.runs.find(r.PathValue("run"), c.User)
	if run == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "This server runs no such change of yours (a restart forgets them).")
	}
	p := s.page(w, r, "workspace.run.title")
	p.Nav = "workspace"
	prog, ended, errMsg := run.snapshot()
	d := &workspaceRunData{Run: run, Progress: prog, Ended: !ended.IsZero(), Err: errMsg, Done: prog.Changed + prog.Refused, Back: "/workspace"}
	if run.Chosen > 0 {
		d.Percent = 100 * d.Done / run.Chosen
	}
	if run.Plan != nil {
		run.mu.Lock()
		d.Preview = run.Started.IsZero()
		run.mu.Unlock()
		d.Changed, d.Refused = previewRows(run.Plan)
	}
	if v := run.Filters.values(); len(v) > 0 {
		d.Back += "?" + v.Encode()
	}
	if run.Change == "add" || run.Change == "remove" {
		d.TargetTitle = run.Target
		if col, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(run.Target)); err == nil {
			d.TargetTitle = titleOf(col)
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "workspace_run", p)
}
