package sqlite

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Full-text search (search.go in the root package, migrations
// 0005_search.sql, 0020_fields.sql and 0027_stem_languages.sql):
// documents in search_docs (work, kind, format, a record's years) and
// search_text (title, body, a record's creators, subjects and hidden
// tokens: of its dates and of its facet values; and the language its
// words are stemmed in, lang), indexed by the FTS5 table search_fts
// (external content over the view search_text_fts, which gives the text
// with its language as its FTS5 locale, kept in sync by triggers), one
// column each. A field term (searchfields.go in the root
// package) is its string behind the column filter of its field (creator :
// "melville"), a date term the date tokens of its span joined by OR.
//
// A query is an FTS5 expression built from shelfmark.ParseSearchText:
// every term becomes one quoted FTS5 string ("…", with " doubled), which
// FTS5 splits with the table's own tokenizer into a phrase, and a prefix
// term gets FTS5's trailing * (and, where the stem of its last word
// differs, an alternative with the stem: searchstem.go in the root
// package); the strings are joined by AND, OR and NOT as the terms'
// groups say (ftsQuery). Nothing the user typed is read as FTS5 syntax.
// The index's tokenizer, shelfmark (stem.c), folds every word of a
// document to its stem in the document's language, and every word of a
// query but the last word of a prefix to its stems in every language
// (searchstem.go in the root package).
//
// The score of a hit is searchScore, shelfmark_rank (rank.c): FTS5's
// BM25 with a title match worth ten times a body match and higher better,
// but without the inverse document frequency, whose count of each word's
// documents is a pass over all of them in every statement.
//
// Cost is bounded by windows (shelfmark.SearchCursor): FTS5 hands out the
// matches of an expression in rowid order and a window reads them newest
// first (ORDER BY search_fts.rowid DESC, below the window's top, which
// FTS5 seeks to) with the visibility join, and stops at SearchWindow+1
// visible matches, so the score and the join run for at most that many
// documents whatever the number of matches. A page is the window's hits
// ordered by score (descending) then key, after the cursor's (score,
// key); the score is a pure function of the document and the index's
// mean document length, so a score read on one page compares exactly on
// the next (unless documents were written in between, and then only as
// far as they moved the mean). shelfmark.SearchPager decides which
// windows a page reads.

// lists binds lists as the dialect does (the search statements are part
// of it, and cannot name it).
var lists = sqlstore.Lists{Int64s: func(v []int64) any { return jsonInts(v) }, AnyOf: anyOf}

// anyOf is the dialect's AnyOf.
func anyOf(n int) string { return "IN (SELECT value FROM json_each(?" + strconv.Itoa(n) + "))" }

// ftsMatch is what a search matches with (sqlstore.SearchStatements.Match):
// the FTS5 expression of its terms, and that of the phrases its snippets
// mark (markTerms; empty when there are none).
type ftsMatch struct{ expr, mark string }

// ftsMatchOf is the match of parsed terms.
func ftsMatchOf(terms []shelfmark.SearchTerm) ftsMatch {
	m := ftsMatch{expr: ftsQuery(terms)}
	if mark := markTerms(terms); len(mark) > 0 {
		m.mark = ftsQuery(mark)
	}
	return m
}

// markTerms are the terms whose phrases a hit's snippet marks: the terms
// to find, each in any column (a field term's words are in the body too),
// but not a group of alternatives that holds a date or facet term, whose
// tokens are in no text a reader sees. Every hit matches them, since it matches
// one alternative of every group of terms, which matches in any column
// what it matched in one.
func markTerms(terms []shelfmark.SearchTerm) []shelfmark.SearchTerm {
	groups, _ := shelfmark.SearchGroups(terms)
	var out []shelfmark.SearchTerm
	for _, g := range groups {
		if slices.ContainsFunc(g, func(t shelfmark.SearchTerm) bool {
			return t.Field == shelfmark.SearchFieldDate || t.Field == shelfmark.SearchFieldFacet
		}) {
			continue
		}
		for i, t := range g {
			t.Field, t.Alt = "", i > 0
			out = append(out, t)
		}
	}
	return out
}

// ftsQuery is the FTS5 expression of parsed terms: the groups of
// shelfmark.SearchGroups joined by AND, each in parentheses with its
// alternatives joined by OR, then NOT each term left out.
func ftsQuery(terms []shelfmark.SearchTerm) string {
	var b strings.Builder
	quoted := func(text string, prefix bool) {
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(text, `"`, `""`))
		b.WriteByte('"')
		if prefix {
			b.WriteString(" *")
		}
	}
	phrase := func(t shelfmark.SearchTerm) {
		if t.Field == shelfmark.SearchFieldDate { // any of the span's tokens
			b.WriteByte('(')
			for i, tok := range shelfmark.SearchDateQuery(t.Years()) {
				if i > 0 {
					b.WriteString(" OR ")
				}
				b.WriteString(`dates : "` + tok + `"`)
			}
			b.WriteByte(')')
			return
		}
		if t.Field == shelfmark.SearchFieldFacet { // the value's hidden token (searchfacets.go)
			b.WriteString(`dates : "` + t.FacetToken() + `"`)
			return
		}
		if t.Field != "" { // the column of the field (searchfields.go)
			b.WriteString(t.Field + ` : `)
		}
		words := shelfmark.SearchTokens(t.Text)
		stem := ""
		if t.Prefix && len(words) > 0 {
			stem = shelfmark.SearchPrefixStem(words[len(words)-1])
		}
		if stem == "" {
			quoted(t.Text, t.Prefix)
			return
		}
		// the prefix as typed, or its stem (searchstem.go); a column
		// filter applies to the bracketed expression after it
		b.WriteByte('(')
		quoted(t.Text, true)
		b.WriteString(" OR ")
		quoted(strings.Join(append(words[:len(words)-1:len(words)-1], stem), " "), true)
		b.WriteByte(')')
	}
	groups, not := shelfmark.SearchGroups(terms)
	b.WriteByte('(')
	for i, g := range groups {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('(')
		for j, t := range g {
			if j > 0 {
				b.WriteString(" OR ")
			}
			phrase(t)
		}
		b.WriteByte(')')
	}
	b.WriteByte(')')
	for _, t := range not {
		b.WriteString(" NOT ")
		phrase(t)
	}
	return b.String()
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
	s.WriteString(` AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "d.work", now))
	sqlstore.DocFilters(s, q)
	if q.Collection != 0 {
		// as a browse: who may not see the collection may not list what
		// it holds
		coll := s.Arg(q.Collection)
		s.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + coll + ` AND m.member = d.work)
			AND EXISTS (SELECT 1 FROM resources rc WHERE rc.key = ` + coll + ` AND ` + sqlstore.Readable(s, lists, q.Reader, "rc", "rc.key", now) + `)`)
	}
}

// searchWindow is sqlstore.SearchStatements.Window: the newest matches
// read from FTS5 in rowid order below the window's top, which FTS5 seeks
// to, scored by shelfmark_rank with a title match worth ten body matches
// (by their key for SearchSortNewest).
func searchWindow(s *sqlstore.Stmt, q *shelfmark.SearchQuery, match any, top int64, n int) {
	if match == nil { // everything: the documents by key
		s.WriteString(`SELECT d.key, d.work, d.kind, d.format, ` + cmp.Or(sqlstore.SortScore(q), `CAST(d.key AS REAL)`) + ` AS score
		FROM search_docs d JOIN resources r ON r.key = d.access WHERE ` + sqlstore.Readable(s, lists, q.Reader, "r", "d.work", s.Arg(q.Now.UnixMicro())))
		sqlstore.DocFilters(s, q)
		if top > 0 {
			s.WriteString(` AND d.key <= ` + s.Arg(top))
		}
		s.WriteString(` ORDER BY d.key DESC LIMIT ` + strconv.Itoa(n))
		return
	}
	score := searchScore
	if q.ByKey() {
		score = `CAST(d.key AS REAL)` // the newest first (SearchSortNewest, or only filters)
	} else if ds := sqlstore.SortScore(q); ds != "" {
		score = ds
	}
	s.WriteString(`SELECT d.key, d.work, d.kind, d.format, ` + score + ` AS score FROM `)
	searchMatches(s, q, match.(ftsMatch).expr)
	if top > 0 {
		s.WriteString(` AND search_fts.rowid <= ` + s.Arg(top))
	}
	s.WriteString(` ORDER BY search_fts.rowid DESC LIMIT ` + strconv.Itoa(n))
}

// searchHits is sqlstore.SearchStatements.Hits: FTS5's snippets of the
// page's hits, from one read of the expression in search_fts over the
// range of the page's keys, in a subquery of its own before the join
// (OFFSET 0 keeps SQLite from merging it into the join). The IN filter
// is kept from FTS5 ("+rowid IN"): handed to FTS5, SQLite would pass it as
// rowid equalities, one FTS5 start per hit, and each start seeks every
// word of the expression, and each of its stems, in every segment of the
// index. One start walks instead the matches between the page's lowest
// and highest key, which the window's own read has walked already, and
// makes snippets only of the page's (TestSearchPlan checks the shape).
//
// The snippet is the body's where it marks a match, else the title's
// where that does, else the beginning of the body: never of the creator,
// subject and date columns, which field terms match (the creators and
// subjects are in the body too; the dates are tokens no reader should
// see). It marks the phrases of markTerms, so that creator:melville
// marks Melville in the body.
func searchHits(s *sqlstore.Stmt, match any) string {
	m := match.(ftsMatch)
	if m.mark == "" { // only years: nothing to mark, no look-up in the index
		return browseSnippet + ` AS snippet, p.score
			FROM page p LEFT JOIN search_text x ON x.key = p.key LEFT JOIN search_text w ON w.key = p.work`
	}
	return `CASE WHEN instr(f.sb, char(2)) > 0 OR instr(f.st, char(2)) = 0 THEN f.sb ELSE f.st END AS snippet, p.score
			FROM page p JOIN (SELECT rowid AS key,
				snippet(search_fts, 1, char(2), char(3), '…', 24) AS sb, snippet(search_fts, 0, char(2), char(3), '…', 24) AS st
				FROM search_fts WHERE search_fts MATCH ` + s.Arg(m.mark) + `
					AND rowid >= (SELECT min(key) FROM page) AND rowid <= (SELECT max(key) FROM page) AND +rowid IN (SELECT key FROM page)
				ORDER BY rowid DESC LIMIT -1 OFFSET 0) f ON f.key = p.key
			LEFT JOIN search_text w ON w.key = p.work`
}

// browseSnippet is sqlstore.SearchStatements.Snippet: the beginning of
// the document's text x.
var browseSnippet = `trim(substr(coalesce(nullif(x.body, ''), x.title, ''), 1, ` + strconv.Itoa(sqlstore.BrowseSnippet) + `))`

// searchScore is the score of a hit: shelfmark_rank with a title match
// worth ten body matches and a creator's or a subject's one more (they
// are in the body too); the date tokens count nothing.
const searchScore = `shelfmark_rank(search_fts, 10.0, 1.0, 1.0, 1.0, 0.0)`

// docMatches is sqlstore.SearchStatements.Matches: FTS5 seeks the
// expression's match of the one rowid.
func docMatches(s *sqlstore.Stmt, match any, alias string) string {
	return `EXISTS (SELECT 1 FROM search_fts fm WHERE fm.rowid = ` + alias + `.key AND fm.search_fts MATCH ` + s.Arg(match.(ftsMatch).expr) + `)`
}

// facetCollections is sqlstore.SearchStatements.Collections: each work's
// memberships, each collection's access from its resources row.
func facetCollections(s *sqlstore.Stmt, q *shelfmark.SearchQuery, count, now string) string {
	return `SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, CAST(ms.collection AS TEXT), ` + count + ` AS n
	FROM win m CROSS JOIN memberships ms JOIN resources r ON r.key = ms.collection
	WHERE ms.member = m.work AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + ` GROUP BY ms.collection ORDER BY n DESC, ms.collection`
}

// StartSearch implements sqlstore.Searcher: the statements run with a
// context that ends at the search timeout (searchContext).
func (t *readTx) StartSearch(ctx context.Context) (context.Context, func(), func() error, error) {
	ctx, cancel := t.db.searchContext(ctx)
	return ctx, cancel, func() error { return nil }, nil
}

// SearchError implements sqlstore.Searcher (searchError).
func (t *readTx) SearchError(ctx context.Context, err error) error { return t.db.searchError(ctx, err) }

// browseRange is sqlstore.SearchStatements.BrowseRange. The members come
// from the memberships primary key read backwards, each one's visibility
// from its resources row and its documents from search_docs_work
// (search_docs_work_kind with a kind filter), whose order within a member
// is the key's: the range is read in index order and cut at lim, unsorted.
func browseRange(s *sqlstore.Stmt, q *shelfmark.SearchQuery, member, coll, now string, key int64, lim string) {
	docs := `search_docs d INDEXED BY search_docs_work`
	if q.Kind != "" {
		docs = `search_docs d INDEXED BY search_docs_work_kind`
	}
	s.WriteString(`SELECT d.key, d.work, d.kind, d.format FROM memberships m CROSS JOIN resources r CROSS JOIN ` + docs + `
			WHERE m.collection = ` + coll + ` AND ` + member + ` AND r.key = m.member AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + ` AND d.work = m.member
			AND (d.access = d.work OR EXISTS (SELECT 1 FROM resources ra WHERE ra.key = d.access AND ` + sqlstore.Readable(s, lists, q.Reader, "ra", "d.work", now) + `))
			AND EXISTS (SELECT 1 FROM resources rc WHERE rc.key = ` + coll + ` AND ` + sqlstore.Readable(s, lists, q.Reader, "rc", "rc.key", now) + `)`)
	if key > 0 {
		s.WriteString(` AND d.key > ` + s.Arg(key))
	}
	sqlstore.DocFilters(s, q)
	s.WriteString(` ORDER BY m.member DESC, d.key LIMIT ` + lim)
}

// putSearchDocs upsert documents into search_docs and search_text. A row
// whose columns are all unchanged is not written; the triggers re-index a
// text only when its title, body or language changed. A page's language
// is its work's record's, read by key (in the snapshot before the
// statement: a page written with its record is given the record's
// language by the third statement); the third gives the pages of the
// records written their record's language where they have another (one
// look-up of search_docs_work a record, one of the page's text a page),
// and the triggers index them again. ("WHERE true" tells SQLite's
// parser that ON CONFLICT belongs to the INSERT, not to a join.)
var putSearchDocs = []func(v string) string{
	func(v string) string {
		return `INSERT INTO search_docs (key, work, kind, format, access, date_lo, date_hi, title_key)
	SELECT key, work, kind, format, access, date_lo, date_hi, title_key FROM ` + v + ` WHERE true
	ON CONFLICT (key) DO UPDATE SET work = excluded.work, kind = excluded.kind, format = excluded.format, access = excluded.access,
		date_lo = excluded.date_lo, date_hi = excluded.date_hi, title_key = excluded.title_key
	WHERE search_docs.work <> excluded.work OR search_docs.kind <> excluded.kind OR search_docs.format <> excluded.format
		OR search_docs.access IS NOT excluded.access OR search_docs.date_lo IS NOT excluded.date_lo OR search_docs.date_hi IS NOT excluded.date_hi
		OR search_docs.title_key IS NOT excluded.title_key`
	},
	func(v string) string {
		return `INSERT INTO search_text (key, title, body, creator, subject, dates, lang)
	SELECT key, title, body, creator, subject, dates,
		CASE WHEN key = work THEN lang ELSE coalesce((SELECT w.lang FROM search_text w WHERE w.key = v.work), '') END FROM ` + v + ` WHERE true
	ON CONFLICT (key) DO UPDATE SET title = excluded.title, body = excluded.body,
		creator = excluded.creator, subject = excluded.subject, dates = excluded.dates, lang = excluded.lang
	WHERE search_text.title <> excluded.title OR search_text.body <> excluded.body
		OR search_text.creator <> excluded.creator OR search_text.subject <> excluded.subject OR search_text.dates <> excluded.dates
		OR search_text.lang <> excluded.lang`
	},
	func(v string) string {
		return `UPDATE search_text SET lang = w.lang FROM ` + v + ` JOIN search_docs d ON d.work = v.key JOIN search_text w ON w.key = v.key
	WHERE v.key = v.work AND d.key <> d.work AND search_text.key = d.key AND search_text.lang <> w.lang`
	},
}
