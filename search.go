package shelfmark

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Full-text search indexes documents kept in the database beside
// the resources: one for the metadata of each live work and collection,
// kept current by the SearchIndexer that follows the change sequence, and
// one for the text of each page (extracted or OCR, keyed by the page's
// file set), written by the job that produced the text. SQLite answers
// with FTS5 and PostgreSQL with a tsvector and a GIN index, behind
// SearchReadTx.
//
// Visibility is not copied into the documents: a query joins each
// document to its work's row, so a work made private, embargoed or deleted
// disappears from results at once, and a lapsed embargo needs no write.
//
// A query's cost does not follow the number of its matches: a page ranks
// one window of at most SearchWindow matches (the newest ones, which both
// indexes hand out in key order and stop reading at the window's end; see
// SearchCursor), and the total and facets are counted over at most
// SearchWindow+1 matches, as estimates above that (see SearchResult). The
// trade-off: for a word in more than SearchWindow documents, the first
// page is the best of the newest SearchWindow matches, not of all of
// them; a title match still ranks above a body match within a window.

// SearchDoc is one indexed document.
type SearchDoc struct {
	// Key is the resource the document describes: a work or collection
	// (its metadata), or the file set of a page (the text of its file).
	Key int64
	// Work is the work the document belongs to (Key itself for a work or
	// collection); results show only while it is public.
	Work int64
	// Kind is the kind of the resource the hit stands for: collection,
	// work, or fileset for the text of a file (a page).
	Kind Kind
	// Format is the format name of the file whose text this is; empty
	// for metadata.
	Format string
	// Title is the resource's title (weighted above Body).
	Title string
	// Body is the rest of the text.
	Body string
}

// SearchQuery asks for one page of results.
type SearchQuery struct {
	// Text is what the user typed: words, all of which must match
	// (prefixes with a trailing *, phrases in double quotes).
	Text string
	// Filters: a collection key (direct membership of the document's
	// work), a kind and a format name; zero values do not filter.
	Collection int64
	Kind       Kind
	Format     string
	// After continues after the last hit of the previous page.
	After *SearchCursor
	// Limit is the page size: DefaultSearchLimit when 0 or less, at most
	// MaxSearchLimit.
	Limit int
	// Now decides which embargoes have passed.
	Now time.Time
	// Facets asks for facet counts and the total (the first page needs
	// them; later pages may skip the cost).
	Facets bool
}

// SearchCursor is the keyset position of a hit.
//
// A query ranks its matches in windows of at most SearchWindow, so that no
// page costs more than one or two windows, however many documents match:
// the first window holds the newest SearchWindow visible matches (highest
// keys), the next window the SearchWindow matches below it, and so on.
// Within a window, hits are ordered by Score (better first; each
// backend's own scale) and then by Key. Window is the highest key of the
// position's window, so that later pages see the window the first page
// ranked even when newer documents arrive; a Key of 0 is the beginning of
// the window (Score is then ignored).
type SearchCursor struct {
	Window int64
	Score  float64
	Key    int64
}

// SearchHit is one result.
type SearchHit struct {
	Key    int64
	Work   int64
	Kind   Kind
	Format string
	Title  string
	// Snippet is a short passage around the matched terms, with each
	// matched term between SnippetStart and SnippetEnd.
	Snippet string
	Score   float64
}

// Markers around matched terms in SearchHit.Snippet: control characters
// that never occur in indexed text, so an adapter can escape the snippet
// and then turn them into markup.
const (
	SnippetStart = "\x02"
	SnippetEnd   = "\x03"
)

// FacetCount is the number of matching documents with one value.
type FacetCount struct {
	Value string
	Count int64
}

// SearchResult is a page of hits.
type SearchResult struct {
	Hits []SearchHit
	// Next continues the results; nil on the last page.
	Next *SearchCursor
	// Total and the facets count every match (only with Facets). Each
	// facet lists at most SearchFacetLimit values, by count (most first)
	// and then by value; the collection facet counts only collections in
	// public view.
	//
	// They are exact when at most SearchWindow documents match. Above, they
	// are counted over a sample, the newest SearchWindow+1 matches, and
	// scaled up to the key range of the index (see EstimateFacets), and
	// Estimated is true.
	Total       int64
	Collections []FacetCount // Value is the collection's key in decimal
	Kinds       []FacetCount
	Formats     []FacetCount
	Estimated   bool

	// sampleSpan and keySpan are the key spans of the facet sample and of
	// the index up to the sample's top (FacetSampleSpan, FacetKeySpan).
	sampleSpan, keySpan int64
}

// SearchReadTx queries the search index.
type SearchReadTx interface {
	// Search returns a page of public hits for q. An empty q.Text or one
	// without any word is EINVALID.
	Search(ctx context.Context, q SearchQuery) (*SearchResult, error)
	// SearchDoc returns the stored document of key, or (nil, nil).
	SearchDoc(ctx context.Context, key int64) (*SearchDoc, error)
}

// SearchWriteTx writes the search index. Text is stored as
// CleanSearchText makes it.
type SearchWriteTx interface {
	// PutSearchDocs inserts or replaces documents, by Key. The number of
	// statements does not depend on the number of documents.
	PutSearchDocs(ctx context.Context, docs []SearchDoc) error
	// DeleteSearchDocs removes the documents of keys and every document
	// whose Work is one of keys.
	DeleteSearchDocs(ctx context.Context, keys []int64) error
}

// Limits of a search.
const (
	// DefaultSearchLimit is the page size when SearchQuery.Limit is 0.
	DefaultSearchLimit = 20
	// MaxSearchLimit is the largest page.
	MaxSearchLimit = 100
	// MaxSearchTerms is the most words and phrases one query may hold.
	MaxSearchTerms = 32
	// SearchFacetLimit is the most values one facet lists.
	SearchFacetLimit = 100
	// SearchWindow is the most matches one window ranks (see
	// SearchCursor), and the most matches whose total and facets are
	// counted exactly (see SearchResult).
	SearchWindow = 1000
	// MaxSearchText is how many bytes of a document's Title and of its
	// Body are kept (PostgreSQL cannot index a tsvector above 1 MiB).
	MaxSearchText = 256 << 10
)

// SearchLimit returns the page size of a query: DefaultSearchLimit for 0
// or less, at most MaxSearchLimit.
func SearchLimit(limit int) int {
	if limit <= 0 {
		return DefaultSearchLimit
	}
	return min(limit, MaxSearchLimit)
}

// SearchTerm is one term of a query: a word or a quoted phrase, all of
// whose words must occur (a phrase's words next to each other, in order).
// Text is what the user typed for it, cleaned of control characters and
// without the quotes and the prefix star; each backend splits it into
// words with the tokenizer it indexes documents with (so "foo-bar" and
// "1.5" match the text they were typed from) and quotes every word, so no
// character of Text ever acts as query syntax.
type SearchTerm struct {
	Text string
	// Prefix makes the last word of Text match any word it begins.
	Prefix bool
}

// ParseSearchText splits what a user typed into terms, all of which must
// match. The syntax has two devices and nothing else:
//
//   - "double quotes" around words make a phrase (an unclosed quote runs
//     to the end);
//   - a trailing * makes the word before it (or a phrase's last word) a
//     prefix: shelf* matches shelfmark.
//
// Every other character is text: AND, OR, NOT and NEAR are words like any
// other, and -, :, ( and ) separate words as spaces do. A term without a
// letter or a digit (a lone *, a dash) is dropped; a text left without
// terms, or with more than MaxSearchTerms, is EINVALID.
func ParseSearchText(s string) ([]SearchTerm, error) {
	s = CleanSearchText(s)
	var terms []SearchTerm
	add := func(text string, prefix bool) {
		if strings.IndexFunc(text, isWordRune) >= 0 {
			terms = append(terms, SearchTerm{Text: strings.TrimSpace(text), Prefix: prefix})
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			var text string
			if end < 0 {
				text, i = s[i+1:], len(s)
			} else {
				text, i = s[i+1:i+1+end], i+2+end
			}
			prefix := i < len(s) && s[i] == '*'
			for i < len(s) && s[i] == '*' {
				i++
			}
			add(text, prefix)
		default:
			end := strings.IndexFunc(s[i:], func(r rune) bool { return r == '"' || unicode.IsSpace(r) })
			if end < 0 {
				end = len(s) - i
			}
			word := s[i : i+end]
			i += end
			trimmed := strings.TrimRight(word, "*")
			add(trimmed, len(trimmed) < len(word))
		}
	}
	if len(terms) == 0 {
		return nil, Errorf(EINVALID, "The search text has no words: give at least one word (letters or digits).")
	}
	if len(terms) > MaxSearchTerms {
		return nil, Errorf(EINVALID, "The search text has %d words and phrases; at most %d are allowed.", len(terms), MaxSearchTerms)
	}
	return terms, nil
}

// isWordRune reports whether r can be part of a word: a letter or a digit
// (the characters FTS5's unicode61 tokenizer and PostgreSQL's parser both
// keep).
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// CleanSearchText returns s as search stores and queries it: valid UTF-8,
// with every control character (NUL, which PostgreSQL text cannot hold;
// SnippetStart and SnippetEnd, which must never occur in indexed text)
// turned into a space except tab and newline, and cut to MaxSearchText
// bytes at a character boundary.
func CleanSearchText(s string) string {
	if len(s) > MaxSearchText {
		cut := MaxSearchText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) && r != '\t' && r != '\n' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			return ' '
		}
		return r
	}, s)
}

// Facets numbered in the rows a backend's facet statement returns (the
// first column), so both backends fold them with AddFacet. FacetSampleSpan
// and FacetKeySpan are no facets: they carry, in the count column, the key
// span of the sample the facets were counted over (its highest key minus
// its lowest) and the span from the index's lowest key to the sample's
// highest.
const (
	FacetTotal = iota
	FacetKind
	FacetFormat
	FacetCollection
	FacetSampleSpan
	FacetKeySpan
)

// AddFacet folds one row of a facet statement into the result: the total
// (FacetTotal, count in n), one value of a facet, or a span.
func (r *SearchResult) AddFacet(facet int, value string, n int64) {
	fc := FacetCount{Value: value, Count: n}
	switch facet {
	case FacetTotal:
		r.Total = n
	case FacetKind:
		r.Kinds = append(r.Kinds, fc)
	case FacetFormat:
		r.Formats = append(r.Formats, fc)
	case FacetCollection:
		r.Collections = append(r.Collections, fc)
	case FacetSampleSpan:
		r.sampleSpan = n
	case FacetKeySpan:
		r.keySpan = n
	}
}

// EstimateFacets finishes the folded rows of a facet statement that
// counted at most SearchWindow+1 matches: with more than SearchWindow, the
// total is estimated as if the matches were as dense below the sample as
// within it (n sample matches spanning keys lo to hi, the index's keys
// from min to hi: 1 + (n−1)·(hi−min)/(hi−lo)), every count is scaled by
// the same factor, and Estimated is set. Scaling keeps the order of the
// values.
func (r *SearchResult) EstimateFacets() {
	if r.Total <= SearchWindow {
		return
	}
	r.Estimated = true
	if r.sampleSpan <= 0 || r.keySpan <= r.sampleSpan {
		return
	}
	n := float64(r.Total)
	factor := (1 + (n-1)*float64(r.keySpan)/float64(r.sampleSpan)) / n
	scale := func(c int64) int64 { return int64(float64(c)*factor + 0.5) }
	r.Total = scale(r.Total)
	for _, f := range [][]FacetCount{r.Kinds, r.Formats, r.Collections} {
		for i := range f {
			f[i].Count = scale(f[i].Count)
		}
	}
}

// TrimPage keeps the first limit hits of a backend's up to limit+1 and,
// when there were more, sets Next after the last one kept; windows[i] is
// the window (SearchCursor.Window) of hit i.
func (r *SearchResult) TrimPage(limit int, windows []int64) {
	if len(r.Hits) > limit {
		r.Hits = r.Hits[:limit]
		last := r.Hits[limit-1]
		r.Next = &SearchCursor{Window: windows[limit-1], Score: last.Score, Key: last.Key}
	}
}
