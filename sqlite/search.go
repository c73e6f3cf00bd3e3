package sqlite

import (
	"context"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Full-text search (search.go in the root package, migration
// 0005_search.sql): documents in search_docs (work, kind, format) and
// search_text (title, body), indexed by the FTS5 table search_fts
// (external content over search_text, kept in sync by triggers).
//
// A query is an FTS5 expression built from shelfmark.ParseSearchText:
// every term becomes one quoted FTS5 string ("…", with " doubled), which
// FTS5 splits with the table's own tokenizer into a phrase, and a prefix
// term gets FTS5's trailing *; the strings are joined by spaces (FTS5's
// implicit AND). Nothing the user typed is read as FTS5 syntax.
//
// The score of a hit is -bm25(search_fts, 10, 1): BM25 with a title match
// worth ten times a body match, negated so that higher is better.
//
// Cost is bounded by windows (shelfmark.SearchCursor): FTS5 hands out the
// matches of an expression in rowid order and a window reads them newest
// first (ORDER BY search_fts.rowid DESC, below the window's top, which
// FTS5 seeks to) with the visibility join, and stops at SearchWindow+1
// visible matches, so bm25() and the join run for at most that many
// documents whatever the number of matches. A page is the window's hits
// ordered by score (descending) then key, after the cursor's (score,
// key); bm25() is a pure function of the document and the index
// statistics, so a score read on one page compares exactly on the next
// (unless documents were written in between). shelfmark.SearchPager
// decides which windows a page reads.
//
// One part of the cost still grows with the matches: bm25() counts the
// documents that hold each term of the query, once per statement, for its
// IDF (FTS5's xQueryPhrase: a pass over the term's list of documents,
// without reading them; about 3 ms per 100,000 matches on a 2-core
// machine).

// ftsQuery is the FTS5 expression of parsed terms.
func ftsQuery(terms []shelfmark.SearchTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t.Text, `"`, `""`))
		b.WriteByte('"')
		if t.Prefix {
			b.WriteString(" *")
		}
	}
	return b.String()
}

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
// visible document that matches q (the FTS5 expression match), as d
// (search_docs) joined with search_fts and r (the resources row whose
// access the document follows: its work's, or for a page the file its
// text is from).
func searchMatches(s *sqlstore.Stmt, q *shelfmark.SearchQuery, match string) {
	s.WriteString(`search_fts JOIN search_docs d ON d.key = search_fts.rowid JOIN resources r ON r.key = d.access
		WHERE search_fts MATCH ` + s.Arg(match))
	now := s.Arg(q.Now.UnixMicro())
	s.WriteString(` AND ` + visible("r", now))
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
		s.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + coll + ` AND m.member = d.work)
			AND EXISTS (SELECT 1 FROM resources rc WHERE rc.key = ` + coll + ` AND ` + visible("rc", now) + `)`)
	}
}

// searchWindow writes to s the statement selecting one window of q's
// matches (the newest n visible matches at or below top; any key when top
// is 0) as key, work, kind, format and, with score, the score.
func searchWindow(s *sqlstore.Stmt, q *shelfmark.SearchQuery, match string, top int64, n int, score bool) {
	s.WriteString(`SELECT d.key, d.work, d.kind, d.format`)
	if score {
		s.WriteString(`, -bm25(search_fts, 10.0, 1.0) AS score`)
	}
	s.WriteString(` FROM `)
	searchMatches(s, q, match)
	if top > 0 {
		s.WriteString(` AND search_fts.rowid <= ` + s.Arg(top))
	}
	s.WriteString(` ORDER BY search_fts.rowid DESC LIMIT ` + strconv.Itoa(n))
}

// searchSQL returns the statement of a page in one window (the newest
// SearchWindow visible matches at or below top; any key when top is 0)
// and its arguments. It reads the window's matches once, with one more
// below them (the sample: SearchWindow+1 matches), and returns a row for
// the window (the sample's size, and the window's lowest and highest keys
// as key and work), the best n hits after the cursor's (score, key) with
// their snippets (a second look-up of each in search_fts by rowid: the
// CROSS JOIN keeps SQLite from reading every match of the expression
// instead, to join them with the page), and, with
// facets, the rows of the total, the spans and the facets counted over
// the sample (top must then be 0).
func searchSQL(q *shelfmark.SearchQuery, match string, top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
	s := sqlstore.NewStmt(arg)
	s.WriteString(`WITH win AS MATERIALIZED (`)
	searchWindow(s, q, match, top, shelfmark.SearchWindow+1, true)
	s.WriteString(`),
		pw AS MATERIALIZED (SELECT key, work, kind, format, score FROM win ORDER BY key DESC LIMIT ` + strconv.Itoa(shelfmark.SearchWindow) + `),
		page AS MATERIALIZED (SELECT key, work, kind, format, score FROM pw`)
	if after != nil {
		score := s.Arg(after.Score)
		s.WriteString(` WHERE score < ` + score + ` OR (score = ` + score + ` AND key > ` + s.Arg(after.Key) + `)`)
	}
	s.WriteString(` ORDER BY score DESC, key LIMIT ` + s.Arg(n) + `),
		hits AS MATERIALIZED (SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, '') AS title,
			snippet(f.search_fts, -1, char(2), char(3), '…', 24) AS snippet, p.score
			FROM page p CROSS JOIN search_fts f LEFT JOIN search_text w ON w.key = p.work
			WHERE f.rowid = p.key AND f.search_fts MATCH ` + s.Arg(match) + `)
		SELECT ` + strconv.Itoa(sqlstore.SearchRowWindow) + `, '', (SELECT count(*) FROM win), (SELECT coalesce(min(key), 0) FROM pw), (SELECT coalesce(max(key), 0) FROM pw),
			NULL, NULL, NULL, NULL, NULL
		UNION ALL SELECT ` + strconv.Itoa(sqlstore.SearchRowHit) + `, '', 0, key, work, kind, format, title, snippet, score FROM hits`)
	if facets {
		s.WriteString(sqlstore.FacetRows(facetPad, "key", `(SELECT min(key) FROM search_docs)`, "", facetCollections(s.Arg(q.Now.UnixMicro()))))
	}
	return s.Done()
}

// facetPad fills the other columns of a facet row (sqlstore.FacetRows).
const facetPad = `, NULL, NULL, NULL, NULL, NULL, NULL, NULL`

// facetCollections counts the works of a sample by collection, for
// sqlstore.FacetRows: each work's memberships, each collection's
// visibility at now (a placeholder) from its resources row.
func facetCollections(now string) string {
	return `SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, CAST(ms.collection AS TEXT), count(*) AS n
	FROM win m CROSS JOIN memberships ms JOIN resources r ON r.key = ms.collection
	WHERE ms.member = m.work AND ` + visible("r", now) + ` GROUP BY ms.collection ORDER BY n DESC, ms.collection`
}

// searchPage is sqlstore.SearchStatements.SearchPage: the FTS5 expression
// of terms, and searchSQL over it.
func searchPage(q *shelfmark.SearchQuery, terms []shelfmark.SearchTerm) func(int64, *shelfmark.SearchCursor, int, bool) (string, []any) {
	match := ftsQuery(terms)
	return func(top int64, after *shelfmark.SearchCursor, n int, facets bool) (string, []any) {
		return searchSQL(q, match, top, after, n, facets)
	}
}

// StartSearch implements sqlstore.Searcher: the statements run with a
// context that ends at the search timeout (searchContext).
func (t *readTx) StartSearch(ctx context.Context) (context.Context, func(), func() error, error) {
	ctx, cancel := t.db.searchContext(ctx)
	return ctx, cancel, func() error { return nil }, nil
}

// SearchError implements sqlstore.Searcher (searchError).
func (t *readTx) SearchError(ctx context.Context, err error) error { return t.db.searchError(ctx, err) }

// browseMembers writes to s the statement selecting the visible documents
// of q's collection's members (none unless the collection itself is in
// public view: who may not see it may not list its members either),
// newest member first and by key within one, as
// key, work, kind and format: n of them from the beginning, or, with
// after, those of after's member above its key and then those of the
// members below it (two ranges, each read in index order and cut at n).
// The members come from the memberships primary key read backwards, each
// one's visibility from its resources row and its documents from
// search_docs_work (search_docs_work_kind with a kind filter), whose
// order within a member is the key's: nothing is sorted but the at most
// 2n rows of the two ranges.
func browseMembers(s *sqlstore.Stmt, q *shelfmark.SearchQuery, after *shelfmark.SearchCursor, n int) {
	lim := strconv.Itoa(n)
	now, coll := s.Arg(q.Now.UnixMicro()), s.Arg(q.Collection)
	part := func(member string, key int64) {
		docs := `search_docs d INDEXED BY search_docs_work`
		if q.Kind != "" {
			docs = `search_docs d INDEXED BY search_docs_work_kind`
		}
		s.WriteString(`SELECT d.key, d.work, d.kind, d.format FROM memberships m CROSS JOIN resources r CROSS JOIN ` + docs + `
			WHERE m.collection = ` + coll + ` AND ` + member + ` AND r.key = m.member AND ` + visible("r", now) + ` AND d.work = m.member
			AND (d.access = d.work OR EXISTS (SELECT 1 FROM resources ra WHERE ra.key = d.access AND ` + visible("ra", now) + `))
			AND EXISTS (SELECT 1 FROM resources rc WHERE rc.key = ` + coll + ` AND ` + visible("rc", now) + `)`)
		if key > 0 {
			s.WriteString(` AND d.key > ` + s.Arg(key))
		}
		if q.Kind != "" {
			s.WriteString(` AND d.kind = ` + s.Arg(string(q.Kind)))
		}
		if q.Format != "" {
			s.WriteString(` AND d.format = ` + s.Arg(q.Format))
		}
		s.WriteString(` ORDER BY m.member DESC, d.key LIMIT ` + lim)
	}
	if after == nil {
		part(`true`, 0)
		return
	}
	w := s.Arg(after.Window)
	s.WriteString(`SELECT * FROM (SELECT * FROM (`)
	part(`m.member = `+w, after.Key)
	s.WriteString(`) UNION ALL SELECT * FROM (`)
	part(`m.member < `+w, 0)
	s.WriteString(`)) ORDER BY work DESC, key LIMIT ` + lim)
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
		SELECT ` + strconv.Itoa(sqlstore.SearchRowHit) + `, '', 0, p.key, p.work, p.kind, p.format, coalesce(w.title, ''),
			trim(substr(coalesce(nullif(x.body, ''), x.title, ''), 1, ` + strconv.Itoa(browseSnippet) + `)), 0.0
		FROM page p LEFT JOIN search_text x ON x.key = p.key LEFT JOIN search_text w ON w.key = p.work`)
	if facets {
		low := `(SELECT min(member) FROM memberships WHERE collection = ` + s.Arg(q.Collection) + `)`
		s.WriteString(sqlstore.FacetRows(facetPad, "work", low, "", facetCollections(s.Arg(q.Now.UnixMicro()))))
	}
	return s.Done()
}

// putSearchDocs upsert documents into search_docs and search_text. A row
// whose columns are all unchanged is not written; the triggers re-index a
// text only when its title or body changed. ("WHERE true" tells SQLite's
// parser that ON CONFLICT belongs to the INSERT, not to a join.)
var putSearchDocs = []func(v string) string{
	func(v string) string {
		return `INSERT INTO search_docs (key, work, kind, format, access)
	SELECT key, work, kind, format, access FROM ` + v + ` WHERE true
	ON CONFLICT (key) DO UPDATE SET work = excluded.work, kind = excluded.kind, format = excluded.format, access = excluded.access
	WHERE search_docs.work <> excluded.work OR search_docs.kind <> excluded.kind OR search_docs.format <> excluded.format
		OR search_docs.access IS NOT excluded.access`
	},
	func(v string) string {
		return `INSERT INTO search_text (key, title, body)
	SELECT key, title, body FROM ` + v + ` WHERE true
	ON CONFLICT (key) DO UPDATE SET title = excluded.title, body = excluded.body
	WHERE search_text.title <> excluded.title OR search_text.body <> excluded.body`
	},
}
