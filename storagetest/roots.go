package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testListResources: the works without a parent and the collections in
// no collection, newest first, keyset-paged, without file sets, child
// works, nested collections or tombstones, as far as the caller may see
// them, with their metadata when asked; and a
// page deep in the list costs what the first does.
func testListResources(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	anon := as(shelfmark.Anonymous())
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("Maps")}}))
	hiddenColl := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	// a collection in a collection is not at the top; one whose only
	// collection was deleted is
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{coll.ID}}))
	orphanParent := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	orphan := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{orphanParent.ID}}))
	if err := e.repo.DeleteResource(ctx, orphanParent.ID, 0); err != nil {
		t.Fatal(err)
	}
	var public []shelfmark.ID
	for i := 0; i < 5; i++ {
		w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID},
			Metadata: []shelfmark.Statement{title(fmt.Sprintf("work %d", i))}}))
		public = append(public, w.ID)
		// a page and a child work: not roots
		rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
		rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: w.ID}))
	}
	private := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private}))
	gone := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	if err := e.repo.DeleteResource(ctx, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(public) // newest first

	walk := func(c context.Context, kind shelfmark.Kind, limit int) []shelfmark.ID {
		t.Helper()
		var got []shelfmark.ID
		for after, n := shelfmark.Cursor(""), 0; ; n++ {
			if n > 20 {
				t.Fatal("the list does not end")
			}
			p := pg(t)(e.repo.ListResources(c, kind, shelfmark.PageRequest{After: after, Limit: limit}))
			if len(p.Items) > limit {
				t.Fatalf("%d items on a page of %d", len(p.Items), limit)
			}
			got = append(got, ids(p)...)
			if p.Next == "" {
				return got
			}
			after = p.Next
		}
	}
	if got, want := walk(anon, shelfmark.KindWork, 2), public; !slices.Equal(got, want) {
		t.Errorf("works for anonymous: %v, want %v", got, want)
	}
	if got, want := walk(ctx, shelfmark.KindWork, 4), append([]shelfmark.ID{private.ID}, public...); !slices.Equal(got, want) {
		t.Errorf("works for the system: %v, want %v", got, want)
	}
	if got := walk(anon, shelfmark.KindCollection, 1); !slices.Equal(got, []shelfmark.ID{orphan.ID, coll.ID}) {
		t.Errorf("collections for anonymous: %v", got)
	}
	if got := walk(ctx, shelfmark.KindCollection, 10); !slices.Equal(got, []shelfmark.ID{orphan.ID, hiddenColl.ID, coll.ID}) {
		t.Errorf("collections for the system: %v", got)
	}
	// metadata, when asked
	p := pg(t)(e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{Limit: 1, Metadata: true}))
	if len(p.Items) != 1 || len(p.Items[0].Metadata) != 1 || p.Items[0].Metadata[0].Object.Value != "work 4" {
		t.Errorf("a page with metadata: %+v", p.Items)
	}
	if p := pg(t)(e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{Limit: 1})); len(p.Items[0].Metadata) != 0 {
		t.Errorf("metadata not asked for: %+v", p.Items[0].Metadata)
	}
	// members with their metadata, in one statement more
	m := pg(t)(e.repo.ListMembers(anon, coll.ID, shelfmark.PageRequest{Limit: 2, Metadata: true}))
	if len(m.Items) != 2 || m.Items[1].ID != public[4] || len(m.Items[1].Metadata) != 1 || m.Items[1].Metadata[0].Object.Value != "work 0" {
		t.Errorf("members with metadata: %+v", m.Items)
	}
	for _, bad := range []shelfmark.Kind{shelfmark.KindFileSet, shelfmark.KindFile, "nope"} {
		if _, err := e.repo.ListResources(anon, bad, shelfmark.PageRequest{}); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("kind %q: %v", bad, err)
		}
	}
	if _, err := e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{After: "garbage!"}); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Errorf("a bad cursor: %v", err)
	}

	// 2,000 private works newer than every public one: anonymous still
	// gets the public ones, in a few statements (reads that double)
	for done := 0; done < 2000; {
		nrs := make([]*shelfmark.NewResource, 500)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private}
		}
		if _, errs := e.repo.CreateResources(ctx, nrs); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		done += len(nrs)
	}
	var got []shelfmark.ID
	calls := e.rec.capture(func() {
		p := pg(t)(e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{Limit: 3}))
		got = ids(p)
	})
	if !slices.Equal(got, public[:3]) || len(calls) > 10 {
		t.Errorf("past 2,000 hidden works: %v in %d statements, want %v in at most 10:\n%s", got, len(calls), public[:3], dump(calls))
	}
	t.Logf("a page past 2,000 hidden works: %d statements, %d rows", len(calls), rowsOf(calls))

	// cost: page 1 and a page deep in 1,500 more works, as anonymous
	for done := 0; done < 1500; {
		nrs := make([]*shelfmark.NewResource, 500)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: sampleMetadata(3)}
		}
		if _, errs := e.repo.CreateResources(ctx, nrs); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		done += len(nrs)
	}
	var deep shelfmark.Cursor
	for i := 0; i < 140; i++ {
		deep = pg(t)(e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{After: deep, Limit: 10})).Next
	}
	list := func(after shelfmark.Cursor) []call {
		return e.rec.capture(func() {
			pg(t)(e.repo.ListResources(anon, shelfmark.KindWork, shelfmark.PageRequest{After: after, Limit: 10, Metadata: true}))
		})
	}
	sameWork(t, "list works (page 1 vs page 141)", list(""), list(deep))
}
