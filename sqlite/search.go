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
// worth ten times a body match, negated so that higher is better. A page is
// the hits ordered by score (descending) then key, after the cursor's
// (score, key); bm25() is a pure function of the document and the index
// statistics, so a score read on one page compares exactly on the next.

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

// Search returns a page of public hits for q in two statements: the page
// (every match is scored, the best Limit+1 after the cursor kept, and the
// snippets made for those only, by a second look-up of each in search_fts)
// and, with q.Facets, the total and facet counts over every match.
func (t *tx) Search(ctx context.Context, q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
	terms, err := shelfmark.ParseSearchText(q.Text)
	if err != nil {
		return nil, err
	}
	match := ftsQuery(terms)
	limit := shelfmark.SearchLimit(q.Limit)
	from, args := searchMatches(&q, match)
	var b strings.Builder
	b.WriteString(`WITH page AS MATERIALIZED (SELECT key, work, kind, format, score FROM (
		SELECT d.key, d.work, d.kind, d.format, -bm25(search_fts, 10.0, 1.0) AS score FROM ` + from + `)`)
	if q.After != nil {
		b.WriteString(` WHERE score < ? OR (score = ? AND key > ?)`)
		args = append(args, q.After.Score, q.After.Score, q.After.Key)
	}
	b.WriteString(` ORDER BY score DESC, key LIMIT ?)
		SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, ''),
			snippet(f.search_fts, -1, char(2), char(3), '…', 24), p.score
		FROM page p JOIN search_fts f ON f.rowid = p.key LEFT JOIN search_text w ON w.key = p.work
		WHERE f.search_fts MATCH ? ORDER BY p.score DESC, p.key`)
	args = append(args, limit+1, match)

	res := &shelfmark.SearchResult{Hits: make([]shelfmark.SearchHit, 0, limit)}
	err = t.query(ctx, b.String(), args, func(r *sql.Rows) error {
		var h shelfmark.SearchHit
		var kind string
		if err := r.Scan(&h.Key, &h.Work, &kind, &h.Format, &h.Title, &h.Snippet, &h.Score); err != nil {
			return err
		}
		h.Kind = shelfmark.Kind(kind)
		res.Hits = append(res.Hits, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: search %.80q: %w", q.Text, err)
	}
	res.TrimPage(limit)
	if q.Facets {
		if err := t.searchFacets(ctx, &q, match, res); err != nil {
			return nil, fmt.Errorf("sqlite: search %.80q: facets: %w", q.Text, err)
		}
	}
	return res, nil
}

// searchFacets counts every match of q, and the matches by kind, by format
// and by public collection, in one statement over the matches (gathered
// once, MATERIALIZED).
func (t *tx) searchFacets(ctx context.Context, q *shelfmark.SearchQuery, match string, res *shelfmark.SearchResult) error {
	from, args := searchMatches(q, match)
	lim := strconv.Itoa(shelfmark.SearchFacetLimit)
	query := `WITH m AS MATERIALIZED (SELECT d.work, d.kind, d.format FROM ` + from + `)
		SELECT ` + strconv.Itoa(shelfmark.FacetTotal) + `, '', count(*) FROM m
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetKind) + `, kind, count(*) AS n FROM m
			GROUP BY kind ORDER BY n DESC, kind LIMIT ` + lim + `)
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetFormat) + `, format, count(*) AS n FROM m WHERE format <> ''
			GROUP BY format ORDER BY n DESC, format LIMIT ` + lim + `)
		UNION ALL SELECT * FROM (SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, CAST(ms.collection AS TEXT), count(*) AS n
			FROM m JOIN memberships ms ON ms.member = m.work JOIN resources r ON r.key = ms.collection
			WHERE ` + searchVisible + ` GROUP BY ms.collection ORDER BY n DESC, ms.collection LIMIT ` + lim + `)`
	args = append(args, q.Now.UnixMicro())
	return t.query(ctx, query, args, func(r *sql.Rows) error {
		var facet int
		var value string
		var n int64
		if err := r.Scan(&facet, &value, &n); err != nil {
			return err
		}
		res.AddFacet(int(facet), value, n)
		return nil
	})
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
