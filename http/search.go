package http

import (
	"encoding/base64"
	"encoding/binary"
	"html"
	"math"
	"net/http"
	"strconv"
	"strings"
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
}

// facetJSON is one value of a facet and its number of hits.
type facetJSON struct {
	Value string `json:"value"`
	Count int64  `json:"count"`
}

// searchFacetsJSON are the facet counts of every hit.
type searchFacetsJSON struct {
	Collection []facetJSON `json:"collection"`
	Kind       []facetJSON `json:"kind"`
	Format     []facetJSON `json:"format"`
}

// searchJSON is the body of GET /api/v1/search. Total, Estimated and
// Facets are given on the first page only; Estimated says that the total
// and the facet counts are estimates (more hits than
// shelfmark.SearchWindow).
type searchJSON struct {
	Hits      []searchHitJSON   `json:"hits"`
	Total     *int64            `json:"total,omitempty"`
	Estimated *bool             `json:"estimated,omitempty"`
	Facets    *searchFacetsJSON `json:"facets,omitempty"`
	Next      string            `json:"next,omitempty"`
}

// Search cursor versions, the first byte of a token, so the format can
// change without misreading old tokens: version 1 (a score and a key)
// came before windows and still reads, as a position in the first window.
const (
	searchCursorV1      = 1
	searchCursorVersion = 2
)

// encodeSearchCursor turns a keyset position into an opaque token: the
// version byte, the score's IEEE 754 bits, the key and the window, in
// base64url.
func encodeSearchCursor(c shelfmark.SearchCursor) string {
	var b [25]byte
	b[0] = searchCursorVersion
	binary.BigEndian.PutUint64(b[1:9], math.Float64bits(c.Score))
	binary.BigEndian.PutUint64(b[9:17], uint64(c.Key))
	binary.BigEndian.PutUint64(b[17:], uint64(c.Window))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// decodeSearchCursor reads a token of encodeSearchCursor (or of version
// 1); anything else is EINVALID.
func decodeSearchCursor(s string) (*shelfmark.SearchCursor, error) {
	bad := shelfmark.Errorf(shelfmark.EINVALID, "cursor is not a cursor this server handed out: pass the `next` of the previous page unchanged.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !(len(b) == 17 && b[0] == searchCursorV1 || len(b) == 25 && b[0] == searchCursorVersion) {
		return nil, bad
	}
	c := &shelfmark.SearchCursor{
		Score: math.Float64frombits(binary.BigEndian.Uint64(b[1:9])),
		Key:   int64(binary.BigEndian.Uint64(b[9:17])),
	}
	if len(b) == 25 {
		c.Window = int64(binary.BigEndian.Uint64(b[17:]))
	}
	// a key of 0 is the beginning of a window, which has a top
	if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) || c.Key < 0 || c.Key == 0 && c.Window < 1 || c.Window < 0 {
		return nil, bad
	}
	return c, nil
}

// searchQuery reads the parameters of GET /api/v1/search.
func searchQuery(r *http.Request, ids *shelfmark.IDCodec) (shelfmark.SearchQuery, error) {
	v := r.URL.Query()
	q := shelfmark.SearchQuery{Text: v.Get("q"), Kind: shelfmark.Kind(v.Get("kind")), Format: v.Get("format"), Now: time.Now()}
	if c := v.Get("collection"); c != "" {
		k, err := ids.Key(shelfmark.ID(c))
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "collection must be the id of a collection: %s", shelfmark.ErrorMessage(err))
		}
		q.Collection = k
	}
	if !q.Browse() { // no words with a collection: what it holds
		if _, err := shelfmark.ParseSearchText(q.Text); err != nil {
			return q, err
		}
	}
	if q.Kind != "" && !q.Kind.Valid() {
		return q, shelfmark.Errorf(shelfmark.EINVALID, "kind must be collection, work or fileset, not %q.", truncateParam(string(q.Kind)))
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > shelfmark.MaxSearchLimit {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "limit must be a whole number from 1 to %d.", shelfmark.MaxSearchLimit)
		}
		q.Limit = n
	}
	if c := v.Get("cursor"); c != "" {
		after, err := decodeSearchCursor(c)
		if err != nil {
			return q, err
		}
		q.After = after
	}
	q.Facets = q.After == nil
	return q, nil
}

// truncateParam shortens a parameter quoted in an error message.
func truncateParam(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}

// snippetHTML escapes a snippet and turns its match markers into <mark>.
var snippetHTML = strings.NewReplacer(shelfmark.SnippetStart, "<mark>", shelfmark.SnippetEnd, "</mark>")

// hasID reports whether key is in the range of IDCodec.Encode.
func hasID(key int64) bool { return key >= 1 && key <= shelfmark.MaxKey }

// facetsJSON converts facet counts, collection keys to ids.
func facetsJSON(res *shelfmark.SearchResult, ids *shelfmark.IDCodec) *searchFacetsJSON {
	f := &searchFacetsJSON{Collection: []facetJSON{}, Kind: []facetJSON{}, Format: []facetJSON{}}
	for _, c := range res.Collections {
		k, err := strconv.ParseInt(c.Value, 10, 64)
		if err != nil || !hasID(k) {
			continue
		}
		f.Collection = append(f.Collection, facetJSON{Value: string(ids.Encode(k)), Count: c.Count})
	}
	for _, c := range res.Kinds {
		f.Kind = append(f.Kind, facetJSON{Value: c.Value, Count: c.Count})
	}
	for _, c := range res.Formats {
		f.Format = append(f.Format, facetJSON{Value: c.Value, Count: c.Count})
	}
	return f
}

// search handles GET /api/v1/search?q=&collection=&kind=&format=&limit=&cursor=:
// a page of public hits, best first within windows of
// shelfmark.SearchWindow matches (newest window first); the first page (no
// cursor) also carries the total and the facet counts of every hit, exact
// up to shelfmark.SearchWindow hits and estimated (estimated: true) above.
// Without q (or with spaces only) but with a collection, the hits are
// what the collection holds in public view, newest member first
// (shelfmark.SearchQuery.Browse).
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	q, err := searchQuery(r, s.opts.Resources.IDs())
	if err != nil {
		return err
	}
	if s.opts.Storage == nil {
		return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "Search is not available on this server.")
	}
	var res *shelfmark.SearchResult
	err = s.opts.Storage.View(r.Context(), func(tx shelfmark.ReadTx) error {
		var err error
		res, err = tx.Search(r.Context(), q)
		return err
	})
	if err != nil {
		return err
	}
	ids := s.opts.Resources.IDs()
	out := searchJSON{Hits: make([]searchHitJSON, 0, len(res.Hits))}
	for _, h := range res.Hits {
		if !hasID(h.Key) || !hasID(h.Work) {
			continue // a document of no resource: nothing to link to
		}
		out.Hits = append(out.Hits, searchHitJSON{ID: ids.Encode(h.Key), Work: ids.Encode(h.Work), Kind: string(h.Kind),
			Format: h.Format, Title: h.Title, Snippet: snippetHTML.Replace(html.EscapeString(h.Snippet)), Score: h.Score})
	}
	if q.Facets {
		out.Total, out.Estimated = &res.Total, &res.Estimated
		out.Facets = facetsJSON(res, s.opts.Resources.IDs())
	}
	if res.Next != nil {
		out.Next = encodeSearchCursor(*res.Next)
		v := r.URL.Query()
		v.Set("cursor", out.Next)
		w.Header().Add("Link", "<"+r.URL.Path+"?"+v.Encode()+`>; rel="next"`)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}
