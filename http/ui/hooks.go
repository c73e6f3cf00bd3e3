package ui

// This file exports the limits the interface's pages are measured against
// and a few hooks into a Handler's state, for the tests of the composed
// server (package http), which drive the interface over HTTP and cannot
// see this package's own names. Nothing but those tests calls the hooks.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
)

// The limits and names the pages keep to (each is the rule of the
// unexported name it equals).
const (
	// CSRFField is the form field of the CSRF token; CSRFHeader carries
	// it for scripts.
	CSRFField  = csrfField
	CSRFHeader = csrfHeader
	// CSP is the Content-Security-Policy of the pages.
	CSP = uiCSP
	// PagesChunk is how many pages one reorder page lists.
	PagesChunk = pagesChunk
	// WorkPageSize is how many of a work's pages one work page shows.
	WorkPageSize = uiWorkPageSize
	// WebPageSize is how many captures a web archive page lists;
	// WebLinks how many links in and out a capture page lists.
	WebPageSize = webUIPage
	WebLinks    = webUILinks
	// AdminPageSize is the rows of a page of jobs, users or audit
	// entries.
	AdminPageSize = adminPageSize
	// HomeCollections is how many collections the home page lists;
	// CollectionPageSize how many members a collection page lists.
	HomeCollections    = homeCollections
	CollectionPageSize = collectionPageSize
	// MaxFormRows bounds the metadata rows of one form.
	MaxFormRows = maxFormRows
	// BulkMaxRunning is how many manifests of one user may be checked
	// at once (more is 429).
	BulkMaxRunning = bulkMaxRunning
	// BulkStateChecking and BulkStatePreview are the states of a bulk
	// run being checked and of one checked, waiting to be started.
	BulkStateChecking = bulkStateChecking
	BulkStatePreview  = bulkStatePreview
)

// BulkProgress is the JSON answer of GET /bulk/{run}/progress.
type BulkProgress = bulkProgressJSON

// AdminEvent is the data of one "status" event of the dashboard's stream.
type AdminEvent = adminEvent

// IngestRun is a bulk ingest as the dashboard lists it.
type IngestRun = ingestRunView

// TitleOf is a resource's first title, or its id; it allocates nothing.
func TitleOf(res *shelfmark.Resource) string { return titleOf(res) }

// DoneCounts reads from a job histogram (by queue and outcome) how many
// jobs finished, by queue, as the dashboard does: one gathering of a
// registry holding the histogram alone.
func DoneCounts(jobSeconds prometheus.Collector) map[string]float64 {
	return (&adminState{}).doneCounts(jobSeconds)
}

// SetEventTimes replaces how long a dashboard event stream lasts and how
// often it sends (0 keeps the default).
func (s *Handler) SetEventTimes(lasting, every time.Duration) {
	s.dash.eventsFor.Store(int64(lasting))
	s.dash.eventsEvery.Store(int64(every))
}

// SetBulkPace replaces how long an upload waits for its check before the
// browser goes to the run's page (negative: not at all) and caps the
// works a second a run stores (0: no cap).
func (s *Handler) SetBulkPace(checkWait time.Duration, rate float64) {
	s.bulk.mu.Lock()
	defer s.bulk.mu.Unlock()
	s.bulk.checkWait, s.bulk.rate = checkWait, rate
}

// SetStagingDir replaces Options.StagingDir; it counts only before the
// first bulk ingest is staged.
func (s *Handler) SetStagingDir(dir string) { s.opts.StagingDir = dir }

// IngestRuns lists the bulk ingests this server knows of, newest first,
// as the dashboard does.
func (s *Handler) IngestRuns() []IngestRun { return bulkPages{s}.ingestRuns() }

// HoldChecks adds n runs of owner whose checks never end, as large
// manifests being checked would be (ids "checking0", "checking1", …).
func (s *Handler) HoldChecks(owner int64, n int) error {
	for i := range n {
		if err := s.bulk.add(&bulkRun{ID: fmt.Sprintf("checking%d", i), Owner: owner, Created: s.now(), state: bulkStateChecking}); err != nil {
			return err
		}
	}
	return nil
}

// StageRun stages a bulk ingest of the caller on ctx from a manifest
// without files (named name, holding manifest) through the server's own
// staging, waits for its check, and returns the run's path, its state and
// how many works its preview holds.
func (s *Handler) StageRun(ctx context.Context, name, manifest string) (path, state string, works int64, err error) {
	id, dir, err := s.bulk.newRunDir(s.opts.StagingDir)
	if err != nil {
		return "", "", 0, err
	}
	c := shelfmark.CallerFrom(ctx)
	r := &bulkRun{ID: id, Owner: c.User, OwnerName: c.Name, Created: s.now(), ManifestName: name, dir: dir,
		manifest: filepath.Join(dir, "manifest.csv"), root: filepath.Join(dir, "files"), state: bulkStateChecking}
	if err := os.Mkdir(r.root, 0o700); err != nil {
		return "", "", 0, err
	}
	if err := os.WriteFile(r.manifest, []byte(manifest), 0o600); err != nil {
		return "", "", 0, err
	}
	if err := s.bulk.add(r); err != nil {
		return "", "", 0, err
	}
	<-s.bulk.check(ctx, r, bulkPages{s})
	st := r.status()
	if st.Preview != nil {
		works = st.Preview.Works
	}
	return "/bulk/" + id, st.State, works, nil
}
