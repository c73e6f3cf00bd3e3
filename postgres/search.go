package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
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
// newest SearchWindow visible matches below its top (ORDER BY key DESC
// LIMIT), and ts_rank_cd runs on those only. PostgreSQL picks the plan per
// query from the statistics of the tsvector column: for a word in many
// documents, the primary key read backwards with the match and the
// visibility join as filters, which stops at the window's end; for a rare
// word, the GIN index and a sort of its few matches. The statements are
// planned for their values each time (pgx.QueryExecModeExec): a cached
// generic plan does not know the word, and would sort every match of a
// common one. A page is the window's hits ordered by score (descending)
// then key, after the cursor's (score, key).

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

// tsq is the parsed query, $1.
const tsq = `to_tsquery('simple'::regconfig, $1)`

// searchVisible keeps documents whose work (r) is in public view; $2 is
// the time (µs) embargoes are compared with.
const searchVisible = `r.deleted IS NULL AND r.visibility = 'public' AND (r.embargo IS NULL OR r.embargo <= $2)`

// searchMatches returns the FROM and WHERE clauses (and the arguments from
// $1) selecting every visible document that matches q, as d (search_docs).
// The visibility of each document's work is a look-up of its resources row
// by key, one per document read: the OFFSET 0 keeps PostgreSQL from
// turning it into a join, which for a thousand matches it would make a
// hash join over every row of resources.
func searchMatches(q *shelfmark.SearchQuery, query string) (string, []any) {
	var b strings.Builder
	b.WriteString(`search_docs d WHERE d.tsv @@ ` + tsq + ` AND EXISTS (SELECT 1 FROM resources r WHERE r.key = d.work AND ` + searchVisible + ` OFFSET 0)`)
	args := []any{query, q.Now.UnixMicro()}
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Kind != "" {
		b.WriteString(` AND d.kind = ` + param(string(q.Kind)))
	}
	if q.Format != "" {
		b.WriteString(` AND d.format = ` + param(q.Format))
	}
	if q.Collection != 0 {
		b.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + param(q.Collection) + ` AND m.member = d.work OFFSET 0)`)
	}
	return b.String(), args
}

// headlineOptions bound a snippet: up to two fragments of 12 to 32 words
// around the matches, each match between SnippetStart and SnippetEnd.
const headlineOptions = "StartSel=" + shelfmark.SnippetStart + ", StopSel=" + shelfmark.SnippetEnd +
	`, MaxWords=32, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`

// searchWindow returns the statement selecting one window of q's matches
// (the newest n visible matches at or below top; any key when top is 0)
// as key, work, kind, format and, with score, the score, and its
// arguments (from $1).
func searchWindow(q *shelfmark.SearchQuery, query string, top int64, n int, score bool) (string, []any) {
	from, args := searchMatches(q, query)
	cols := `d.key, d.work, d.kind, d.format`
	if score {
		cols += `, d.tsv`
	}
	sql := `SELECT ` + cols + ` FROM ` + from
	if top > 0 {
		args = append(args, top)
		sql += ` AND d.key <= $` + strconv.Itoa(len(args))
	}
	sql += ` ORDER BY d.key DESC LIMIT ` + strconv.Itoa(n)
	if score {
		// ranked outside the LIMIT: when the GIN index finds the matches,
		// they are all read and sorted by key, but only the window's ranked
		sql = `SELECT key, work, kind, format, ts_rank_cd(` + rankWeights + `, tsv, ` + tsq + `)::float8 AS score FROM (` + sql + `) d`
	}
	return sql, args
}

// searchPageSQL returns the statement of a page in one window: the
// window's count and lowest and highest keys, then the best n hits after
// the cursor's (score, key) with their headlines. The window's row comes
// once even when no hit does.
func searchPageSQL(q *shelfmark.SearchQuery, query string, top int64, after *shelfmark.SearchCursor, n int) (string, []any) {
	win, args := searchWindow(q, query, top, shelfmark.SearchWindow, true)
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var b strings.Builder
	b.WriteString(`WITH win AS MATERIALIZED (` + win + `),
stats AS (SELECT count(*) AS n, coalesce(min(key), 0) AS lo, coalesce(max(key), 0) AS hi FROM win),
page AS (SELECT key, work, kind, format, score FROM win`)
	if after != nil {
		score := param(after.Score)
		b.WriteString(` WHERE score < ` + score + `::float8 OR (score = ` + score + `::float8 AND key > ` + param(after.Key) + `)`)
	}
	b.WriteString(` ORDER BY score DESC, key LIMIT ` + param(int64(n)) + `),
hits AS (SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, '') AS title,
    ts_headline('simple'::regconfig, d.title || E'\n' || d.body, ` + tsq + `, ` + param(headlineOptions) + `) AS snippet, p.score
    FROM page p JOIN search_docs d ON d.key = p.key LEFT JOIN search_docs w ON w.key = p.work)
SELECT s.n, s.lo, s.hi, h.key, h.work, h.kind, h.format, h.title, h.snippet, h.score
FROM stats s LEFT JOIN hits h ON true ORDER BY h.score DESC, h.key`)
	return b.String(), args
}

// Search returns a page of public hits for q: one statement for the page
// in its window, a second when the page runs past the end of a full
// window into the next, and, with q.Facets, one for the total and facet
// counts.
func (t *readTx) Search(ctx context.Context, q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
	terms, err := shelfmark.ParseSearchText(q.Text)
	if err != nil {
		return nil, err
	}
	query := tsQuery(terms)
	limit := shelfmark.SearchLimit(q.Limit)
	res := &shelfmark.SearchResult{Hits: make([]shelfmark.SearchHit, 0, limit+1)}
	var windows []int64
	var top int64
	var after *shelfmark.SearchCursor
	if q.After != nil {
		top = q.After.Window
		if q.After.Key != 0 {
			after = q.After
		}
	}
	for range 2 { // a page of at most MaxSearchLimit+1 spans at most two windows
		var n, lo, hi int64
		sql, args := searchPageSQL(&q, query, top, after, limit+1-len(res.Hits))
		_, err = t.r.query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...), func(rows pgx.Rows) error {
			var key, work *int64
			var kind, format, title, snippet *string
			var score *float64
			if err := rows.Scan(&n, &lo, &hi, &key, &work, &kind, &format, &title, &snippet, &score); err != nil {
				return err
			}
			if key == nil {
				return nil
			}
			res.Hits = append(res.Hits, shelfmark.SearchHit{Key: *key, Work: *work, Kind: shelfmark.Kind(*kind), Format: *format,
				Title: *title, Snippet: *snippet, Score: *score})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("postgres: search %.80q: %w", q.Text, err)
		}
		if top == 0 {
			top = hi
		}
		for len(windows) < len(res.Hits) {
			windows = append(windows, top)
		}
		if len(res.Hits) > limit || n < shelfmark.SearchWindow || lo <= 1 {
			break
		}
		top, after = lo-1, nil
	}
	res.TrimPage(limit, windows)
	if q.Facets {
		if err := t.searchFacets(ctx, &q, query, res); err != nil {
			return nil, fmt.Errorf("postgres: search %.80q: facets: %w", q.Text, err)
		}
	}
	return res, nil
}

// searchFacetsSQL returns the facet statement of q and its arguments.
func searchFacetsSQL(q *shelfmark.SearchQuery, query string) (string, []any) {
	win, args := searchWindow(q, query, 0, shelfmark.SearchWindow+1, false)
	lim := strconv.Itoa(shelfmark.SearchFacetLimit)
	sql := `WITH m AS MATERIALIZED (` + win + `)
SELECT ` + strconv.Itoa(shelfmark.FacetTotal) + `, '', count(*) FROM m
UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetSampleSpan) + `, '', coalesce(max(key) - min(key), 0) FROM m
UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetKeySpan) + `, '', coalesce((SELECT max(key) FROM m) - (SELECT min(key) FROM search_docs), 0)
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetKind) + `, kind, count(*) FROM m
    GROUP BY kind ORDER BY 3 DESC, kind COLLATE "C" LIMIT ` + lim + `)
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetFormat) + `, format, count(*) FROM m WHERE format <> ''
    GROUP BY format ORDER BY 3 DESC, format COLLATE "C" LIMIT ` + lim + `)
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, ms.collection::text, count(*)
    FROM m JOIN memberships ms ON ms.member = m.work JOIN resources r ON r.key = ms.collection
    WHERE ` + searchVisible + ` GROUP BY ms.collection ORDER BY 3 DESC, ms.collection LIMIT ` + lim + `)`
	return sql, args
}

// searchFacets counts the matches of q, and the matches by kind, by format
// and by public collection, in one statement over a sample: the newest
// SearchWindow+1 matches (gathered once, MATERIALIZED). It returns the
// sample's key span and the index's, from which EstimateFacets scales the
// counts of a full sample. Values tie-break in byte order, as on SQLite.
func (t *readTx) searchFacets(ctx context.Context, q *shelfmark.SearchQuery, query string, res *shelfmark.SearchResult) error {
	sql, args := searchFacetsSQL(q, query)
	_, err := t.r.query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...), func(rows pgx.Rows) error {
		var facet int32
		var value string
		var n int64
		if err := rows.Scan(&facet, &value, &n); err != nil {
			return err
		}
		res.AddFacet(int(facet), value, n)
		return nil
	})
	if err != nil {
		return err
	}
	res.EstimateFacets()
	return nil
}

// SearchDoc returns the stored document of key, or nil.
func (t *readTx) SearchDoc(ctx context.Context, key int64) (*shelfmark.SearchDoc, error) {
	var d *shelfmark.SearchDoc
	_, err := t.r.query(ctx, `SELECT key, work, kind, format, title, body FROM search_docs WHERE key = $1`, []any{key},
		func(rows pgx.Rows) error {
			d = new(shelfmark.SearchDoc)
			var kind string
			err := rows.Scan(&d.Key, &d.Work, &kind, &d.Format, &d.Title, &d.Body)
			d.Kind = shelfmark.Kind(kind)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: search document %d: %w", key, err)
	}
	return d, nil
}

// putSearchDocsSQL upserts documents from arrays. A row whose columns are
// all unchanged is not written: no new row version, no GIN entries.
const putSearchDocsSQL = `INSERT INTO search_docs (key, work, kind, format, title, body)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
ON CONFLICT (key) DO UPDATE SET work = EXCLUDED.work, kind = EXCLUDED.kind, format = EXCLUDED.format,
    title = EXCLUDED.title, body = EXCLUDED.body
WHERE (search_docs.work, search_docs.kind, search_docs.format, search_docs.title, search_docs.body)
    IS DISTINCT FROM (EXCLUDED.work, EXCLUDED.kind, EXCLUDED.format, EXCLUDED.title, EXCLUDED.body)`

// PutSearchDocs inserts or replaces documents by key (a later document of
// the same key wins: one upsert may not touch a row twice) in one
// statement, whatever their number.
func (t *writeTx) PutSearchDocs(ctx context.Context, docs []shelfmark.SearchDoc) error {
	if len(docs) == 0 {
		return nil
	}
	last := make(map[int64]int, len(docs))
	for i, d := range docs {
		last[d.Key] = i
	}
	n := len(last)
	keys, works := make([]int64, 0, n), make([]int64, 0, n)
	kinds, formats, titles, bodies := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	for i, d := range docs {
		if last[d.Key] != i {
			continue
		}
		keys, works = append(keys, d.Key), append(works, d.Work)
		kinds, formats = append(kinds, string(d.Kind)), append(formats, shelfmark.CleanSearchText(d.Format))
		titles, bodies = append(titles, shelfmark.CleanSearchText(d.Title)), append(bodies, shelfmark.CleanSearchText(d.Body))
	}
	if _, err := t.r.exec(ctx, putSearchDocsSQL, keys, works, kinds, formats, titles, bodies); err != nil {
		return fmt.Errorf("postgres: put %d search documents: %w", n, err)
	}
	return nil
}

// DeleteSearchDocs removes the documents of keys and those of the works
// among keys, in one statement (the primary key and search_docs_work).
func (t *writeTx) DeleteSearchDocs(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := t.r.exec(ctx, `DELETE FROM search_docs WHERE key = ANY($1) OR work = ANY($1)`, keys); err != nil {
		return fmt.Errorf("postgres: delete the search documents of %d keys: %w", len(keys), err)
	}
	return nil
}
