package storagetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// book builds an ingest group: a work with n pages (file sets holding one
// file each), ordered as given, under a source key.
func book(t *testing.T, e *env, key string, n int, coll shelfmark.ID) *shelfmark.NewGroup {
	t.Helper()
	ids, err := e.repo.MintIDs(context.Background(), 1+2*n)
	if err != nil {
		t.Fatal(err)
	}
	g := &shelfmark.NewGroup{SourceKey: key}
	work := &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(key)}}
	if coll != "" {
		work.MemberOf = []shelfmark.ID{coll}
	}
	g.Resources = append(g.Resources, work)
	for i := 0; i < n; i++ {
		fs, f := ids[1+2*i], ids[2+2*i]
		g.Resources = append(g.Resources,
			&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: ids[0], Metadata: []shelfmark.Statement{title(fmt.Sprint("page ", i+1))}},
			&shelfmark.NewResource{ID: f, Kind: shelfmark.KindFile, Parent: fs,
				File: &shelfmark.File{Name: fmt.Sprintf("p%d.tif", i+1), MediaType: "image/tiff", Size: 10, SHA256: fmt.Sprintf("%064x", i), Use: "original"}})
		g.Order = append(g.Order, fs)
	}
	// pages listed in reverse order of creation, to see the order applied
	for i, j := 0, len(g.Order)-1; i < j; i, j = i+1, j-1 {
		g.Order[i], g.Order[j] = g.Order[j], g.Order[i]
	}
	return g
}

func testGroups(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	a, b := book(t, e, "dir:books/a", 5, coll.ID), book(t, e, "dir:books/b", 3, coll.ID)
	roots, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{a, b})
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	// the pages are children of the work in the group's order
	kids := listAllChildren(t, e, roots[0].ID, 2)
	if len(kids) != 5 {
		t.Fatalf("%d pages", len(kids))
	}
	for i, k := range kids {
		if k.ID != a.Order[i] || k.Position != i+1 {
			t.Fatalf("page %d is %s at %d, want %s", i+1, k.ID, k.Position, a.Order[i])
		}
		files := listAllChildren(t, e, k.ID, 10)
		if len(files) != 1 || files[0].Kind != shelfmark.KindFile {
			t.Fatalf("file set %s holds %v", k.ID, files)
		}
	}
	// the same source key again is refused with the stored root's id, and
	// stores nothing
	again := book(t, e, "dir:books/a", 2, coll.ID)
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{again})
	var se *shelfmark.Error
	if !errors.As(errs[0], &se) || se.Code != shelfmark.ECONFLICT || se.Details["id"] != string(roots[0].ID) {
		t.Fatalf("re-ingest: %v", errs[0])
	}
	_, err := e.repo.FindResource(ctx, again.Resources[0].ID)
	wantCode(t, err, shelfmark.ENOTFOUND)

	// a group with a bad member stores nothing at all; its neighbour in the
	// same call is stored
	bad := book(t, e, "dir:books/bad", 3, coll.ID)
	bad.Resources[4].Parent = bad.Resources[0].ID // a file whose parent is the work, not a file set
	good := book(t, e, "dir:books/good", 2, coll.ID)
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{bad, good})
	if shelfmark.ErrorCode(errs[0]) != shelfmark.EINVALID || errs[1] != nil {
		t.Fatalf("bad/good: %v", errs)
	}
	for _, nr := range bad.Resources {
		_, err := e.repo.FindResource(ctx, nr.ID)
		wantCode(t, err, shelfmark.ENOTFOUND)
	}
	// the bad item can be ingested once fixed: its key was not recorded
	fixed := book(t, e, "dir:books/bad", 3, coll.ID)
	if _, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{fixed}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	// two groups with one source key in one call: exactly one is stored
	x, y := book(t, e, "dir:books/twice", 1, coll.ID), book(t, e, "dir:books/twice", 1, coll.ID)
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{x, y})
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("same key twice: %v", errs)
	}
	// an order naming something outside the group is refused up front
	odd := book(t, e, "dir:books/odd", 1, coll.ID)
	odd.Order = append(odd.Order, roots[1].ID)
	if _, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{odd}); shelfmark.ErrorCode(errs[0]) != shelfmark.EINVALID {
		t.Fatalf("odd order: %v", errs[0])
	}
	// members: a, b, good, fixed, one of twice
	p := pg(t)(e.repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{}))
	if len(p.Items) != 5 {
		t.Fatalf("%d members", len(p.Items))
	}
}
