package storagetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

const dc = shelfmark.NSDC

func title(s string) shelfmark.Statement {
	return shelfmark.Statement{Predicate: dc + "title", Object: shelfmark.NewLiteral(s)}
}

// sampleMetadata returns n statements of mixed term kinds.
func sampleMetadata(n int) []shelfmark.Statement {
	out := []shelfmark.Statement{
		title("A history of shelfmarks"),
		{Predicate: dc + "title", Object: shelfmark.NewLangLiteral("Eine Geschichte", "de")},
		{Predicate: dc + "date", Object: shelfmark.NewTypedLiteral("1923", "http://www.w3.org/2001/XMLSchema#gYear")},
		{Predicate: dc + "subject", Object: shelfmark.NewIRI("http://id.loc.gov/authorities/subjects/sh85077507")},
	}
	for i := len(out); i < n; i++ {
		out = append(out, shelfmark.Statement{Predicate: dc + "description", Object: shelfmark.NewLiteral(fmt.Sprintf("note %d ‘unicode’ \"quoted\"\nline", i))})
	}
	return out[:n]
}

// rs fails the test on error and returns the resource.
func rs(t *testing.T) func(*shelfmark.Resource, error) *shelfmark.Resource {
	return func(r *shelfmark.Resource, err error) *shelfmark.Resource {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// pg fails the test on error and returns the page.
func pg(t *testing.T) func(*shelfmark.Page, error) *shelfmark.Page {
	return func(p *shelfmark.Page, err error) *shelfmark.Page {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// canonical is the order metadata is read back in: fields sorted by
// predicate, each field's objects in the order they were given.
func canonical(stmts []shelfmark.Statement) []shelfmark.Statement {
	return shelfmark.StatementsOf(shelfmark.FieldsOf(stmts))
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := shelfmark.ErrorCode(err); got != code {
		t.Fatalf("error = %v (code %q), want code %q", err, got, code)
	}
}

func testCreateAndFind(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	meta := sampleMetadata(54)
	meta = append(meta, meta[0]) // a repeated statement is stored once
	embargo := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Authenticated, Embargo: &embargo, Metadata: meta}))
	if !w.ID.Valid() || w.Version != 1 || w.Seq == 0 || w.Created.IsZero() {
		t.Fatalf("created = %+v", w)
	}
	got := rs(t)(e.repo.FindResource(ctx, w.ID))
	if !reflect.DeepEqual(got.Metadata, canonical(meta[:54])) {
		t.Fatalf("metadata round trip:\n got %v\nwant %v", got.Metadata, meta[:54])
	}
	if got.Kind != shelfmark.KindWork || got.Visibility != shelfmark.Authenticated || got.Embargo == nil || !got.Embargo.Equal(embargo) {
		t.Fatalf("fields: %+v", got)
	}
	if got.Version != 1 || got.Seq != w.Seq || !got.Created.Equal(w.Created.Truncate(time.Microsecond)) {
		t.Fatalf("version/seq/created: got %d/%d/%v want %d/%d/%v", got.Version, got.Seq, got.Created, 1, w.Seq, w.Created)
	}
	// unknown ids
	_, err := e.repo.FindResource(ctx, e.repo.IDs().Encode(shelfmark.MaxKey))
	wantCode(t, err, shelfmark.ENOTFOUND)
	_, err = e.repo.FindResource(ctx, "not-an-id")
	wantCode(t, err, shelfmark.ENOTFOUND)
}

func testCreateValidation(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	work := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID}))
	bad := []*shelfmark.NewResource{
		{Kind: "page"},
		{Kind: shelfmark.KindWork, Visibility: "secret"},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{work.ID}},                               // not a collection
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{"xxxx"}},                                // malformed
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{e.repo.IDs().Encode(shelfmark.MaxKey)}}, // absent
		{Kind: shelfmark.KindFileSet},                                                               // no parent
		{Kind: shelfmark.KindFileSet, Parent: coll.ID},                                              // parent not a work
		{Kind: shelfmark.KindCollection, Parent: work.ID},
		{Kind: shelfmark.KindFileSet, Parent: work.ID, MemberOf: []shelfmark.ID{coll.ID}},
		{Kind: shelfmark.KindFile, Parent: fs.ID}, // no bytes
		{Kind: shelfmark.KindFile, Parent: work.ID, File: &shelfmark.File{Name: "x", SHA256: "00"}},
	}
	bad = append(bad,
		&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("nul\x00inside")}},
		&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("bad utf-8 \xff")}},
		&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{{Predicate: "title", Object: shelfmark.NewLiteral("x")}}},
	)
	for i, nr := range bad {
		_, err := e.repo.CreateResource(ctx, nr)
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("case %d %+v: error %v, want invalid", i, nr, err)
		}
	}
	// a failed item in a batch does not stop the others, and stores nothing
	good := &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("ok")}}
	out, errs := e.repo.CreateResources(ctx, []*shelfmark.NewResource{good, bad[2], good})
	if errs[0] != nil || errs[2] != nil || errs[1] == nil || out[1] != nil {
		t.Fatalf("batch results: %v", errs)
	}
	for _, i := range []int{0, 2} {
		rs(t)(e.repo.FindResource(ctx, out[i].ID))
	}
	// two items claiming the same pre-minted id: the buffered bulk insert
	// of the batch fails as a whole, and the batch is retried op by op, so
	// exactly one of them and every innocent item are stored
	ids, err := e.repo.MintIDs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	dup := func(s string) *shelfmark.NewResource {
		return &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(s)}}
	}
	out, errs = e.repo.CreateResources(ctx, []*shelfmark.NewResource{good, dup("first"), good, dup("second"), good})
	failed := 0
	for i, err := range errs {
		if err != nil {
			failed++
			if i != 1 && i != 3 {
				t.Fatalf("innocent item %d failed: %v", i, err)
			}
		}
	}
	if failed != 1 {
		t.Fatalf("%d of the duplicate-id items failed, want exactly 1: %v", failed, errs)
	}
	got := rs(t)(e.repo.FindResource(ctx, ids[0]))
	if len(got.Metadata) != 1 {
		t.Fatalf("the duplicate id holds %v", got.Metadata)
	}
	for _, i := range []int{0, 2, 4} {
		rs(t)(e.repo.FindResource(ctx, out[i].ID))
	}
}

func testUpdate(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: sampleMetadata(6)}))
	// replace: keep 2, drop 4, add 1
	repl := append(sampleMetadata(2), title("new title"))
	got := rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Replace: &repl}))
	if !reflect.DeepEqual(got.Metadata, canonical(repl)) || got.Version != 2 || got.Seq <= w.Seq {
		t.Fatalf("after replace: v%d seq %d %v", got.Version, got.Seq, got.Metadata)
	}
	// patch: add one, remove one, add an existing one (no-op)
	got = rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{
		Add:    []shelfmark.Statement{title("added"), title("new title")},
		Remove: []shelfmark.Statement{repl[0], title("never there")},
	}))
	want := []shelfmark.Statement{repl[1], title("new title"), title("added")}
	if !reflect.DeepEqual(got.Metadata, canonical(want)) || got.Version != 3 {
		t.Fatalf("after patch: v%d %v", got.Version, got.Metadata)
	}
	// an update that changes nothing writes nothing and keeps the version
	writes := e.rec.capture(func() {
		got = rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title("added")}}))
	})
	if got.Version != 3 {
		t.Fatalf("no-op update bumped version to %d", got.Version)
	}
	for _, c := range writes {
		if isWrite(c.query) && !isCounter(c.query) {
			t.Fatalf("no-op update wrote: %s", c.query)
		}
	}
	// visibility and embargo
	pv := shelfmark.Private
	until := time.Date(2031, 5, 6, 0, 0, 0, 0, time.UTC)
	pu := &until
	got = rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &pv, Embargo: &pu}))
	if got.Visibility != pv || got.Embargo == nil || !got.Embargo.Equal(until) || got.Version != 4 {
		t.Fatalf("access fields: %+v", got)
	}
	bad := shelfmark.Visibility("nobody")
	_, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &bad})
	wantCode(t, err, shelfmark.EINVALID)
}

func testIfMatch(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{IfMatch: 1, Add: []shelfmark.Statement{title("one")}}))
	var err error
	calls := e.rec.capture(func() {
		_, err = e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{IfMatch: 1, Add: []shelfmark.Statement{title("two")}})
	})
	wantCode(t, err, shelfmark.EPRECONDITION)
	for _, c := range calls {
		if isWrite(c.query) {
			t.Fatalf("a refused write ran %s", c.query) // not even the sequence counter: it rolls back
		}
	}
	got := rs(t)(e.repo.FindResource(ctx, w.ID))
	if len(got.Metadata) != 1 || got.Version != 2 {
		t.Fatalf("stale write changed the resource: %+v", got)
	}
	wantCode(t, e.repo.DeleteResource(ctx, w.ID, 1), shelfmark.EPRECONDITION)

	// two concurrent writers with the same If-Match: exactly one wins,
	// even when both land in the same group commit
	for round := 0; round < 20; round++ {
		cur := rs(t)(e.repo.FindResource(ctx, w.ID))
		errs := make(chan error, 2)
		for i := 0; i < 2; i++ {
			go func(i int) {
				_, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{IfMatch: cur.Version, Add: []shelfmark.Statement{title(fmt.Sprint("r", round, "w", i))}})
				errs <- err
			}(i)
		}
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) {
			t.Fatalf("round %d: both or neither won: %v / %v", round, e1, e2)
		}
	}
}

func testDelete(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: sampleMetadata(5)}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	f := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &shelfmark.File{Name: "a.txt", MediaType: "text/plain", Size: 1, SHA256: fmt.Sprintf("%064x", 1), Use: "original"}}))
	other := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))

	if err := e.repo.DeleteResource(ctx, w.ID, 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []shelfmark.ID{w.ID, fs.ID, f.ID} {
		_, err := e.repo.FindResource(ctx, id)
		wantCode(t, err, shelfmark.EGONE)
		var se *shelfmark.Error
		if !errors.As(err, &se) || se.Details["deleted"] == nil {
			t.Fatalf("gone error without deletion time: %v", err)
		}
	}
	wantCode(t, e.repo.DeleteResource(ctx, w.ID, 0), shelfmark.EGONE)
	_, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title("x")}})
	wantCode(t, err, shelfmark.EGONE)
	page := pg(t)(e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{}))
	if len(page.Items) != 1 || page.Items[0].ID != other.ID {
		t.Fatalf("members after delete: %+v", page.Items)
	}
	// the tombstone keeps its row: a new id is never the old one
	n := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	if n.ID == w.ID {
		t.Fatal("id reused")
	}
	// deleting a collection leaves its members alive but drops the edge
	if err := e.repo.DeleteResource(ctx, coll.ID, 0); err != nil {
		t.Fatal(err)
	}
	got := rs(t)(e.repo.FindResource(ctx, other.ID))
	if len(got.MemberOf) != 0 {
		t.Fatalf("member of a deleted collection: %v", got.MemberOf)
	}
	_, err = e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{})
	wantCode(t, err, shelfmark.EGONE)
}
