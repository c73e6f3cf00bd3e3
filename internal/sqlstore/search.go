package sqlstore

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// Search is a dialect's statements of the search document read and
// deletion of Tx and WriteTx. Their arguments are those named; a list is
// one argument bound by Dialect.Int64s.
type Search struct {
	// SearchDoc reads key, work, kind, format, title, body, access,
	// creator, subject, date_lo, date_hi and lang of the document key.
	SearchDoc string
	// DeleteSearchDocs removes the documents of keys and of the works
	// among keys: keys.
	DeleteSearchDocs string
	// PutSearchDocs are the statements that upsert documents, run in
	// order, each given the table expression v of SearchDocCols (bound by
	// Dialect.From) and taking only its arguments. A page's document
	// (key other than work) takes the language of its work's record as
	// stored (lang in v is the record's own, and "" for a page), and the
	// last statement gives the pages of every record of v its language
	// where they have another (shelfmark.SearchDoc.Lang).
	PutSearchDocs []func(v string) string
	// DeleteSearchFacets removes the facet values of the works keys
	// (search_facets): keys.
	DeleteSearchFacets string
}

// SearchDocCols are the columns of a document as PutSearchDocs sends them:
// dates is the record's hidden tokens, those of its dates
// (shelfmark.SearchDateTokens) and of its facet values
// (shelfmark.SearchFacetTokens), date_lo
// and date_hi its years or NULL, title_key its title's sort key
// (shelfmark.SearchTitleKey) or NULL, lang a record's language
// (shelfmark.SearchDoc.Lang; "" for a page, which takes its work's).
var SearchDocCols = []Col{{"key", Int64}, {"work", Int64}, {"kind", Text}, {"format", Text}, {"title", Text}, {"body", Text}, {"access", Int64},
	{"creator", Text}, {"subject", Text}, {"dates", Text}, {"date_lo", NullInt64}, {"date_hi", NullInt64}, {"title_key", NullInt64}, {"lang", Text}}

// searchFacetCols are the columns of search_facets.
var searchFacetCols = []Col{{"work", Int64}, {"facet", Text}, {"value", Text}}

// PutSearchDocs inserts or replaces documents by key (a later document of
// the same key wins: one upsert may not touch a row twice), in the
// dialect's statements, whose number does not depend on the documents';
// and replaces the facet values of the records among them (documents
// whose Key is their Work): one statement deleting those of their works
// and one inserting theirs (none without records or values).
func (w *WriteTx) PutSearchDocs(ctx context.Context, docs []shelfmark.SearchDoc) error {
	if len(docs) == 0 {
		return nil
	}
	docs = LatestDocs(docs)
	if err := w.putSearchFacets(ctx, docs); err != nil {
		return err
	}
	rows := Rows{Cols: SearchDocCols, N: len(docs), Row: func(i int, v []any) {
		d := &docs[i]
		v[0], v[1], v[2], v[3], v[4], v[5], v[6] = d.Key, d.Work, string(d.Kind), d.Format, d.Title, d.Body, d.AccessKey()
		dates := shelfmark.SearchDateTokens(d.DateLo, d.DateHi)
		v[7], v[8], v[9], v[10], v[11] = d.Creator, d.Subject, strings.TrimSpace(dates+" "+shelfmark.SearchFacetTokens(d.Facets)), nil, nil
		if dates != "" {
			v[10], v[11] = int64(d.DateLo), int64(d.DateHi)
		}
		v[12] = nil
		if k, ok := shelfmark.SearchTitleKey(d.Title); ok {
			v[12] = k
		}
		v[13] = ""
		if d.Key == d.Work {
			v[13] = d.Lang
		}
	}}
	for _, stmt := range w.d.PutSearchDocs {
		if _, err := w.execFrom(ctx, rows, stmt); err != nil {
			return fmt.Errorf("%sput %d search documents: %w", w.d.Prefix, len(docs), err)
		}
	}
	return nil
}

// putSearchFacets replaces the facet values of the records among docs
// (cleaned by LatestDocs: one document a key): one delete of their works'
// rows, one insert of their values.
func (w *WriteTx) putSearchFacets(ctx context.Context, docs []shelfmark.SearchDoc) error {
	var works []int64
	var vals []shelfmark.SearchFacetValue
	var of []int64
	for _, d := range docs {
		if d.Key != d.Work {
			continue // a page: its work's values stay
		}
		works = append(works, d.Work)
		for _, f := range d.Facets {
			vals, of = append(vals, f), append(of, d.Work)
		}
	}
	if len(works) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteSearchFacets, w.d.Int64s(works)); err != nil {
		return fmt.Errorf("%sdelete the facet values of %d records: %w", w.d.Prefix, len(works), err)
	}
	return w.insert(ctx, "insert %d facet values", "search_facets", Rows{Cols: searchFacetCols, N: len(vals), Row: func(i int, v []any) {
		v[0], v[1], v[2] = of[i], vals[i].Facet, vals[i].Value
	}}, "")
}

// SearchDoc returns the stored document of key, or nil: one primary key
// read.
func (t *Tx) SearchDoc(ctx context.Context, key int64) (*shelfmark.SearchDoc, error) {
	docs, err := Collect(ctx, t.q, t.d.SearchDoc, []any{key}, func(r Scanner) (*shelfmark.SearchDoc, error) {
		var d shelfmark.SearchDoc
		var kind string
		var lo, hi *int64
		err := r.Scan(&d.Key, &d.Work, &kind, &d.Format, &d.Title, &d.Body, &d.Access, &d.Creator, &d.Subject, &lo, &hi, &d.Lang)
		d.Kind = shelfmark.Kind(kind)
		d.DateLo, d.DateHi = int(zeroNil(lo)), int(zeroNil(hi))
		return &d, err
	})
	if err != nil {
		return nil, fmt.Errorf("%ssearch document %d: %w", t.d.Prefix, key, err)
	}
	return first(docs), nil
}

// DeleteSearchDocs removes the documents of keys and those of the works
// among keys, and the facet values of those works, in two statements.
func (w *WriteTx) DeleteSearchDocs(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteSearchDocs, w.d.Int64s(keys)); err != nil {
		return fmt.Errorf("%sdelete the search documents of %d keys: %w", w.d.Prefix, len(keys), err)
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteSearchFacets, w.d.Int64s(keys)); err != nil {
		return fmt.Errorf("%sdelete the facet values of %d keys: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}

// Kinds of the rows of a search statement, in its first column beside the
// facets' numbers (shelfmark.FacetTotal …).
const (
	SearchRowHit    = -1 // a hit
	SearchRowWindow = -2 // the window: the size of its sample, its lowest and highest keys
	SearchRowGroup  = -3 // a work of a grouped search: its matching pages as count, the work as key and work, its score
)

// Searcher is what a backend's read transaction adds to Querier for a
// search: the search timeout.
type Searcher interface {
	// StartSearch bounds a search's statements by the search timeout. It
	// returns the context to run them with, the function to call when
	// they are done (in any case) and the one to call after they all
	// succeeded.
	StartSearch(ctx context.Context) (context.Context, func(), func() error, error)
	// SearchError returns err of a search statement run with ctx:
	// shelfmark.SearchTimeoutError, wrapping err, when the search timeout
	// stopped it; err otherwise.
	SearchError(ctx context.Context, err error) error
}

// searchRow reads a row of a search or browse statement into p: kind,
// value, count, key, work, kind, format, title, snippet, score.
func searchRow(r Scanner, p *shelfmark.SearchPager) error {
	var (
		row, n                       int64
		value                        string
		key, work                    *int64
		kind, format, title, snippet *string
		score                        *float64
	)
	if err := r.Scan(&row, &value, &n, &key, &work, &kind, &format, &title, &snippet, &score); err != nil {
		return err
	}
	switch row {
	case SearchRowWindow:
		p.Window(n, zeroNil(key), zeroNil(work))
	case SearchRowGroup:
		p.Group(zeroNil(key), zeroFloat(score), n)
	case SearchRowHit:
		p.Hit(shelfmark.SearchHit{Key: zeroNil(key), Work: zeroNil(work), Kind: shelfmark.Kind(str(kind)), Format: str(format),
			Title: str(title), Snippet: str(snippet), Score: zeroFloat(score)})
	default:
		p.Facet(int(row), value, n)
	}
	return nil
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func zeroFloat(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// Search returns a page of the hits q.Reader may read: one statement for the page
// in its window (with q.Facets on the first page, the total and facet
// counts too), and a second when the page runs past the end of a full
// window into the next (or, with q.Facets on a later page, for the
// facets). A browse (q.Browse()) is one statement.
func (t *Tx) Search(ctx context.Context, q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
	var (
		p     shelfmark.SearchPager
		pages iter.Seq[shelfmark.SearchStatement]
		page  func(top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any)
		what  string
	)
	if q.Browse() {
		st := p.StartBrowse(&q)
		pages = func(yield func(shelfmark.SearchStatement) bool) { yield(st) }
		page = func(_ int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
			return t.d.BrowseSQL(&q, after, n, facets)
		}
		what = fmt.Sprintf("browse collection %d", q.Collection)
	} else {
		var match any // nil: everything (q.Everything), which Window scores by key
		if !q.Everything() {
			terms, err := q.Terms()
			if err != nil {
				return nil, err
			}
			match = t.d.Match(terms)
		}
		pages = p.Start(&q)
		page = func(top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
			return t.d.SearchSQL(&q, match, top, after, n, facets)
		}
		what = fmt.Sprintf("search %.80q", q.Text)
	}
	s := t.q.(Searcher)
	ctx, cancel, done, err := s.StartSearch(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	for st := range pages {
		stmt, args := page(st.Top, st.After, st.Hits, st.Facets)
		if err := t.q.EachRow(ctx, stmt, args, func(r Scanner) error { return searchRow(r, &p) }); err != nil {
			return nil, fmt.Errorf("%s%s: %w", t.d.Prefix, what, s.SearchError(ctx, err))
		}
	}
	if err := done(); err != nil {
		return nil, err
	}
	return p.Result(), nil
}

// LatestDocs drops every document that a later one of the same key
// replaces (one upsert may not touch a row twice), keeping the order of
// the rest, and cleans their text: one map and one slice of the kept.
func LatestDocs(docs []shelfmark.SearchDoc) []shelfmark.SearchDoc {
	last := make(map[int64]int, len(docs))
	for i, d := range docs {
		last[d.Key] = i
	}
	out := make([]shelfmark.SearchDoc, 0, len(last))
	for i, d := range docs {
		if last[d.Key] == i {
			d.Format = shelfmark.CleanSearchText(d.Format)
			d.Title, d.Body = shelfmark.CleanSearchText(d.Title), shelfmark.CleanSearchText(d.Body)
			d.Facets = cleanFacets(d.Facets)
			d.Creator, d.Subject = shelfmark.CleanSearchText(d.Creator), shelfmark.CleanSearchText(d.Subject)
			out = append(out, d)
		}
	}
	return out
}

// cleanFacets returns values as search_facets stores them
// (shelfmark.FacetValue), each (facet, value) once, without empty ones.
func cleanFacets(values []shelfmark.SearchFacetValue) []shelfmark.SearchFacetValue {
	if len(values) == 0 {
		return nil
	}
	seen := make(map[shelfmark.SearchFacetValue]bool, len(values))
	out := make([]shelfmark.SearchFacetValue, 0, len(values))
	for _, v := range values {
		v.Value = shelfmark.FacetValue(v.Value)
		if v.Value == "" || v.Facet == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}
