package postgres

import (
	"cmp"
	"context"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Full-text search (search.go in the root package, migrations
// 0005_search.sql, 0019_stemming.sql, 0020_fields.sql and
// 0027_stem_languages.sql): documents in search_docs, whose stored
// generated column tsv (title weighted A, body B, a record's creators C,
// its subjects and date tokens D, in the configuration of the document's
// language, shelfmark_config(lang): shelfmark, 'simple' with every word
// folded to its Porter stem, or shelfmark_french, shelfmark_german …
// with Snowball's stems of the language; the date tokens always in
// shelfmark) has a GIN index. A field term (searchfields.go in the root
// package) is an operand restricted to its field's weight ('melville':C),
// a date term the date tokens of its span joined by |, each :D, and a
// facet term its value's hidden token :D (searchfacets.go in the root
// package; the tokens are in the column dates).
//
// A query is a tsquery expression built from shelfmark.ParseSearchText
// (tsqExpr): every term becomes one quoted operand ('…', with ' doubled
// and \ escaped) of to_tsquery in every configuration of searchConfigs,
// joined by || (the query's language is not known), each of which splits
// it with the parser that made the documents' vectors (a term of several
// words becomes a phrase, <->); a prefix term's last word is an operand in
// 'simple' (not stemmed) with :*; the operands are joined by &&, || and
// !! as the terms' groups say. Nothing the user typed is read as tsquery
// syntax.
//
// The score of a hit is ts_rank_cd with the weights {D 0.1, C 0.1, B 0.1,
// A 1.0} (a title match is worth ten body matches, and a creator's or a
// subject's, also in the body, one more, as on SQLite), cast
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

// fieldWeights are the weights of the vector that hold each field a term
// may name (migration 0020_fields.sql), as a to_tsquery operand ends
// with them: title A, creator C, subject D (with the date tokens).
var fieldWeights = map[string]string{
	shelfmark.SearchFieldTitle:   ":A",
	shelfmark.SearchFieldCreator: ":C",
	shelfmark.SearchFieldSubject: ":D",
}

// rankWeights are ts_rank_cd's weights of D, C, B and A.
const rankWeights = `'{0.1, 0.1, 0.1, 1.0}'::real[]`

// tsqOperand quotes text as one operand of to_tsquery ('…', with '
// doubled and \ escaped), which splits it with the parser into a phrase.
func tsqOperand(text string) string {
	return `'` + strings.NewReplacer(`'`, `''`, `\`, `\\`).Replace(text) + `'`
}

// tsqExpr writes the tsquery of parsed terms, an expression binding its
// operands in s: the groups of shelfmark.SearchGroups joined by &&, each
// in parentheses with its alternatives joined by ||, then && !! each term
// left out. A term is to_tsquery in every configuration (tsq: its words
// stemmed in each language, a phrase of several); a prefix term's last
// word is not stemmed
// but read in 'simple' as a prefix, or its stem as a prefix
// (shelfmark.SearchPrefixStem), after the words before it
// (tsquery_phrase).
func tsqExpr(s *sqlstore.Stmt, terms []shelfmark.SearchTerm) string {
	term := func(t shelfmark.SearchTerm) string {
		if t.Field == shelfmark.SearchFieldFacet { // the value's hidden token (searchfacets.go)
			return `to_tsquery('simple'::regconfig, ` + s.Arg(t.FacetToken()+":D") + `)`
		}
		if t.Field == shelfmark.SearchFieldDate { // any of the span's tokens
			return `to_tsquery('simple'::regconfig, ` + s.Arg(strings.Join(shelfmark.SearchDateQuery(t.Years()), ":D | ")+":D") + `)`
		}
		weight := fieldWeights[t.Field] // "" for any field
		words := shelfmark.SearchTokens(t.Text)
		if !t.Prefix || len(words) == 0 {
			return tsq(s.Arg(tsqOperand(t.Text) + weight))
		}
		star := ":*" + strings.TrimPrefix(weight, ":")
		last := words[len(words)-1]
		prefix := `to_tsquery('simple'::regconfig, ` + s.Arg(tsqOperand(last)+star) + `)`
		if st := shelfmark.SearchPrefixStem(last); st != "" {
			prefix = `(` + prefix + ` || to_tsquery('simple'::regconfig, ` + s.Arg(tsqOperand(st)+star) + `))`
		}
		if len(words) == 1 {
			return prefix
		}
		return `tsquery_phrase(` + tsq(s.Arg(tsqOperand(strings.Join(words[:len(words)-1], " "))+fieldWeights[t.Field])) + `, ` + prefix + `)`
	}
	groups, not := shelfmark.SearchGroups(terms)
	var and []string
	for _, g := range groups {
		var or []string
		for _, t := range g {
			or = append(or, term(t))
		}
		and = append(and, `(`+strings.Join(or, ` || `)+`)`)
	}
	for _, t := range not {
		and = append(and, `!!`+term(t))
	}
	return `(` + strings.Join(and, ` && `) + `)`
}

// headlineWords is what marks a hit's headline: every word of the terms
// to find, any of them (|), as one to_tsquery input in every
// configuration (tsq; the headline is made in the document's), and the
// last words of prefix terms as prefixes, each an
// input in 'simple' (unstemmed; and its stem, shelfmark.SearchPrefixStem);
// not the terms themselves. ts_headline looks for the covers of its query
// in the whole document, and for a query of phrases that costs many times
// more (eight two-word phrases: about 60 ms a document of 300 words,
// against 0.2 ms for the words on their own); the hits already match the
// phrases, so marking their words marks the phrases too.
func headlineWords(terms []shelfmark.SearchTerm) (words string, prefixes []string) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, t := range terms {
		if t.Not || t.Field == shelfmark.SearchFieldDate || t.Field == shelfmark.SearchFieldFacet {
			continue // not in a hit; or years or a facet's value, not words of its text
		}
		tokens := shelfmark.SearchTokens(t.Text)
		for i, w := range tokens {
			w = strings.ToLower(w)
			if t.Prefix && i == len(tokens)-1 {
				for _, p := range []string{w, shelfmark.SearchPrefixStem(w)} {
					if p != "" && !seen[p+":*"] {
						seen[p+":*"] = true
						prefixes = append(prefixes, tsqOperand(p)+":*")
					}
				}
				continue
			}
			if seen[w] {
				continue
			}
			seen[w] = true
			if b.Len() > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(tsqOperand(w))
		}
	}
	return b.String(), prefixes
}

// headlineExpr writes the tsquery that marks a hit's headline
// (headlineWords), binding its inputs in s.
func headlineExpr(s *sqlstore.Stmt, terms []shelfmark.SearchTerm) string {
	words, prefixes := headlineWords(terms)
	var parts []string
	if words != "" {
		parts = append(parts, tsq(s.Arg(words)))
	}
	for _, p := range prefixes {
		parts = append(parts, `to_tsquery('simple'::regconfig, `+s.Arg(p)+`)`)
	}
	if len(parts) == 0 { // only years: the headline is the text's beginning
		return `''::tsquery`
	}
	return `(` + strings.Join(parts, ` || `) + `)`
}

// lists binds lists as the dialect does (the search statements are part
// of it, and cannot name it).
var lists = sqlstore.Lists{Int64s: func(v []int64) any { return v }, AnyOf: anyOf, Reads: "shelfmark_search_reads"}

// anyOf is the dialect's AnyOf.
func anyOf(n int) string { return "= ANY($" + strconv.Itoa(n) + ")" }

// tsq is the parsed query whose placeholder is query: its text parsed
// in every configuration of searchConfigs, joined by || (a query's
// language is not known: searchstem.go in the root package), the
// placeholder bound once.
func tsq(query string) string {
	parts := make([]string, len(searchConfigs))
	for i, c := range searchConfigs {
		parts[i] = `to_tsquery(` + c + `, ` + query + `)`
	}
	return `(` + strings.Join(parts, ` || `) + `)`
}

// searchConfigs are the text search configurations of the documents'
// vectors, by language (migrations 0019_stemming.sql and
// 0027_stem_languages.sql): shelfmark (English, Porter's stems, and every
// language without a stemmer), then shelfmark_french, shelfmark_german …
// for shelfmark.SearchLanguages. A document's is shelfmark_config(lang).
var searchConfigs = func() []string {
	out := []string{`'shelfmark'::regconfig`}
	for _, l := range shelfmark.SearchLanguages() {
		out = append(out, `'shelfmark_`+l+`'::regconfig`)
	}
	return out
}()

// docConfig is the text search configuration of the document d's
// vector, whose headline is made in it.
const docConfig = `shelfmark_config(d.lang)`

// match is what a search matches with (sqlstore.SearchStatements.Match):
// its terms, of which each statement writes the tsquery (tsqExpr) and the
// query of its headlines (headlineExpr).
type match struct{ terms []shelfmark.SearchTerm }

// searchMatches writes to s the FROM and WHERE clauses selecting every
// visible document that matches q (the tsquery expression query), as d
// (search_docs). The visibility of each document's work is a
// look-up of its resources row by key, one per document read: the OFFSET
// 0 keeps PostgreSQL from turning it into a join, which for a thousand
// matches it would make a hash join over every row of resources.
func searchMatches(s *sqlstore.Stmt, q *shelfmark.SearchQuery, query string) {
	now := s.Arg(q.Now.UnixMicro())
	s.WriteString(`search_docs d WHERE d.tsv @@ ` + query + ` AND EXISTS (SELECT 1 FROM resources r WHERE r.key = d.access AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "d.work", now) + ` OFFSET 0)`)
	sqlstore.DocFilters(s, q)
	if q.Collection != 0 {
		// as a browse: who may not see the collection may not list what
		// it holds
		coll := s.Arg(q.Collection)
		s.WriteString(` AND EXISTS (SELECT 1 FROM memberships m WHERE m.collection = ` + coll + ` AND m.member = d.work OFFSET 0)
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = ` + coll + ` AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + `)`)
	}
}

// headlineOptions bound a snippet: up to two fragments of 12 to 32 words
// around the matches, each match between SnippetStart and SnippetEnd.
const headlineOptions = "StartSel=" + shelfmark.SnippetStart + ", StopSel=" + shelfmark.SnippetEnd +
	`, MaxWords=32, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`

// searchWindow is sqlstore.SearchStatements.Window: the matches read by
// key, newest first, and ranked outside the LIMIT (when the GIN index
// finds the matches, they are all read and sorted by key, but only the
// window's are ranked; by their key for SearchSortNewest).
func searchWindow(s *sqlstore.Stmt, q *shelfmark.SearchQuery, m any, top int64, n int) {
	if m == nil { // everything: the documents by key
		s.WriteString(`SELECT d.key, d.work, d.kind, d.format, ` + cmp.Or(sqlstore.SortScore(q), `d.key::float8`) + ` AS score FROM search_docs d
    WHERE EXISTS (SELECT 1 FROM resources r WHERE r.key = d.access AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "d.work", s.Arg(q.Now.UnixMicro())) + ` OFFSET 0)`)
		sqlstore.DocFilters(s, q)
		if top > 0 {
			s.WriteString(` AND d.key <= ` + s.Arg(top))
		}
		s.WriteString(` ORDER BY d.key DESC LIMIT ` + strconv.Itoa(n))
		return
	}
	query := tsqExpr(s, m.(match).terms) // bound once, named twice
	score := `ts_rank_cd(` + rankWeights + `, tsv, ` + query + `)::float8`
	if q.ByKey() {
		score = `key::float8` // the newest first (SearchSortNewest, or only filters)
	} else if ds := sqlstore.SortScore(q); ds != "" {
		score = ds
	}
	s.WriteString(`SELECT key, work, kind, format, ` + score + ` AS score
FROM (SELECT d.key, d.work, d.kind, d.format, d.tsv FROM `)
	searchMatches(s, q, query)
	if top > 0 {
		s.WriteString(` AND d.key <= ` + s.Arg(top))
	}
	s.WriteString(` ORDER BY d.key DESC LIMIT ` + strconv.Itoa(n) + `) d`)
}

// searchHits is sqlstore.SearchStatements.Hits: ts_headline over each
// hit's title and body, marking the words of the headline query
// (headlineExpr).
func searchHits(s *sqlstore.Stmt, m any) string {
	return `ts_headline(` + docConfig + `, d.title || E'\n' || d.body, ` + headlineExpr(s, m.(match).terms) + `, ` + s.Arg(headlineOptions) + `) AS snippet, p.score
    FROM page p JOIN search_docs d ON d.key = p.key LEFT JOIN search_docs w ON w.key = p.work`
}

// docMatches is sqlstore.SearchStatements.Matches: the document's vector
// against the query's.
func docMatches(s *sqlstore.Stmt, m any, alias string) string {
	return alias + `.tsv @@ ` + tsqExpr(s, m.(match).terms)
}

// facetCollections is sqlstore.SearchStatements.Collections: each work's
// memberships and each collection's visibility looked up by member and
// key, the OFFSET 0 keeping PostgreSQL from hash-joining every membership
// and resource instead.
func facetCollections(s *sqlstore.Stmt, q *shelfmark.SearchQuery, count, now string) string {
	return `SELECT ` + strconv.Itoa(shelfmark.FacetCollection) + `, ms.collection::text, ` + count + ` AS n
    FROM win m CROSS JOIN LATERAL (SELECT collection FROM memberships WHERE member = m.work OFFSET 0) ms
    WHERE EXISTS (SELECT 1 FROM resources r WHERE r.key = ms.collection AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + ` OFFSET 0)
    GROUP BY ms.collection ORDER BY n DESC, ms.collection`
}

// StartSearch implements sqlstore.Searcher: startSearch sets the search's
// statement_timeout and its restore puts the previous one back.
func (t *readTx) StartSearch(ctx context.Context) (context.Context, func(), func() error, error) {
	restore, err := t.r.startSearch(ctx)
	return ctx, func() {}, restore, err
}

// SearchError implements sqlstore.Searcher (searchError).
func (t *readTx) SearchError(ctx context.Context, err error) error { return t.r.searchError(ctx, err) }

// browseRange is sqlstore.SearchStatements.BrowseRange. The members come
// from the memberships primary key read backwards, each one's visibility
// from its resources row (the OFFSET 0 keeps it a look-up) and its
// documents, in key order and at most lim, from search_docs_work_key
// (search_docs_work_kind with a kind filter): the sort by member and key
// is an incremental one over rows already ordered by member, which stops
// at lim.
func browseRange(s *sqlstore.Stmt, q *shelfmark.SearchQuery, member, coll, now string, key int64, lim string) {
	s.WriteString(`SELECT d.key, d.work, d.kind, d.format FROM memberships m
    CROSS JOIN LATERAL (SELECT key, work, kind, format FROM search_docs d WHERE d.work = m.member
    AND (d.access = d.work OR EXISTS (SELECT 1 FROM resources r WHERE r.key = d.access AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "d.work", now) + `))`)
	if key > 0 {
		s.WriteString(` AND d.key > ` + s.Arg(key))
	}
	sqlstore.DocFilters(s, q)
	s.WriteString(` ORDER BY d.key LIMIT ` + lim + `) d
    WHERE m.collection = ` + coll + ` AND ` + member + `
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = m.member AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + ` OFFSET 0)
    AND EXISTS (SELECT 1 FROM resources r WHERE r.key = ` + coll + ` AND ` + sqlstore.Readable(s, lists, q.Reader, "r", "r.key", now) + `)
    ORDER BY m.member DESC, d.key LIMIT ` + lim)
}

// putSearchDocs upserts documents, writing only the rows that change. A
// page's language is its work's record's, read by key (in the snapshot
// before the statement: a page written with its record is given the
// record's language by the second statement); the second gives the pages
// of the records written their record's language where they have
// another (one look-up of an index on work a record), which makes
// their vectors again.
var putSearchDocs = []func(v string) string{func(v string) string {
	return `INSERT INTO search_docs (key, work, kind, format, title, body, access, creator, subject, dates, date_lo, date_hi, title_key, lang)
SELECT key, work, kind, format, title, body, access, creator, subject, dates, date_lo, date_hi, title_key,
    CASE WHEN key = work THEN lang ELSE coalesce((SELECT w.lang FROM search_docs w WHERE w.key = v.work), '') END FROM ` + v + `
ON CONFLICT (key) DO UPDATE SET work = EXCLUDED.work, kind = EXCLUDED.kind, format = EXCLUDED.format,
    title = EXCLUDED.title, body = EXCLUDED.body, access = EXCLUDED.access,
    creator = EXCLUDED.creator, subject = EXCLUDED.subject, dates = EXCLUDED.dates, date_lo = EXCLUDED.date_lo, date_hi = EXCLUDED.date_hi,
    title_key = EXCLUDED.title_key, lang = EXCLUDED.lang
WHERE (search_docs.work, search_docs.kind, search_docs.format, search_docs.title, search_docs.body, search_docs.access,
        search_docs.creator, search_docs.subject, search_docs.dates, search_docs.date_lo, search_docs.date_hi, search_docs.title_key, search_docs.lang)
    IS DISTINCT FROM (EXCLUDED.work, EXCLUDED.kind, EXCLUDED.format, EXCLUDED.title, EXCLUDED.body, EXCLUDED.access,
        EXCLUDED.creator, EXCLUDED.subject, EXCLUDED.dates, EXCLUDED.date_lo, EXCLUDED.date_hi, EXCLUDED.title_key, EXCLUDED.lang)`
}, func(v string) string {
	return `UPDATE search_docs p SET lang = v.lang FROM ` + v + `
WHERE v.key = v.work AND p.work = v.key AND p.key <> p.work AND p.lang <> v.lang`
}}
