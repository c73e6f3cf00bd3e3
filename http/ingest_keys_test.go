package http

// Tests of source keys through the REST ingest (the Client and ingest.Run
// against a server) and the web preview: different inputs never collide
// (a second folder given as the root, a second manifest without source
// identifiers, the same manifest with two server folders), the same input
// is still skipped, naming the work it was stored as, and it can be stored
// anyway, once.

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
)

// keysInput writes two books, each to be given as the root, and two CSV
// manifests without a source_identifier column beside their files.
func keysInput(t *testing.T) string {
	t.Helper()
	in := t.TempDir()
	for p, c := range map[string]string{
		"book1/page_1.txt": "the first page of book one",
		"book2/page_1.txt": "the first page of book two, which is longer",
		"csv/a.txt":        "scan a",
		"csv/b.txt":        "scan b",
		"csv/first.csv":    "title,file\nFirst book,a.txt\nSecond book,b.txt\n",
		"csv/second.csv":   "title,file\nThird book,a.txt\nFourth book,b.txt\n",
	} {
		full := filepath.Join(in, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// remoteRun ingests what open opens into the server behind c.
func remoteRun(t *testing.T, c *Client, opts ingest.Options) func(ingest.Source, error) *ingest.Stats {
	return func(src ingest.Source, err error) *ingest.Stats {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		opts.Workers = 2
		st, err := ingest.Run(context.Background(), c, c, src, opts)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}

// TestRemoteIngestDistinctInputs: over the REST API, a second folder given
// as the root is stored, not skipped as stored before, and so is a second
// CSV manifest without source identifiers; re-running either skips it.
func TestRemoteIngestDistinctInputs(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		c := newTestClient(t, e.testEnv, ClientOptions{})
		in := keysInput(t)
		run := remoteRun(t, c, ingest.Options{})
		for _, step := range []struct {
			what            string
			open            func() (ingest.Source, error)
			stored, skipped int64
		}{
			{"book one", func() (ingest.Source, error) { return ingest.OpenDir(filepath.Join(in, "book1")) }, 1, 0},
			{"book two", func() (ingest.Source, error) { return ingest.OpenDir(filepath.Join(in, "book2")) }, 1, 0},
			{"the first manifest", func() (ingest.Source, error) { return ingest.OpenCSV(filepath.Join(in, "csv", "first.csv")) }, 2, 0},
			{"the second manifest", func() (ingest.Source, error) { return ingest.OpenCSV(filepath.Join(in, "csv", "second.csv")) }, 2, 0},
			{"book two again", func() (ingest.Source, error) { return ingest.OpenDir(filepath.Join(in, "book2")) }, 0, 1},
			{"the second manifest again", func() (ingest.Source, error) { return ingest.OpenCSV(filepath.Join(in, "csv", "second.csv")) }, 0, 2},
		} {
			if st := run(step.open()); st.Stored != step.stored || st.Skipped != step.skipped || st.Failed != 0 {
				t.Errorf("%s: %+v, want %d stored and %d skipped", step.what, st, step.stored, step.skipped)
			}
		}
	})
}

// rekeyed is a source that gives its items the keys of an earlier version
// (their former keys), as an ingest before the keys changed did.
type rekeyed struct{ ingest.Source }

func (r rekeyed) Next(ctx context.Context) (*ingest.Item, error) {
	it, err := r.Source.Next(ctx)
	if it != nil {
		it.Key, it.FormerKey = it.FormerKey, ""
	}
	return it, err
}

// TestRemoteIngestStoredBefore: over the REST API, an item stored before
// is skipped naming its work; stored anyway it becomes a new work while
// its key keeps naming the first, and storing it anyway again skips it
// naming the second; a work stored under the key an earlier version gave
// (a folder as the root was "dir:.") is recognised when it holds the same
// files, and another folder keyed alike then is stored.
func TestRemoteIngestStoredBefore(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		c := newTestClient(t, e.testEnv, ClientOptions{})
		ctx := context.Background()
		in := keysInput(t)
		book2 := filepath.Join(in, "book2")
		key := func(root string) string { // the key of the one folder below root
			for _, k := range treeKeys(t, root) {
				return k
			}
			t.Fatalf("no work in %s", root)
			return ""
		}
		run := remoteRun(t, c, ingest.Options{})
		if st := run(ingest.OpenDir(book2)); st.Stored != 1 {
			t.Fatalf("book two: %+v", st)
		}
		found, err := e.repo.FindSources(ctx, []string{key(book2)})
		first := found[key(book2)]
		if err != nil || first == "" {
			t.Fatalf("book two's key: %v %v", found, err)
		}
		st := run(ingest.OpenDir(book2))
		if st.Skipped != 1 || len(st.Skips) != 1 || st.Skips[0].ID != first || st.Skips[0].Key != key(book2) || st.Skips[0].Anyway {
			t.Fatalf("book two again: %+v", st)
		}

		anyway := remoteRun(t, c, ingest.Options{StoreAnyway: true})
		if st := anyway(ingest.OpenDir(book2)); st.Stored != 1 || st.Anyway != 1 || st.Skipped != 0 {
			t.Fatalf("book two stored anyway: %+v", st)
		}
		st = anyway(ingest.OpenDir(book2))
		if st.Stored != 0 || st.Skipped != 1 || len(st.Skips) != 1 || !st.Skips[0].Anyway || st.Skips[0].ID == first || st.Skips[0].ID == "" {
			t.Fatalf("book two stored anyway again: %+v", st)
		}
		second := st.Skips[0].ID
		if w := e.get(second); !strings.Contains(string(w.Metadata), `"book2"`) {
			t.Errorf("the work stored anyway: %+v", w)
		}
		if found, err := e.repo.FindSources(ctx, []string{key(book2)}); err != nil || found[key(book2)] != first {
			t.Fatalf("the key names %v (%v), want the first work %s", found, err, first)
		}

		// stored by an earlier version as "dir:.", then ingested again
		book1 := filepath.Join(in, "book1")
		src, err := ingest.OpenDir(book1)
		if st := run(rekeyed{src}, err); st.Stored != 1 {
			t.Fatalf("book one under its former key: %+v", st)
		}
		found, err = e.repo.FindSources(ctx, []string{"dir:."})
		old := found["dir:."]
		if err != nil || old == "" {
			t.Fatalf("former key: %v %v", found, err)
		}
		st = run(ingest.OpenDir(book1))
		if st.Stored != 0 || st.Skipped != 1 || len(st.Skips) != 1 || st.Skips[0].ID != old || !st.Skips[0].Former {
			t.Fatalf("book one again: %+v", st)
		}
		if found, err := e.repo.FindSources(ctx, []string{key(book1)}); err != nil || found[key(book1)] != old {
			t.Fatalf("book one's new key names %v (%v), want %s", found, err, old)
		}
		other := filepath.Join(in, "other")
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, "page_1.txt"), []byte("another book keyed dir:. before"), 0o644); err != nil {
			t.Fatal(err)
		}
		if st := run(ingest.OpenDir(other)); st.Stored != 1 || st.Skipped != 0 {
			t.Fatalf("another folder once keyed alike: %+v", st)
		}

		// the body option needs a source key
		body := `{"groups": [{"storeAnyway": true, "resources": [{"ref": "w", "kind": "work"}]}]}`
		w := e.do("POST", "/api/v1/groups", body, as(e.admin, "Content-Type", ctJSON)...).want(t, http.StatusOK)
		if !strings.Contains(string(w.Body), `"status":400`) || !strings.Contains(string(w.Body), "apply to a group with a sourceKey") {
			t.Errorf("storeAnyway without a source key: %s", w.Body)
		}
	})
}

// TestUIBulkDistinctManifests: in the web interface, a second manifest
// without source identifiers previews its works as new (once "There is
// nothing new to store"), and so does one manifest given with a second
// server folder; the first manifest uploaded again previews its rows as
// stored before, each naming its work, and offers to store them anyway;
// stored anyway they become new works, and a second run with the box
// ticked skips them, naming those.
func TestUIBulkDistinctManifests(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		b := be.signedIn("writer")
		ingestRun := func(manifest string, z []byte, path string, form url.Values) (string, *htmlPage, bulkProgressJSON) {
			t.Helper()
			b.get("/bulk")
			run := runOf(t, b.upload(manifest, z, path))
			p := b.get(run)
			if p.Status != http.StatusOK {
				t.Fatalf("preview: %d %.1000s", p.Status, p.Body)
			}
			if s := b.post(run+"/start", form); s.Status != http.StatusSeeOther {
				t.Fatalf("start: %d %.1000s", s.Status, s.Body)
			}
			return run, p, b.waitDone(run)
		}
		c := string(be.C)
		m1 := "title,file,parent\nFirst book,a.txt," + c + "\nSecond book,b.txt," + c + "\n"
		z1 := zipOf(t, "a.txt", "scan a", "b.txt", "scan b")
		_, p, got := ingestRun(m1, z1, "", nil)
		wantIn(t, p.Body, `<dd id="bulk-new">2</dd>`)
		if got.Stored != 2 || got.Skipped != 0 {
			t.Fatalf("the first manifest: %+v", got)
		}
		m2 := "title,file,parent\nThird book,c.txt," + c + "\nFourth book,d.txt," + c + "\n"
		_, p, got = ingestRun(m2, zipOf(t, "c.txt", "scan c", "d.txt", "scan d"), "", nil)
		wantIn(t, p.Body, `<dd id="bulk-new">2</dd>`)
		if strings.Contains(p.Body, "There is nothing new to store") || got.Stored != 2 || got.Skipped != 0 {
			t.Errorf("the second manifest: %+v", got)
		}
		// one manifest with two server folders
		for _, f := range []string{"f1", "f2"} {
			if err := os.MkdirAll(filepath.Join(be.root, f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(be.root, f, "page.txt"), []byte("the page in folder "+f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m3 := "title,file,parent\nA book,page.txt," + c + "\n"
		for _, f := range []string{"f1", "f2"} {
			_, p, got = ingestRun(m3, nil, filepath.Join(be.root, f), nil)
			wantIn(t, p.Body, `<dd id="bulk-new">1</dd>`)
			if got.Stored != 1 || got.Skipped != 0 {
				t.Errorf("folder %s: %+v", f, got)
			}
		}

		// the first manifest again: stored before, naming the works
		b.get("/bulk")
		run := runOf(t, b.upload(m1, z1, ""))
		p = b.get(run)
		wantIn(t, p.Body, `<dd id="bulk-new">0</dd>`, "Rows stored before", `name="anyway"`, "Store the 2 works stored before anyway")
		ids := regexp.MustCompile(`<a href="/works/([^"]+)"><code>`).FindAllStringSubmatch(p.Body, -1)
		if len(ids) != 2 {
			t.Fatalf("the rows stored before name %d works:\n%s", len(ids), p.Body)
		}
		for i, title := range []string{"First book", "Second book"} {
			if w := be.get(shelfmark.ID(ids[i][1])); !strings.Contains(string(w.Metadata), title) {
				t.Errorf("row %d names %s: %+v", i+2, ids[i][1], w.Metadata)
			}
		}
		// stored anyway: two new works
		if s := b.post(run+"/start", url.Values{"anyway": {"1"}}); s.Status != http.StatusSeeOther {
			t.Fatalf("start anyway: %d", s.Status)
		}
		if got = b.waitDone(run); got.Stored != 2 || got.Anyway != 2 || got.Skipped != 0 {
			t.Fatalf("stored anyway: %+v", got)
		}
		// again with the box ticked: skipped, naming the works stored anyway
		run, _, got = ingestRun(m1, z1, "", url.Values{"anyway": {"1"}})
		if got.Stored != 0 || got.Skipped != 2 || len(got.Skips) != 2 || !got.Skips[0].Anyway || got.Skips[0].ID == ids[0][1] || got.Skips[0].URL != "/works/"+got.Skips[0].ID {
			t.Fatalf("stored anyway again: %+v", got)
		}
		wantIn(t, b.get(run).Body, "Skipped as stored before", "row 2: stored anyway before as", `href="/works/`+got.Skips[0].ID+`"`)
	})
}
