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

// scanned builds an ingest group under key: a work titled name whose
// pages hold files with the given SHA-256 digests, in order.
func scanned(t *testing.T, e *env, key, former, name string, shas ...string) *shelfmark.NewGroup {
	t.Helper()
	ids, err := e.repo.MintIDs(context.Background(), 1+2*len(shas))
	if err != nil {
		t.Fatal(err)
	}
	g := &shelfmark.NewGroup{SourceKey: key, FormerKey: former, Resources: []*shelfmark.NewResource{
		{ID: ids[0], Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(name)}}}}
	for i, sha := range shas {
		fs, f := ids[1+2*i], ids[2+2*i]
		g.Resources = append(g.Resources,
			&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: ids[0], Metadata: []shelfmark.Statement{title(fmt.Sprintf("p%d.tif", i+1))}},
			&shelfmark.NewResource{ID: f, Kind: shelfmark.KindFile, Parent: fs,
				File: &shelfmark.File{Name: fmt.Sprintf("p%d.tif", i+1), MediaType: "image/tiff", Size: 10, SHA256: sha, Use: "original"}})
		g.Order = append(g.Order, fs)
	}
	return g
}

// conflictOf returns the details of a conflict, failing on anything else.
func conflictOf(t *testing.T, err error) map[string]any {
	t.Helper()
	var se *shelfmark.Error
	if !errors.As(err, &se) || se.Code != shelfmark.ECONFLICT {
		t.Fatalf("got %v, want a conflict", err)
	}
	return se.Details
}

// testGroupsFormerKey: a group whose former key names a stored work with
// the same content (metadata, and originals in order; derivatives added
// since do not count) is that work stored before: nothing is stored, the
// work is named, and the new key is recorded for it. A group whose former
// key names a work with other content (what different inputs keyed alike
// by an earlier version look like) is stored, and the former key keeps
// naming the old work.
func testGroupsFormerKey(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	sha := func(i int) string { return fmt.Sprintf("%064x", 1000+i) }
	// stored by an earlier version: book one as "dir:."
	old := scanned(t, e, "dir:.", "", "book1", sha(1), sha(2))
	roots, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{old})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	oldID := roots[0].ID
	// a derivative made since: not part of the content
	kids := listAllChildren(t, e, oldID, 10)
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: kids[0].ID,
		File: &shelfmark.File{Name: "thumb.jpg", MediaType: "image/jpeg", Size: 3, SHA256: sha(99), Use: shelfmark.UseThumbnail}}))

	// book two, also "dir:." before: stored, under its new key
	two := scanned(t, e, "dir:/scans/book2#2", "dir:.", "book2", sha(3))
	roots, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{two})
	if errs[0] != nil {
		t.Fatalf("book two: %v", errs[0])
	}
	twoID := roots[0].ID
	// the same pages in another order are other content
	swapped := scanned(t, e, "dir:/scans/swapped#3", "dir:.", "book1", sha(2), sha(1))
	if _, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{swapped}); errs[0] != nil {
		t.Fatalf("swapped pages: %v", errs[0])
	}
	// book one again, under its new key: stored before, as the old work
	one := scanned(t, e, "dir:/scans/book1#1", "dir:.", "book1", sha(1), sha(2))
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{one})
	d := conflictOf(t, errs[0])
	if d["id"] != string(oldID) || d["former_key"] != "dir:." || d["source_key"] != "dir:/scans/book1#1" {
		t.Fatalf("book one again: %v", errs[0])
	}
	for _, nr := range one.Resources {
		_, err := e.repo.FindResource(ctx, nr.ID)
		wantCode(t, err, shelfmark.ENOTFOUND)
	}
	found, err := e.repo.FindSources(ctx, []string{"dir:.", "dir:/scans/book1#1", "dir:/scans/book2#2"})
	if err != nil || found["dir:."] != oldID || found["dir:/scans/book1#1"] != oldID || found["dir:/scans/book2#2"] != twoID {
		t.Fatalf("source keys %v %v", found, err)
	}
	// and once more: found by the new key alone
	again := scanned(t, e, "dir:/scans/book1#1", "dir:.", "book1", sha(1), sha(2))
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{again})
	if d := conflictOf(t, errs[0]); d["id"] != string(oldID) || d["former_key"] != nil {
		t.Fatalf("book one a third time: %v", errs[0])
	}
}

// testGroupsStoreAnyway: a group stored anyway under a key stored before
// is stored as a new work; the key keeps naming the first work; the same
// content stored anyway again is refused naming the second, while other
// content under the same key is stored anyway too; a new key is recorded
// as usual.
func testGroupsStoreAnyway(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	sha := func(i int) string { return fmt.Sprintf("%064x", 2000+i) }
	first := scanned(t, e, "csv:1", "", "First manifest's row 1", sha(1))
	roots, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{first})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	firstID := roots[0].ID
	// another manifest's row with the identifier 1
	second := scanned(t, e, "csv:1", "", "Second manifest's row 1", sha(2))
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{second})
	if d := conflictOf(t, errs[0]); d["id"] != string(firstID) {
		t.Fatalf("without StoreAnyway: %v", errs[0])
	}
	second = scanned(t, e, "csv:1", "", "Second manifest's row 1", sha(2))
	second.StoreAnyway = true
	roots, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{second})
	if errs[0] != nil {
		t.Fatalf("stored anyway: %v", errs[0])
	}
	secondID := roots[0].ID
	if secondID == firstID || len(listAllChildren(t, e, secondID, 10)) != 1 {
		t.Fatalf("stored anyway as %s", secondID)
	}
	if found, err := e.repo.FindSources(ctx, []string{"csv:1"}); err != nil || found["csv:1"] != firstID {
		t.Fatalf("the key names %v (%v), want the first work %s", found, err, firstID)
	}
	// the same content stored anyway again: refused, naming the second work
	again := scanned(t, e, "csv:1", "", "Second manifest's row 1", sha(2))
	again.StoreAnyway = true
	_, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{again})
	if d := conflictOf(t, errs[0]); d["id"] != string(secondID) || d["anyway"] != true {
		t.Fatalf("stored anyway twice: %v", errs[0])
	}
	_, err := e.repo.FindResource(ctx, again.Resources[0].ID)
	wantCode(t, err, shelfmark.ENOTFOUND)
	// a third input under the same key is stored anyway as well
	third := scanned(t, e, "csv:1", "", "Third manifest's row 1", sha(3))
	third.StoreAnyway = true
	if roots, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{third}); errs[0] != nil || roots[0].ID == secondID {
		t.Fatalf("a third input stored anyway: %v", errs[0])
	}
	// a new key with StoreAnyway is recorded as it is
	fresh := scanned(t, e, "csv:fresh", "", "Fresh", sha(4))
	fresh.StoreAnyway = true
	if roots, errs = e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{fresh}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if found, err := e.repo.FindSources(ctx, []string{"csv:fresh"}); err != nil || found["csv:fresh"] != roots[0].ID {
		t.Fatalf("a new key stored anyway: %v %v", found, err)
	}
}
