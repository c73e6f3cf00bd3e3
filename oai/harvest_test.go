package oai

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestUntilHoldsOnEveryPage: a list whose until is the current second
// (a harvester sending until=now) ends where the view stood when it
// opened: records written during the harvest, in that second or later,
// edited records and deletions come on no page, and the list delivers
// exactly its completeListSize.
func TestUntilHoldsOnEveryPage(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 10})
		old := e.works(35, "old")
		e.project()
		now := e.clock.Now()
		until := now.UTC().Format(time.RFC3339)

		var got []xmlHeader
		p := wantOK(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&until="+until))
		got = append(got, p.Headers...)
		if p.IDToken == nil || p.IDToken.Size != "35" {
			t.Fatalf("first page: token %+v, want completeListSize 35", p.IDToken)
		}
		// during the harvest: works made in the same second (their
		// datestamp is until itself), then later ones, an edit and a
		// deletion of records already harvested
		e.works(5, "same second")
		e.project()
		e.clock.Set(now.Add(3 * time.Second))
		e.works(5, "later")
		// two works the first page delivered (the test needs records
		// already harvested, whatever order the works took their numbers
		// in)
		var harvested []shelfmark.ID
		for _, id := range old {
			if slices.ContainsFunc(p.Headers, func(h xmlHeader) bool { return h.Identifier == e.oaiIDs(id)[0] }) {
				harvested = append(harvested, id)
			}
		}
		if len(harvested) < 2 {
			t.Fatalf("%d works of the first page", len(harvested))
		}
		if _, err := e.repo.UpdateResource(e.ctx, harvested[0], shelfmark.ResourceUpdate{Add: title("edited")}); err != nil {
			t.Fatal(err)
		}
		if err := e.repo.DeleteResource(e.ctx, harvested[1], 0); err != nil {
			t.Fatal(err)
		}
		e.project()
		for tok := p.IDToken.Text; tok != ""; {
			p = wantOK(t, e.get("verb=ListIdentifiers&resumptionToken="+url.QueryEscape(tok)))
			got = append(got, p.Headers...)
			if p.IDToken == nil {
				t.Fatal("a page without a resumptionToken")
			}
			if p.IDToken.Size != "35" {
				t.Errorf("completeListSize %q on a later page", p.IDToken.Size)
			}
			tok = p.IDToken.Text
		}
		seen := map[string]int{}
		for _, h := range got {
			seen[h.Identifier]++
			if h.Datestamp > until || h.Status != "" {
				t.Errorf("%s: datestamp %s (status %q), after until %s", h.Identifier, h.Datestamp, h.Status, until)
			}
		}
		for _, id := range e.oaiIDs(old...) {
			if seen[id] != 1 {
				t.Errorf("%s harvested %d times", id, seen[id])
			}
		}
		if len(got) != 35 {
			t.Errorf("%d headers delivered, completeListSize 35", len(got))
		}
	})
}

// TestFirstPageCostFlat: the first page of a list (which finds the list's
// range and its completeListSize) runs the same statements, returning the
// same rows, over 3,000 records as over 40, for a whole format and for a
// set; none of them counts the list.
func TestFirstPageCostFlat(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		first := func(n int) map[string][]string {
			e := open(t, Config{PageSize: 10})
			coll := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("C")})
			e.works(n, "w", coll.ID)
			e.project()
			out := map[string][]string{}
			for _, verb := range []string{"ListIdentifiers", "ListRecords"} {
				for name, q := range map[string]string{"format": "metadataPrefix=oai_dc", "set": "metadataPrefix=oai_dc&set=" + string(coll.ID)} {
					q = "verb=" + verb + "&" + q
					wantOK(t, e.get(q)) // the token key is read once
					var body string
					out[verb+" "+name] = e.statements(func() { body = e.get(q) })
					p := wantOK(t, body)
					tok := p.Token
					if verb == "ListIdentifiers" {
						tok = p.IDToken
					}
					if tok == nil || tok.Size != fmt.Sprint(n) {
						t.Fatalf("%s over %d records: token %+v", q, n, tok)
					}
				}
			}
			return out
		}
		small, large := first(40), first(3000)
		for what, s := range small {
			l := large[what]
			if !slices.Equal(s, l) {
				t.Errorf("%s: page 1 over 40 records ran\n%s\nover 3,000\n%s", what, strings.Join(s, "\n"), strings.Join(l, "\n"))
			}
			for _, q := range l {
				if strings.Contains(strings.ToLower(q), "count(") {
					t.Errorf("%s: page 1 counts the list: %s", what, q)
				}
			}
			t.Logf("%s: page 1 runs %d statements at both sizes", what, len(s))
		}
	})
}
