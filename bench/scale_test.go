package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestScaleScenario runs the scale scenario at a tiny size on SQLite and
// on PostgreSQL (when SHELFMARK_TEST_DATABASE_URL is set), with each
// work's XML its own and shared, and checks what every checkpoint
// recorded: the counts, the sizes read, the queries, and the report given
// after each checkpoint; never how fast anything was.
func TestScaleScenario(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, shared := range []bool{false, true} {
			name := "unique"
			if shared {
				name = "shared"
			}
			t.Run(backend+"/"+name, func(t *testing.T) {
				testScaleScenario(t, openScaleStore(t, backend), shared)
				if shared {
					testScaleResume(t, openScaleStore(t, backend))
				}
			})
		}
	}
}

// scaleStore is an empty repository store of its own for one test, with
// what the scale probe needs to find it and a raw connection to count
// rows.
type scaleStore struct {
	store          shelfmark.Storage
	database, path string
	raw            *sql.DB
}

// openScaleStore opens an empty store on backend: a new SQLite file, or a
// new schema of SHELFMARK_TEST_DATABASE_URL (the test is skipped without
// it). Everything is closed, and the schema dropped, when t ends.
func openScaleStore(t *testing.T, backend string) scaleStore {
	t.Helper()
	ctx := context.Background()
	if backend == "sqlite" {
		path := filepath.Join(t.TempDir(), "store.db")
		db, err := sqlite.Open(ctx, path, sqlite.Options{Relaxed: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		raw, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_busy_timeout=10000")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		return scaleStore{store: db, path: path, raw: raw}
	}
	dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("SHELFMARK_TEST_DATABASE_URL is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	schema := fmt.Sprintf("scale%d_%d", os.Getpid(), rand.IntN(1e9))
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String(), postgres.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	raw, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return scaleStore{store: db, database: u.String(), raw: raw}
}

// scaleRig is what RunScale runs with on a scaleStore.
type scaleRig struct {
	repo    *shelfmark.Repository
	blobs   *blob.LocalStore
	blobDir string
	probe   *ScaleProbe
}

// newScaleRig opens a repository, a content store in a temporary
// directory and a probe on s, closed when t ends.
func newScaleRig(t *testing.T, s scaleStore) scaleRig {
	t.Helper()
	ctx := context.Background()
	blobDir := filepath.Join(t.TempDir(), "blobs")
	blobs, err := blob.NewLocal(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	ids, err := shelfmark.LoadIDCodec(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(s.store, shelfmark.RepositoryOptions{IDs: ids})
	t.Cleanup(func() { repo.Close() })
	probe, err := OpenScaleProbe(s.database, s.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { probe.Close() })
	return scaleRig{repo: repo, blobs: blobs, blobDir: blobDir, probe: probe}
}

func testScaleScenario(t *testing.T, s scaleStore, shared bool) {
	ctx := context.Background()
	dir := t.TempDir()
	rig := newScaleRig(t, s)
	db, raw, repo, blobs, blobDir, probe := s.store, s.raw, rig.repo, rig.blobs, rig.blobDir, rig.probe

	// 700 works, a checkpoint every 300: at 300, 600 and 700
	const works, every = 700, 300
	wantAt := []int64{300, 600, 700}
	var seen []string // the JSON of the report given after each checkpoint
	stages := map[string]bool{}
	cfg := ScaleConfig{Works: works, Checkpoint: every, Batch: 50, Samples: 7, SharedFiles: shared, Seed: 3, BlobDir: blobDir, Probe: probe,
		Progress: func(stage string, done int) { stages[stage] = true },
		Checkpointed: func(r *Report) error {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			seen = append(seen, string(b))
			return nil
		}}
	rep, err := RunScale(ctx, repo, db, blobs, cfg)
	if err != nil {
		t.Fatal(err)
	}

	// the report after each checkpoint has that checkpoint's steps
	if len(seen) != len(wantAt) {
		t.Fatalf("%d reports given, want one per checkpoint (%d)", len(seen), len(wantAt))
	}
	for k, s := range seen {
		var r struct {
			Items  int64            `json:"items"`
			Steps  []map[string]any `json:"steps"`
			Params struct {
				Checkpoints []ScaleCheckpoint `json:"checkpoints"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Steps) != k+1 || len(r.Params.Checkpoints) != k+1 || r.Items != wantAt[k] {
			t.Errorf("report after checkpoint %d: %d steps, %d checkpoints, %d items", k+1, len(r.Steps), len(r.Params.Checkpoints), r.Items)
		}
	}
	var all map[string]any
	if err := json.Unmarshal([]byte(seen[len(seen)-1]), &all); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "backend", "items", "seconds", "rate_per_s", "flatness", "raw_limit_per_s", "fraction_of_limit", "latency_ms", "peak_rss_bytes", "errors", "steps"} {
		if _, ok := all[k]; !ok {
			t.Errorf("the JSON report has no %q", k)
		}
	}
	if rep.Scenario != "scale" || rep.Backend != db.Backend() || rep.Items != works || rep.Errors != 0 || len(rep.Steps) != 3 {
		t.Fatalf("report: %+v", rep)
	}
	for _, st := range []string{"ingest", "render OAI-PMH records", "index for search", "read sizes", "time queries"} {
		if !stages[st] {
			t.Errorf("no progress for %q", st)
		}
	}

	cps := ScaleCheckpoints(rep)
	if len(cps) != 3 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	prevDB := int64(0)
	for k, cp := range cps {
		want := wantAt[k] - map[bool]int64{true: 0, false: wantAt[max(0, k-1)]}[k == 0]
		if cp.Works != wantAt[k] || cp.Interval != want || rep.Steps[k].Items != want {
			t.Errorf("checkpoint %d: %d works, interval %d (step %d), want %d and %d", k+1, cp.Works, cp.Interval, rep.Steps[k].Items, wantAt[k], want)
		}
		if cp.DatabaseBytes <= prevDB || cp.DatabaseBytesPerWork <= 0 || cp.BlobBytes <= 0 || cp.BlobFiles <= 0 || cp.CPUPerThousand <= 0 || cp.ProjectCPUPerThousand <= 0 || cp.IndexCPUPerThousand <= 0 {
			t.Errorf("checkpoint %d: sizes %+v", k+1, cp)
		}
		prevDB = cp.DatabaseBytes
		if len(cp.Queries) != 6 {
			t.Fatalf("checkpoint %d: %d queries", k+1, len(cp.Queries))
		}
		for _, q := range cp.Queries {
			if q.Samples != 7 || q.Latency.P50 < 0 || q.Latency.P99 < q.Latency.P50 {
				t.Errorf("checkpoint %d: %+v", k+1, q)
			}
		}
	}
	last := cps[len(cps)-1]

	// the sizes: on PostgreSQL every table and index of the schema, each
	// index with its table; on SQLite the tables (dbstat) or the file
	rels := map[string]Relation{}
	var sum int64
	for _, r := range last.Relations {
		rels[r.Name] = r
		if r.Kind == "table" {
			sum += r.TotalBytes
		}
	}
	if sum != last.DatabaseBytes {
		t.Errorf("database bytes %d, the tables' total %d", last.DatabaseBytes, sum)
	}
	if db.Backend() == "postgres" {
		for _, name := range []string{"resources", "fields", "files", "memberships", "sources", "oai_records"} {
			r, ok := rels[name]
			if !ok || r.Kind != "table" || r.Bytes <= 0 || r.TotalBytes < r.Bytes+r.IndexBytes || r.IndexBytes <= 0 {
				t.Errorf("table %s: %+v (found %v)", name, r, ok)
			}
		}
		for _, name := range []string{"resources_pkey", "fields_pkey", "memberships_pkey", "memberships_member", "files_sha256", "sources_pkey", "oai_records_prefix"} {
			if r, ok := rels[name]; !ok || r.Kind != "index" || r.Table == "" || r.Bytes <= 0 {
				t.Errorf("index %s: %+v (found %v)", name, r, ok)
			}
		}
		if c := last.BackendCPUPerThousand; c < 0 {
			t.Errorf("backend CPU %v", c)
		}
	} else if len(rels) == 0 {
		t.Error("no sizes read")
	}

	// one files row per work either way, each with its own SHA-256 or one
	// of at most 256 shared ones
	var files, members, digests int64
	for q, v := range map[string]*int64{"SELECT count(*) FROM files": &files, "SELECT count(*) FROM memberships": &members,
		"SELECT count(DISTINCT sha256) FROM files": &digests} {
		if err := raw.QueryRowContext(ctx, q).Scan(v); err != nil {
			t.Fatal(err)
		}
	}
	if files != works || members != works {
		t.Errorf("%d files rows, %d memberships, want %d each", files, members, works)
	}
	if shared && digests > 256 || !shared && digests != works {
		t.Errorf("%d distinct digests among %d files (shared %v)", digests, files, shared)
	}

	// the charts
	out := filepath.Join(dir, "charts")
	if err := WriteScaleCharts(out, rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"scale-rate.svg", "scale-cpu.svg", "scale-bytes.svg", "scale-latency.svg", "scale-latency-p50.svg"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.HasPrefix(string(b), "<?xml") || !strings.Contains(string(b), `xmlns="http://www.w3.org/2000/svg"`) {
			t.Errorf("%s: %v %.100s", f, err, b)
		}
	}
	if err := rep.WriteHTML(filepath.Join(dir, "report"), ScaleSeries(rep)...); err != nil {
		t.Fatal(err)
	}

	// the JSON report read back (bench scale --replot) draws the same charts
	js := filepath.Join(dir, "scale.json")
	if err := rep.WriteJSON(js); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadScaleReport(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ScaleCheckpoints(back)), len(ScaleCheckpoints(rep)); got != want || got == 0 {
		t.Fatalf("read back %d checkpoints, want %d", got, want)
	}
	again := filepath.Join(dir, "charts-again")
	if err := WriteScaleCharts(again, back); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"scale-rate.svg", "scale-cpu.svg", "scale-bytes.svg", "scale-latency.svg", "scale-latency-p50.svg"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		c, _ := os.ReadFile(filepath.Join(again, f))
		if string(a) != string(c) {
			t.Errorf("%s drawn from the JSON report differs from the run's", f)
		}
	}
	if _, err := ReadScaleReport([]byte(`{"scenario":"rest","params":{}}`)); err == nil {
		t.Error("a report without checkpoints was read as a scale report")
	}
}

// testScaleResume cuts a run short after its first checkpoint, stores
// some works past it as a run killed mid-interval would have, and resumes
// it from its JSON report (bench scale --resume): the resumed run keeps the
// first checkpoint, skips the works stored after it as already ingested,
// and ends with every work numbered stored once. db must hold the
// collection of testScaleScenario's run already: resuming finds the
// repository's only collection, so it runs on a repository of its own.
func testScaleResume(t *testing.T, fresh scaleStore) {
	ctx := context.Background()
	dir := t.TempDir()
	rig := newScaleRig(t, fresh)
	repo, blobs, blobDir, probe := rig.repo, rig.blobs, rig.blobDir, rig.probe

	const works, every, past = 500, 200, 60
	errCut := fmt.Errorf("cut short")
	cfg := ScaleConfig{Works: works, Checkpoint: every, Batch: 50, Samples: 3, SharedFiles: true, Seed: 5, BlobDir: blobDir, Probe: probe,
		Checkpointed: func(*Report) error { return errCut }}
	first, err := RunScale(ctx, repo, fresh.store, blobs, cfg)
	if err != errCut {
		t.Fatalf("the first run: %v, want it cut at its first checkpoint", err)
	}
	page, err := repo.ListResources(ctx, shelfmark.KindCollection, shelfmark.PageRequest{Limit: 2})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("collections: %v %v", page, err)
	}
	coll := page.Items[0]
	// works every+1 .. every+past, stored after the checkpoint
	ps := PatentSource(cfg.Seed, every+past).(*patentSource)
	ps.i, ps.noMedia = every, true
	if st, err := ingest.Run(ctx, repo, blobs, &scaleSource{patentSource: ps, shared: true}, ingest.Options{Collection: coll.ID, Batch: 50}); err != nil || st.Stored != past {
		t.Fatalf("store %d works past the checkpoint: %+v %v", past, st, err)
	}
	js := filepath.Join(dir, "cut.json")
	if err := first.WriteJSON(js); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	earlier, err := ReadScaleReport(b)
	if err != nil {
		t.Fatal(err)
	}

	// a resume of another shape is refused before anything is stored
	wrong := cfg
	wrong.SharedFiles, wrong.Resume, wrong.Checkpointed = false, earlier, nil
	if _, err := RunScale(ctx, repo, fresh.store, blobs, wrong); err == nil || !strings.Contains(err.Error(), "file-bytes") {
		t.Errorf("resuming a shared run with unique texts: %v", err)
	}

	cfg.Resume, cfg.Checkpointed = earlier, nil
	rep, err := RunScale(ctx, repo, fresh.store, blobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cps := ScaleCheckpoints(rep)
	var at []int64
	for _, cp := range cps {
		at = append(at, cp.Works)
	}
	if fmt.Sprint(at) != "[200 400 500]" {
		t.Fatalf("checkpoints at %v, want [200 400 500]", at)
	}
	if cps[1].Interval != every-past || cps[2].Interval != works-2*every {
		t.Errorf("intervals stored %d and %d, want %d and %d", cps[1].Interval, cps[2].Interval, every-past, works-2*every)
	}
	if rep.Params["resume_skipped"] != int64(past) || rep.Params["skipped"] != int64(0) || fmt.Sprint(rep.Params["resumed_at"]) != fmt.Sprint([]int64{every}) {
		t.Errorf("params: resume_skipped %v skipped %v resumed_at %v", rep.Params["resume_skipped"], rep.Params["skipped"], rep.Params["resumed_at"])
	}
	if !rep.Started.Equal(first.Started) || len(rep.Steps) != 3 {
		t.Errorf("started %v (first run %v), %d steps", rep.Started, first.Started, len(rep.Steps))
	}
	// every work numbered is a member once
	n, after := 0, shelfmark.Cursor("")
	for {
		p, err := repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Items)
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if n != works {
		t.Errorf("%d members after the resumed run, want %d", n, works)
	}
}

// TestScaleProbeMemberAt: the cursor of a deep member page is picked by
// its place in the listing's key order, and is never the collection's
// last member (a page after it would be empty), on both backends.
func TestScaleProbeMemberAt(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			rig := newScaleRig(t, openScaleStore(t, backend))
			coll, err := rig.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
			if err != nil {
				t.Fatal(err)
			}
			collKey, _ := rig.repo.IDs().Key(coll.ID)
			if _, err := rig.probe.MemberAt(ctx, collKey, 0.5); err == nil {
				t.Error("a member of an empty collection")
			}
			var keys []int64
			for range 9 {
				w, err := rig.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})
				if err != nil {
					t.Fatal(err)
				}
				k, _ := rig.repo.IDs().Key(w.ID)
				keys = append(keys, k)
				if len(keys) == 1 {
					if _, err := rig.probe.MemberAt(ctx, collKey, 0.5); err == nil {
						t.Error("a member before the last of a collection of one")
					}
				}
			}
			slices.Sort(keys)
			last := keys[len(keys)-1]
			for _, frac := range []float64{0, 0.5, 0.75, 0.99, 1} {
				k, err := rig.probe.MemberAt(ctx, collKey, frac)
				if err != nil {
					t.Fatal(err)
				}
				at := keys[0] + int64(frac*float64(last-keys[0]))
				if !slices.Contains(keys, k) || k == last || (k < at && k != keys[len(keys)-2]) {
					t.Errorf("MemberAt(%v) = %d of %v", frac, k, keys)
				}
				p, err := rig.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: shelfmark.Cursor(rig.repo.IDs().Encode(k)), Limit: 100})
				if err != nil || len(p.Items) == 0 {
					t.Errorf("members after MemberAt(%v): %v, %v", frac, p, err)
				}
			}
		})
	}
}
