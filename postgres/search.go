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
// the value the next page's cursor compares with. A page is the hits ordered by score
// (descending) then key, after the cursor's (score, key).

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
// $1) selecting every visible document that matches q, as d (search_docs)
// joined with r (the work's resources row).
func searchMatches(q *shelfmark.SearchQuery, query string) (string, []any) {
	var b strings.Builder
	b.WriteString(`search_docs d JOIN resources r ON r.key = d.work WHERE d.tsv @@ ` + tsq + ` AND ` + searchVisible)
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
		b.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + param(q.Collection) + ` AND m.member = d.work)`)
	}
	return b.String(), args
}

// headlineOptions bound a snippet: up to two fragments of 12 to 32 words
// around the matches, each match between SnippetStart and SnippetEnd.
const headlineOptions = "StartSel=" + shelfmark.SnippetStart + ", StopSel=" + shelfmark.SnippetEnd +
	`, MaxWords=32, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`

// Search returns a page of public hits for q in one statement (every match
// is scored, the best Limit+1 after the cursor kept, and ts_headline run on
// those only) and, with q.Facets, a second one for the total and facet
// counts over every match.
func (t *readTx) Search(ctx context.Context, q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
	terms, err := shelfmark.ParseSearchText(q.Text)
	if err != nil {
		return nil, err
	}
	query := tsQuery(terms)
	limit := shelfmark.SearchLimit(q.Limit)
	from, args := searchMatches(&q, query)
	param := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var b strings.Builder
	b.WriteString(`WITH page AS (SELECT key, work, kind, format, score FROM (
    SELECT d.key, d.work, d.kind, d.format, ts_rank_cd(` + rankWeights + `, d.tsv, ` + tsq + `)::float8 AS score FROM ` + from + `) s`)
	if q.After != nil {
		score := param(q.After.Score)
		b.WriteString(` WHERE score < ` + score + `::float8 OR (score = ` + score + `::float8 AND key > ` + param(q.After.Key) + `)`)
	}
	b.WriteString(` ORDER BY score DESC, key LIMIT ` + param(int64(limit+1)) + `)
SELECT p.key, p.work, p.kind, p.format, coalesce(w.title, ''),
    ts_headline('simple'::regconfig, d.title || E'\n' || d.body, ` + tsq + `, ` + param(headlineOptions) + `), p.score
FROM page p JOIN search_docs d ON d.key = p.key LEFT JOIN search_docs w ON w.key = p.work
ORDER BY p.score DESC, p.key`)

	res := &shelfmark.SearchResult{Hits: make([]shelfmark.SearchHit, 0, limit)}
	_, err = t.r.query(ctx, b.String(), args, func(rows pgx.Rows) error {
		var h shelfmark.SearchHit
		var kind string
		if err := rows.Scan(&h.Key, &h.Work, &kind, &h.Format, &h.Title, &h.Snippet, &h.Score); err != nil {
			return err
		}
		h.Kind = shelfmark.Kind(kind)
		res.Hits = append(res.Hits, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: search %.80q: %w", q.Text, err)
	}
	res.TrimPage(limit)
	if q.Facets {
		if err := t.searchFacets(ctx, &q, query, res); err != nil {
			return nil, fmt.Errorf("postgres: search %.80q: facets: %w", q.Text, err)
		}
	}
	return res, nil
}

// searchFacets counts every match of q, and the matches by kind, by format
// and by public collection, in one statement over the matches (gathered
// once, MATERIALIZED). Values tie-break in byte order, as on SQLite.
func (t *readTx) searchFacets(ctx context.Context, q *shelfmark.SearchQuery, query string, res *shelfmark.SearchResult) error {
	from, args := searchMatches(q, query)
	lim := strconv.Itoa(shelfmark.SearchFacetLimit)
	sql := `WITH m AS MATERIALIZED (SELECT d.work, d.kind, d.format FROM ` + from + `)
SELECT ` + strconv.Itoa(shelfmark.FacetTotal) + `, '', count(*) FROM m
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetKind) + `, kind, count(*) FROM m
    GROUP BY kind ORDER BY 3 DESC, kind COLLATE "C" LIMIT ` + lim + `)
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetFormat) + `, format, count(*) FROM m WHERE format <> ''
    GROUP BY format ORDER BY 3 DESC, format COLLATE "C" LIMIT ` + lim + `)
UNION ALL (SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, ms.collection::text, count(*)
    FROM m JOIN memberships ms ON ms.member = m.work JOIN resources r ON r.key = ms.collection
    WHERE ` + searchVisible + ` GROUP BY ms.collection ORDER BY 3 DESC, ms.collection LIMIT ` + lim + `)`
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		var facet int32
		var value string
		var n int64
		if err := rows.Scan(&facet, &value, &n); err != nil {
			return err
		}
		res.AddFacet(int(facet), value, n)
		return nil
	})
	return err
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
