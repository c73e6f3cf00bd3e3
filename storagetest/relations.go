package storagetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func testMembers(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	sub := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{coll.ID}}))
	var ids []shelfmark.ID
	ids = append(ids, sub.ID)
	nrs := make([]*shelfmark.NewResource, 250)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}
	}
	out, errs := e.repo.CreateResources(ctx, nrs)
	for i := range out {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		ids = append(ids, out[i].ID)
	}
	// later: a work added with AddMembers, and one added twice
	late := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	if err := e.repo.AddMembers(ctx, coll.ID, []shelfmark.ID{late.ID, late.ID}); err != nil {
		t.Fatal(err)
	}
	if err := e.repo.AddMembers(ctx, coll.ID, []shelfmark.ID{late.ID}); err != nil {
		t.Fatal(err) // adding an existing member is not an error
	}
	ids = append(ids, late.ID)
	got := rs(t)(e.repo.FindResource(ctx, late.ID))
	if len(got.MemberOf) != 1 || got.MemberOf[0] != coll.ID || got.Version < 2 {
		t.Fatalf("member side: %+v", got)
	}
	// page through with a small limit: every member exactly once
	seen := map[shelfmark.ID]int{}
	var cursor shelfmark.Cursor
	pages := 0
	for {
		p := pg(t)(e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: cursor, Limit: 37}))
		pages++
		for _, it := range p.Items {
			seen[it.ID]++
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(seen) != len(ids) || pages != (len(ids)+36)/37 {
		t.Fatalf("listed %d distinct members in %d pages, want %d", len(seen), pages, len(ids))
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Fatalf("member %s listed %d times", id, seen[id])
		}
	}
	// the collection itself did not change (rule R1)
	if c := rs(t)(e.repo.FindResource(ctx, coll.ID)); c.Version != 1 {
		t.Fatalf("collection version %d after adding members", c.Version)
	}
	// remove
	if err := e.repo.RemoveMembers(ctx, coll.ID, []shelfmark.ID{late.ID}); err != nil {
		t.Fatal(err)
	}
	if got := rs(t)(e.repo.FindResource(ctx, late.ID)); len(got.MemberOf) != 0 {
		t.Fatalf("still member: %v", got.MemberOf)
	}
	// errors
	work := ids[1]
	wantCode(t, e.repo.AddMembers(ctx, work, []shelfmark.ID{late.ID}), shelfmark.EINVALID) // not a collection
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work}))
	wantCode(t, e.repo.AddMembers(ctx, coll.ID, []shelfmark.ID{fs.ID}), shelfmark.EINVALID) // file sets are not members
	wantCode(t, e.repo.AddMembers(ctx, coll.ID, []shelfmark.ID{"bogus"}), shelfmark.EINVALID)
	wantCode(t, e.repo.AddMembers(ctx, e.repo.IDs().Encode(shelfmark.MaxKey), []shelfmark.ID{late.ID}), shelfmark.ENOTFOUND)
	_, err := e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: "garbage"})
	wantCode(t, err, shelfmark.EINVALID)
	_, err = e.repo.ListMembers(ctx, work, shelfmark.PageRequest{})
	wantCode(t, err, shelfmark.EINVALID)
}

func testMembersCycle(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	a := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	b := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{a.ID}}))
	c := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{b.ID}}))
	wantCode(t, e.repo.AddMembers(ctx, c.ID, []shelfmark.ID{a.ID}), shelfmark.EINVALID) // a ⊃ b ⊃ c ⊃ a
	wantCode(t, e.repo.AddMembers(ctx, a.ID, []shelfmark.ID{a.ID}), shelfmark.EINVALID)
	if err := e.repo.AddMembers(ctx, a.ID, []shelfmark.ID{c.ID}); err != nil { // a diamond is fine
		t.Fatal(err)
	}

	// collections nest at most MaxCollectionNesting deep: a chain of 33
	// is made, a 34th is refused, whether created in the deepest or added
	// to it
	chain := []*shelfmark.Resource{rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))}
	for len(chain) <= shelfmark.MaxCollectionNesting {
		chain = append(chain, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			MemberOf: []shelfmark.ID{chain[len(chain)-1].ID}})))
	}
	deepest := chain[len(chain)-1].ID
	_, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{deepest}})
	wantCode(t, err, shelfmark.EINVALID)
	loose := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	wantCode(t, e.repo.AddMembers(ctx, deepest, []shelfmark.ID{loose.ID}), shelfmark.EINVALID)
	if err := e.repo.AddMembers(ctx, chain[len(chain)-2].ID, []shelfmark.ID{loose.ID}); err != nil {
		t.Fatal(err)
	}
	// works go into the deepest collection as anywhere
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{deepest}}))

	// a loop of any length is refused: a chain of 100 built from the
	// bottom up (each new collection takes in the top of the chain) cannot
	// be closed into a ring
	ring := []*shelfmark.Resource{rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))}
	for len(ring) < 100 {
		top := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
		if err := e.repo.AddMembers(ctx, top.ID, []shelfmark.ID{ring[len(ring)-1].ID}); err != nil {
			t.Fatalf("chain of %d: %v", len(ring)+1, err)
		}
		ring = append(ring, top)
	}
	wantCode(t, e.repo.AddMembers(ctx, ring[0].ID, []shelfmark.ID{ring[len(ring)-1].ID}), shelfmark.EINVALID)
	wantCode(t, e.repo.AddMembers(ctx, ring[0].ID, []shelfmark.ID{ring[40].ID}), shelfmark.EINVALID)
	if err := e.repo.AddMembers(ctx, ring[len(ring)-1].ID, []shelfmark.ID{ring[0].ID}); err != nil { // a shortcut is no loop
		t.Fatal(err)
	}
}

func listAllChildren(t *testing.T, e *env, parent shelfmark.ID, limit int) []*shelfmark.Resource {
	t.Helper()
	var out []*shelfmark.Resource
	var cursor shelfmark.Cursor
	for {
		p := pg(t)(e.repo.ListChildren(context.Background(), parent, shelfmark.PageRequest{After: cursor, Limit: limit}))
		out = append(out, p.Items...)
		if p.Next == "" {
			return out
		}
		cursor = p.Next
	}
}

func testOrder(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	book := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	var pages []shelfmark.ID
	for i := 0; i < 30; i++ {
		p := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID, Metadata: []shelfmark.Statement{title(fmt.Sprint("page ", i))}}))
		pages = append(pages, p.ID)
	}
	// before any order: creation order
	kids := listAllChildren(t, e, book.ID, 7)
	for i, k := range kids {
		if k.ID != pages[i] || k.Position != 0 {
			t.Fatalf("unordered child %d = %s pos %d, want %s pos 0", i, k.ID, k.Position, pages[i])
		}
	}
	// order in reverse, naming only 20: the other 10 follow unordered
	var order []shelfmark.ID
	for i := 29; i >= 10; i-- {
		order = append(order, pages[i])
	}
	res := rs(t)(e.repo.SetOrder(ctx, book.ID, order, 1))
	if res.Version != 2 {
		t.Fatalf("work version after order = %d", res.Version)
	}
	kids = listAllChildren(t, e, book.ID, 6)
	if len(kids) != 30 {
		t.Fatalf("%d children", len(kids))
	}
	for i := 0; i < 20; i++ {
		if kids[i].ID != order[i] || kids[i].Position != i+1 {
			t.Fatalf("child %d = %s pos %d, want %s pos %d", i, kids[i].ID, kids[i].Position, order[i], i+1)
		}
	}
	for i := 20; i < 30; i++ {
		if kids[i].ID != pages[i-20] || kids[i].Position != 0 {
			t.Fatalf("unordered child %d = %s", i, kids[i].ID)
		}
	}
	if got := rs(t)(e.repo.FindResource(ctx, order[0])); got.Position != 1 || got.Parent != book.ID {
		t.Fatalf("child sees position %d parent %s", got.Position, got.Parent)
	}
	// a new order replaces the old one entirely
	rs(t)(e.repo.SetOrder(ctx, book.ID, pages[:3], 0))
	kids = listAllChildren(t, e, book.ID, 100)
	for i := 0; i < 3; i++ {
		if kids[i].ID != pages[i] || kids[i].Position != i+1 {
			t.Fatalf("reorder: child %d = %s", i, kids[i].ID)
		}
	}
	if kids[3].Position != 0 || len(kids) != 30 {
		t.Fatalf("reorder: child 3 still ordered (%d) or count %d", kids[3].Position, len(kids))
	}
	// errors
	other := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	stranger := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: other.ID}))
	_, err := e.repo.SetOrder(ctx, book.ID, []shelfmark.ID{pages[0], stranger.ID}, 0)
	wantCode(t, err, shelfmark.EINVALID)
	_, err = e.repo.SetOrder(ctx, book.ID, []shelfmark.ID{pages[0], pages[1], pages[0]}, 0)
	wantCode(t, err, shelfmark.EINVALID)
	_, err = e.repo.SetOrder(ctx, book.ID, []shelfmark.ID{pages[0]}, 1) // stale version
	wantCode(t, err, shelfmark.EPRECONDITION)
	_, err = e.repo.SetOrder(ctx, pages[0], nil, 0) // a file set has no ordered children
	wantCode(t, err, shelfmark.EINVALID)
	_, err = e.repo.ListChildren(ctx, book.ID, shelfmark.PageRequest{After: "zzz"})
	wantCode(t, err, shelfmark.EINVALID)
	// a deleted child drops out of the list, and cannot be ordered
	if err := e.repo.DeleteResource(ctx, pages[1], 0); err != nil {
		t.Fatal(err)
	}
	if kids = listAllChildren(t, e, book.ID, 100); len(kids) != 29 {
		t.Fatalf("%d children after delete", len(kids))
	}
	_, err = e.repo.SetOrder(ctx, book.ID, []shelfmark.ID{pages[1]}, 0)
	wantCode(t, err, shelfmark.EINVALID)
}

func testFiles(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	managed := &shelfmark.File{Name: "page 1.tif", MediaType: "image/tiff", Size: 1234, SHA256: fmt.Sprintf("%064x", 7), MD5: fmt.Sprintf("%032x", 9), Use: "original"}
	ext := &shelfmark.File{Name: "scan.jp2", MediaType: "image/jp2", Size: -1, Use: "original", ExternalURL: "https://images.example.org/scan.jp2"}
	f1 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: managed}))
	f2 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: ext}))
	for _, c := range []struct {
		id   shelfmark.ID
		want *shelfmark.File
	}{{f1.ID, managed}, {f2.ID, ext}} {
		got := rs(t)(e.repo.FindResource(ctx, c.id))
		if got.File == nil || *got.File != *c.want || got.Parent != fs.ID {
			t.Fatalf("file %s = %+v, want %+v", c.id, got.File, c.want)
		}
	}
	if kids := listAllChildren(t, e, fs.ID, 10); len(kids) != 2 || kids[0].ID != f1.ID || kids[0].Kind != shelfmark.KindFile {
		t.Fatalf("files of the file set: %+v", kids)
	}
	if ext.Managed() || !managed.Managed() {
		t.Fatal("Managed()")
	}
}
