package export

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/sqlite"
)

// repo is a repository with its content store, on one backend.
type repo struct {
	ctx   context.Context
	eng   *shelfmark.Repository
	store shelfmark.Storage
	blobs *blob.LocalStore
}

// opener opens a fresh store of one backend.
type opener func(t *testing.T) shelfmark.Storage

func backends(t *testing.T, f func(t *testing.T, open opener)) {
	t.Run("sqlite", func(t *testing.T) {
		f(t, func(t *testing.T) shelfmark.Storage {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, func(t *testing.T) shelfmark.Storage {
			s, err := postgres.Open(context.Background(), testkit.PostgresSchema(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

func newRepo(t *testing.T, open opener, now func() time.Time) *repo {
	t.Helper()
	store := open(t)
	ids, err := shelfmark.LoadIDCodec(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{ctx: shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test")), store: store,
		eng: shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids, Now: now})}
	if r.blobs, err = blob.NewLocal(filepath.Join(t.TempDir(), "blobs")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.eng.Close()
		r.blobs.Close()
		store.Close()
	})
	return r
}

func (r *repo) create(t *testing.T, nr *shelfmark.NewResource) shelfmark.ID {
	t.Helper()
	res, err := r.eng.CreateResource(r.ctx, nr)
	if err != nil {
		t.Fatal(err)
	}
	return res.ID
}

// page makes a file set titled title under work holding body as its
// original name.
func (r *repo) page(t *testing.T, work shelfmark.ID, title, name, body string) shelfmark.ID {
	t.Helper()
	b, err := r.blobs.Put(r.ctx, strings.NewReader(body), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := r.create(t, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work,
		Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(title)}}})
	r.create(t, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set, File: &shelfmark.File{
		Name: name, MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], SHA512: b.Digests[shelfmark.SHA512], Use: shelfmark.UseOriginal}})
	return set
}

// shape is what a round trip must keep of a work: its kind, access and
// metadata, and in order each file set's metadata and files.
type shape struct {
	Kind, Visibility string
	Metadata         []string
	Sets             []setShape
}

type setShape struct {
	Metadata []string
	Files    []string // name, media type, size, sha256, use
}

// shapeOf reads the shape of id through preserve.Build.
func (r *repo) shapeOf(t *testing.T, id shelfmark.ID) shape {
	t.Helper()
	ids := r.eng.IDs()
	key, err := ids.Key(id)
	if err != nil {
		t.Fatal(err)
	}
	var out shape
	err = r.store.View(context.Background(), func(tx shelfmark.ReadTx) error {
		st, err := preserve.Build(context.Background(), tx, ids, key)
		if err != nil {
			return err
		}
		var keys []int64
		for _, res := range st.Record.Resources {
			k, _ := ids.Key(shelfmark.ID(res.ID))
			keys = append(keys, k)
		}
		fields, err := tx.FieldsOf(context.Background(), keys)
		if err != nil {
			return err
		}
		stmts := func(k int64) []string {
			var s []string
			for _, st := range shelfmark.StatementsOf(fields[k]) {
				s = append(s, st.Predicate+" "+st.Object.Value+"@"+st.Object.Lang+"^"+st.Object.Datatype)
			}
			slices.Sort(s)
			return s
		}
		for i, res := range st.Record.Resources {
			switch {
			case i == 0:
				out.Kind, out.Visibility, out.Metadata = res.Kind, res.Visibility, stmts(keys[i])
			case res.Kind == "fileset":
				out.Sets = append(out.Sets, setShape{Metadata: stmts(keys[i])})
			case res.Kind == "file" && res.File.Use == shelfmark.UseOriginal:
				f := res.File
				s := &out.Sets[len(out.Sets)-1]
				s.Files = append(s.Files, strings.Join([]string{f.Name, f.MediaType, strconv.FormatInt(f.Size, 10), f.SHA256, f.Use}, " "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// bagitValidate runs bagit-python's validator on a bag.
func bagitValidate(t *testing.T, dir string) {
	t.Helper()
	py := bagitPython(t)
	out, err := exec.Command(py, "-c", "import bagit, sys; assert bagit.VERSION == '1.9.0', bagit.VERSION; b = bagit.Bag(sys.argv[1]); b.validate(); print(sorted(b.algorithms))", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("bagit-python refuses %s: %v\n%s", dir, err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "['sha256', 'sha512']" {
		t.Fatalf("bagit-python reads the algorithms %s", got)
	}
}

// bagitPython is the test virtualenv's interpreter, which has
// bagit-python 1.9.0 (scripts/testdeps.sh). Without SHELFMARK_TEST_PYTHON
// the check is skipped, unless SHELFMARK_REQUIRE_TOOLS=1: then it fails.
func bagitPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("SHELFMARK_TEST_PYTHON")
	if py == "" {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
			t.Fatal("SHELFMARK_TEST_PYTHON is not set and SHELFMARK_REQUIRE_TOOLS=1 (scripts/testdeps.sh installs bagit-python into .build/venv)")
		}
		t.Skip("SHELFMARK_TEST_PYTHON is not set: bagit-python is not run")
	}
	return py
}

// bagInfo reads a bag's bag-info.txt.
func bagInfo(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "bag-info.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		out[k] = v
	}
	return out
}

// TestBagRoundTrip: a book (pages in an order that is not their creation
// order, a derivative, restricted access, a collection) and its collection
// are exported as bags that bagit-python 1.9.0 validates; ingested into a
// fresh repository they come back with the same metadata, access, files
// and order, the work in the collection; a second ingest stores nothing;
// a bag with a changed byte, an extra or a missing payload file is
// refused and nothing of it is stored.
func TestBagRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		now := func() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC) }
		src := newRepo(t, open, now)
		coll := src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Letters")}}})
		work := src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Authenticated, MemberOf: []shelfmark.ID{coll},
			Metadata: []shelfmark.Statement{
				{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("A book of days")},
				{Predicate: shelfmark.NSDC + "title", Object: shelfmark.Term{Kind: shelfmark.Literal, Value: "Un livre des jours", Lang: "fr"}},
				{Predicate: shelfmark.NSDCTerms + "creator", Object: shelfmark.NewLiteral("Ada <Byron> & co")},
				{Predicate: shelfmark.NSDCTerms + "subject", Object: shelfmark.NewIRI("http://id.loc.gov/authorities/subjects/sh85034543")},
			}})
		p1 := src.page(t, work, "p. 1", "page 1.txt", "first page\n")
		p2 := src.page(t, work, "p. 2", "page 2.txt", "second page\n")
		p3 := src.page(t, work, "p. 3", "page%3.txt", "third page\n")
		// a derivative of page 1: described in the record, not exported
		th, err := src.blobs.Put(src.ctx, strings.NewReader("thumbnail"), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: p1, File: &shelfmark.File{Name: "thumb.jpg", MediaType: "image/jpeg",
			Size: th.Size, SHA256: th.Digests[shelfmark.SHA256], Use: shelfmark.UseThumbnail}})
		if _, err := src.eng.SetOrder(src.ctx, work, []shelfmark.ID{p3, p1, p2}, 0); err != nil {
			t.Fatal(err)
		}
		want := src.shapeOf(t, work)
		if len(want.Sets) != 3 || want.Sets[0].Metadata[0] != shelfmark.NSDC+"title p. 3@^" {
			t.Fatalf("the source work is not as built: %+v", want)
		}

		out := filepath.Join(t.TempDir(), "bags")
		ex := New(src.store, src.blobs, src.eng.IDs(), Options{Organization: "Test Library", Now: now})
		for _, id := range []shelfmark.ID{coll, work} {
			res, err := ex.Bag(src.ctx, id, out)
			if err != nil {
				t.Fatal(err)
			}
			bagitValidate(t, res.Dir)
			info := bagInfo(t, res.Dir)
			if info["External-Identifier"] != string(id) || info["Source-Organization"] != "Test Library" || info["Bagging-Date"] != "2026-05-06" ||
				info["Bag-Software-Agent"] != "Shelfmark "+shelfmark.Version || info["Payload-Oxum"] == "" {
				t.Fatalf("bag-info of %s: %v", id, info)
			}
		}
		wbag := filepath.Join(out, string(work))
		for _, p := range []string{"data/object.json", "data/metadata.ttl", "data/dc.xml", "data/files/" + string(p1) + "/page 1.txt",
			"data/files/" + string(p3) + "/page_3.txt", "manifest-sha512.txt", "manifest-sha256.txt", "tagmanifest-sha512.txt", "tagmanifest-sha256.txt"} {
			if _, err := os.Stat(filepath.Join(wbag, p)); err != nil {
				t.Fatalf("the work's bag lacks %s: %v", p, err)
			}
		}
		dc, _ := os.ReadFile(filepath.Join(wbag, "data/dc.xml"))
		if !strings.Contains(string(dc), `<dc:title xml:lang="fr">Un livre des jours</dc:title>`) || !strings.Contains(string(dc), "Ada &lt;Byron&gt; &amp; co") {
			t.Fatalf("dc.xml: %s", dc)
		}
		if _, err := os.Stat(filepath.Join(wbag, "data/files/"+string(p1)+"/thumb.jpg")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the derivative was exported: %v", err)
		}
		if _, err := ex.Bag(src.ctx, work, out); err == nil || !strings.Contains(err.Error(), "exists already") {
			t.Fatalf("a second export over the first: %v", err)
		}
		if _, err := ex.Bag(src.ctx, p1, out); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Fatalf("export of a file set: %v", err)
		}

		dst := newRepo(t, open, now)
		run := func(dir string) *ingest.Stats {
			t.Helper()
			s, err := ingest.OpenBag(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st, err := ingest.Run(dst.ctx, dst.eng, dst.blobs, s, ingest.Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}

		// tampered bags first: refused, nothing stored
		tamper := map[string]func(dir string){
			"a changed byte": func(dir string) {
				p := filepath.Join(dir, "data/files", string(p2), "page 2.txt")
				if err := os.WriteFile(p, []byte("SECOND page\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			"an extra file": func(dir string) {
				if err := os.WriteFile(filepath.Join(dir, "data/extra.txt"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			"a missing file": func(dir string) {
				if err := os.Remove(filepath.Join(dir, "data/files", string(p3), "page_3.txt")); err != nil {
					t.Fatal(err)
				}
			},
		}
		for what, f := range tamper {
			dir := filepath.Join(t.TempDir(), string(work))
			copyTree(t, wbag, dir)
			f(dir)
			st := run(dir)
			if st.Stored != 0 || st.Failed != 1 {
				t.Fatalf("a bag with %s: %+v", what, st)
			}
			t.Logf("a bag with %s: %s", what, st.Failures[0].Reason)
		}
		found, err := dst.eng.FindSources(dst.ctx, []string{"shelfmark:" + string(work)})
		if err != nil || len(found) != 0 {
			t.Fatalf("a refused bag left %v %v", found, err)
		}
		for _, body := range []string{"first page\n", "third page\n"} { // the pages a tampered bag held intact
			b, err := src.blobs.Put(src.ctx, strings.NewReader(body), shelfmark.PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rc, err := dst.blobs.Open(dst.ctx, b.Digests[shelfmark.SHA256]); err == nil {
				rc.Close()
				t.Fatalf("a refused bag left the bytes of %q in the content store", body)
			}
		}

		// the collection, then the work
		if st := run(filepath.Join(out, string(coll))); st.Stored != 1 {
			t.Fatalf("collection: %+v", st)
		}
		if st := run(wbag); st.Stored != 1 || st.Files != 3 {
			t.Fatalf("work: %+v", st)
		}
		found, err = dst.eng.FindSources(dst.ctx, []string{"shelfmark:" + string(work), "shelfmark:" + string(coll)})
		if err != nil || len(found) != 2 {
			t.Fatalf("find the ingested bags: %v %v", found, err)
		}
		got := dst.shapeOf(t, found["shelfmark:"+string(work)])
		if !equalShape(got, want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
		}
		if c := dst.shapeOf(t, found["shelfmark:"+string(coll)]); !equalShape(c, src.shapeOf(t, coll)) {
			t.Fatalf("collection round trip: %+v", c)
		}
		var memberOf []int64
		wkey, _ := dst.eng.IDs().Key(found["shelfmark:"+string(work)])
		ckey, _ := dst.eng.IDs().Key(found["shelfmark:"+string(coll)])
		if err := dst.store.View(dst.ctx, func(tx shelfmark.ReadTx) error {
			memberOf, err = tx.MemberOf(dst.ctx, wkey)
			return err
		}); err != nil || !slices.Equal(memberOf, []int64{ckey}) {
			t.Fatalf("the ingested work is a member of %v (%v), want [%d]", memberOf, err, ckey)
		}
		if st := run(wbag); st.Stored != 0 || st.Skipped != 1 {
			t.Fatalf("a second ingest of the bag: %+v", st)
		}
	})
}

func equalShape(a, b shape) bool {
	if a.Kind != b.Kind || a.Visibility != b.Visibility || !slices.Equal(a.Metadata, b.Metadata) || len(a.Sets) != len(b.Sets) {
		return false
	}
	for i := range a.Sets {
		if !slices.Equal(a.Sets[i].Metadata, b.Sets[i].Metadata) || !slices.Equal(a.Sets[i].Files, b.Sets[i].Files) {
			return false
		}
	}
	return true
}

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOCFLExport: objects the preservation copy holds are copied with
// all their versions, an object it does not hold yet is written from the
// database as one version; ocfl-py validates the new root; an existing
// destination is refused.
func TestOCFLExport(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		clock := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
		now := func() time.Time { return clock }
		src := newRepo(t, open, now)
		fsys, err := ocfl.NewDirFS(filepath.Join(t.TempDir(), "ocfl"))
		if err != nil {
			t.Fatal(err)
		}
		root, err := ocfl.InitRoot(context.Background(), fsys)
		if err != nil {
			t.Fatal(err)
		}
		p := preserve.New(src.store, src.blobs, root, src.eng.IDs(), preserve.Options{Now: now, Window: time.Second})
		coll := src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Letters")}}})
		work := src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll},
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("v1")}}})
		src.page(t, work, "p. 1", "a.txt", "one")
		clock = clock.Add(time.Minute)
		if _, _, err := p.CatchUp(src.ctx); err != nil {
			t.Fatal(err)
		}
		v1 := shelfmark.NewLiteral("v1")
		if _, err := src.eng.UpdateResource(src.ctx, work, shelfmark.ResourceUpdate{
			Remove: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: v1}},
			Add:    []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("v2")}}}); err != nil {
			t.Fatal(err)
		}
		src.page(t, work, "p. 2", "b.txt", "two")
		clock = clock.Add(time.Minute)
		if _, _, err := p.CatchUp(src.ctx); err != nil {
			t.Fatal(err)
		}
		late := src.create(t, &shelfmark.NewResource{Kind: shelfmark.KindWork,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("not preserved yet")}}})
		src.page(t, late, "p. 1", "c.txt", "three")

		ex := New(src.store, src.blobs, src.eng.IDs(), Options{Preservation: root, Now: now})
		dir := filepath.Join(t.TempDir(), "export")
		res, err := ex.OCFL(src.ctx, []shelfmark.ID{work, coll, late, work}, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Copied, []shelfmark.ID{work, coll}) || !slices.Equal(res.Written, []shelfmark.ID{late}) {
			t.Fatalf("copied %v, written %v", res.Copied, res.Written)
		}
		py := testkit.OCFLPython(t)
		vr := testkit.OCFLPyRoot(t, py, "../ocfl/testdata/ocflpy_validate.py", dir)
		if !vr.Root.Valid || vr.Root.NumObjects != 3 || vr.Root.GoodObjects != 3 || vr.Root.Warnings != 0 {
			t.Fatalf("ocfl-py on the exported root: %+v", vr)
		}
		efs, err := ocfl.NewDirFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		eroot, err := ocfl.OpenRoot(context.Background(), efs)
		if err != nil {
			t.Fatal(err)
		}
		orig, err := root.Open(context.Background(), preserve.ObjectID(work))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := eroot.Open(context.Background(), preserve.ObjectID(work))
		if err != nil {
			t.Fatal(err)
		}
		if obj.Head() != orig.Head() || obj.Head() < 2 {
			t.Fatalf("the exported work has %d versions, the preservation copy %d", obj.Head(), orig.Head())
		}
		for v := 1; v <= obj.Head(); v++ {
			a, _ := orig.State(v)
			b, _ := obj.State(v)
			if len(a) == 0 || len(a) != len(b) {
				t.Fatalf("version %d: %v against %v", v, b, a)
			}
			for k, d := range a {
				if b[k] != d {
					t.Fatalf("version %d: %s is %s, the copy has %s", v, k, b[k], d)
				}
			}
		}
		if _, err := ex.OCFL(src.ctx, []shelfmark.ID{work}, dir); err == nil {
			t.Fatal("an export over an existing root succeeded")
		}
	})
}
