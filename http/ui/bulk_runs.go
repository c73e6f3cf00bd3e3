package ui

// This file keeps the bulk ingests started from the web interface: a
// registry of runs in the memory of this server process. A run is made by
// an upload (its manifest and files staged on disk), checked (the manifest
// read to its end: the preview; in the background when it takes longer
// than the upload's request waits), then started (ingest.Run in the
// background, as the user who started it), and is watched until it ends.
// The registry is not shared between the processes that serve one
// database and does not outlive the process: a run is seen on the server
// that made it, and a restart forgets every run (the works it stored stay,
// and ingesting the same manifest again skips them by their source keys).
// It keeps at most bulkMaxRuns runs, forgetting the oldest that is neither
// being checked nor running.

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/ui/staging"
	"github.com/shelfmark/shelfmark/ingest"
)

const (
	// bulkMaxRuns bounds the runs a server keeps; bulkMaxRunning those
	// being checked or running when one is started.
	bulkMaxRuns    = 64
	bulkMaxRunning = 4
	// bulkPreviewTTL is how long a preview stays (the previews a user
	// and the server keep staged are Options.MaxBulkPreviewsPerUser and
	// MaxBulkPreviews).
	bulkPreviewTTL = 24 * time.Hour
	// bulkMaxFailures bounds the failures a run keeps for its page (the
	// counts cover all).
	bulkMaxFailures = 1000
)

// Run states.
const (
	bulkStateChecking  = "checking" // the manifest is being read
	bulkStateInvalid   = "invalid"  // the manifest cannot be read
	bulkStatePreview   = "preview"
	bulkStateRunning   = "running"
	bulkStateDone      = "done"
	bulkStateFailed    = "failed"
	bulkStateCancelled = "cancelled"
)

// bulkRuns is the registry of runs. Its zero value is ready: the staging
// directory is made on first use.
type bulkRuns struct {
	now    func() time.Time // the server's clock
	mu     sync.Mutex
	dir    string // this process's staging directory, "" until first use
	runs   []*bulkRun
	wg     sync.WaitGroup // the runs' goroutines
	closed bool
	// checkWait is how long an upload waits for its check before the
	// browser is sent to the run's page (default bulkCheckWait; negative:
	// not at all, for tests).
	checkWait time.Duration
	// rate caps the works a second a run stores (0: no cap; for tests that
	// need a run to last).
	rate float64
	// staged and userStaged cap the runs holding staged files (being
	// checked or previews), on the server and per user (0: the defaults
	// of Options).
	staged, userStaged int
	// inflight holds, by user, the bytes uploads being staged have
	// reserved (see stageMeter).
	inflight map[int64]int64
}

// bulkCheckWait is how long an upload waits for the check of its manifest:
// a small manifest's preview (or refusal) is the upload's answer, a large
// one is checked on in the background while its page shows how far.
const bulkCheckWait = 15 * time.Second

// bulkRun is one bulk ingest.
type bulkRun struct {
	now       func() time.Time // the server's clock, set by bulkRuns.add
	ID        string
	Owner     int64 // the user key of who uploaded it
	OwnerName string
	Created   time.Time
	// Source says where the files come from: "zip", the server path, or
	// "" (the manifest names no files).
	Source string
	// ManifestName is the uploaded manifest's file name.
	ManifestName string
	// Collection, when set, is a collection every work goes into (besides
	// the one its row names).
	Collection string
	dir        string // the run's staging directory
	// bytes is what the run's staged files hold (set before it is added)
	bytes    int64
	manifest string // the staged manifest
	root     string // where the manifest's file paths are resolved
	fromPath bool   // root is a server path (not the run's own)
	// anyway is set when the owner chose to store the works stored before
	// anyway (set by start)
	anyway bool
	// checked counts the works read while checking.
	checked atomic.Int64

	mu       sync.Mutex
	preview  *staging.Preview // set once checked
	checkErr error            // why the manifest cannot be read (state invalid)
	state    string
	stats    ingest.Stats
	started  time.Time
	finished time.Time
	err      string
	cancel   context.CancelFunc
	starter  string
}

// bulkStatus is a consistent copy of a run's changing part.
type bulkStatus struct {
	State    string
	Stats    ingest.Stats
	Started  time.Time
	Finished time.Time
	Err      string
	Starter  string
	// Preview is what the manifest would create (nil while checking and
	// when it cannot be read); Checked counts the works read so far.
	Preview *staging.Preview
	Checked int64
}

// status copies the run's changing part.
func (r *bulkRun) status() bulkStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats
	st.Failures = slices.Clone(st.Failures)
	return bulkStatus{State: r.state, Stats: st, Started: r.started, Finished: r.finished, Err: r.err, Starter: r.starter,
		Preview: r.preview, Checked: r.checked.Load()}
}

// Total is how many items the run reads: the manifest's works, good and
// bad (0 until it is checked).
func (st bulkStatus) Total() int64 {
	if st.Preview == nil {
		return 0
	}
	return st.Preview.Works + st.Preview.Failed
}

// Live reports whether the run is still being checked or ingested.
func (st bulkStatus) Live() bool {
	return st.State == bulkStateChecking || st.State == bulkStateRunning
}

// visibleTo reports whether c may see the run: its owner and the
// administrators may.
func (r *bulkRun) visibleTo(c *shelfmark.Caller) bool {
	return c.IsAdmin() || (c.User != 0 && c.User == r.Owner)
}

// stagingDir returns this process's staging directory, made on first use
// inside the configured one (or the system's temporary directory): several
// processes may share a data directory, and each removes only its own.
func (b *bulkRuns) stagingDir(configured string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		return b.dir, nil
	}
	base := configured
	if base == "" {
		base = os.TempDir()
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("bulk ingest: make the staging directory: %w", err)
	}
	d, err := os.MkdirTemp(base, "shelfmark-bulk-")
	if err != nil {
		return "", fmt.Errorf("bulk ingest: make a staging directory: %w", err)
	}
	b.dir = d
	return b.dir, nil
}

// newRunID returns the random name of a run (a bulk ingest's, a
// workspace change's): 24 characters of lower-case base32, which no one
// guesses, fit for a path and an address.
func newRunID() string {
	raw := make([]byte, 15)
	rand.Read(raw)
	return base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(raw)
}

// newRunDir makes the staging directory of a new run and returns the run's
// id and directory.
func (b *bulkRuns) newRunDir(configured string) (string, string, error) {
	base, err := b.stagingDir(configured)
	if err != nil {
		return "", "", err
	}
	id := newRunID()
	dir := filepath.Join(base, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("bulk ingest: make the run's directory: %w", err)
	}
	return id, dir, nil
}

// add keeps a new run (its check about to start), forgetting the oldest runs that
// are not running beyond bulkMaxRuns. When every kept run is running the
// run is refused (503), as is one of an owner with bulkMaxRunning
// manifests being checked (429). Previews older than bulkPreviewTTL, and
// the owner's beyond bulkMaxPreviews, are discarded (their staged files
// go).
func (b *bulkRuns) add(r *bulkRun) error {
	r.now = b.now
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "The server is stopping.")
	}
	checking, err := b.expireLocked(r.Owner, true)
	if err != nil {
		return err
	}
	if checking >= bulkMaxRunning {
		return shelfmark.Errorf(shelfmark.ETOOMANY, "%d of your manifests are being checked; upload the next when one of them is done.", checking)
	}
	for len(b.runs) >= bulkMaxRuns {
		i := slices.IndexFunc(b.runs, func(o *bulkRun) bool { return !o.status().Live() })
		if i < 0 {
			return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "%d bulk ingests are running; try again when one has ended.", len(b.runs))
		}
		old := b.runs[i]
		b.runs = slices.Delete(b.runs, i, i+1)
		os.RemoveAll(old.dir)
	}
	b.runs = append(b.runs, r)
	return nil
}

// expireLocked discards the previews older than bulkPreviewTTL and, with
// stopOwn, the oldest of owner's beyond its cap less one (room for the
// next; without stopOwn they are only not counted), and returns how many
// of owner's manifests are being checked; EQUOTA when the server holds
// its cap of staged runs even so. b.mu is held.
func (b *bulkRuns) expireLocked(owner int64, stopOwn bool) (int, error) {
	userCap, allCap := b.userStaged, b.staged
	if userCap <= 0 {
		userCap = DefaultMaxBulkPreviewsPerUser
	}
	if allCap <= 0 {
		allCap = DefaultMaxBulkPreviews
	}
	mine, checking, staged := 0, 0, 0
	for i := len(b.runs) - 1; i >= 0; i-- { // newest first
		o := b.runs[i]
		state := o.status().State
		if state == bulkStateChecking {
			staged++
			if o.Owner == owner {
				checking++
			}
		}
		if state != bulkStatePreview {
			continue
		}
		if o.Owner == owner {
			mine++
		}
		switch {
		case b.now().Sub(o.Created) > bulkPreviewTTL:
			o.stop()
			continue
		case o.Owner == owner && mine >= userCap:
			if stopOwn {
				o.stop()
			}
			continue
		}
		staged++
	}
	if staged >= allCap {
		return checking, &shelfmark.Error{Code: shelfmark.EQUOTA,
			Message: fmt.Sprintf("Upload quota reached: this server holds %d bulk ingests staged for a preview or being checked, its most; start or cancel one (or wait for one to expire), then upload again.", staged),
			Details: map[string]any{"quota": "previews", "limit": allCap, "used": staged}}
	}
	return checking, nil
}

// admit refuses, before anything is staged, an upload by owner when the
// server holds its cap of staged runs (EQUOTA), discarding expired
// previews and owner's oldest beyond its cap first.
func (b *bulkRuns) admit(owner int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.expireLocked(owner, false)
	return err
}

// stagedBytes returns what the staged files of user's runs hold, with the
// bytes user's uploads being staged reserved, and the same for all users:
// runs being checked, previews and running ingests hold their files.
func (b *bulkRuns) stagedBytes(user int64) (mine, all int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stagedLocked(user)
}

func (b *bulkRuns) stagedLocked(user int64) (mine, all int64) {
	for _, r := range b.runs {
		switch r.status().State {
		case bulkStateChecking, bulkStatePreview, bulkStateRunning:
			all += r.bytes
			if r.Owner == user {
				mine += r.bytes
			}
		}
	}
	for u, n := range b.inflight {
		all += n
		if u == user {
			mine += n
		}
	}
	return mine, all
}

// remove forgets a run (one whose manifest was refused at once).
func (b *bulkRuns) remove(r *bulkRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.runs, r); i >= 0 {
		b.runs = slices.Delete(b.runs, i, i+1)
	}
}

// check reads r's manifest in the background with ctx (which carries the
// caller it is read as); the channel closes when the check has ended.
func (b *bulkRuns) check(ctx context.Context, r *bulkRun, s bulkPages) <-chan struct{} {
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(done)
		defer cancel()
		p, err := staging.ReadPreview(ctx, s.deps.Resources, r.manifest, r.root, r.origin(), r.Collection, &r.checked)
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case r.state != bulkStateChecking: // discarded meanwhile
			os.RemoveAll(r.dir)
		case err != nil:
			r.state, r.checkErr, r.err, r.finished = bulkStateInvalid, err, shelfmark.ErrorMessage(err), b.now()
			os.RemoveAll(r.dir)
		default:
			r.state, r.preview = bulkStatePreview, p
		}
	}()
	return done
}

// get returns the run id if c may see it, and ENOTFOUND otherwise (as for
// a run that does not exist).
func (b *bulkRuns) get(id string, c *shelfmark.Caller) (*bulkRun, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.runs {
		if r.ID == id && r.visibleTo(c) {
			return r, nil
		}
	}
	return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no bulk ingest %q that you may see on this server (runs are kept by the server process that made them, and forgotten when it restarts).", id)
}

// list returns the runs, newest first.
func (b *bulkRuns) list() []*bulkRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.runs)
	slices.Reverse(out)
	return out
}

// origin stands for the run's manifest in the keys of rows without a
// source identifier (ingest.OpenCSVIn): the server folder its files are
// in, or "upload" for a manifest whose files came in a zip or that names
// none. The manifest is staged at a new path for every upload, so the path
// cannot be it: the same rows with the same files uploaded again then have
// the same keys, and a second upload of a manifest skips what the first
// stored.
func (r *bulkRun) origin() string {
	if r.fromPath {
		return "import:" + r.root
	}
	return "upload"
}

// start runs the ingest of r in the background with ctx (which carries
// the caller it acts as), unless r is no longer a preview (409) or too
// many runs are running (503). With anyway, the works of the manifest
// stored before are stored anyway, as new works (ingest.Options.
// StoreAnyway).
func (b *bulkRuns) start(ctx context.Context, r *bulkRun, s bulkPages, anyway bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "The server is stopping.")
	}
	if !slices.Contains(b.runs, r) {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "This bulk ingest was forgotten by the server (too many were kept); upload its manifest again.")
	}
	running := 0
	for _, o := range b.runs {
		if o.status().Live() {
			running++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != bulkStatePreview {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "This bulk ingest was already started or discarded (it is %s).", r.state)
	}
	if running >= bulkMaxRunning {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "%d bulk ingests are running on this server; start this one when one of them has ended.", running)
	}
	ctx, cancel := context.WithCancel(ctx)
	r.state, r.started, r.cancel, r.anyway = bulkStateRunning, b.now(), cancel, anyway
	r.starter = shelfmark.CallerFrom(ctx).Name
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer cancel()
		st, err := r.run(ctx, s, b.rate)
		r.finish(st, err)
	}()
	return nil
}

// run reads the staged manifest again and ingests it.
func (r *bulkRun) run(ctx context.Context, s bulkPages, rate float64) (*ingest.Stats, error) {
	if r.fromPath {
		// the folder must still lie inside an import root (a link put in
		// its place since the preview must not lead elsewhere)
		if _, err := s.bulkImportPath(r.root); err != nil {
			return nil, err
		}
	}
	src, err := ingest.OpenCSVIn(r.manifest, r.root, r.origin())
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return ingest.Run(ctx, s.deps.Resources, s.deps.Blobs, src, ingest.Options{Collection: shelfmark.ID(r.Collection), Workers: 2, Rate: rate,
		StoreAnyway: r.anyway, Progress: r.progress, Uploads: s.opts.Uploads})
}

// progress records the pipeline's counts as items finish.
func (r *bulkRun) progress(st ingest.Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != bulkStateRunning {
		return
	}
	st.Failures = bulkKeepFailures(st.Failures)
	r.stats = st
}

// bulkKeepFailures bounds the failures kept.
func bulkKeepFailures(fs []ingest.Failure) []ingest.Failure {
	if len(fs) > bulkMaxFailures {
		fs = fs[:bulkMaxFailures]
	}
	return fs
}

// finish records the end of a run and removes its staged files (a run
// from a server path never touches those: they are not the server's).
func (r *bulkRun) finish(st *ingest.Stats, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st != nil {
		r.stats = *st
		r.stats.Failures = bulkKeepFailures(st.Failures)
	}
	r.finished = r.now()
	switch {
	case errors.Is(err, context.Canceled):
		r.state = bulkStateCancelled
	case err != nil:
		r.state, r.err = bulkStateFailed, err.Error()
	default:
		r.state = bulkStateDone
	}
	os.RemoveAll(r.dir)
}

// stop cancels a running run or a check, or discards a preview (409 once
// it ended).
func (r *bulkRun) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.state {
	case bulkStateRunning:
		r.cancel()
		return nil
	case bulkStateChecking:
		r.state, r.finished = bulkStateCancelled, r.now()
		r.cancel() // the check removes the staged files as it ends
		return nil
	case bulkStatePreview:
		r.state, r.finished = bulkStateCancelled, r.now()
		os.RemoveAll(r.dir)
		return nil
	}
	return shelfmark.Errorf(shelfmark.ECONFLICT, "This bulk ingest has already ended (it is %s).", r.state)
}

// close stops every running run and waits for them (until ctx ends), then
// removes this process's staging directory.
func (b *bulkRuns) close(ctx context.Context) {
	b.mu.Lock()
	b.closed = true
	runs := slices.Clone(b.runs)
	b.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		if r.state == bulkStateRunning || r.state == bulkStateChecking {
			r.cancel()
		}
		r.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
