package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Full-text search (search.go in the root package, migration
// 0005_search.sql): documents in search_docs, whose stored generated column
// tsv (title weighted A, body B, 'simple' configuration) has a GIN index.
//
// A query is a tsquery built from shelfmark.ParseSearchText and read by
// to_tsquery('simple', …): every term becomes one quoted operand ('…',
// with ' doubled and \ escaped), which to_tsquery splits with the parser
// that made the documents' vectors (a term of several words becomes a
// phrase, <->), a prefix term gets :*, and the operands are joined by &.
// Nothing the user typed is read as tsquery syntax.
//
// The score of a hit is ts_rank_cd with the weights {D 0.1, C 0.1, B 0.1,
// A 1.0} (a title match is worth ten body matches, as on SQLite), cast
// from real to double precision: the float64 a page returns is exactly
// the value the next page's cursor compares with.
//
// Cost is bounded by windows (shelfmark.SearchCursor): a window is the
// newest SearchWindow visible matches below its top, read with one more
// (ORDER BY key DESC LIMIT SearchWindow+1), and ts_rank_cd runs on those
// only. PostgreSQL picks the plan per query from the statistics of the
// tsvector column: for a word in many documents, the primary key read
// backwards with the match and the visibility look-up as filters, which
// stops at the window's end; for a rarer word, the GIN index and a sort
// of its matches by key. The statements are planned for their values each
// time (pgx.QueryExecModeExec): a cached generic plan does not know the
// word, and would sort every match of a common one. A page is the
// window's hits ordered by score (descending) then key, after the
// cursor's (score, key); shelfmark.SearchPager decides which windows a
// page reads.

// rankWeights are ts_rank_cd's weights of D, C, B and A.
const rankWeights = `'{0.1, 0.1, 0.1, 1.0}'::real[]`

// tsQuery is the to_tsquery input of parsed terms.
func tsQuery(terms []shelfmark.SearchTerm) string {
	var b strings.Builder
	esc := strings.NewReplacer(`'`, `''`, `\`, `\\`)
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('\'')
		b.WriteString(esc.Replace(t.Text))
		b.WriteByte('\'')
		if t.Prefix {
			b.WriteString(":*")
		}
	}
	return b.String()
}

// headlineQuery is the to_tsquery input that marks a hit's headline: every
// word of terms (a prefix term's last word as a prefix), any of them (|),
// not the terms themselves. ts_headline looks for the covers of its query
// in the whole document, and for a query of phrases that costs many times
// more (eight two-word phrases: about 60 ms a document of 300 words,
// against 0.2 ms for the words on their own); the hits already match the
// phrases, so marking their words marks the phrases too.
func headlineQuery(terms []shelfmark.SearchTerm) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, t := range terms {
		words := shelfmark.SearchTokens(t.Text)
		for i, w := range words {
			w = strings.ToLower(w)
			prefix := t.Prefix && i == len(words)-1
			if key := w + map[bool]string{true: ":*"}[prefix]; seen[key] {
				continue
			} else {
				seen[key] = true
			}
			if b.Len() > 0 {
				b.WriteString(" | ")
			}
			b.WriteByte('\'')
			b.WriteString(strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(w))
			b.WriteByte('\'')
			if prefix {
				b.WriteString(":*")
			}
		}
	}
	return b.String()
}

// tsq is the parsed query whose placeholder is query.
func tsq(query string) string { return `to_tsquery('simple'::regconfig, ` + query + `)` }

// visible keeps the rows of alias in public view: not deleted, and their
// effective access (the root package's effective.go: their own, their
// parents' and, for a derivative, their source's) public now, its embargo
// (if any) ended and its lease (if any) not yet ended. now is the
// placeholder of the time (µs) embargoes and leases are compared with.
func visible(alias, now string) string {
	return alias + `.deleted IS NULL AND ` + alias + `.eff_visibility = 'public' AND (` + alias + `.eff_embargo IS NULL OR ` +
		alias + `.eff_embargo <= ` + now + `) AND (` + alias + `.eff_lease IS NULL OR ` + alias + `.eff_lease > ` + now + `)`
}

// searchMatches writes to s the FROM and WHERE clauses selecting every
// visible document that matches q (the tsquery whose placeholder is
// query), as d (search_docs). The visibility of each document's work is a
// look-up of its resources row by key, one per document read: the OFFSET
// 0 keeps PostgreSQL from turning it into a join, which for a thousand
// matches it would make a hash join over every row of resources.
func searchMatches(s *sqlstore.Stmt, q *shelfmark.SearchQuery, query string) {
	now := s.Arg(q.Now.UnixMicro())
	s.WriteString(`search_docs d WHERE d.tsv @@ ` + tsq(query) + ` AND EXISTS (SELECT 1 FROM resources r WHERE r.key = d.access AND ` + visible("r", now) + ` OFFSET 0)`)
	if q.Kind != "" {
		s.WriteString(` AND d.kind = ` + s.Arg(string(q.Kind)))
	}
	if q.Format != "" {
		s.WriteString(` AND d.format = ` + s.Arg(q.Format))
	}
	if q.Collection != 0 {
		// as a browse: who may not see the collection may not list what
		// it holds
		coll := s.Arg(q.Collection)
		s.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + coll + ` AND m.member = d.work OFFSET 0)
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = ` + coll + ` AND ` + visible("r", now) + `)`)
	}
}

// headlineOptions bound a snippet: up to two fragments of 12 to 32 words
// around the matches, each match between SnippetStart and SnippetEnd.
const headlineOptions = "StartSel=" + shelfmark.SnippetStart + ", StopSel=" + shelfmark.SnippetEnd +
	`, MaxWords=32, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`

// searchWindow writes to s the statement selecting one window of q's
// matches (the newest n visible matches at or below top; any key when top
// is 0) as key, work, kind, format and, with score, the score; query is
// the placeholder of the tsquery.
func searchWindow(s *sqlstore.Stmt, q *shelfmark.SearchQuery, query string, top int64, n int, score bool) {
	if score {
		// ranked outside the LIMIT: when the GIN index finds the matches,
		// they are all read and sorted by key, but only the window's ranked
		s.WriteString(`SELECT key, work, kind, format, ts_rank_cd(` + rankWeights + `, tsv, ` + tsq(query) + `)::float8 AS score FROM (`)
	}
	s.WriteString(`SELECT d.key, d.work, d.kind, d.format`)
	if score {
		s.WriteString(`, d.tsv`)
	}
	s.WriteString(` FROM `)
	searchMatches(s, q, query)
	if top > 0 {
		s.WriteString(` AND d.key <= ` + s.Arg(top))
	}
	s.WriteString(` ORDER BY d.key DESC LIMIT ` + strconv.Itoa(n))
	if score {
		s.WriteString(`) d`)
	}
}

// searchSQL returns the statement of a page in one window (the newest
// SearchWindow visible matches at or below top; any key when top is 0)
// and its arguments. It reads the window's matches once, with one more
// below them (the sample: SearchWindow+1 matches), and returns a row for
// the window (the sample's size, and the window's lowest and highest keys
// as key and work), the best n hits after the cursor's (score, key) with
// their headlines (marking the words of headline, headlineQuery), and,
// with facets, the rows of the total, the spans and
// the facets counted over the sample (top must then be 0).
// Facet values tie-break in byte order, as on SQLite.
func searchSQL(q *shelfmark.SearchQuery, query, headline string, top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	s := sqlstore.NewStmt(arg)
	s.WriteString(`WITH win AS MATERIALIZED (`)
	searchWindow(s, q, s.Arg(query), top, shelfmark.SearchWindow+1, true)
	s.WriteString(`),
pw AS MATERIALIZED (SELECT key, work, kind, format, score FROM win ORDER BY key DESC LIMIT ` + strconv.Itoa(shelfmark.SearchWindow) + `),
page AS (SELECT key, work, kind, format, score FROM pw`)
	if after != nil {
		score := s.Arg(after.Score)
		s.WriteString(` WHERE score < ` + score + `::float8 OR (score = ` + score + `::float8 AND key > ` + s.Arg(after.Key) + `)`)
	}
	s.WriteString(` ORDER BY score DESC, key LIMIT ` + s.Arg(int64(n)) + `),
hits AS (SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, '') AS title,
    ts_headline('simple'::regconfig, d.title || E'\n' || d.body, ` + tsq(s.Arg(headline)) + `, ` + s.Arg(headlineOptions) + `) AS snippet, p.score
    FROM page p JOIN search_docs d ON d.key = p.key LEFT JOIN search_docs w ON w.key = p.work)
SELECT ` + strconv.Itoa(sqlstore.SearchRowWindow) + `, '', (SELECT count(*) FROM win), (SELECT coalesce(min(key), 0) FROM pw), (SELECT coalesce(max(key), 0) FROM pw),
    NULL, NULL, NULL, NULL, NULL::float8
UNION ALL SELECT ` + strconv.Itoa(sqlstore.SearchRowHit) + `, '', 0, key, work, kind, format, title, snippet, score FROM hits`)
	if facets {
		s.WriteString(sqlstore.FacetRows(facetPad, "key", `(SELECT min(key) FROM search_docs)`, facetCollate, facetCollections(s.Arg(q.Now.UnixMicro()))))
	}
	return s.Done()
}

// facetPad fills the other columns of a facet row (sqlstore.FacetRows),
// typed as the first row of the statement types them.
const facetPad = `, NULL::bigint, NULL::bigint, NULL, NULL, NULL, NULL, NULL::float8`

// facetCollate ties facet values in byte order, as on SQLite.
const facetCollate = ` COLLATE "C"`

// facetCollections counts the works of a sample by collection, for
// sqlstore.FacetRows: each work's memberships and each collection's
// visibility at now (a placeholder) looked up by member and key, the
// OFFSET 0 keeping PostgreSQL from hash-joining every membership and
// resource instead.
func facetCollections(now string) string {
	return `SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, ms.collection::text, count(*) AS n
    FROM win m CROSS JOIN LATERAL (SELECT collection FROM memberships WHERE member = m.work OFFSET 0) ms
    WHERE EXISTS (SELECT 1 FROM resources r WHERE r.key = ms.collection AND ` + visible("r", now) + ` OFFSET 0)
    GROUP BY ms.collection ORDER BY n DESC, ms.collection`
}

// searchPage is sqlstore.SearchStatements.SearchPage: the tsquery and the
// headline query of terms, and searchSQL over them, planned for their
// values (pgx.QueryExecModeExec).
func searchPage(q *shelfmark.SearchQuery, terms []shelfmark.SearchTerm) func(int64, *shelfmark.SearchCursor, int, bool) (string, []any) {
	query, headline := tsQuery(terms), headlineQuery(terms)
	return func(top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
		stmt, args := searchSQL(q, query, headline, top, after, n, facets)
		return stmt, append([]any{pgx.QueryExecModeExec}, args...)
	}
}

// browsePage is sqlstore.SearchStatements.BrowsePage: browseSQL, planned
// for its values (pgx.QueryExecModeExec).
func browsePage(q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	stmt, args := browseSQL(q, after, n, facets)
	return stmt, append([]any{pgx.QueryExecModeExec}, args...)
}

// StartSearch implements sqlstore.Searcher: startSearch sets the search's
// statement_timeout and its restore puts the previous one back.
func (t *readTx) StartSearch(ctx context.Context) (context.Context, func(), func() error, error) {
	restore, err := t.r.startSearch(ctx)
	return ctx, func() {}, restore, err
}

// SearchError implements sqlstore.Searcher (searchError).
func (t *readTx) SearchError(ctx context.Context, err error) error { return t.r.searchError(ctx, err) }

// browseMembers writes to s the statement selecting the visible documents
// of q's collection's members (none unless the collection itself is in
// public view: who may not see it may not list its members either),
// newest member first and by key within one, as
// key, work, kind and format: n of them from the beginning, or, with
// after, those of after's member above its key and then those of the
// members below it. The members come from the memberships primary key
// read backwards, each one's visibility from its resources row (the
// OFFSET 0 keeps it a look-up) and its documents, in key order and at most
// n, from search_docs_work_key (search_docs_work_kind with a kind
// filter): the sort by member and key is an incremental one over rows
// already ordered by member, which stops at n.
func browseMembers(s *sqlstore.Stmt, q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int) {
	lim := strconv.Itoa(n)
	now, coll := s.Arg(q.Now.UnixMicro()), s.Arg(q.Collection)
	part := func(member string, key int64) {
		s.WriteString(`SELECT d.key, d.work, d.kind, d.format FROM memberships m
    CROSS JOIN LATERAL (SELECT key, work, kind, format FROM search_docs d WHERE d.work = m.member
    AND (d.access = d.work OR EXISTS (SELECT 1 FROM resources r WHERE r.key = d.access AND ` + visible("r", now) + `))`)
		if key > 0 {
			s.WriteString(` AND d.key > ` + s.Arg(key))
		}
		if q.Kind != "" {
			s.WriteString(` AND d.kind = ` + s.Arg(string(q.Kind)))
		}
		if q.Format != "" {
			s.WriteString(` AND d.format = ` + s.Arg(q.Format))
		}
		s.WriteString(` ORDER BY d.key LIMIT ` + lim + `) d
    WHERE m.collection = ` + coll + ` AND ` + member + `
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = m.member AND ` + visible("r", now) + ` OFFSET 0)
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = ` + coll + ` AND ` + visible("r", now) + `)
    ORDER BY m.member DESC, d.key LIMIT ` + lim)
	}
	if after == nil {
		part(`true`, 0)
		return
	}
	w := s.Arg(after.Window)
	s.WriteString(`SELECT * FROM ((`)
	part(`m.member = `+w, after.Key)
	s.WriteString(`) UNION ALL (`)
	part(`m.member < `+w, 0)
	s.WriteString(`)) b ORDER BY work DESC, key LIMIT ` + lim)
}

// browseSnippet is how many characters of a document's text a browse hit
// shows.
const browseSnippet = 240

// browseSQL returns the statement of a browse page (q.Browse()): n hits
// after the cursor with their work's title and the beginning of their
// text and, with facets, the total, the spans and the facets counted over
// the first SearchWindow+1 matches of the browse.
func browseSQL(q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	s := sqlstore.NewStmt(arg)
	s.WriteString(`WITH page AS MATERIALIZED (`)
	browseMembers(s, q, after, n)
	s.WriteString(`)`)
	if facets {
		s.WriteString(`, win AS MATERIALIZED (`)
		browseMembers(s, q, nil, shelfmark.SearchWindow+1)
		s.WriteString(`)`)
	}
	s.WriteString(`
SELECT ` + strconv.Itoa(sqlstore.SearchRowHit) + `, '', 0::bigint, p.key, p.work, p.kind, p.format, coalesce(w.title, ''),
    btrim(left(coalesce(nullif(x.body, ''), x.title, ''), ` + strconv.Itoa(browseSnippet) + `)), 0::float8
FROM page p LEFT JOIN search_docs x ON x.key = p.key LEFT JOIN search_docs w ON w.key = p.work`)
	if facets {
		low := `(SELECT min(member) FROM memberships WHERE collection = ` + s.Arg(q.Collection) + `)`
		s.WriteString(sqlstore.FacetRows(facetPad, "work", low, facetCollate, facetCollections(s.Arg(q.Now.UnixMicro()))))
	}
	return s.Done()
}

// putSearchDocs upserts documents, writing only the rows that change.
var putSearchDocs = []func(v string) string{func(v string) string {
	return `INSERT INTO search_docs (key, work, kind, format, title, body, access)
SELECT key, work, kind, format, title, body, access FROM ` + v + `
ON CONFLICT (key) DO UPDATE SET work = EXCLUDED.work, kind = EXCLUDED.kind, format = EXCLUDED.format,
    title = EXCLUDED.title, body = EXCLUDED.body, access = EXCLUDED.access
WHERE (search_docs.work, search_docs.kind, search_docs.format, search_docs.title, search_docs.body, search_docs.access)
    IS DISTINCT FROM (EXCLUDED.work, EXCLUDED.kind, EXCLUDED.format, EXCLUDED.title, EXCLUDED.body, EXCLUDED.access)`
}}
