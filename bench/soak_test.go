package bench

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/siegfried"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/worker"
)

// soakServer serves a real repository as serve does (REST API, OAI-PMH,
// the projector, the search indexer, the job runner and the accounts) on
// a loopback port, with its data in the returned directory, and returns an
// admin-scoped token of its administrator.
func soakServer(t *testing.T) (base, data, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	data = t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	formats := oai.DefaultRegistry()
	prov, err := oai.NewProvider(store, formats, oai.Config{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := siegfried.New()
	if err != nil {
		t.Fatal(err)
	}
	p := &worker.Pipeline{Repo: repo, Blobs: blobs, Identify: id, Tools: worker.FindTools()}
	loops := []interface{ Run(context.Context) error }{
		oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{}),
		shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{}),
		worker.NewRunner(repo, p.Handlers(), worker.Options{Poll: 100 * time.Millisecond}),
	}
	done := make(chan struct{}, len(loops))
	for _, l := range loops {
		go func() { _ = l.Run(ctx); done <- struct{}{} }()
	}
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		t.Fatal(err)
	}
	token, _, err = acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: store, OAI: prov, Jobs: repo, Accounts: acc})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln, srv) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = srv.Shutdown(sctx)
		scancel()
		cancel()
		for range loops {
			<-done
		}
		repo.Close()
		blobs.Close()
		store.Close()
	})
	return "http://" + ln.Addr().String(), data, token
}

// TestRunSoak: a few seconds of the mixed load fill every field of the
// report and of the samples, without an error.
func TestRunSoak(t *testing.T) {
	base, data, token := soakServer(t)
	var progress int
	res, err := RunSoak(context.Background(), SoakConfig{Base: base, Token: token, PID: os.Getpid(), DataDir: data,
		Duration: 4 * time.Second, Sample: time.Second, Writers: 2, Readers: 1, Harvesters: 1, UploadEvery: 2, Triples: 10, Pause: []string{shelfmark.QueueOCR},
		Progress: func(SoakSample) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Errors != 0 {
		t.Fatalf("%d errors: %+v", r.Errors, r.Steps)
	}
	if r.Scenario != "soak" || r.Items <= 0 || r.Seconds <= 0 || r.RatePerS <= 0 || r.LatencyMS.P50 <= 0 || r.PeakRSSBytes <= 0 {
		t.Errorf("report %+v", r)
	}
	if len(res.Samples) < 2 || len(r.Steps) != len(res.Samples) || progress != len(res.Samples) {
		t.Fatalf("%d samples, %d steps, %d progress calls", len(res.Samples), len(r.Steps), progress)
	}
	var works int64
	for _, s := range res.Samples {
		works += s.Works
		if s.RSS <= 0 || s.DBBytes <= 0 || s.Seconds <= 0 {
			t.Errorf("sample %+v", s)
		}
		if _, ok := s.Backlog[shelfmark.QueueDerive]; !ok {
			t.Errorf("sample without the derive backlog: %+v", s.Backlog)
		}
	}
	last := res.Samples[len(res.Samples)-1]
	if works != r.Items || res.Uploads <= 0 || last.BlobBytes <= 0 || res.Harvests <= 0 {
		t.Errorf("works %d of %d, uploads %d, blobs %d bytes, %d harvests", works, r.Items, res.Uploads, last.BlobBytes, res.Harvests)
	}
	if r.Flatness <= 0 || res.RSSGrowth <= 0 || res.BacklogSlope == nil {
		t.Errorf("drift %v, RSS growth %v, backlog slopes %v", r.Flatness, res.RSSGrowth, res.BacklogSlope)
	}
	for _, k := range []string{"drift", "rss_growth", "wal_max_bytes", "backlog_slope_per_min"} {
		if _, ok := r.Params[k]; !ok {
			t.Errorf("params lack %s", k)
		}
	}
	if len(res.Series()) < 7 {
		t.Errorf("%d series", len(res.Series()))
	}
	if err := r.WriteHTML(t.TempDir(), res.Series()...); err != nil {
		t.Fatal(err)
	}
}
