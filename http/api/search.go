package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// searchHitJSON is one hit of GET /api/v1/search.
type searchHitJSON struct {
	ID     shelfmark.ID `json:"id"`
	Work   shelfmark.ID `json:"work"`
	Kind   string       `json:"kind"`
	Format string       `json:"format"`
	Title  string       `json:"title"`
	// Snippet is HTML: escaped text with <mark>…</mark> around matches.
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
	// Matches and Pages are a grouped hit's (group=work): how many of the
	// work's pages match within its window, and the best of them.
	Matches *int64           `json:"matches,omitempty"`
	Pages   []searchPageJSON `json:"pages,omitempty"`
	// Thumbnail is the id of a thumbnail file the caller may read: of a
	// page hit its own, of a work its best page's, or its first page's
	// (shelfmark.Repository.HitThumbnails); absent without one.
	Thumbnail shelfmark.ID `json:"thumbnail,omitempty"`
}

// searchPageJSON is one matching page of a grouped hit.
type searchPageJSON struct {
	ID     shelfmark.ID `json:"id"`
	Format string       `json:"format"`
	Score  float64      `json:"score"`
}

// FacetJSON is one value of a facet and its number of hits.
type FacetJSON struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// searchFacetsJSON are the facet counts of every hit, by facet name: the
// built-in collection, kind, format and decade (the hits by the decade of
// their work's record's earliest year, "1850": 1850–1859; undated works
// are not counted), and each metadata facet of the repository
// (shelfmark.SearchResult.Metadata: creator, subject, language, type and
// those an administrator named).
type searchFacetsJSON map[string][]FacetJSON

// searchJSON is the body of GET /api/v1/search. Total, Estimated and
// Facets are given on the first page only; Estimated says that the total
// and the facet counts are estimates (more hits than
// shelfmark.SearchWindow).
type searchJSON struct {
	Hits      []searchHitJSON  `json:"hits"`
	Total     *int64           `json:"total,omitempty"`
	Estimated *bool            `json:"estimated,omitempty"`
	Facets    searchFacetsJSON `json:"facets,omitempty"`
	Next      string           `json:"next,omitempty"`
}

// searchQuery reads the parameters of GET /api/v1/search; facets are the
// repository's.
func searchQuery(r *http.Request, ids *shelfmark.IDCodec, now time.Time, facets []shelfmark.SearchFacet) (shelfmark.SearchQuery, error) {
	v := r.URL.Query()
	q := shelfmark.SearchQuery{Text: v.Get("q"), Kind: shelfmark.Kind(v.Get("kind")), Format: v.Get("format"), Now: now, FacetSet: facets}
	filters, err := shelfmark.ParseSearchFilters(v["f"], facets)
	if err != nil {
		return q, err
	}
	q.Filters = filters
	if c := v.Get("collection"); c != "" {
		k, err := ids.Key(shelfmark.ID(c))
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "collection must be the id of a collection: %s", shelfmark.ErrorMessage(err))
		}
		q.Collection = k
	}
	// no words with a collection: what it holds; without: everything
	if !q.Browse() && !q.Everything() {
		if _, err := q.Terms(); err != nil {
			return q, err
		}
	}
	q.Sort = v.Get("sort")
	if err := shelfmark.CheckSearchSort(q.Sort); err != nil {
		return q, err
	}
	switch g := v.Get("group"); g {
	case "":
	case "work":
		q.Group = true
	default:
		return q, shelfmark.Errorf(shelfmark.EINVALID, "group must be work (or absent), not %q.", kit.TruncateParam(g))
	}
	if q.Kind != "" && !q.Kind.Valid() {
		return q, shelfmark.Errorf(shelfmark.EINVALID, "kind must be collection, work or fileset, not %q.", kit.TruncateParam(string(q.Kind)))
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > shelfmark.MaxSearchLimit {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "limit must be a whole number from 1 to %d.", shelfmark.MaxSearchLimit)
		}
		q.Limit = n
	}
	if c := v.Get("cursor"); c != "" {
		after, err := kit.DecodeSearchCursor(c)
		if err != nil {
			return q, err
		}
		q.After = after
	}
	q.Facets = q.After == nil
	return q, nil
}

// facetsJSON converts facet counts, collection keys to ids.
func facetsJSON(res *shelfmark.SearchResult, ids *shelfmark.IDCodec) searchFacetsJSON {
	f := searchFacetsJSON{shelfmark.SearchFacetCollection: {}}
	for _, c := range res.Collections {
		k, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil || !kit.HasID(k) {
			continue
		}
		f[shelfmark.SearchFacetCollection] = append(f[shelfmark.SearchFacetCollection], FacetJSON{Value: string(ids.Encode(k)), Count: c.Count})
	}
	counts := func(fs []shelfmark.FacetCount) []FacetJSON {
		out := make([]FacetJSON, 0, len(fs))
		for _, c := range fs {
			out = append(out, FacetJSON{Value: c.Value, Count: c.Count})
		}
		return out
	}
	f[shelfmark.SearchFacetKind], f[shelfmark.SearchFacetFormat], f[shelfmark.SearchFacetDecade] = counts(res.Kinds), counts(res.Formats), counts(res.Decades)
	for _, m := range res.Metadata {
		f[m.Name] = counts(m.Values)
	}
	return f
}

// search handles GET /api/v1/search?q=&collection=&kind=&format=&f=&sort=&group=&limit=&cursor=:
// a page of the hits the caller may read (public ones for an anonymous
// caller; see shelfmark.SearchReader), best first within windows of
// shelfmark.SearchWindow matches (newest window first); the first page (no
// cursor) also carries the total and the facet counts of every hit, exact
// up to shelfmark.SearchWindow hits and estimated (estimated: true) above.
// Without q (or with spaces only) but with a collection, the hits are
// what the collection holds that the caller may read, newest member first
// (shelfmark.SearchQuery.Browse); without either, everything the caller
// may read, newest first (shelfmark.SearchQuery.Everything). With
// group=work, each hit is a work with its matching pages
// (shelfmark.SearchQuery.Grouped). Each f=name:value narrows the hits to
// the works whose record holds the value for that metadata facet, as
// name:value in q does for a facet that is not a search field.
func (s *Handler) search(w http.ResponseWriter, r *http.Request) error {
	q, err := searchQuery(r, s.deps.Resources.IDs(), s.deps.Now(), s.deps.SearchFacets)
	if err != nil {
		return err
	}
	if s.deps.Storage == nil {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "Search is not available on this server.")
	}
	var res *shelfmark.SearchResult
	var thumbs map[int64]shelfmark.ID
	err = s.deps.Storage.View(r.Context(), func(tx shelfmark.ReadTx) error {
		var err error
		if q.Reader, err = s.deps.Resources.SearchReader(r.Context(), tx); err != nil {
			return err
		}
		if res, err = tx.Search(r.Context(), q); err != nil {
			return err
		}
		thumbs, err = s.deps.Resources.HitThumbnails(r.Context(), tx, res.Hits, nil)
		return err
	})
	if err != nil {
		return err
	}
	if q.Reader != nil {
		// built for this caller: no cache keeps it
		kit.AddVary(w.Header(), kit.CallerVary...)
		kit.SetCache(w.Header(), kit.CacheNoStore, 0)
	}
	ids := s.deps.Resources.IDs()
	out := searchJSON{Hits: make([]searchHitJSON, 0, len(res.Hits))}
	for _, h := range res.Hits {
		if !kit.HasID(h.Key) || !kit.HasID(h.Work) {
			continue // a document of no resource: nothing to link to
		}
		hit := searchHitJSON{ID: ids.Encode(h.Key), Work: ids.Encode(h.Work), Kind: string(h.Kind),
			Format: h.Format, Title: h.Title, Snippet: kit.SnippetHTML(h.Snippet), Score: h.Score, Thumbnail: thumbs[h.Key]}
		if q.Grouped() {
			hit.Matches = &h.Matches
			for _, pg := range h.Pages {
				if kit.HasID(pg.Key) {
					hit.Pages = append(hit.Pages, searchPageJSON{ID: ids.Encode(pg.Key), Format: pg.Format, Score: pg.Score})
				}
			}
		}
		out.Hits = append(out.Hits, hit)
	}
	if q.Facets {
		out.Total, out.Estimated = &res.Total, &res.Estimated
		out.Facets = facetsJSON(res, s.deps.Resources.IDs())
	}
	if res.Next != nil {
		out.Next = kit.EncodeSearchCursor(*res.Next)
		v := r.URL.Query()
		v.Set("cursor", out.Next)
		w.Header().Add("Link", "<"+r.URL.Path+"?"+v.Encode()+`>; rel="next"`)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}
