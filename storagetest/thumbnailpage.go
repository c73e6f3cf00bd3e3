package storagetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testThumbnailPage: a depositor chooses the page that represents its
// work (SetThumbnailPage): the choice is a statement of the work's
// metadata naming the page's IRI, written once (the same choice again
// writes nothing), and taken back with no page. Search hits found by
// their records and the workspace show the chosen page's thumbnail while
// the reader may see it, else the first page's; a deleted chosen page
// falls back too. A page of another work, a stale version and a caller
// who may not change the work are refused with nothing written. Reading
// the thumbnails of works with a chosen page costs the statements of
// works without one.
func testThumbnailPage(t *testing.T, open Opener) {
	e, ctx, sys, coll, dep, other := twoDepositors(t, open)
	n := 100
	thumbed := func(work *shelfmark.Resource, vis shelfmark.Visibility) (page, thumb shelfmark.ID) {
		t.Helper()
		p := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID, Visibility: vis}))
		n++
		f := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: p.ID,
			File: &shelfmark.File{Name: fmt.Sprintf("t%d.jpg", n), MediaType: "image/jpeg", Size: 1, SHA256: sha(n), Use: shelfmark.UseThumbnail}}))
		return p.ID, f.ID
	}
	book := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	p1, t1 := thumbed(book, "")
	p2, t2 := thumbed(book, "")
	p3, t3 := thumbed(book, shelfmark.Private)
	if _, err := e.repo.SetOrder(sys, book.ID, []shelfmark.ID{p1, p2, p3}, 0); err != nil {
		t.Fatal(err)
	}
	book = rs(t)(e.repo.FindResource(ctx, book.ID))
	wkey := keyOf(t, book.ID)

	// the thumbnail a caller sees: of a search hit found by its record
	// (the metadata read here, or given) and in the workspace
	hit := func(c *shelfmark.Caller, given bool) shelfmark.ID {
		t.Helper()
		var got map[int64]shelfmark.ID
		if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var meta map[int64][]shelfmark.Statement
			if given {
				res := rs(t)(e.repo.FindResource(sys, book.ID))
				meta = map[int64][]shelfmark.Statement{wkey: res.Metadata}
			}
			var err error
			got, err = e.repo.HitThumbnails(as(c), tx, []shelfmark.SearchHit{{Key: wkey, Work: wkey, Kind: shelfmark.KindWork}}, meta)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return got[wkey]
	}
	listed := func() shelfmark.ID {
		t.Helper()
		pg, err := e.repo.Workspace(as(dep), shelfmark.WorkspaceQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range pg.Items {
			if it.Resource.ID == book.ID {
				return it.Thumbnail
			}
		}
		t.Fatal("the work is not in its depositor's workspace")
		return ""
	}
	anon := shelfmark.Anonymous()
	want := func(what string, anonWant, depWant shelfmark.ID) {
		t.Helper()
		for _, given := range []bool{false, true} {
			if got := hit(anon, given); got != anonWant {
				t.Fatalf("%s: an anonymous reader's hit (metadata given %v) shows %q, want %q", what, given, got, anonWant)
			}
			if got := hit(dep, given); got != depWant {
				t.Fatalf("%s: the depositor's hit (metadata given %v) shows %q, want %q", what, given, depWant, got)
			}
		}
		if got := listed(); got != depWant {
			t.Fatalf("%s: the workspace shows %q, want %q", what, got, depWant)
		}
	}
	want("no choice", t1, t1)

	res := rs(t)(e.repo.SetThumbnailPage(as(dep), book.ID, p2, book.Version))
	if res.Version != book.Version+1 || shelfmark.ThumbnailPageOf(res.Metadata) != p2 {
		t.Fatalf("after the choice: version %d (was %d), page %q", res.Version, book.Version, shelfmark.ThumbnailPageOf(res.Metadata))
	}
	var iri string
	for _, st := range res.Metadata {
		if st.Predicate == shelfmark.PredThumbnailPage {
			iri = st.Object.Value
		}
	}
	if iri != "urn:shelfmark:"+string(p2) {
		t.Fatalf("the statement of the choice names %q", iri)
	}
	want("the second page", t2, t2)
	if again := rs(t)(e.repo.SetThumbnailPage(as(dep), book.ID, p2, res.Version)); again.Version != res.Version {
		t.Fatalf("the same choice again wrote a version: %d, was %d", again.Version, res.Version)
	}

	// a private page: shown to who may see it, the first page's otherwise
	res = rs(t)(e.repo.SetThumbnailPage(as(dep), book.ID, p3, 0))
	want("a private page", t1, t3)

	// refusals leave the choice as it was
	stranger := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet,
		Parent: rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})).ID}))
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		page  shelfmark.ID
		match int64
		code  string
	}{
		{"a page of another work", as(dep), stranger.ID, 0, shelfmark.EINVALID},
		{"the work itself", as(dep), book.ID, 0, shelfmark.EINVALID},
		{"a stale version", as(dep), p1, book.Version, shelfmark.EPRECONDITION},
		{"another depositor", as(other), p1, 0, shelfmark.EFORBIDDEN},
		{"anonymous", as(anon), p1, 0, shelfmark.EUNAUTHORIZED},
	} {
		if _, err := e.repo.SetThumbnailPage(tc.ctx, book.ID, tc.page, tc.match); shelfmark.ErrorCode(err) != tc.code {
			t.Fatalf("%s: error %v, want code %s", tc.name, err, tc.code)
		}
	}
	// the statement written as metadata (the API's, a batch edit's) is
	// held to the same rule; an image elsewhere is a statement like any
	// other
	depicts := func(iri string) shelfmark.ResourceUpdate {
		st := shelfmark.Statement{Predicate: shelfmark.PredThumbnailPage, Object: shelfmark.NewIRI(iri)}
		return shelfmark.ResourceUpdate{Add: []shelfmark.Statement{st}}
	}
	for _, iri := range []string{shelfmark.ResourceIRI(stranger.ID), shelfmark.ResourceIRI(book.ID), "urn:shelfmark:not-an-id", shelfmark.ResourceIRI(p2) + "x"} {
		if _, err := e.repo.UpdateResource(as(dep), book.ID, depicts(iri)); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Fatalf("foaf:depiction %s as metadata: %v, want code %s", iri, err, shelfmark.EINVALID)
		}
	}
	if now := rs(t)(e.repo.FindResource(ctx, book.ID)); now.Version != res.Version || shelfmark.ThumbnailPageOf(now.Metadata) != p3 {
		t.Fatalf("refusals changed the work: version %d (was %d), page %q", now.Version, res.Version, shelfmark.ThumbnailPageOf(now.Metadata))
	}

	// the cost: a chosen page is read with the first pages
	count := func() int {
		t.Helper()
		return len(e.rec.capture(func() { hit(anon, true) }))
	}
	chosen := count()
	rs(t)(e.repo.SetThumbnailPage(as(dep), book.ID, "", 0))
	if none := count(); chosen != none {
		t.Fatalf("thumbnails: %d statements with a chosen page, %d without", chosen, none)
	}
	want("the choice taken back", t1, t1)
	rs(t)(e.repo.UpdateResource(as(dep), book.ID, depicts(shelfmark.ResourceIRI(p2))))
	want("the second page, chosen as metadata", t2, t2)
	rs(t)(e.repo.UpdateResource(as(dep), book.ID, shelfmark.ResourceUpdate{Remove: depicts(shelfmark.ResourceIRI(p2)).Add,
		Add: depicts("https://images.example.org/cover.jpg").Add}))
	want("an image elsewhere", t1, t1)
	rs(t)(e.repo.UpdateResource(as(dep), book.ID, shelfmark.ResourceUpdate{Remove: depicts("https://images.example.org/cover.jpg").Add}))

	// a chosen page deleted: the first page's again
	rs(t)(e.repo.SetThumbnailPage(as(dep), book.ID, p2, 0))
	if err := e.repo.DeleteResource(sys, p2, 0); err != nil {
		t.Fatal(err)
	}
	want("a deleted page", t1, t1)
}
