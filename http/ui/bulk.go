package ui

// This file serves the interface's bulk ingest from a CSV manifest, with a
// preview: GET /bulk is the upload form (the manifest, and a zip of its
// files or a folder under one of the server's import roots); POST /bulk
// stages them and shows at /bulk/{run} what the manifest would create,
// row by row, before anything is stored, and which rows were stored before
// as which works; POST /bulk/{run}/start ingests it in the background as
// the user who uploaded it (the engine's access policy judges every work),
// storing the rows stored before anyway when the form's "anyway" box is
// ticked, and /bulk/{run} then shows the progress, live through GET
// /bulk/{run}/progress with script, by reloading without, and the items
// skipped as stored before with the works they were stored as.
// A run is seen by its owner and the administrators only (404 to anyone
// else); the registry of runs is the server process's own (bulk_runs.go).

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/ui/staging"
	"github.com/shelfmark/shelfmark/ingest"
)

// uiBulkRoutes are the routes of this file.
func (s bulkPages) uiBulkRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/bulk", Handle: s.uiWrap(s.bulkPage)},
		{Method: "POST", Pattern: "/bulk", Handle: s.uiWrap(s.bulkUpload)},
		{Method: "GET", Pattern: "/bulk/{run}", Handle: s.uiWrap(s.bulkRunPage)},
		{Method: "GET", Pattern: "/bulk/{run}/progress", Handle: s.bulkProgress},
		{Method: "POST", Pattern: "/bulk/{run}/start", Handle: s.uiForm(s.bulkStart)},
		{Method: "POST", Pattern: "/bulk/{run}/cancel", Handle: s.uiForm(s.bulkCancel)},
	}
}

// ingestRunView is a bulk ingest started from the interface, as the
// administrators' dashboard lists it.
type ingestRunView struct {
	ID      string
	User    string
	Started time.Time
	// State is "preview", "running", "done", "failed" or "cancelled".
	State  string
	Total  int64 // rows of the manifest
	Done   int64 // items stored
	Failed int64 // items refused
	// Skipped counts items stored before (by an earlier run).
	Skipped int64
	// URL is the run's page.
	URL string
}

// ingestRuns lists the bulk ingests this server knows of, newest first.
func (s bulkPages) ingestRuns() []ingestRunView {
	runs := s.bulk.list()
	out := make([]ingestRunView, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.view())
	}
	return out
}

// view is the run as lists show it: a run being checked is a preview, one
// whose manifest cannot be read has failed.
func (r *bulkRun) view() ingestRunView {
	st := r.status()
	v := ingestRunView{ID: r.ID, User: r.OwnerName, Started: r.Created, State: st.State, Total: st.Total(),
		Done: st.Stats.Stored, Failed: st.Stats.Failed, Skipped: st.Stats.Skipped, URL: "/bulk/" + r.ID}
	switch st.State {
	case bulkStateChecking:
		v.State = bulkStatePreview
	case bulkStateInvalid:
		v.State = bulkStateFailed
	case bulkStatePreview:
		v.Failed = st.Preview.Failed
	}
	if !st.Started.IsZero() {
		v.Started = st.Started
	}
	return v
}

// bulkWriter refuses a caller who may not write: signed out (401, which
// sends a browser to sign in) or with a read-only credential (403).
func bulkWriter(c *shelfmark.Caller) error {
	switch {
	case !c.Authenticated():
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Sign in to ingest in bulk.")
	case !c.MayWrite():
		return shelfmark.Errorf(shelfmark.EFORBIDDEN, "Your credential may only read; a bulk ingest needs one that may write.")
	}
	return nil
}

// bulkFormData is the content of the upload form.
type bulkFormData struct {
	// Roots are the import roots a server path may lie in.
	Roots []string
	// MaxUpload and MaxExpand are the caps of an upload and of what its
	// zip holds unpacked.
	MaxUpload, MaxExpand int64
	// Runs are the caller's runs, newest first.
	Runs []ingestRunView
}

// bulkPage handles GET /bulk: the form, and the caller's runs.
func (s bulkPages) bulkPage(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if err := bulkWriter(c); err != nil {
		return err
	}
	if err := s.deps.Resources.CheckDepositRight(r.Context()); err != nil {
		return err
	}
	p := s.page(w, r, "bulk.title")
	p.Nav = "bulk"
	d := &bulkFormData{Roots: s.opts.ImportRoots, MaxUpload: s.bulkUploadLimit(), MaxExpand: s.bulkExpandLimit()}
	for _, run := range s.bulk.list() {
		if run.Owner == c.User {
			d.Runs = append(d.Runs, run.view())
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "bulk", p)
}

// bulkUpload handles POST /bulk: the upload is staged and checked, and
// the browser goes on to the preview (303). Whatever is refused leaves
// nothing behind. A manifest whose check takes longer than checkWait is
// checked on in the background, and its page shows how far.
func (s bulkPages) bulkUpload(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if err := bulkWriter(c); err != nil {
		return err
	}
	// nothing is staged for a caller who may deposit nowhere, or whose
	// quota is reached (see quota.go)
	if err := s.deps.Resources.CheckDepositRight(r.Context()); err != nil {
		return err
	}
	meter, err := s.newStageMeter(r.Context())
	if err != nil {
		return err
	}
	defer meter.release()
	id, dir, err := s.bulk.newRunDir(s.opts.StagingDir)
	if err != nil {
		return err
	}
	kept := false
	defer func() {
		if !kept {
			os.RemoveAll(dir)
		}
	}()
	f, err := s.bulkStageForm(w, r, dir, meter)
	if err != nil {
		return err
	}
	if f.manifest == "" {
		return shelfmark.Errorf(shelfmark.EINVALID, "Choose a CSV manifest to upload.")
	}
	if f.zip != "" && f.path != "" {
		return shelfmark.Errorf(shelfmark.EINVALID, "Give either a zip of the files or a server path, not both.")
	}
	if err := staging.CheckManifest(f.manifest); err != nil {
		return err
	}
	if f.manifestName == "" || f.manifestName == "." || f.manifestName == string(filepath.Separator) {
		f.manifestName = "manifest.csv"
	}
	if f.collection != "" && staging.CheckCollection(r.Context(), s.deps.Resources, f.collection) != "" {
		return shelfmark.Errorf(shelfmark.EINVALID, "There is no collection %q that you may see; give the id from its page's address (/collections/ID).", f.collection)
	}
	run := &bulkRun{ID: id, Owner: c.User, OwnerName: c.Name, Created: s.now(), ManifestName: f.manifestName,
		Collection: f.collection, dir: dir, manifest: f.manifest, state: bulkStateChecking}
	switch {
	case f.path != "":
		if run.root, err = s.bulkImportPath(f.path); err != nil {
			return err
		}
		run.Source, run.fromPath = f.path, true
	default:
		run.root = filepath.Join(dir, "files")
		if err := os.Mkdir(run.root, 0o700); err != nil {
			return err
		}
		if f.zip != "" {
			if err := s.bulkUnzip(f.zip, run.root, meter); err != nil {
				return err
			}
			if fi, err := os.Stat(f.zip); err == nil && os.Remove(f.zip) == nil {
				meter.free(fi.Size())
			}
			run.Source = "zip"
		}
	}
	run.bytes = meter.used
	if err := s.bulk.add(run); err != nil {
		return err
	}
	kept = true // the run's check removes its files if it must
	done := s.bulk.check(context.WithoutCancel(r.Context()), run, s)
	// Only a check seen to end within the wait decides the answer here; one
	// that ends later (even a moment later, before the state is read
	// below) is reported on the run's page, where the browser goes.
	checked := false
	if wait := s.bulk.checkWait; wait >= 0 {
		if wait == 0 {
			wait = bulkCheckWait
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
			checked = true
		case <-t.C:
		case <-r.Context().Done():
		}
	}
	run.mu.Lock()
	state, checkErr := run.state, run.checkErr
	run.mu.Unlock()
	if checked && state == bulkStateInvalid {
		s.bulk.remove(run) // refused at once: nothing is kept
		return checkErr
	}
	http.Redirect(w, r, "/bulk/"+id, http.StatusSeeOther)
	return nil
}

// bulkRunData is the content of a run's page.
type bulkRunData struct {
	Run    *bulkRun
	Status bulkStatus
	// Owner is set when the caller uploaded the run (and may start it).
	Owner bool
	// Processed counts the items read so far; Percent is its share of
	// the total; Rate is items a second.
	Processed int64
	Percent   int
	Rate      string
	// Live is set while the run is checked or ingested (the page then
	// follows its progress).
	Live bool
	// Failures are the first failures (the counts cover all).
	Failures []bulkFailureJSON
	// Skips are the first items skipped as stored before.
	Skips []bulkSkipJSON
}

// bulkRunPage handles GET /bulk/{run}: the preview before the start, the
// progress after.
func (s bulkPages) bulkRunPage(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Sign in to see bulk ingests.")
	}
	run, err := s.bulk.get(r.PathValue("run"), c)
	if err != nil {
		return err
	}
	st := run.status()
	d := &bulkRunData{Run: run, Status: st, Owner: run.Owner == c.User, Live: st.Live(), Failures: bulkFailures(st.Stats.Failures),
		Skips: bulkSkips(st.Stats.Skips)}
	title, tmpl := "bulk.run.title", "bulkrun"
	if st.State == bulkStatePreview {
		title, tmpl = "bulk.preview.title", "bulkpreview"
	}
	p := s.page(w, r, title, run.ManifestName)
	d.Processed, d.Percent, d.Rate = bulkProgressOf(st, p.Lang, s.now())
	p.Nav, p.Data = "bulk", d
	return s.render(w, r, http.StatusOK, tmpl, p)
}

// bulkProgressOf computes a run's progress: items read (while checking,
// the works read so far), their share of the total in percent, and the
// rate in items a second ("" before the start).
func bulkProgressOf(st bulkStatus, lang string, now time.Time) (int64, int, string) {
	if st.State == bulkStateChecking {
		return st.Checked, 0, ""
	}
	done := st.Stats.Stored + st.Stats.Skipped + st.Stats.Failed
	total := st.Total()
	pct := 100
	if total > 0 {
		pct = int(min(100, done*100/total))
	}
	if st.State == bulkStateRunning && pct == 100 && done < total {
		pct = 99
	}
	rate := ""
	if !st.Started.IsZero() {
		end := st.Finished
		if end.IsZero() {
			end = now
		}
		if secs := end.Sub(st.Started).Seconds(); secs > 0 {
			rate = bulkRate(lang, float64(st.Stats.Stored+st.Stats.Skipped)/secs)
		}
	}
	return done, pct, rate
}

// bulkRate writes a rate with three significant digits or so, with the
// decimal sign of the language.
func bulkRate(lang string, r float64) string {
	prec := 2
	switch {
	case r >= 100:
		prec = 0
	case r >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(r, 'f', prec, 64)
	if lang == "de" {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// bulkProgressJSON is the answer of GET /bulk/{run}/progress.
type bulkProgressJSON struct {
	State     string `json:"state"`
	Total     int64  `json:"total"`
	Processed int64  `json:"processed"`
	Stored    int64  `json:"stored"`
	Skipped   int64  `json:"skipped"`
	Failed    int64  `json:"failed"`
	Files     int64  `json:"files"`
	Bytes     int64  `json:"bytes"`
	Percent   int    `json:"percent"`
	// Rate is items stored (or skipped) a second, as text.
	Rate string `json:"rate"`
	// Summary and StateText are the page's lines, in the page's language.
	Summary   string `json:"summary"`
	StateText string `json:"stateText"`
	Error     string `json:"error,omitempty"`
	// Failures are the first bad items (up to 100).
	Failures []bulkFailureJSON `json:"failures"`
	// Skips are the first items skipped as stored before (up to 100);
	// Anyway counts the works stored anyway beside works stored before.
	Skips  []bulkSkipJSON `json:"skips"`
	Anyway int64          `json:"anyway"`
	// Done is set once the run has ended (done, failed, cancelled, or its
	// manifest refused); a preview has not.
	Done bool `json:"done"`
}

// bulkStateKey is the catalog key of a run's state.
func bulkStateKey(state string) string {
	return "bulk.state." + state
}

// bulkFailureJSON is a bad item: its source identifier ("" for a row
// without one), its row and why.
type bulkFailureJSON struct {
	Key    string `json:"key"`
	Row    int    `json:"row,omitempty"`
	Reason string `json:"reason"`
	// Label names the item for a person: its source identifier, or its
	// row in the page's language (set by the progress answer).
	Label string `json:"label,omitempty"`
}

// bulkSkipJSON is an item skipped as stored before: its row, source
// identifier ("" for a row without one) and the work it was stored as
// ("" when the caller may not see it), with that work's page.
type bulkSkipJSON struct {
	Row    int    `json:"row"`
	Key    string `json:"key"`
	ID     string `json:"id,omitempty"`
	URL    string `json:"url,omitempty"`
	Anyway bool   `json:"anyway,omitempty"`
}

// bulkSkips are the first 100 skipped items, as pages show them.
func bulkSkips(ss []ingest.Skip) []bulkSkipJSON {
	out := make([]bulkSkipJSON, 0, min(len(ss), 100))
	for _, s := range ss[:min(len(ss), 100)] {
		j := bulkSkipJSON{Row: s.Row, Key: staging.SourceID(s.Key), ID: string(s.ID), Anyway: s.Anyway}
		if s.ID != "" {
			j.URL = "/works/" + string(s.ID)
		}
		out = append(out, j)
	}
	return out
}

// bulkFailures are the first 100 failures, as pages show them.
func bulkFailures(fs []ingest.Failure) []bulkFailureJSON {
	out := make([]bulkFailureJSON, 0, min(len(fs), 100))
	for _, f := range fs[:min(len(fs), 100)] {
		out = append(out, bulkFailureJSON{Key: staging.SourceID(f.Key), Row: f.Row, Reason: f.Reason})
	}
	return out
}

// bulkProgress handles GET /bulk/{run}/progress, which the run's page
// polls.
func (s bulkPages) bulkProgress(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Sign in to see bulk ingests.")
	}
	run, err := s.bulk.get(r.PathValue("run"), c)
	if err != nil {
		return err
	}
	st := run.status()
	lang := s.ui.catalogs.Negotiate(w, r)
	p := &uiPage{Lang: lang, msgs: s.ui.catalogs.Messages(lang)}
	done, pct, rate := bulkProgressOf(st, lang, s.now())
	out := bulkProgressJSON{State: st.State, Total: st.Total(), Processed: done, Stored: st.Stats.Stored, Skipped: st.Stats.Skipped,
		Failed: st.Stats.Failed, Files: st.Stats.Files, Bytes: st.Stats.Bytes, Percent: pct, Rate: rate,
		Summary:   p.T("bulk.run.summary", done, st.Total(), st.Stats.Stored, st.Stats.Skipped, st.Stats.Failed),
		StateText: p.T(bulkStateKey(st.State)), Error: st.Err, Failures: bulkFailures(st.Stats.Failures),
		Skips: bulkSkips(st.Stats.Skips), Anyway: st.Stats.Anyway,
		Done: !st.Live() && st.State != bulkStatePreview}
	if st.State == bulkStateChecking {
		out.Summary = p.T("bulk.check.summary", st.Checked)
	}
	for i, f := range out.Failures {
		out.Failures[i].Label = f.Key
		if f.Key == "" && f.Row > 0 {
			out.Failures[i].Label = p.T("bulk.run.row", f.Row)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	return kit.WriteJSON(w, http.StatusOK, out)
}

// bulkStart handles POST /bulk/{run}/start: the owner starts the ingest,
// which acts as her (the request's caller, kept past the request); the
// field anyway=1 stores the works stored before anyway.
func (s bulkPages) bulkStart(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	run, err := s.bulk.get(r.PathValue("run"), c)
	if err != nil {
		return err
	}
	if run.Owner != c.User {
		return shelfmark.Errorf(shelfmark.EFORBIDDEN, "Only %s, who uploaded this bulk ingest, may start it.", run.OwnerName)
	}
	if err := s.bulk.start(context.WithoutCancel(r.Context()), run, s, r.PostFormValue("anyway") == "1"); err != nil {
		return err
	}
	http.Redirect(w, r, "/bulk/"+run.ID, http.StatusSeeOther)
	return nil
}

// bulkCancel handles POST /bulk/{run}/cancel: a preview is discarded, a
// running ingest stops (the works stored so far stay).
func (s bulkPages) bulkCancel(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	run, err := s.bulk.get(r.PathValue("run"), c)
	if err != nil {
		return err
	}
	if err := run.stop(); err != nil {
		return err
	}
	http.Redirect(w, r, "/bulk/"+run.ID, http.StatusSeeOther)
	return nil
}
