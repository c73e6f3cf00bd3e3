package oai

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestHarvestDuringIngest: a harvest that runs while works are being added
// (and projected) gets every record that existed when it started exactly
// once; the new ones come after them, each at most once.
func TestHarvestDuringIngest(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 25})
		before := e.works(1000, "old")
		e.project()

		ctx, cancel := context.WithCancel(e.ctx)
		var wg sync.WaitGroup
		wg.Add(2)
		var added []shelfmark.ID
		go func() { // ingest: 20 works per commit until the harvest ends
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 200; i++ {
				var nrs []*shelfmark.NewResource
				for j := 0; j < 20; j++ {
					nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: title("new")})
				}
				rs, errs := e.repo.CreateResources(ctx, nrs)
				for k, err := range errs {
					if err != nil {
						if ctx.Err() == nil {
							t.Error(err)
						}
						return
					}
					added = append(added, rs[k].ID)
				}
				e.proj.Notify()
			}
		}()
		go func() { // the projector, as serve runs it
			defer wg.Done()
			_ = e.proj.Run(ctx)
		}()
		hs := e.harvest("ListIdentifiers", "metadataPrefix=oai_dc")
		cancel()
		wg.Wait()

		got := map[string]int{}
		for _, h := range hs {
			got[h.Identifier]++
		}
		for _, id := range e.oaiIDs(before...) {
			if got[id] != 1 {
				t.Fatalf("%s harvested %d times, want once", id, got[id])
			}
		}
		newSeen := 0
		for _, id := range e.oaiIDs(added...) {
			if got[id] > 1 {
				t.Fatalf("new record %s harvested %d times", id, got[id])
			}
			newSeen += got[id]
		}
		if len(hs) != len(before)+newSeen {
			t.Fatalf("%d headers: %d old + %d new, and some unknown", len(hs), len(before), newSeen)
		}
		t.Logf("harvested %d records that existed and %d of %d added during the harvest", len(before), newSeen, len(added))
	})
}

// TestPageCostFlat: a page deep in a list runs the same statements as the
// first page (rule R11), for ListRecords and for a set.
func TestPageCostFlat(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 10})
		coll := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("C")})
		e.works(3000, "w", coll.ID)
		e.project()
		for _, q := range []string{"metadataPrefix=oai_dc", "metadataPrefix=oai_dc&set=" + string(coll.ID)} {
			p := wantOK(t, e.get("verb=ListRecords&"+q))
			tok := p.Token.Text
			// the second page, then a page 290 deep
			cost := func(tok string) (int64, string) {
				before := e.queries.Load()
				p := wantOK(t, e.get("verb=ListRecords&resumptionToken="+url.QueryEscape(tok)))
				return e.queries.Load() - before, p.Token.Text
			}
			early, next := cost(tok)
			for i := 0; i < 290; i++ {
				_, next = cost(next)
			}
			deep, _ := cost(next)
			if early != deep {
				t.Errorf("%s: page 2 ran %d statements, page 293 ran %d", q, early, deep)
			}
			if early > 6 {
				t.Errorf("%s: a page runs %d statements", q, early)
			}
		}
	})
}
