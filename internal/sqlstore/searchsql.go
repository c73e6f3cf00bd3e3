package sqlstore

import (
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// SearchStatements is a dialect's parts of the search and browse
// statements, which SearchSQL and BrowseSQL put together the same way on
// both backends. Each part writes to the statement being built, binding
// its own arguments (Stmt.Arg).
type SearchStatements struct {
	// Match returns what a search for parsed terms matches with, as the
	// dialect reads it (an FTS5 expression; a tsquery and the query of
	// its headlines). Window and Hits receive it.
	Match func(terms []shelfmark.SearchTerm) any
	// Window writes the statement of one window of q's matches: the
	// newest n visible matches at or below top (any key when top is 0),
	// newest first, as key, work, kind, format and score. A nil match is
	// every visible document, scored by its key (q.Everything).
	Window func(s *Stmt, q *shelfmark.SearchQuery, match any, top int64, n int)
	// Matches returns the condition that the document alias (a
	// search_docs row) matches, for one document at a time (by its key).
	Matches func(s *Stmt, match any, alias string) string
	// Hits returns the end of the hits of a page, over its rows p (key,
	// work, kind, format, score) and their works w: a snippet of each
	// hit's text marking the matches, AS snippet, then p.score and the
	// FROM and WHERE clauses that join p's documents and w (the document
	// of p.work, whose title the hit shows).
	Hits func(s *Stmt, match any) string
	// BrowseRange writes one range of the browse of q's collection (whose
	// placeholder is coll): the visible documents of its members that
	// member (a condition on memberships m) admits, with keys above key
	// (when not 0), newest member first and by key within one, as key,
	// work, kind and format, at most lim of them. now is the placeholder
	// of the time visibility is judged at.
	BrowseRange func(s *Stmt, q *shelfmark.SearchQuery, member, coll, now string, key int64, lim string)
	// Collections returns the statement counting a sample's rows (win)
	// by collection of their work, the collections q's reader may read
	// (Readable), for FacetRows, with the count expression count (over
	// win's rows m); now as in BrowseRange.
	Collections func(s *Stmt, q *shelfmark.SearchQuery, count, now string) string
	// Snippet is the expression of the beginning (BrowseSnippet
	// characters) of a browse hit's text, over its
	// document's text x.
	Snippet string
	// TextTable is the table holding a document's title and body by key.
	TextTable string
	// Materialized is "MATERIALIZED " where the page and its hits must
	// be computed once and apart, empty where the planner may inline
	// them.
	Materialized string
	// Float casts a placeholder or NULL to the score's type ("::float8"),
	// and Pad fills the columns of a facet row after its count, typed as
	// the first row of the statement types them.
	Float, Pad string
	// Collate is the clause that orders text in byte order, empty where
	// that is the default.
	Collate string
	// Lists binds lists of keys as the dialect does (Readable).
	Lists Lists
	// FirstArgs go before every search statement's arguments (pgx's
	// QueryExecModeExec, which plans each for its values).
	FirstArgs []any
}

// BrowseSnippet is how many characters of a document's text a browse hit
// shows.
const BrowseSnippet = 240

// SearchSQL returns the statement of a search page in one window (the
// newest SearchWindow visible matches at or below top; any key when top
// is 0) and its arguments. It reads the window's matches once, with one
// more below them (the sample: SearchWindow+1 matches), and returns a row
// of kind SearchRowWindow (the sample's size, and the window's lowest and
// highest keys as key and work), the best n hits after the cursor's
// (score, key) as rows of kind SearchRowHit with their snippets and,
// with facets, the rows of the total, the spans and the facets counted
// over the sample (top must then be 0): the columns searchRow scans.
func (d *Dialect) SearchSQL(q *shelfmark.SearchQuery, match any, top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	s := NewStmt(d.Arg)
	s.WriteString(`WITH win AS MATERIALIZED (`)
	d.Window(s, q, match, top, shelfmark.SearchWindow+1)
	s.WriteString(`),
pw AS MATERIALIZED (SELECT key, work, kind, format, score FROM win ORDER BY key DESC LIMIT ` + strconv.Itoa(shelfmark.SearchWindow) + `),`)
	grouped := q.Grouped() // words: match is not nil
	if grouped {
		d.groupPage(s, q, match, top, after, n)
	} else {
		s.WriteString(`
page AS ` + d.Materialized + `(SELECT key, work, kind, format, score FROM pw`)
		if after != nil {
			score := s.Arg(after.Score) + d.Float
			s.WriteString(` WHERE score < ` + score + ` OR (score = ` + score + ` AND key > ` + s.Arg(after.Key) + `)`)
		}
		s.WriteString(` ORDER BY score DESC, key LIMIT ` + s.Arg(int64(n)) + `),`)
	}
	s.WriteString(`
hits AS ` + d.Materialized + `(SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, '') AS title, ` + d.searchHits(s, match) + `)
SELECT ` + strconv.Itoa(SearchRowWindow) + `, '', (SELECT count(*) FROM win), (SELECT coalesce(min(key), 0) FROM pw), (SELECT coalesce(max(key), 0) FROM pw),
    NULL, NULL, NULL, NULL, NULL` + d.Float + `
UNION ALL SELECT ` + strconv.Itoa(SearchRowHit) + `, '', 0, key, work, kind, format, title, snippet, score FROM hits`)
	if grouped {
		s.WriteString(`
UNION ALL SELECT ` + strconv.Itoa(SearchRowHit) + `, '', 0, key, work, kind, format, NULL, NULL, score FROM ranked
    WHERE rn > 1 AND rn <= ` + strconv.Itoa(shelfmark.SearchGroupPages+1) + ` AND key <> work
UNION ALL SELECT ` + strconv.Itoa(SearchRowGroup) + `, '', n, work, work, NULL, NULL, NULL, NULL, score FROM gpage`)
	}
	if facets {
		s.WriteString(d.FacetRows(s, q, "key", `(SELECT min(key) FROM search_docs)`, s.Arg(q.Now.UnixMicro())))
	}
	return s.String(), append(append([]any(nil), d.FirstArgs...), s.Args...)
}

// groupPage writes the CTEs of a grouped search page
// (shelfmark.SearchQuery.Grouped) over the window's matches pw: grp, each
// work of the window with its best score and its number of matching pages
// (documents other than the work's own); gpage, the best n works after
// the cursor's (score, work), leaving out, in a window below the newest
// (top > 0), each work with a visible match above top (it was a hit of a
// newer window; unless only records match, one document a work);
// ranked, the documents of those works in pw numbered by score within
// each; and page, the best document of each, whose snippet the hits read.
func (d *Dialect) groupPage(s *Stmt, q *shelfmark.SearchQuery, match any, top int64, after *shelfmark.SearchCursor, n int) {
	s.WriteString(`
grp AS MATERIALIZED (SELECT work, max(score) AS score, sum(CASE WHEN key <> work THEN 1 ELSE 0 END) AS n FROM pw GROUP BY work),
gpage AS MATERIALIZED (SELECT work, score, n FROM grp g WHERE true`)
	if after != nil {
		score := s.Arg(after.Score) + d.Float
		s.WriteString(` AND (score < ` + score + ` OR (score = ` + score + ` AND work > ` + s.Arg(after.Key) + `))`)
	}
	if top > 0 && !recordsOnly(q) {
		now := s.Arg(q.Now.UnixMicro())
		s.WriteString(`
    AND NOT EXISTS (SELECT 1 FROM search_docs d JOIN resources r ON r.key = d.access
        WHERE d.work = g.work AND d.key > ` + s.Arg(top) + ` AND ` + Readable(s, d.Lists, q.Reader, "r", "d.work", now))
		DocFilters(s, q)
		s.WriteString(` AND ` + d.Matches(s, match, "d") + `)`)
	}
	s.WriteString(` ORDER BY score DESC, work LIMIT ` + s.Arg(int64(n)) + `),
ranked AS MATERIALIZED (SELECT key, work, kind, format, score,
    row_number() OVER (PARTITION BY work ORDER BY score DESC, key) AS rn FROM pw WHERE work IN (SELECT work FROM gpage)),
page AS ` + d.Materialized + `(SELECT key, work, kind, format, score FROM ranked WHERE rn = 1),`)
}

// SortScore returns the score of the documents d (search_docs rows)
// under q's date or title sort, from the record of d's work: its
// earliest year negated (shelfmark.SearchSortDate) or its latest
// (shelfmark.SearchSortDateDesc), shelfmark.SearchUndated without one;
// its title's sort key negated (shelfmark.SearchSortTitle),
// shelfmark.SearchUntitled without one; as a double, one look-up of the
// record by key per document. Empty for the other orders.
func SortScore(q *shelfmark.SearchQuery) string {
	var col, none string
	switch q.Sort {
	case shelfmark.SearchSortDate:
		col, none = `-wd.date_lo`, strconv.Itoa(shelfmark.SearchUndated)
	case shelfmark.SearchSortDateDesc:
		col, none = `wd.date_hi`, strconv.Itoa(shelfmark.SearchUndated)
	case shelfmark.SearchSortTitle:
		col, none = `-wd.title_key`, strconv.FormatFloat(shelfmark.SearchUntitled, 'f', 0, 64)
	default:
		return ""
	}
	return `CAST(coalesce((SELECT ` + col + ` FROM search_docs wd WHERE wd.key = d.work), ` + none + `) AS DOUBLE PRECISION)`
}

// recordsOnly reports whether only records can match q's text
// (shelfmark.SearchRecordsOnly): one document a work, so that no work of
// a window can have a match in a newer one.
func recordsOnly(q *shelfmark.SearchQuery) bool {
	terms, err := q.Terms()
	return err == nil && shelfmark.SearchRecordsOnly(terms)
}

// searchHits is the end of the hits of a search page (Hits), or, for a
// nil match (everything), the beginning of each hit's text as a browse
// shows it.
func (d *Dialect) searchHits(s *Stmt, match any) string {
	if match == nil {
		return d.Snippet + ` AS snippet, p.score
    FROM page p LEFT JOIN ` + d.TextTable + ` x ON x.key = p.key LEFT JOIN ` + d.TextTable + ` w ON w.key = p.work`
	}
	return d.Hits(s, match)
}

// BrowseSQL returns the statement of a browse page (q.Browse()): n hits
// after the cursor, newest member of the collection first and by key
// within one, with their work's title and the beginning of their text
// and, with facets, the total, the spans and the facets counted over the
// first SearchWindow+1 documents of the browse; the columns of SearchSQL.
func (d *Dialect) BrowseSQL(q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	s := NewStmt(d.Arg)
	s.WriteString(`WITH page AS MATERIALIZED (`)
	d.browseMembers(s, q, after, n)
	s.WriteString(`)`)
	if facets {
		s.WriteString(`, win AS MATERIALIZED (`)
		d.browseMembers(s, q, nil, shelfmark.SearchWindow+1)
		s.WriteString(`)`)
	}
	s.WriteString(`
SELECT ` + strconv.Itoa(SearchRowHit) + `, '', 0, p.key, p.work, p.kind, p.format, coalesce(w.title, ''), ` + d.Snippet + `, 0.0` + d.Float + `
FROM page p LEFT JOIN ` + d.TextTable + ` x ON x.key = p.key LEFT JOIN ` + d.TextTable + ` w ON w.key = p.work`)
	if facets {
		low := `(SELECT min(member) FROM memberships WHERE collection = ` + s.Arg(q.Collection) + `)`
		s.WriteString(d.FacetRows(s, q, "work", low, s.Arg(q.Now.UnixMicro())))
	}
	return s.String(), append(append([]any(nil), d.FirstArgs...), s.Args...)
}

// browseMembers writes the visible documents of q's collection's members
// (BrowseRange): n of them from the beginning, or, with after, those of
// after's member above its key and then those of the members below it
// (two ranges, each read in index order and cut at n, so that nothing is
// sorted but their at most 2n rows).
func (d *Dialect) browseMembers(s *Stmt, q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int) {
	lim := strconv.Itoa(n)
	now, coll := s.Arg(q.Now.UnixMicro()), s.Arg(q.Collection)
	if after == nil {
		d.BrowseRange(s, q, `true`, coll, now, 0, lim)
		return
	}
	w := s.Arg(after.Window)
	s.WriteString(`SELECT * FROM (SELECT * FROM (`)
	d.BrowseRange(s, q, `m.member = `+w, coll, now, after.Key, lim)
	s.WriteString(`) AS a UNION ALL SELECT * FROM (`)
	d.BrowseRange(s, q, `m.member < `+w, coll, now, 0, lim)
	s.WriteString(`) AS b) AS ab ORDER BY work DESC, key LIMIT ` + lim)
}

// DocFilters writes the conditions of q's kind and format filters on the
// documents d, when q has them, and, for a grouped query without words
// (shelfmark.SearchQuery.WorksOnly), that d is a work's or collection's
// own document.
func DocFilters(s *Stmt, q *shelfmark.SearchQuery) {
	if q.Kind != "" {
		s.WriteString(` AND d.kind = ` + s.Arg(string(q.Kind)))
	}
	if q.Format != "" {
		s.WriteString(` AND d.format = ` + s.Arg(q.Format))
	}
	if q.WorksOnly() {
		s.WriteString(` AND d.key = d.work`)
	}
}

// Visible keeps the rows of alias (a resources row) in public view: not
// deleted, and their effective access (the root package's effective.go:
// their own, their parents' and, for a derivative, their source's)
// public now, its embargo (if any) ended and its lease (if any) not yet
// ended. now is the placeholder of the time (µs) embargoes and leases
// are compared with.
func Visible(alias, now string) string {
	return alias + `.deleted IS NULL AND ` + alias + `.eff_visibility = 'public' AND (` + alias + `.eff_embargo IS NULL OR ` +
		alias + `.eff_embargo <= ` + now + `) AND (` + alias + `.eff_lease IS NULL OR ` + alias + `.eff_lease > ` + now + `)`
}

// Lists binds a list of keys as one argument in a dialect's form (its
// Int64s and AnyOf), for statements built by functions that the dialect
// itself is made of.
type Lists struct {
	Int64s func([]int64) any
	AnyOf  func(n int) string
	// Reads, when set, is the name of the database's function (work,
	// user, collections) that Readable calls for its owner and role test
	// instead of writing the test inline: a statement that calls it is
	// planned without the recursive test (PostgreSQL plans every search
	// statement anew, and the inline test added about 1.7 ms to that).
	Reads string
}

// In is the test that col is one of keys, which it binds in s.
func (l Lists) In(s *Stmt, col string, keys []int64) string {
	s.Arg(l.Int64s(keys))
	return col + ` ` + l.AnyOf(len(s.Args))
}

// Readable keeps the rows of alias (a resources row) that rd may read
// (shelfmark.SearchReader): Visible for a nil rd (an anonymous caller),
// every live row for rd.All, and otherwise the live rows whose effective
// access is public or authenticated now, or whose work (the expression
// work: the work or collection the row belongs to, or is) has in its
// chain of parents a root rd.User deposited, or belongs, through that
// chain and the collections above it, to one of rd.Collections. The
// chain and the collections are walked by a recursive look-up made only
// for rows their access does not already show. now is the placeholder
// of the time (µs), as in Visible.
func Readable(s *Stmt, l Lists, rd *shelfmark.SearchReader, alias, work, now string) string {
	switch {
	case rd == nil:
		return Visible(alias, now)
	case rd.All:
		// now is bound for the statement and must be used (SQLite counts
		// the arguments): a test that is always true
		return alias + `.deleted IS NULL AND (` + alias + `.eff_embargo <= ` + now + ` OR true)`
	}
	cond := alias + `.deleted IS NULL AND ((` + alias + `.eff_visibility IN ('public', 'authenticated') AND (` + alias + `.eff_embargo IS NULL OR ` +
		alias + `.eff_embargo <= ` + now + `) AND (` + alias + `.eff_lease IS NULL OR ` + alias + `.eff_lease > ` + now + `))`
	if l.Reads != "" {
		return cond + ` OR ` + l.Reads + `(` + work + `, ` + s.Arg(rd.User) + `, ` + s.Arg(l.Int64s(rd.Collections)) + `))`
	}
	cond += `
    OR EXISTS (WITH RECURSIVE up(k, p, kind, n) AS (SELECT key, parent, kind, 0 FROM resources WHERE key = ` + work + `
        UNION ALL SELECT ru.key, ru.parent, ru.kind, up.n + 1 FROM resources ru JOIN up ON ru.key = up.p WHERE up.n < ` + strconv.Itoa(shelfmark.MaxChain) + `)`
	if len(rd.Collections) > 0 {
		cond += `,
    gov(c) AS (SELECT k FROM up WHERE kind IN ('collection', 'work')
        UNION SELECT mg.collection FROM memberships mg JOIN up ON mg.member = up.k JOIN resources rg ON rg.key = mg.collection WHERE rg.deleted IS NULL
        UNION SELECT mg.collection FROM memberships mg JOIN gov ON mg.member = gov.c JOIN resources rg ON rg.key = mg.collection WHERE rg.deleted IS NULL)`
	}
	cond += `
        SELECT 1 FROM up JOIN owners o ON o.resource = up.k WHERE up.p IS NULL AND o.user_key = ` + s.Arg(rd.User)
	if len(rd.Collections) > 0 {
		cond += ` UNION ALL SELECT 1 FROM gov WHERE ` + l.In(s, `gov.c`, rd.Collections)
	}
	return cond + `))`
}

// FacetRows returns the rows of a search or browse statement that count
// its sample, the CTE win (key, work, kind, format): the sample's size
// (shelfmark.FacetTotal), the span of its keys (FacetSampleSpan) and the
// span from low to its highest key (FacetKeySpan) over win's column col,
// then its most frequent kinds (FacetKind), formats (FacetFormat),
// decades (FacetDecade: of the earliest year of the record of each of
// the sample's works, one look-up of the record by key a work, in a
// subquery its LIMIT (all of the works) keeps both planners from merging
// into the grouping, which would look each up again for the GROUP BY and
// the ORDER BY; undated works not counted) and
// collections (FacetCollection, Collections, those q's reader may read at
// now), at most shelfmark.SearchFacetLimit of each, values tied in count
// in byte order (decades in number order).
// Each row is followed by Pad. It starts with a newline and a UNION ALL.
func (d *Dialect) FacetRows(s *Stmt, q *shelfmark.SearchQuery, col, low, now string) string {
	lim, pad := strconv.Itoa(shelfmark.SearchFacetLimit), d.Pad
	count := `count(*)`    // documents: also works, one each, for q.WorksOnly()
	decades := `sum(dd.n)` // the decades are counted over the sample's works (dd)
	if q.Grouped() {
		count, decades = `count(DISTINCT work)`, `count(*)`
	}
	return `
UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetTotal) + `, '', ` + count + pad + ` FROM win
UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetSampleSpan) + `, '', coalesce(max(` + col + `) - min(` + col + `), 0)` + pad + ` FROM win
UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetKeySpan) + `, '', coalesce((SELECT max(` + col + `) FROM win) - ` + low + `, 0)` + pad + `
UNION ALL SELECT *` + pad + ` FROM (SELECT ` + strconv.Itoa(shelfmark.FacetKind) + `, kind, ` + count + ` AS n FROM win
    GROUP BY kind ORDER BY n DESC, kind` + d.Collate + ` LIMIT ` + lim + `) AS fk
UNION ALL SELECT *` + pad + ` FROM (SELECT ` + strconv.Itoa(shelfmark.FacetFormat) + `, format, ` + count + ` AS n FROM win WHERE format <> ''
    GROUP BY format ORDER BY n DESC, format` + d.Collate + ` LIMIT ` + lim + `) AS ff
UNION ALL SELECT *` + pad + ` FROM (SELECT ` + strconv.Itoa(shelfmark.FacetDecade) + `, CAST(dd.decade AS TEXT), ` + decades + ` AS n
    FROM (SELECT ww.n, (SELECT wd.date_lo / 10 * 10 FROM search_docs wd WHERE wd.key = ww.work) AS decade
        FROM (SELECT work, count(*) AS n FROM win GROUP BY work) AS ww LIMIT ` + strconv.Itoa(shelfmark.SearchWindow+1) + `) AS dd
    WHERE dd.decade IS NOT NULL GROUP BY dd.decade ORDER BY n DESC, dd.decade LIMIT ` + lim + `) AS fd
UNION ALL SELECT *` + pad + ` FROM (` + d.Collections(s, q, strings.Replace(count, "work", "m.work", 1), now) + ` LIMIT ` + lim + `) AS fc` +
		d.metadataFacetRows(s, q, decades)
}

// metadataFacetRows returns the rows of FacetRows that count the sample
// win by the values of the metadata facets of q.FacetSet
// (shelfmark.MetadataFacets), the ith numbered shelfmark.FacetMeta+i:
// the sample's works (as many as its documents at most), each looked up
// once in the primary key of search_facets (work, facet, value) for the
// rows of every facet counted, the values counted by count over the works
// (dd.n, each work's documents in the sample, summed; count(*), works,
// for a grouped query), and the first shelfmark.SearchFacetLimit of each
// facet kept by count and then value in byte order. Empty without
// metadata facets. It starts with a newline and a UNION ALL.
func (d *Dialect) metadataFacetRows(s *Stmt, q *shelfmark.SearchQuery, count string) string {
	facets := shelfmark.MetadataFacets(q.FacetSet)
	if len(facets) == 0 {
		return ""
	}
	var num, in strings.Builder
	for i, f := range facets {
		name := s.Arg(f.Name)
		num.WriteString(` WHEN ` + name + ` THEN ` + strconv.Itoa(shelfmark.FacetMeta+i))
		if i > 0 {
			in.WriteString(`, `)
		}
		in.WriteString(name)
	}
	return `
UNION ALL SELECT *` + d.Pad + ` FROM (SELECT fm.f, fm.value, fm.n FROM (
    SELECT fv.f, fv.value, fv.n, row_number() OVER (PARTITION BY fv.f ORDER BY fv.n DESC, fv.value` + d.Collate + `) AS rn
    FROM (SELECT CASE sf.facet` + num.String() + ` END AS f, sf.value, ` + strings.ReplaceAll(count, "dd.", "ww.") + ` AS n
        FROM (SELECT work, count(*) AS n FROM win GROUP BY work LIMIT ` + strconv.Itoa(shelfmark.SearchWindow+1) + `) AS ww
        CROSS JOIN search_facets sf WHERE sf.work = ww.work AND sf.facet IN (` + in.String() + `)
        GROUP BY sf.facet, sf.value) AS fv) AS fm
    WHERE fm.rn <= ` + strconv.Itoa(shelfmark.SearchFacetLimit) + ` ORDER BY fm.f, fm.n DESC, fm.value` + d.Collate + `
    LIMIT ` + strconv.Itoa(len(facets)*shelfmark.SearchFacetLimit) + `) AS fx`
}
