package storagetest

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// preserved is a repository whose changes a preserver copies into an
// OCFL storage root, on a clock the test moves.
type preserved struct {
	store shelfmark.Storage
	repo  *shelfmark.Repository
	ids   *shelfmark.IDCodec
	blobs *blob.LocalStore
	fsys  *ocfl.DirFS
	root  *ocfl.Root
	p     *preserve.Preserver
	mu    sync.Mutex
	now   time.Time
	sys   context.Context
	// rec records the statements store runs, while it captures.
	rec *recorder
}

func (s *preserved) clock() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.now }

func newPreserved(t *testing.T, open Opener) *preserved {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s := &preserved{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), rec: &recorder{}}
	s.store = open(t, s.rec.trace)
	s.sys = shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	var err error
	if s.ids, err = shelfmark.LoadIDCodec(ctx, s.store); err != nil {
		t.Fatal(err)
	}
	s.repo = shelfmark.NewRepository(s.store, shelfmark.RepositoryOptions{IDs: s.ids, Now: s.clock})
	if s.blobs, err = blob.NewLocal(filepath.Join(dir, "blobs")); err != nil {
		t.Fatal(err)
	}
	if s.fsys, err = ocfl.NewDirFS(filepath.Join(dir, "ocfl")); err != nil {
		t.Fatal(err)
	}
	if s.root, err = ocfl.InitRoot(ctx, s.fsys); err != nil {
		t.Fatal(err)
	}
	s.p = preserve.New(s.store, s.blobs, s.root, s.ids, preserve.Options{Now: s.clock, Window: time.Second, Batch: 3})
	t.Cleanup(func() {
		s.repo.Close()
		s.blobs.Close()
		s.store.Close()
	})
	return s
}

// catchUp moves the clock past the window and preserves every change.
func (s *preserved) catchUp(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	s.now = s.now.Add(2 * time.Second)
	s.mu.Unlock()
	if _, _, err := s.p.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// user adds the user name and returns a context acting as them (with
// the write scope).
func (s *preserved) user(t *testing.T, name string) context.Context {
	t.Helper()
	ctx := context.Background()
	u := &shelfmark.User{Name: name, Created: s.clock()}
	if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.InsertUser(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	return shelfmark.WithCaller(ctx, &shelfmark.Caller{User: u.Key, Name: name, Scope: shelfmark.ScopeWrite})
}

// page stores body and makes a file set of work holding it as its
// original.
func (s *preserved) page(t *testing.T, ctx context.Context, work shelfmark.ID, body string) (set, file shelfmark.ID) {
	t.Helper()
	fs := rs(t)(s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work,
		Metadata: []shelfmark.Statement{title("page " + body)}}))
	return fs.ID, s.file(t, ctx, fs.ID, body)
}

// file stores body as an original of the file set.
func (s *preserved) file(t *testing.T, ctx context.Context, set shelfmark.ID, body string) shelfmark.ID {
	t.Helper()
	b, err := s.blobs.Put(ctx, strings.NewReader(body), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := rs(t)(s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set, File: &shelfmark.File{
		Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}))
	return f.ID
}

// rebuilt rebuilds s's storage root into a new store and content store.
func (s *preserved) rebuilt(t *testing.T, open Opener) (shelfmark.Storage, *blob.LocalStore, *preserve.RebuildReport) {
	t.Helper()
	dst := open(t, nil)
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		blobs.Close()
		dst.Close()
	})
	var progress []preserve.RebuildProgress
	rep, err := preserve.Rebuild(context.Background(), s.root, dst, blobs, preserve.RebuildOptions{Batch: 2, Now: s.clock,
		Progress: func(p preserve.RebuildProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != progress[len(progress)-1].Total {
		t.Errorf("progress %+v does not reach the total", progress)
	}
	return dst, blobs, rep
}

// testRebuild: a repository rebuilt from its OCFL copy alone (a book
// with reordered pages, edits, a replaced file, a visibility change, an
// embargo, a deleted work, a child work, a depositor, grants and source
// keys) holds the same resources, answers the same, holds the same
// originals, keeps the preserver's place (no object is written again) and
// mints new keys after the old ones; a second rebuild into it is refused.
func testRebuild(t *testing.T, open Opener) {
	s := newPreserved(t, open)
	ctx := context.Background()
	sys := s.sys
	asAlice := s.user(t, "alice")

	coll := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("Books")}}))
	collKey, _ := s.ids.Key(coll.ID)
	if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetGrants(ctx, collKey, []shelfmark.Grant{{Resource: collKey, Principal: "user:alice", Role: shelfmark.RoleDepositor},
			{Resource: collKey, Principal: "group:staff", Role: shelfmark.RoleViewer}})
	}); err != nil {
		t.Fatal(err)
	}
	nested := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{coll.ID}}))
	book := rs(t)(s.repo.CreateResource(asAlice, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID, nested.ID},
		Metadata: []shelfmark.Statement{title("A book"),
			{Predicate: "http://purl.org/dc/terms/date", Object: shelfmark.Term{Kind: shelfmark.Literal, Value: "1901", Datatype: "http://www.w3.org/2001/XMLSchema#gYear"}},
			{Predicate: "http://purl.org/dc/terms/subject", Object: shelfmark.Term{Kind: shelfmark.IRI, Value: "http://id.loc.gov/authorities/subjects/sh85076502"}},
			{Predicate: "http://purl.org/dc/terms/description", Object: shelfmark.Term{Kind: shelfmark.Literal, Value: "Un livre\n« deux »", Lang: "fr"}}}}))
	p1, f1 := s.page(t, sys, book.ID, "one")
	p2, f2 := s.page(t, sys, book.ID, "two")
	p3, _ := s.page(t, sys, book.ID, "three")
	rs(t)(s.repo.SetOrder(sys, book.ID, []shelfmark.ID{p3, p1}, 0)) // p2 unordered
	child := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: book.ID, Metadata: []shelfmark.Statement{title("Volume 2")}}))
	s.page(t, sys, child.ID, "child page")
	hidden := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	s.page(t, sys, hidden.ID, "hidden page")
	embargoed := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	s.page(t, sys, embargoed.ID, "embargoed page")
	gone := rs(t)(s.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	goneSet, _ := s.page(t, sys, gone.ID, "gone page")
	bookKey, _ := s.ids.Key(book.ID)
	if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertSources(ctx, []string{"marc:001", "dir:/scans/book"}, []int64{bookKey, bookKey})
	}); err != nil {
		t.Fatal(err)
	}
	s.catchUp(t)

	// edits, a replaced file, a visibility change, an embargo
	rs(t)(s.repo.UpdateResource(sys, book.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title("A book, 2nd title")}}))
	if err := s.repo.DeleteResource(sys, f2, 0); err != nil {
		t.Fatal(err)
	}
	f2b := s.file(t, sys, p2, "two, rescanned")
	private := shelfmark.Private
	rs(t)(s.repo.UpdateResource(sys, hidden.ID, shelfmark.ResourceUpdate{Visibility: &private}))
	until := s.clock().Add(365 * 24 * time.Hour)
	embargo := &until
	rs(t)(s.repo.UpdateResource(sys, embargoed.ID, shelfmark.ResourceUpdate{Embargo: &embargo}))
	rs(t)(s.repo.UpdateResource(sys, goneSet, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title("last words")}}))
	s.catchUp(t)
	if err := s.repo.DeleteResource(sys, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	s.catchUp(t)

	want, err := Dump(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	dst, blobs, rep := s.rebuilt(t, open)
	for _, sk := range rep.Skipped {
		t.Errorf("skipped %s: %s", sk.ID, sk.Reason)
	}
	got, err := Dump(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffLines(want, got); d != "" {
		t.Fatalf("the rebuilt repository differs (- original, + rebuilt):\n%s", d)
	}
	if len(rep.Skipped) != 0 || rep.Written != 7 || rep.Originals != 8 {
		t.Errorf("report %+v, want 7 objects written (2 collections, 5 works), 8 originals (6 live, 2 deleted), none skipped", rep)
	}

	// the API answers the same, for the system, alice and anonymous
	ids2, err := shelfmark.LoadIDCodec(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	repo2 := shelfmark.NewRepository(dst, shelfmark.RepositoryOptions{IDs: ids2, Now: s.clock})
	defer repo2.Close()
	var alice2 *shelfmark.User
	if err := dst.View(ctx, func(tx shelfmark.ReadTx) error {
		alice2, err = tx.UserByName(ctx, "alice")
		return err
	}); err != nil || alice2 == nil {
		t.Fatalf("alice was not made again: %v", err)
	}
	callers := map[string][2]context.Context{
		"system":    {sys, sys},
		"alice":     {asAlice, shelfmark.WithCaller(ctx, &shelfmark.Caller{User: alice2.Key, Name: "alice", Scope: shelfmark.ScopeWrite})},
		"anonymous": {as(shelfmark.Anonymous()), as(shelfmark.Anonymous())},
	}
	for who, c := range callers {
		for _, id := range []shelfmark.ID{coll.ID, nested.ID, book.ID, p1, f1, p2, f2, f2b, child.ID, hidden.ID, embargoed.ID, gone.ID, goneSet} {
			a, errA := s.repo.FindResource(c[0], id)
			b, errB := repo2.FindResource(c[1], id)
			if ja, jb := answer(a, errA), answer(b, errB); ja != jb {
				t.Errorf("%s: FindResource(%s):\n original %s\n rebuilt  %s", who, id, ja, jb)
			}
		}
		a, errA := s.repo.ListChildren(c[0], book.ID, shelfmark.PageRequest{Metadata: true})
		b, errB := repo2.ListChildren(c[1], book.ID, shelfmark.PageRequest{Metadata: true})
		if ja, jb := answer(a, errA), answer(b, errB); ja != jb {
			t.Errorf("%s: ListChildren(book):\n original %s\n rebuilt  %s", who, ja, jb)
		}
		a, errA = s.repo.ListMembers(c[0], coll.ID, shelfmark.PageRequest{})
		b, errB = repo2.ListMembers(c[1], coll.ID, shelfmark.PageRequest{})
		if ja, jb := answer(a, errA), answer(b, errB); ja != jb {
			t.Errorf("%s: ListMembers(coll):\n original %s\n rebuilt  %s", who, ja, jb)
		}
	}

	// every live original's bytes are in the new content store
	for _, body := range []string{"one", "two, rescanned", "three", "child page", "hidden page", "embargoed page"} {
		b, err := s.blobs.Put(ctx, strings.NewReader(body), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rc, err := blobs.Open(ctx, b.Digests[shelfmark.SHA256])
		if err != nil {
			t.Fatalf("original %q: %v", body, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(data) != body {
			t.Errorf("original %q reads %q, %v", body, data, err)
		}
	}

	// a preserver on the rebuilt database continues the copy: nothing to
	// write again, and a new work (with a key after the old ones) is
	// preserved
	p2r := preserve.New(dst, blobs, s.root, ids2, preserve.Options{Now: s.clock, Window: time.Second})
	if rows, versions, err := p2r.CatchUp(ctx); err != nil || rows != 0 || versions != 0 {
		t.Fatalf("catch-up after the rebuild: %d rows, %d versions, %v; want none", rows, versions, err)
	}
	fresh := rs(t)(repo2.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("new")}}))
	if strings.Contains(want, string(fresh.ID)) {
		t.Fatalf("the rebuilt repository minted %s again", fresh.ID)
	}
	s.mu.Lock()
	s.now = s.now.Add(2 * time.Second)
	s.mu.Unlock()
	if _, versions, err := p2r.CatchUp(ctx); err != nil || versions != 1 {
		t.Fatalf("catch-up of a new work: %d versions, %v; want 1", versions, err)
	}

	// a second rebuild into it, or one into a database with resources, is
	// refused
	if _, err := preserve.Rebuild(ctx, s.root, dst, blobs, preserve.RebuildOptions{}); !errors.Is(err, preserve.ErrNotEmpty) {
		t.Errorf("a second rebuild: %v, want ErrNotEmpty", err)
	}
	if _, err := preserve.Rebuild(ctx, s.root, s.store, s.blobs, preserve.RebuildOptions{}); !errors.Is(err, preserve.ErrNotEmpty) {
		t.Errorf("a rebuild into the original: %v, want ErrNotEmpty", err)
	}
}

// testRebuildDamaged: a rebuild skips, each with its reason, an object
// whose inventory was tampered with, one whose original's content file is
// missing and one whose record is not a Shelfmark record, and rebuilds
// the rest; run again after the damage is mended, it rebuilds those too
// and nothing twice.
func testRebuildDamaged(t *testing.T, open Opener) {
	s := newPreserved(t, open)
	ctx := context.Background()
	var works []shelfmark.ID
	for i := range 4 {
		w := rs(t)(s.repo.CreateResource(s.sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(fmt.Sprintf("work %d", i))}}))
		s.page(t, s.sys, w.ID, fmt.Sprintf("page of work %d", i))
		works = append(works, w.ID)
	}
	s.catchUp(t)
	objDir := func(id shelfmark.ID) string {
		return filepath.Join(s.fsys.Dir(), filepath.FromSlash(ocfl.ObjectPath(preserve.ObjectID(id))))
	}
	// work 0: its inventory tampered with (its sidecar no longer matches)
	inv := filepath.Join(objDir(works[0]), "inventory.json")
	data, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, []byte(strings.Replace(string(data), "Shelfmark", "Shelfmank", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// work 1: its original's content file missing
	var missing string
	err = filepath.Walk(objDir(works[1]), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.Contains(p, "/content/files/") {
			missing = p
		}
		return err
	})
	if err != nil || missing == "" {
		t.Fatalf("no content file of work 1 (%v)", err)
	}
	saved, err := os.ReadFile(missing)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	// work 2: a new version whose record names an unknown kind
	o, err := s.root.Open(ctx, preserve.ObjectID(works[2]))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := o.Open(ctx, o.Head(), preserve.RecordPath)
	if err != nil {
		t.Fatal(err)
	}
	var rec preserve.Record
	if err := json.NewDecoder(rc).Decode(&rec); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	good := rec
	rec.Resources = append([]preserve.Resource(nil), rec.Resources...)
	rec.Resources[1].Kind = "scroll"
	commitRecord(t, s, o, &rec)

	dst, blobs, rep := s.rebuilt(t, open)
	reasons := map[string]string{}
	for _, sk := range rep.Skipped {
		reasons[sk.ID] = sk.Reason
	}
	for i, want := range []string{"inventory", "files/", "scroll"} {
		id := preserve.ObjectID(works[i])
		if r, ok := reasons[id]; !ok || !strings.Contains(r, want) {
			t.Errorf("work %d: skipped %v with reason %q, want one naming %q", i, ok, r, want)
		}
	}
	if len(rep.Skipped) != 3 || rep.Written != 1 {
		t.Fatalf("report %+v: want 3 skipped, 1 written", rep)
	}
	dump, err := Dump(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range works {
		if in := strings.Contains(dump, string(id)); in != (i == 3) {
			t.Errorf("work %d in the rebuilt repository: %v", i, in)
		}
	}

	// mended, a rebuild is still refused: it was finished
	if err := os.WriteFile(inv, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(missing, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err = s.root.Open(ctx, preserve.ObjectID(works[2]))
	if err != nil {
		t.Fatal(err)
	}
	commitRecord(t, s, o, &good)
	if _, err := preserve.Rebuild(ctx, s.root, dst, blobs, preserve.RebuildOptions{}); !errors.Is(err, preserve.ErrNotEmpty) {
		t.Fatalf("a rebuild into a finished rebuild: %v, want ErrNotEmpty", err)
	}
	// and a new one holds everything, as the original does
	dst2, _, rep2 := s.rebuilt(t, open)
	if len(rep2.Skipped) != 0 || rep2.Written != 4 {
		t.Fatalf("after mending: %+v", rep2)
	}
	want, err := Dump(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Dump(ctx, dst2)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffLines(want, got); d != "" {
		t.Fatalf("the rebuilt repository differs (- original, + rebuilt):\n%s", d)
	}
}

// commitRecord writes a new version of o whose object.json is rec, the
// rest as in its head.
func commitRecord(t *testing.T, s *preserved, o *ocfl.Object, rec *preserve.Record) {
	t.Helper()
	ctx := context.Background()
	js, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	state, err := o.State(o.Head())
	if err != nil {
		t.Fatal(err)
	}
	d := sha512Hex(js)
	state[preserve.RecordPath] = d
	_, err = s.root.Commit(ctx, o.ID(), o.Head(), ocfl.NewVersion{
		State: state,
		Content: func(ctx context.Context, digest string) (io.ReadCloser, error) {
			if digest != d {
				return nil, fmt.Errorf("no content %s", digest)
			}
			return io.NopCloser(strings.NewReader(string(js))), nil
		},
		Created: s.clock(),
		Message: "test",
		User:    ocfl.User{Name: "test", Address: "urn:test"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// answer is a canonical form of an API answer: its JSON, or its error
// code.
func answer(v any, err error) string {
	if err != nil {
		var se *shelfmark.Error
		if errors.As(err, &se) {
			return "error " + se.Code
		}
		return "error " + err.Error()
	}
	js, jerr := json.Marshal(v)
	if jerr != nil {
		return "unmarshalable: " + jerr.Error()
	}
	return string(js)
}

// sha512Hex is the SHA-512 of data in hex.
func sha512Hex(data []byte) string {
	sum := sha512.Sum512(data)
	return hex.EncodeToString(sum[:])
}
