package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
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
// matches of an expression in rowid order and the window reads them
// newest first (ORDER BY search_fts.rowid DESC, below the window's top,
// which FTS5 seeks to) with the visibility join, and stops at
// SearchWindow visible matches, so bm25() and the join run for at most
// that many documents whatever the number of matches. A page is the
// window's hits ordered by score (descending) then key, after the
// cursor's (score, key); bm25() is a pure function of the document and
// the index statistics, so a score read on one page compares exactly on
// the next.

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

// searchVisible keeps documents whose work is in public view; its argument
// is the time (µs) embargoes are compared with.
const searchVisible = `r.deleted IS NULL AND r.visibility = 'public' AND (r.embargo IS NULL OR r.embargo <= ?)`

// searchMatches returns the FROM and WHERE clauses (and their arguments)
// selecting every visible document that matches q, as d (search_docs)
// joined with search_fts and r (the work's resources row).
func searchMatches(q *shelfmark.SearchQuery, match string) (string, []any) {
	var b strings.Builder
	b.WriteString(`search_fts JOIN search_docs d ON d.key = search_fts.rowid JOIN resources r ON r.key = d.work
		WHERE search_fts MATCH ? AND ` + searchVisible)
	args := []any{match, q.Now.UnixMicro()}
	if q.Kind != "" {
		b.WriteString(` AND d.kind = ?`)
		args = append(args, string(q.Kind))
	}
	if q.Format != "" {
		b.WriteString(` AND d.format = ?`)
		args = append(args, q.Format)
	}
	if q.Collection != 0 {
		b.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ? AND m.member = d.work)`)
		args = append(args, q.Collection)
	}
	return b.String(), args
}

// searchWindow returns the statement selecting one window of q's matches
// (the newest n visible matches at or below top; any key when top is 0)
// as key, work, kind, format and, with score, the score, and its
// arguments.
func searchWindow(q *shelfmark.SearchQuery, match string, top int64, n int, score bool) (string, []any) {
	from, args := searchMatches(q, match)
	cols := `d.key, d.work, d.kind, d.format`
	if score {
		cols += `, -bm25(search_fts, 10.0, 1.0) AS score`
	}
	sql := `SELECT ` + cols + ` FROM ` + from
	if top > 0 {
		sql += ` AND search_fts.rowid <= ?`
		args = append(args, top)
	}
	return sql + ` ORDER BY search_fts.rowid DESC LIMIT ` + strconv.Itoa(n), args
}

// searchPageSQL returns the statement of a page in one window: the
// window's count and lowest and highest keys, then the best n hits after
// the cursor's (score, key) with their snippets (a second look-up of each
// in search_fts). The window's row comes once even when no hit does.
func searchPageSQL(q *shelfmark.SearchQuery, match string, top int64, after *shelfmark.SearchCursor, n int) (string, []any) {
	win, args := searchWindow(q, match, top, shelfmark.SearchWindow, true)
	var b strings.Builder
	b.WriteString(`WITH win AS MATERIALIZED (` + win + `),
		stats AS MATERIALIZED (SELECT count(*) AS n, coalesce(min(key), 0) AS lo, coalesce(max(key), 0) AS hi FROM win),
		page AS MATERIALIZED (SELECT key, work, kind, format, score FROM win`)
	if after != nil {
		b.WriteString(` WHERE score < ? OR (score = ? AND key > ?)`)
		args = append(args, after.Score, after.Score, after.Key)
	}
	b.WriteString(` ORDER BY score DESC, key LIMIT ?),
		hits AS MATERIALIZED (SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, '') AS title,
			snippet(f.search_fts, -1, char(2), char(3), '…', 24) AS snippet, p.score
			FROM page p JOIN search_fts f ON f.rowid = p.key LEFT JOIN search_text w ON w.key = p.work
			WHERE f.search_fts MATCH ?)
		SELECT s.n, s.lo, s.hi, h.key, h.work, h.kind, h.format, h.title, h.snippet, h.score
		FROM stats s LEFT JOIN hits h ON true ORDER BY h.score DESC, h.key`)
	args = append(args, n, match)
	return b.String(), args
}

// Search returns a page of public hits for q: one statement for the page
// in its window, a second when the page runs past the end of a full
// window into the next, and, with q.Facets, one for the total and facet
// counts.
func (t *tx) Search(ctx context.Context, q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
	terms, err := shelfmark.ParseSearchText(q.Text)
	if err != nil {
		return nil, err
	}
	match := ftsQuery(terms)
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
		query, args := searchPageSQL(&q, match, top, after, limit+1-len(res.Hits))
		err = t.query(ctx, query, args, func(r *sql.Rows) error {
			var h shelfmark.SearchHit
			var key, work sql.NullInt64
			var kind, format, title, snippet sql.NullString
			var score sql.NullFloat64
			if err := r.Scan(&n, &lo, &hi, &key, &work, &kind, &format, &title, &snippet, &score); err != nil {
				return err
			}
			if !key.Valid {
				return nil
			}
			h.Key, h.Work, h.Kind, h.Format = key.Int64, work.Int64, shelfmark.Kind(kind.String), format.String
			h.Title, h.Snippet, h.Score = title.String, snippet.String, score.Float64
			res.Hits = append(res.Hits, h)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: search %.80q: %w", q.Text, err)
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
		if err := t.searchFacets(ctx, &q, match, res); err != nil {
			return nil, fmt.Errorf("sqlite: search %.80q: facets: %w", q.Text, err)
		}
	}
	return res, nil
}

// searchFacetsSQL returns the facet statement of q and its arguments.
func searchFacetsSQL(q *shelfmark.SearchQuery, match string) (string, []any) {
	win, args := searchWindow(q, match, 0, shelfmark.SearchWindow+1, false)
	lim := strconv.Itoa(shelfmark.SearchFacetLimit)
	query := `WITH m AS MATERIALIZED (` + win + `)
		SELECT ` + strconv.Itoa(shelfmark.FacetTotal) + `, '', count(*) FROM m
		UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetSampleSpan) + `, '', coalesce(max(key) - min(key), 0) FROM m
		UNION ALL SELECT ` + strconv.Itoa(shelfmark.FacetKeySpan) + `, '', coalesce((SELECT max(key) FROM m) - (SELECT min(key) FROM search_docs), 0)
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetKind) + `, kind, count(*) AS n FROM m
			GROUP BY kind ORDER BY n DESC, kind LIMIT ` + lim + `)
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetFormat) + `, format, count(*) AS n FROM m WHERE format <> ''
			GROUP BY format ORDER BY n DESC, format LIMIT ` + lim + `)
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, CAST(ms.collection AS TEXT), count(*) AS n
			FROM m JOIN memberships ms ON ms.member = m.work JOIN resources r ON r.key = ms.collection
			WHERE ` + searchVisible + ` GROUP BY ms.collection ORDER BY n DESC, ms.collection LIMIT ` + lim + `)`
	return query, append(args, q.Now.UnixMicro())
}

// searchFacets counts the matches of q, and the matches by kind, by format
// and by public collection, in one statement over a sample: the newest
// SearchWindow+1 matches (gathered once, MATERIALIZED). It returns the
// sample's key span and the index's, from which EstimateFacets scales the
// counts of a full sample.
func (t *tx) searchFacets(ctx context.Context, q *shelfmark.SearchQuery, match string, res *shelfmark.SearchResult) error {
	query, args := searchFacetsSQL(q, match)
	err := t.query(ctx, query, args, func(r *sql.Rows) error {
		var facet int
		var value string
		var n int64
		if err := r.Scan(&facet, &value, &n); err != nil {
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
func (t *tx) SearchDoc(ctx context.Context, key int64) (*shelfmark.SearchDoc, error) {
	var d *shelfmark.SearchDoc
	err := t.query(ctx, `SELECT d.key, d.work, d.kind, d.format, x.title, x.body
		FROM search_docs d JOIN search_text x ON x.key = d.key WHERE d.key = ?`, []any{key},
		func(r *sql.Rows) error {
			d = new(shelfmark.SearchDoc)
			var kind string
			err := r.Scan(&d.Key, &d.Work, &kind, &d.Format, &d.Title, &d.Body)
			d.Kind = shelfmark.Kind(kind)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: search document %d: %w", key, err)
	}
	return d, nil
}

// latestDocs drops every document that a later one of the same key
// replaces, keeping the order of the rest, and cleans their text.
func latestDocs(docs []shelfmark.SearchDoc) []shelfmark.SearchDoc {
	last := make(map[int64]int, len(docs))
	for i, d := range docs {
		last[d.Key] = i
	}
	out := make([]shelfmark.SearchDoc, 0, len(last))
	for i, d := range docs {
		if last[d.Key] == i {
			d.Format = shelfmark.CleanSearchText(d.Format)
			d.Title, d.Body = shelfmark.CleanSearchText(d.Title), shelfmark.CleanSearchText(d.Body)
			out = append(out, d)
		}
	}
	return out
}

// putSearchDocsSQL and putSearchTextSQL upsert the documents of a JSON
// array of [key, work, kind, format, title, body] rows into search_docs
// and search_text. A row whose columns are all unchanged is not written;
// the triggers re-index a text only when its title or body changed.
// ("WHERE true" tells SQLite's parser that ON CONFLICT belongs to the
// INSERT, not to a join.)
const (
	putSearchDocsSQL = `INSERT INTO search_docs (key, work, kind, format)
	SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3 FROM json_each(?) WHERE true
	ON CONFLICT (key) DO UPDATE SET work = excluded.work, kind = excluded.kind, format = excluded.format
	WHERE search_docs.work <> excluded.work OR search_docs.kind <> excluded.kind OR search_docs.format <> excluded.format`
	putSearchTextSQL = `INSERT INTO search_text (key, title, body)
	SELECT value ->> 0, value ->> 4, value ->> 5 FROM json_each(?) WHERE true
	ON CONFLICT (key) DO UPDATE SET title = excluded.title, body = excluded.body
	WHERE search_text.title <> excluded.title OR search_text.body <> excluded.body`
)

// PutSearchDocs inserts or replaces documents by key (a later document of
// the same key wins) in two statements, whatever their number: the rows
// travel as one JSON array.
func (t *tx) PutSearchDocs(ctx context.Context, docs []shelfmark.SearchDoc) error {
	if len(docs) == 0 {
		return nil
	}
	docs = latestDocs(docs)
	rows := make([][6]any, len(docs))
	for i, d := range docs {
		rows[i] = [6]any{d.Key, d.Work, string(d.Kind), d.Format, d.Title, d.Body}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rows); err != nil {
		return fmt.Errorf("sqlite: put %d search documents: %w", len(docs), err)
	}
	for _, q := range []string{putSearchDocsSQL, putSearchTextSQL} {
		if _, err := t.exec(ctx, q, buf.String()); err != nil {
			return fmt.Errorf("sqlite: put %d search documents: %w", len(docs), err)
		}
	}
	return nil
}

// DeleteSearchDocs removes the documents of keys and those of the works
// among keys, in one statement (the primary key and search_docs_work; a
// trigger removes their text).
func (t *tx) DeleteSearchDocs(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	k := jsonInts(keys)
	if _, err := t.exec(ctx, `DELETE FROM search_docs WHERE key IN (SELECT value FROM json_each(?)
		UNION ALL SELECT key FROM search_docs WHERE work IN (SELECT value FROM json_each(?)))`, k, k); err != nil {
		return fmt.Errorf("sqlite: delete the search documents of %d keys: %w", len(keys), err)
	}
	return nil
}
