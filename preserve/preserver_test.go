package preserve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// stack is a repository with a content store, an OCFL root and a
// preserver, on one clock.
type stack struct {
	ctx   context.Context
	repo  *shelfmark.Repository
	blobs *blob.LocalStore
	root  *ocfl.Root
	fsys  *ocfl.DirFS
	p     *Preserver
	clock *clock
}

func stacks(t *testing.T, f func(t *testing.T, s *stack)) {
	open := map[string]func(t *testing.T, dir string) (shelfmark.Storage, error){
		"sqlite": func(t *testing.T, dir string) (shelfmark.Storage, error) {
			return sqlite.Open(context.Background(), filepath.Join(dir, "db.sqlite"), sqlite.Options{})
		},
		"postgres": func(t *testing.T, _ string) (shelfmark.Storage, error) {
			return postgres.Open(context.Background(), testkit.PostgresSchema(t), postgres.Options{})
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := open[name](t, dir)
			if err != nil {
				t.Fatal(err)
			}
			s := &stack{clock: &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}}
			s.ctx = shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
			ids, err := shelfmark.LoadIDCodec(context.Background(), store)
			if err != nil {
				t.Fatal(err)
			}
			s.repo = shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids, Now: s.clock.Now})
			if s.blobs, err = blob.NewLocal(filepath.Join(dir, "blobs")); err != nil {
				t.Fatal(err)
			}
			if s.fsys, err = ocfl.NewDirFS(filepath.Join(dir, "ocfl")); err != nil {
				t.Fatal(err)
			}
			if s.root, err = ocfl.InitRoot(context.Background(), s.fsys); err != nil {
				t.Fatal(err)
			}
			s.p = New(store, s.blobs, s.root, ids, Options{Now: s.clock.Now, Batch: 4})
			t.Cleanup(func() {
				s.repo.Close()
				s.blobs.Close()
				store.Close()
			})
			f(t, s)
		})
	}
}

// page stores bytes and makes a file set holding them as its original.
func (s *stack) page(t *testing.T, work shelfmark.ID, body string) shelfmark.ID {
	t.Helper()
	b, err := s.blobs.Put(s.ctx, strings.NewReader(body), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
		Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}); err != nil {
		t.Fatal(err)
	}
	return set.ID
}

// object opens the object of id.
func (s *stack) object(t *testing.T, id shelfmark.ID) *ocfl.Object {
	t.Helper()
	o, err := s.root.Open(context.Background(), ObjectID(id))
	if err != nil {
		t.Fatal(err)
	}
	if rep := ocfl.ValidateObject(context.Background(), s.fsys, o.Dir()); !rep.Valid() || len(rep.Warnings) > 0 {
		t.Fatalf("object %s: %s", id, rep)
	}
	return o
}

func (s *stack) read(t *testing.T, o *ocfl.Object, v int, path string) string {
	t.Helper()
	rc, err := o.Open(context.Background(), v, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPreserver: changes are preserved once they are Window old, one
// version per object for the changes of a window; an edit writes only the
// record and the metadata again; a step repeated from an older checkpoint
// writes nothing; a page's file replaced (ReplacePageFile) stays in the
// versions before; the page chosen to represent a work is named in its
// metadata; a deleted work's newest version is its tombstone and its
// earlier versions still read.
func TestPreserver(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		title := func(v string) []shelfmark.Statement {
			return []shelfmark.Statement{{Predicate: "http://purl.org/dc/terms/title", Object: shelfmark.NewLiteral(v)}}
		}
		coll, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Letters")})
		if err != nil {
			t.Fatal(err)
		}
		work, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: title("A letter")})
		if err != nil {
			t.Fatal(err)
		}
		var pages []shelfmark.ID
		for _, body := range []string{"first page", "second page", "third page"} {
			pages = append(pages, s.page(t, work.ID, body))
		}
		if _, err := s.repo.SetOrder(s.ctx, work.ID, []shelfmark.ID{pages[2], pages[0], pages[1]}, 0); err != nil {
			t.Fatal(err)
		}

		// not yet Window old
		if rows, versions, err := s.p.CatchUp(context.Background()); err != nil || rows != 0 || versions != 0 {
			t.Fatalf("too early: %d rows, %d versions, %v", rows, versions, err)
		}
		s.clock.Add(DefaultWindow)
		rows, versions, err := s.p.CatchUp(context.Background())
		if err != nil || rows == 0 || versions != 2 {
			t.Fatalf("first catch-up: %d rows, %d versions (want the work's and the collection's), %v", rows, versions, err)
		}
		o := s.object(t, work.ID)
		if o.Head() != 1 {
			t.Fatalf("head %d", o.Head())
		}
		var rec Record
		if err := json.Unmarshal([]byte(s.read(t, o, 1, RecordPath)), &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Resources) != 7 || rec.Resources[1].ID != string(pages[2]) || rec.Resources[2].File.SHA512 == "" {
			t.Fatalf("record of version 1: %+v", rec)
		}
		if got := s.read(t, o, 1, rec.Resources[2].File.Path); got != "third page" {
			t.Fatalf("the first page in order holds %q", got)
		}
		s.object(t, coll.ID)

		// an edit: one new version, with only the record and metadata new
		s.clock.Add(time.Minute)
		if _, err := s.repo.UpdateResource(s.ctx, work.ID, shelfmark.ResourceUpdate{Replace: &[]shelfmark.Statement{
			{Predicate: "http://purl.org/dc/terms/title", Object: shelfmark.NewLiteral("A letter, 1820")}}}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("after an edit: %d versions, %v", versions, err)
		}
		o = s.object(t, work.ID)
		if o.Head() != 2 || !strings.Contains(s.read(t, o, 2, MetadataPath), "A letter, 1820") {
			t.Fatalf("version 2 (head %d): %s", o.Head(), s.read(t, o, o.Head(), MetadataPath))
		}
		if n := len(o.ContentFiles()); n != 3+2+2 {
			t.Fatalf("%d content files after one edit, want the 3 originals once and the record and metadata twice", n)
		}

		// a page's file replaced and the work made private: one version,
		// whose only new bytes are the new file's
		s.clock.Add(time.Minute)
		kids, err := s.repo.ListChildren(s.ctx, pages[0], shelfmark.PageRequest{Limit: 10})
		if err != nil || len(kids.Items) != 1 {
			t.Fatalf("the first page's files: %v, %v", kids, err)
		}
		b, err := s.blobs.Put(s.ctx, strings.NewReader("first page, rescanned"), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.repo.ReplacePageFile(s.ctx, work.ID, pages[0], &shelfmark.File{
			Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256]}, 0); err != nil {
			t.Fatal(err)
		}
		private := shelfmark.Private
		if _, err := s.repo.UpdateResource(s.ctx, work.ID, shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("after a file replaced and a visibility change: %d versions, %v", versions, err)
		}
		o = s.object(t, work.ID)
		if n := len(o.ContentFiles()); o.Head() != 3 || n != 3+2+2+2 {
			t.Fatalf("head %d with %d content files, want 3 with the new file and the record added (the metadata did not change)", o.Head(), n)
		}
		var rec3 Record
		if err := json.Unmarshal([]byte(s.read(t, o, 3, RecordPath)), &rec3); err != nil {
			t.Fatal(err)
		}
		if rec3.Resources[0].Visibility != string(shelfmark.Private) {
			t.Fatalf("version 3's work is %q, want private", rec3.Resources[0].Visibility)
		}
		found := false
		for _, r := range rec3.Resources {
			if r.File != nil && r.Parent == string(pages[0]) {
				found = s.read(t, o, 3, r.File.Path) == "first page, rescanned"
			}
		}
		if !found {
			t.Fatalf("version 3 does not hold the first page's new file: %+v", rec3.Resources)
		}
		// the replaced file stays in the history
		for _, r := range rec.Resources {
			if r.File != nil && r.Parent == string(pages[0]) {
				if got := s.read(t, o, 2, r.File.Path); got != "first page" {
					t.Fatalf("version 2's first page after its file was replaced: %q", got)
				}
			}
		}

		// the page chosen to represent the work: a version whose metadata
		// names the page by its IRI
		s.clock.Add(time.Minute)
		if _, err := s.repo.SetThumbnailPage(s.ctx, work.ID, pages[2], 0); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("after the thumbnail's page was chosen: %d versions, %v", versions, err)
		}
		o = s.object(t, work.ID)
		if meta := s.read(t, o, o.Head(), MetadataPath); !strings.Contains(meta, "<"+shelfmark.PredThumbnailPage+"> <"+SubjectIRI(pages[2])+">") {
			t.Fatalf("version %d's metadata does not name the chosen page:\n%s", o.Head(), meta)
		}

		// a step repeated from an older checkpoint writes nothing again
		if err := s.repo.Storage().Update(context.Background(), func(tx shelfmark.WriteTx) error {
			v, err := tx.Counter(context.Background(), CounterCheckpoint)
			if err != nil {
				return err
			}
			_, err = tx.AddCounter(context.Background(), CounterCheckpoint, -v)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if rows, versions, err := s.p.CatchUp(context.Background()); err != nil || rows == 0 || versions != 0 {
			t.Fatalf("replayed: %d rows, %d versions, %v", rows, versions, err)
		}

		// deleted: the tombstone is the newest version, the pages read still
		if err := s.repo.DeleteResource(s.ctx, work.ID, 0); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("after the deletion: %d versions, %v", versions, err)
		}
		o = s.object(t, work.ID)
		state, err := o.State(o.Head())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := state[RecordPath]; !ok || len(state) != 1 {
			t.Fatalf("tombstone version holds %v", state)
		}
		if got := s.read(t, o, 1, rec.Resources[2].File.Path); got != "third page" {
			t.Fatalf("version 1 after the deletion: %q", got)
		}
		if rep := ocfl.ValidateRoot(context.Background(), s.fsys); !rep.Valid() {
			t.Fatalf("storage root: %s", rep)
		}
		// the independent check: ocfl-py reads what the preserver wrote
		res := testkit.OCFLPyRoot(t, testkit.OCFLPython(t), "../ocfl/testdata/ocflpy_validate.py", s.fsys.Dir())
		if !res.Root.Valid || res.Root.Errors+res.Root.Warnings > 0 || res.Root.NumObjects != 3 || res.Root.GoodObjects != 3 {
			t.Errorf("ocfl-py on the storage root: %+v", res.Root)
		}
		for _, o := range res.Objects {
			if !o.Valid || o.Errors+o.Warnings > 0 {
				t.Errorf("ocfl-py on %s: %+v", o.ID, o)
			}
		}
	})
}

// TestOtherRoot: a preserver given a storage root other than the one the
// database was preserved to writes nothing there and says why.
func TestOtherRoot(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		if _, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("%d versions, %v", versions, err)
		}
		fsys, err := ocfl.NewDirFS(filepath.Join(t.TempDir(), "other"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := ocfl.InitRoot(context.Background(), fsys)
		if err != nil {
			t.Fatal(err)
		}
		p := New(s.repo.Storage(), s.blobs, other, s.repo.IDs(), Options{Now: s.clock.Now})
		if _, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, _, err := p.CatchUp(context.Background()); !errors.Is(err, ErrOtherRoot) {
			t.Fatalf("another root: %v, want ErrOtherRoot", err)
		}
		if err := p.Ready(context.Background()); !errors.Is(err, ErrOtherRoot) {
			t.Fatalf("ready after a catch-up on another root: %v, want it to say why", err)
		}
		var n int
		if err := other.Objects(context.Background(), func(string, error) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("the other root holds %d objects", n)
		}
		// the right root goes on
		if _, versions, err := s.p.CatchUp(context.Background()); err != nil || versions != 1 {
			t.Fatalf("%d versions, %v", versions, err)
		}
	})
}

// TestPreserverFailureKeepsCheckpoint: when one object cannot be written
// (its original's bytes are not in the content store yet), the step fails
// and the checkpoint stays, so that the next step preserves every object
// of the batch once the bytes are there.
func TestPreserverFailureKeepsCheckpoint(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		var works []shelfmark.ID
		for range 5 {
			w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
			if err != nil {
				t.Fatal(err)
			}
			works = append(works, w.ID)
		}
		body := "bytes stored late"
		sum := sha256.Sum256([]byte(body))
		set, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: works[2]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
			Name: "late.txt", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:]), Use: shelfmark.UseOriginal}}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, _, err := s.p.CatchUp(context.Background()); err == nil {
			t.Fatal("a step whose original is missing succeeded")
		}
		var cp int64
		if err := s.repo.Storage().View(context.Background(), func(tx shelfmark.ReadTx) error {
			cp, err = tx.Counter(context.Background(), CounterCheckpoint)
			return err
		}); err != nil || cp != 0 {
			t.Fatalf("checkpoint %d after a failed step, %v", cp, err)
		}
		if _, err := s.blobs.Put(s.ctx, strings.NewReader(body), shelfmark.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.p.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, w := range works {
			if got := s.read(t, s.object(t, w), 1, RecordPath); !strings.Contains(got, string(w)) {
				t.Fatalf("work %s: %s", w, got)
			}
		}
	})
}

// fullFS is a storage root's FS whose disk fills up: while full, every
// write fails with ENOSPC once its first bytes are written.
type fullFS struct {
	*ocfl.DirFS
	full atomic.Bool
}

func (f *fullFS) check(name string) error {
	if f.full.Load() {
		return fmt.Errorf("write %s: %w", name, syscall.ENOSPC)
	}
	return nil
}

func (f *fullFS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	if err := f.check(name); err != nil {
		return err
	}
	return f.DirFS.Write(ctx, name, r, exclusive)
}

func (f *fullFS) WriteLater(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	if err := f.check(name); err != nil {
		return err
	}
	return f.DirFS.WriteLater(ctx, name, r, exclusive)
}

// TestPreserverRootFull: while the storage root's disk is full, a
// catch-up fails, the copy reports itself behind, the checkpoint stays
// and no partial version is left; once there is space the copy catches up
// with everything.
func TestPreserverRootFull(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		ffs := &fullFS{DirFS: s.fsys}
		root, err := ocfl.OpenRoot(context.Background(), ffs)
		if err != nil {
			t.Fatal(err)
		}
		p := New(s.repo.Storage(), s.blobs, root, s.repo.IDs(), Options{Now: s.clock.Now, Batch: 4})
		var works []shelfmark.ID
		for i := range 3 {
			w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
			if err != nil {
				t.Fatal(err)
			}
			s.page(t, w.ID, fmt.Sprint("page of work ", i))
			works = append(works, w.ID)
		}
		s.clock.Add(DefaultWindow)
		if _, _, err := p.CatchUp(context.Background()); err != nil { // the repository object
			t.Fatal(err)
		}
		ffs.full.Store(true)
		w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		works = append(works, w.ID)
		s.clock.Add(DefaultWindow)
		if _, _, err := p.CatchUp(context.Background()); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("catch-up on a full disk: %v, want ENOSPC", err)
		}
		if err := p.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Fatalf("ready on a full disk: %v", err)
		}
		if p.Stats().Failures != 1 {
			t.Fatalf("failures %d, want 1", p.Stats().Failures)
		}
		if rep := ocfl.ValidateRoot(context.Background(), s.fsys); len(rep.Errors)+len(rep.Warnings) > 0 {
			t.Fatalf("storage root after the failed catch-up:\n%s", rep)
		}
		if _, err := s.root.Open(context.Background(), ObjectID(w.ID)); !errors.Is(err, ocfl.ErrNotFound) {
			t.Fatalf("the work made while full: %v, want no object", err)
		}
		ffs.full.Store(false)
		if _, _, err := p.CatchUp(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := p.Ready(context.Background()); err != nil {
			t.Fatalf("ready after the catch-up: %v", err)
		}
		for _, w := range works {
			if o := s.object(t, w); o.Head() != 1 {
				t.Fatalf("work %s at head %d", w, o.Head())
			}
		}
		if rep := ocfl.ValidateRoot(context.Background(), s.fsys); len(rep.Errors)+len(rep.Warnings) > 0 {
			t.Fatalf("storage root after the catch-up:\n%s", rep)
		}
	})
}

// TestPreserveAbsent: a resource purged after its change was read has
// nothing to preserve: no version, no error (a step must not stall on it).
func TestPreserveAbsent(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		if wrote, err := s.p.Preserve(context.Background(), 1<<30, s.clock.Now()); wrote || err != nil {
			t.Fatalf("preserving a resource the database does not hold: %v, %v", wrote, err)
		}
		if err := s.p.purged(context.Background(), []int64{1 << 30}); err != nil {
			t.Fatalf("removing the object of an absent resource (none there): %v", err)
		}
	})
}
