package setup

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/fixity"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/postgres"
)

// TestFixityElectedOnce: two servers on one PostgreSQL database run the
// elected loop "fixity" as one task: one of them leads it (the gauge
// shelfmark_leader{task="fixity"} is 1 on exactly one) and its pass is the
// one that reads the originals; the other reads nothing. Both report
// shelfmark_fixity_damaged_files from the database.
func TestFixityElectedOnce(t *testing.T) {
	ctx := context.Background()
	dsn := testkit.PostgresSchema(t)
	quiet := slog.New(slog.DiscardHandler)
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	type server struct {
		store shelfmark.Storage
		c     *fixity.Checker
		reg   *prometheus.Registry
		stop  func()
	}
	var servers []*server
	for i := range 2 {
		store, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		ids, err := shelfmark.LoadIDCodec(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
			w, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
			if err != nil {
				t.Fatal(err)
			}
			set, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID})
			if err != nil {
				t.Fatal(err)
			}
			b, err := blobs.Put(ctx, bytes.NewReader(bytes.Repeat([]byte("x"), 100<<10)), shelfmark.PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
				Name: "x.bin", MediaType: "application/octet-stream", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}); err != nil {
				t.Fatal(err)
			}
			repo.Close()
		}
		s := &server{store: store, reg: prometheus.NewRegistry()}
		loops := map[string]runner{}
		x := FixityFlags{Cycle: time.Hour, Rate: -1}
		if err := x.start(store, blobs, nil, ids, loops, s.reg, quiet); err != nil {
			t.Fatal(err)
		}
		s.c = loops["fixity"].(*fixity.Checker)
		leaders, err := electLoops(store, loops, s.reg, quiet)
		if err != nil {
			t.Fatal(err)
		}
		bg := startBackground(ctx, quiet, loops)
		s.stop = func() { bg.stop(); leaders.Close() }
		servers = append(servers, s)
	}
	defer func() {
		for _, s := range servers {
			s.stop()
		}
	}()
	pe := servers[0].store.(shelfmark.PreservationEvents)
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		p, err := pe.FixityPass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Finished.IsZero() {
			if p.Files != 1 {
				t.Fatalf("the pass checked %d copies, want 1", p.Files)
			}
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("no fixity pass finished")
		}
	}
	leading, read := 0, 0
	for _, s := range servers {
		if gauge(t, s.reg, "shelfmark_leader", "fixity") == 1 {
			leading++
		}
		if s.c.Stats().Bytes > 0 {
			read++
		}
		if d := gauge(t, s.reg, "shelfmark_fixity_damaged_files", ""); d != 0 {
			t.Errorf("shelfmark_fixity_damaged_files = %v", d)
		}
	}
	if leading != 1 || read != 1 {
		t.Errorf("%d servers lead the fixity task and %d read originals, want 1 and 1", leading, read)
	}
}

// gauge reads the value of a gauge of reg (with task label, when given).
func gauge(t *testing.T, reg *prometheus.Registry, name, task string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if task == "" || hasLabel(m, "task", task) {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no metric %s{task=%q}", name, task)
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestServeFixity: serve runs fixity by default: /metrics reports the
// damaged files (none) and leader election names the fixity task; a
// work's events answer over the REST API with its ingestion.
func TestServeFixity(t *testing.T) {
	base, data := serveInTemp(t, ServeConfig{preservation: preservationFlags{window: 50 * time.Millisecond}, fixity: FixityFlags{Cycle: time.Hour, Rate: -1}})
	waitServing(t, base)
	hc := withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
	status, body, err := do(hc, http.MethodGet, base+"/metrics", "", nil, nil)
	if err != nil || status != 200 || !strings.Contains(string(body), "\nshelfmark_fixity_damaged_files 0\n") {
		t.Fatalf("metrics: %d %v", status, err)
	}
	w := createWork(t, hc, base, "checked")
	status, body, err = do(hc, http.MethodGet, base+"/api/v1/resources/"+w.ID+"/events", "", nil, nil)
	if err != nil || status != 200 || !strings.Contains(string(body), `"type":"ingestion"`) {
		t.Fatalf("events: %d %s %v", status, body, err)
	}
}
