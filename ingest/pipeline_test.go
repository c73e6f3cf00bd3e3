package ingest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

type pipelineEnv struct {
	repo  *shelfmark.Repository
	blobs *blob.LocalStore
}

func newPipelineEnv(t *testing.T) *pipelineEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	t.Cleanup(func() { repo.Close(); db.Close(); blobs.Close() })
	return &pipelineEnv{repo: repo, blobs: blobs}
}

func (e *pipelineEnv) run(t *testing.T, root string, opts Options) *Stats {
	t.Helper()
	src, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st, err := Run(context.Background(), e.repo, e.blobs, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPipelineDirectory: a tree of three books is stored whole, pages in
// natural order; a second run skips every item; a bad item is reported
// while the others are stored.
func TestPipelineDirectory(t *testing.T) {
	root := t.TempDir()
	for _, book := range []string{"a", "b", "c"} {
		for _, page := range []string{"page_10.txt", "page_2.txt", "page_1.txt"} {
			writeFile(t, filepath.Join(root, "books", book, page), book+"/"+page)
		}
	}
	writeFile(t, filepath.Join(root, "books", "a", "metadata.json"), `{"dc:title": "Book A", "dc:date": "1901"}`)
	e := newPipelineEnv(t)
	ctx := context.Background()
	coll, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err != nil {
		t.Fatal(err)
	}
	st := e.run(t, root, Options{Collection: coll.ID, Batch: 2})
	if st.Stored != 3 || st.Skipped != 0 || st.Failed != 0 || st.Files != 9 {
		t.Fatalf("first run: %+v", st)
	}
	page, err := e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("members: %v %v", page, err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	src, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	keyA := findRel(t, drain(t, src), real, "dir:books/a").item.Key
	found, err := e.repo.FindSources(ctx, []string{keyA})
	if err != nil || found[keyA] == "" {
		t.Fatalf("source key of book a: %v %v", found, err)
	}
	a, err := e.repo.FindResource(ctx, found[keyA])
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Metadata) != 2 {
		t.Fatalf("book a metadata %v", a.Metadata)
	}
	kids, err := e.repo.ListChildren(ctx, a.ID, shelfmark.PageRequest{})
	if err != nil || len(kids.Items) != 3 {
		t.Fatalf("pages %v %v", kids, err)
	}
	for i, want := range []string{"page_1.txt", "page_2.txt", "page_10.txt"} {
		fs, err := e.repo.FindResource(ctx, kids.Items[i].ID)
		if err != nil || kids.Items[i].Position != i+1 || len(fs.Metadata) != 1 || fs.Metadata[0].Object.Value != want {
			t.Fatalf("page %d: %+v %v", i+1, fs, err)
		}
	}
	// a re-run stores nothing again
	if st := e.run(t, root, Options{Collection: coll.ID}); st.Stored != 0 || st.Skipped != 3 || st.Failed != 0 {
		t.Fatalf("second run: %+v", st)
	}
	// a new book and a bad one (a link out of the tree): one stored, one failed
	writeFile(t, filepath.Join(root, "books", "d", "p1.txt"), "d")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "books", "e", "p1.txt")); err != nil {
		if err := os.MkdirAll(filepath.Join(root, "books", "e"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(root, "books", "e", "p1.txt")); err != nil {
			t.Fatal(err)
		}
	}
	st = e.run(t, root, Options{Collection: coll.ID})
	if st.Stored != 1 || st.Skipped != 3 || st.Failed != 1 || len(st.Failures) != 1 || relKey(st.Failures[0].Key, real) != "dir:books/e" {
		t.Fatalf("third run: %+v", st)
	}
}

// sliceSource serves fixed items.
type sliceSource struct{ items []*Item }

func (s *sliceSource) Next(ctx context.Context) (*Item, error) {
	if len(s.items) == 0 {
		return nil, io.EOF
	}
	it := s.items[0]
	s.items = s.items[1:]
	return it, nil
}

func (s *sliceSource) Close() error { return nil }

// TestPipelineVanishedAndWrongFiles: a file that vanished after it was
// listed, and one whose bytes do not match the digest its source states,
// fail their items with a reason and store nothing of them; the other items
// are stored; FailFast stops at the first.
func TestPipelineVanishedAndWrongFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	writeFile(t, good, "good bytes")
	item := func(key string, f FileRef) *Item {
		return &Item{Key: key, Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(key)}}, Files: []FileRef{f}}
	}
	items := func() []*Item {
		return []*Item{
			item("t:ok1", FileRef{Path: good, Name: "good.txt", MediaType: "text/plain"}),
			item("t:vanished", FileRef{Path: filepath.Join(dir, "gone.txt"), Name: "gone.txt", Size: 5}),
			item("t:wrongsum", FileRef{Path: good, Name: "good.txt", SHA256: strings.Repeat("ab", 32)}),
			item("t:ok2", FileRef{Path: good, Name: "good.txt", SHA256: sha("good bytes")}), // the right digest
			item("t:badhex", FileRef{Path: good, Name: "good.txt", SHA256: "xyz"}),
		}
	}
	e := newPipelineEnv(t)
	st, err := Run(context.Background(), e.repo, e.blobs, &sliceSource{items()}, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 2 || st.Failed != 3 {
		t.Fatalf("%+v", st)
	}
	reasons := map[string]string{}
	for _, f := range st.Failures {
		reasons[f.Key] = f.Reason
	}
	if !strings.Contains(reasons["t:vanished"], "gone.txt") || !strings.Contains(reasons["t:wrongsum"], "sha-256 digest of the received bytes") ||
		!strings.Contains(reasons["t:badhex"], "not 64 hex digits") {
		t.Fatalf("reasons %q", reasons)
	}
	found, err := e.repo.FindSources(context.Background(), []string{"t:vanished", "t:wrongsum", "t:ok1", "t:ok2"})
	if err != nil || len(found) != 2 || found["t:ok1"] == "" || found["t:ok2"] == "" {
		t.Fatalf("stored keys %v %v", found, err)
	}
	// with FailFast the run stops at the first bad item, with an error
	e2 := newPipelineEnv(t)
	st, err = Run(context.Background(), e2.repo, e2.blobs, &sliceSource{items()}, Options{Workers: 1, FailFast: true})
	if err == nil || st.Failed < 1 {
		t.Fatalf("fail-fast: %+v, %v", st, err)
	}
}

// TestPipelineBag: a bag whose manifest states SHA-256 digests is stored
// through the pipeline with its files in order, the digests verified.
func TestPipelineBag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bag")
	writeBag(t, dir, bagSpec{files: map[string]string{"p_1.txt": "one", "p_2.txt": "two", "p_10.txt": "ten"}})
	src, err := OpenBag(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := newPipelineEnv(t)
	st, err := Run(context.Background(), e.repo, e.blobs, src, Options{})
	if err != nil || st.Stored != 1 || st.Files != 3 || st.Failed != 0 {
		t.Fatalf("%+v, %v", st, err)
	}
	src, err = OpenBag(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := drain(t, src)[0].item.Key
	found, err := e.repo.FindSources(context.Background(), []string{key})
	if err != nil || found[key] == "" {
		t.Fatalf("stored keys %v %v", found, err)
	}
	kids, err := e.repo.ListChildren(context.Background(), found[key], shelfmark.PageRequest{})
	if err != nil || len(kids.Items) != 3 {
		t.Fatalf("children %v %v", kids, err)
	}
}
