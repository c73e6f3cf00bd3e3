package shelfmark

import (
	"cmp"
	"context"
	"iter"
	"slices"
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
// document to the row whose effective access it follows (SearchDoc.Access:
// its work's, or for a page the file its text is from), so a work made
// private, embargoed or deleted, a parent work made private, or a page
// image made private disappears from results at once, and a lapsed
// embargo needs no write.
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
	// collection).
	Work int64
	// Access is the resource whose effective access decides whether the
	// document shows (it does while that is in public view): the work
	// itself for metadata, and for the text of a page the file the text
	// was made from. 0 stands for Work (AccessKey).
	Access int64
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
	// Creator and Subject are, for a record, the literals of its creators
	// and subjects (each value once, joined by " / "; also in Body), which
	// field terms search (searchfields.go); empty for a page.
	Creator, Subject string
	// DateLo and DateHi are, for a record, the span of years its dates
	// name (dates, created, issued), which date terms and the date sorts
	// read; 0 and 0 when it names none.
	DateLo, DateHi int
	// Facets are, for a record (Key equal to Work), its values of the
	// repository's metadata facets (searchfacets.go), which replace those
	// it had; a page's document has none and leaves its work's alone.
	Facets []SearchFacetValue
	// Lang is the language whose stemmer folds the document's words
	// (searchstem.go): one of SearchLanguages (french, german …), or ""
	// for English and every other language, stemmed with Porter's
	// English algorithm. The indexer gives a record its work's
	// dcterms:language (SearchLang); a page's document takes its work's,
	// whatever it says (the backends copy it from the work's record).
	Lang string
}

// AccessKey is the resource whose effective access decides whether d
// shows: Access, or Work when Access is 0.
func (d *SearchDoc) AccessKey() int64 {
	if d.Access != 0 {
		return d.Access
	}
	return d.Work
}

// SearchQuery asks for one page of results.
type SearchQuery struct {
	// Text is what the user typed: words, all of which must match
	// (prefixes with a trailing *, phrases in double quotes). Empty (or
	// only spaces) with a Collection, the query browses the collection
	// (see SearchQuery.Browse); empty without one, it lists every
	// document the caller may read (see SearchQuery.Everything).
	Text string
	// Filters: a collection key (direct membership of the document's
	// work; nothing matches unless the collection itself is in public
	// view, as for a browse), a kind and a format name; zero values do
	// not filter.
	Collection int64
	Kind       Kind
	Format     string
	// FacetSet is the repository's list of facets (searchfacets.go): with
	// Facets, its metadata facets are counted (SearchResult.Metadata); a
	// word of Text may filter by one (language:eng); and Filters must
	// name them. Nil counts and filters by none.
	FacetSet []SearchFacet
	// Filters narrow the search to the works whose record holds each
	// value (all of them); with an empty Text, to every such work the
	// caller may read. See SearchQuery.Terms.
	Filters []SearchFilter
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
	// Sort orders the hits: SearchSortRelevance (also ""),
	// SearchSortNewest, SearchSortDate, SearchSortDateDesc or
	// SearchSortTitle (see CheckSearchSort). A browse ignores it: it is
	// newest member first; a query without words (Everything) is newest
	// first unless sorted by date or title.
	Sort string
	// Reader is who the results are for beyond public view (see
	// SearchReader); nil shows what is in public view only, as to an
	// anonymous caller.
	Reader *SearchReader
	// Group makes each hit a work (or collection) rather than a document:
	// see SearchQuery.Grouped.
	Group bool
}

// Grouped reports whether q's hits are works made of documents: its
// Group is set and it has words (not a browse, not everything; see
// WorksOnly for those).
//
// It then ranks, within each window of SearchWindow matching
// documents, the works those documents belong to: a work's score is that
// of its best document (its metadata, a title match worth ten body
// matches, or the text of one of its pages), ties by key; each hit is
// one work, with the title, kind, format and snippet of its best
// document, Matches the number of its pages that match within the
// window, and Pages its SearchGroupPages best pages (their Key, Format
// and Score). A work whose documents fall in two windows is a hit of the
// newer window only: the later window leaves out each work that has a
// visible match above the window's top (one look-up per work of the
// window, in the index of documents by work, from the window's top up
// to its first visible match). A page reads at most SearchGroupWindows
// windows, so that a book whose pages fill a window does not leave a
// page of results nearly empty.
//
// With Group set but without words (a browse, or everything), and unless a
// filter asks for pages (WorksOnly), the hits are the works' and
// collections' own documents:
// one per work, newest first, as for a text query sorted by
// SearchSortNewest.
//
// The total and the facets of a grouped text query count works (the
// distinct works of the sample) rather than documents; without words they
// count the documents listed (one per work unless a filter asks for
// pages).
func (q *SearchQuery) Grouped() bool { return q.Group && !q.Browse() && !q.Everything() }

// WorksOnly reports whether q matches only the documents of works and
// collections themselves (not of their pages): a grouped query without
// words whose filters do not ask for pages (a Kind of fileset, or a
// Format, which only pages have; see Grouped).
func (q *SearchQuery) WorksOnly() bool {
	return q.Group && q.Kind != KindFileSet && q.Format == "" && q.blank()
}

// blank reports whether q has nothing to match: no words (an empty Text,
// or only spaces) and no Filters.
func (q *SearchQuery) blank() bool { return strings.TrimSpace(q.Text) == "" && len(q.Filters) == 0 }

// ByKey reports whether q's hits are ordered by key, newest first:
// sorted by SearchSortNewest, or under the default order without words
// (only Filters, or facet terms: nothing to rank).
func (q *SearchQuery) ByKey() bool {
	if q.Sort == SearchSortNewest {
		return true
	}
	if q.Sort != "" && q.Sort != SearchSortRelevance {
		return false
	}
	if strings.TrimSpace(q.Text) == "" {
		return true
	}
	terms, err := q.Terms()
	return err == nil && !slices.ContainsFunc(terms, func(t SearchTerm) bool { return !t.Not && t.Field != SearchFieldFacet })
}

// The orders of search hits (SearchQuery.Sort).
const (
	// SearchSortRelevance, the default: the best first within windows of
	// the newest SearchWindow matches (see SearchCursor).
	SearchSortRelevance = "relevance"
	// SearchSortNewest: the most recently added first, across every
	// match. A window's hits are ordered by key, newest first, and the
	// windows follow each other by key, so the order is exact at every
	// depth, at the cost of a relevance page; a hit's Score is then its
	// key.
	SearchSortNewest = "newest"
	// SearchSortDate: the earliest date first (of the hit's work's
	// record: SearchDoc.DateLo), and SearchSortDateDesc the latest
	// (DateHi); hits without a date last, by key. Like relevance, the
	// order is exact within each window of the newest SearchWindow
	// matches, which follow each other by key: exact whenever at most
	// SearchWindow documents match. A hit's Score is then -DateLo, or
	// DateHi, or SearchUndated.
	SearchSortDate     = "date"
	SearchSortDateDesc = "date-desc"
	// SearchSortTitle: by the title of the hit's work's record, A to Z
	// (its first letters and digits: SearchTitleKey), untitled last; exact
	// within each window as the date sorts are. A hit's Score is then the
	// negated key, or SearchUntitled.
	SearchSortTitle = "title"
)

// SearchUndated is the Score of a hit without a date under a date sort,
// below every year's.
const SearchUndated = -100000

// SearchSorts returns the orders a search offers, the default first.
func SearchSorts() []string {
	return []string{SearchSortRelevance, SearchSortNewest, SearchSortDate, SearchSortDateDesc, SearchSortTitle}
}

// CheckSearchSort returns EINVALID, naming the orders there are, for a
// sort that is not one of SearchSorts ("" is the default).
func CheckSearchSort(sort string) error {
	if sort == "" || slices.Contains(SearchSorts(), sort) {
		return nil
	}
	return Errorf(EINVALID, "sort must be one of %s, not %q.", strings.Join(SearchSorts(), ", "), clip(sort, 40))
}

// SearchReader is what a signed-in caller's search, browse, facets and
// counts include beyond public view: exactly the documents the access
// policy (policy.go) lets that caller read, decided in the statement
// from each document's resources row, so that a window and its counts
// hold the caller's documents and no others. Repository.SearchReader
// makes one from the request's caller.
//
// A document whose row is live is shown when its effective access is
// public now, or authenticated now (to any signed-in caller); or, at
// any visibility, embargoed or not, when the caller deposited the root
// work of its work's chain of parents (User), or holds a viewer role or
// stronger on a work of that chain (a request for access granted, until
// it ends) or on a collection that a work of that chain, or the collection
// itself, belongs to or is nested in, up to MaxCollectionNesting levels
// (Collections). The owner and role tests cost a look-up of the
// document's work and its parents and of their collections, made only
// for documents not already shown by their access.
type SearchReader struct {
	// All shows every live document: administrators, the system, and a
	// viewer role (or stronger) on the whole repository.
	All bool
	// User is the caller's user key.
	User int64
	// Collections are the keys of the collections (and works) the caller
	// holds a viewer role or stronger on now, ascending.
	Collections []int64
}

// SearchReader returns who a search within tx is for, from the caller of
// ctx (see SearchQuery.Reader): nil for an anonymous caller; otherwise
// what the caller may read beyond public view, from the caller's grants
// (one statement, none for administrators and the system).
func (r *Repository) SearchReader(ctx context.Context, tx ReadTx) (*SearchReader, error) {
	g := r.guard(tx, CallerFrom(ctx))
	if g.all() {
		return &SearchReader{All: true}, nil
	}
	if g.c.User == 0 {
		return nil, nil
	}
	gs, err := g.myGrants(ctx)
	if err != nil {
		return nil, err
	}
	out := &SearchReader{User: g.c.User}
	for _, gr := range gs {
		if !gr.Role.Includes(RoleViewer) {
			continue
		}
		if gr.Resource == 0 {
			return &SearchReader{All: true}, nil
		}
		out.Collections = append(out.Collections, gr.Resource)
	}
	slices.Sort(out.Collections)
	out.Collections = slices.Compact(out.Collections)
	return out, nil
}

// Browse reports whether q browses a collection rather than searching
// text: its Text is empty (or only spaces) and it has a Collection filter.
// A browse matches every document of the collection's direct members
// (their metadata and the text of their pages) in public view, under the
// same visibility rules and the Kind and Format filters of a text query,
// and nothing when the collection itself is not in public view;
// hits come newest member first (by the member's key, descending) and,
// within a member, by key (its own metadata, then its pages in the order
// they were made), with a Score of 0 and no matched terms in the Snippet
// (the beginning of the document's text instead). A browse cursor is the
// position of its last hit: Window holds the hit's Work, Key its Key.
//
// A browse costs what a text query costs: its facets are counted over
// the first SearchWindow+1 matches (exact up to SearchWindow, estimated
// above, scaling by the span of member keys the sample covers within the
// span of the collection's member keys), and a page reads at most its
// hits after the cursor, so a collection of a million members costs what
// one of a hundred does.
func (q *SearchQuery) Browse() bool {
	return q.Collection != 0 && q.blank()
}

// Everything reports whether q lists every document rather than
// searching text: its Text is empty (or only spaces) and it has no
// Collection. It matches every document the caller may read, under the
// Kind and Format filters, newest first whatever q.Sort says (as
// SearchSortNewest: in windows of the newest SearchWindow, each hit's
// Score its key), with the beginning of the document's text as its
// Snippet, and costs what a search does.
func (q *SearchQuery) Everything() bool {
	return q.Collection == 0 && q.blank()
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
	// Matches is, for a work of a grouped query (SearchQuery.Grouped),
	// how many of its pages match within the window it was ranked in;
	// Pages are the best of them, at most SearchGroupPages, best first,
	// each with its Key, Work, Kind, Format and Score (no title or
	// snippet).
	Matches int64
	Pages   []SearchHit
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
	// scaled up to the key range of the index (see
	// SearchResult.estimateFacets), and Estimated is true.
	Total       int64
	Collections []FacetCount // Value is the collection's key in decimal
	Kinds       []FacetCount
	Formats     []FacetCount
	// Decades counts the matches by the decade of their work's record's
	// earliest year (Value its first year in decimal, "1850"); matches
	// whose work has no date are not counted.
	Decades []FacetCount
	// Metadata counts the matches by the values of their work's record
	// for each metadata facet of SearchQuery.FacetSet, in its order (a
	// facet without values too): grouped queries count works, the others
	// documents, as Decades does; matches whose work has no value are not
	// counted.
	Metadata  []FacetValues
	Estimated bool

	// sampleSpan and keySpan are the key spans of the facets' sample and
	// of the index up to the sample's top (FacetSampleSpan, FacetKeySpan).
	sampleSpan, keySpan int64
}

// SearchReadTx queries the search index.
type SearchReadTx interface {
	// Search returns a page of the hits q.Reader may read (public ones
	// for none). A q.Text without any word is EINVALID; an empty one
	// browses a collection (SearchQuery.Browse) or lists everything
	// (SearchQuery.Everything).
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
	// MaxSearchQueryBytes is the most bytes the text of one query may
	// hold (SearchQuery.Text, as typed).
	MaxSearchQueryBytes = 1024
	// MaxSearchTerms is the most words and phrases one query may hold.
	MaxSearchTerms = 32
	// MaxSearchPhraseTokens is the most tokens (SearchTokens, counted as
	// in SearchTokenCount) one word or phrase of a query may hold.
	MaxSearchPhraseTokens = 32
	// MaxSearchTokens is the most tokens all the words and phrases of one
	// query may hold together.
	MaxSearchTokens = 64
	// DefaultSearchTimeout is how long a backend lets one search
	// statement run, unless configured otherwise (see searchlimits.go).
	DefaultSearchTimeout = 5 * time.Second
	// SearchFacetLimit is the most values one facet lists.
	SearchFacetLimit = 100
	// SearchWindow is the most matches one window ranks (see
	// SearchCursor), and the most matches whose total and facets are
	// counted exactly (see SearchResult).
	SearchWindow = 1000
	// MaxSearchText is how many bytes of a document's Title and of its
	// Body are kept (PostgreSQL cannot index a tsvector above 1 MiB).
	MaxSearchText = 256 << 10
	// SearchGroupPages is the most pages a work of a grouped query lists
	// (SearchHit.Pages).
	SearchGroupPages = 8
	// SearchGroupWindows is the most windows one page of a grouped query
	// reads (two for one of documents).
	SearchGroupWindows = 4
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
	// Not makes the term one that must not occur (a leading -).
	Not bool
	// Alt makes the term an alternative to the one before it (OR between
	// them): one of them must occur.
	Alt bool
	// Field restricts the term to one field of a record (searchfields.go):
	// SearchFieldTitle, SearchFieldCreator or SearchFieldSubject, whose
	// Text is words as for any term, or SearchFieldDate, whose Text is a
	// span of years (Years). Empty, the term matches anywhere.
	// SearchFieldFacet makes it a facet filter (searchfacets.go): Facet
	// names the facet and Text is the value it must hold.
	Field string
	// Facet is the name of the facet of a facet term (Field
	// SearchFieldFacet); empty for any other term.
	Facet string
}

// SearchGroups splits terms into what a document must match: groups, all
// of which must match, each of alternatives any one of which matches
// (one term unless OR joined several); and the terms that must not occur.
func SearchGroups(terms []SearchTerm) (groups [][]SearchTerm, not []SearchTerm) {
	for _, t := range terms {
		switch {
		case t.Not:
			not = append(not, t)
		case t.Alt && len(groups) > 0:
			groups[len(groups)-1] = append(groups[len(groups)-1], t)
		default:
			groups = append(groups, []SearchTerm{t})
		}
	}
	return groups, not
}

// ParseSearchText splits what a user typed into terms, all of which must
// match (see SearchGroups). The syntax has five devices and nothing else:
//
//   - "double quotes" around words make a phrase (an unclosed quote runs
//     to the end);
//   - a trailing * makes the word before it (or a phrase's last word) a
//     prefix: shelf* matches shelfmark;
//   - a leading - before a word or a quoted phrase leaves out what holds
//     it: whales -ships (a dash inside a word, as in self-evident, is
//     text);
//   - OR, in capitals, between two words or phrases, matches either:
//     whales OR dolphins north finds what holds north and whales or
//     dolphins. An OR with nothing to join (first, last, or beside a
//     left-out term) is the word or;
//   - title:, creator:, subject: or date: (in any case) before a word or
//     a quoted phrase, with or without a space between, restricts it to
//     that field of a record (searchfields.go): creator:"herman melville",
//     -subject:fiction; date: takes years (date:1851, date:1850..1860,
//     date:..1860; ParseSearchYears), and a field with nothing after it
//     or a date: that is no span of years is EINVALID.
//
// Every other character is text: AND, NOT, NEAR and a lower-case or are
// words like any other, and :, ( and ) separate words as spaces do (a
// colon after any other word too). A term without a letter or a digit (a
// lone *, a dash) is dropped; a text left without a term to find (none,
// or only left-out ones) is EINVALID, and so is one past the limits of
// searchlimits.go (its bytes, terms, and tokens per term and in all),
// naming the limit.
func ParseSearchText(s string) ([]SearchTerm, error) { return parseSearchText(s, nil, nil) }

// parseSearchText is ParseSearchText where a word name:value, for one of
// facets, is a facet term (SearchFieldFacet) of that value (a phrase's
// text, or a word's; a trailing * is part of it), and extra terms (facet
// filters) follow the text's; with extra, the text may be empty.
func parseSearchText(s string, facets []string, extra []SearchTerm) ([]SearchTerm, error) {
	if len(s) > MaxSearchQueryBytes {
		return nil, searchLimitError(LimitSearchQueryBytes, MaxSearchQueryBytes,
			"The search text is %d bytes long; at most %d are allowed.", len(s), MaxSearchQueryBytes)
	}
	s = CleanSearchText(s)
	var terms []SearchTerm
	not, or := false, false // a - before the next term; an OR before it
	field := ""             // a field before the next term
	facet := ""             // with field SearchFieldFacet, its facet
	var bad error           // a field term that is not one
	add := func(text string, prefix bool) {
		if field == SearchFieldFacet {
			if prefix {
				text += "*"
			}
			if text = FacetValue(text); text == "" {
				bad = cmp.Or(bad, error(Errorf(EINVALID, "%s: needs a value after it (%s:value, or %s:\"a value\").", facet, facet, facet)))
				not, field = false, ""
				return
			}
			prefix = false
		}
		if field == SearchFieldDate {
			if prefix {
				text += "*"
			}
			lo, hi, err := ParseSearchYears(text)
			if err != nil {
				bad = cmp.Or(bad, err)
				not, field = false, ""
				return
			}
			text, prefix = FormatSearchYears(lo, hi), false
		}
		if strings.IndexFunc(text, isWordRune) < 0 {
			not, field = false, ""
			return
		}
		t := SearchTerm{Text: strings.TrimSpace(text), Prefix: prefix, Not: not, Field: field}
		if field == SearchFieldFacet {
			t.Facet = facet
		}
		field = ""
		if or {
			if !t.Not && len(terms) > 0 && !terms[len(terms)-1].Not {
				t.Alt = true
			} else { // nothing to join: the word or
				terms = append(terms, SearchTerm{Text: "OR"})
			}
		}
		terms = append(terms, t)
		not, or = false, false
	}
	for i := 0; i < len(s); {
		switch c, size := utf8.DecodeRuneInString(s[i:]); {
		case unicode.IsSpace(c):
			// any space, not only ASCII: a word ends at every rune
			// unicode.IsSpace takes (below), so one must be stepped over
			// here, or the loop would not move on (U+00A0, U+2003, ...)
			i += size
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
			switch {
			case word == "-" && i < len(s) && s[i] == '"': // -"a phrase"
				not = true
				continue
			case word == "OR" && !or && len(terms) > 0:
				or = true // joins the terms either side (add)
				continue
			case len(word) > 1 && word[0] == '-' && word[1] != '-':
				if r, _ := utf8.DecodeRuneInString(word[1:]); isWordRune(r) {
					not, word = true, word[1:]
				}
			}
			if f, fc, rest, ok := searchFieldOf(word, facets); ok && field == "" {
				field, facet, word = f, fc, rest
				if rest == "" {
					continue // the term after it: title: moby, title:"moby dick"
				}
			}
			trimmed := strings.TrimRight(word, "*")
			add(trimmed, len(trimmed) < len(word))
		}
	}
	if or { // an OR that nothing followed
		terms = append(terms, SearchTerm{Text: "OR"})
	}
	terms = append(terms, extra...)
	if bad != nil {
		return nil, bad
	}
	if field == SearchFieldFacet {
		return nil, Errorf(EINVALID, "%s: needs a value after it (%s:value, or %s:\"a value\").", facet, facet, facet)
	}
	if field != "" {
		return nil, searchFieldError(field)
	}
	if len(terms) == 0 {
		return nil, Errorf(EINVALID, "The search text has no words: give at least one word (letters or digits).")
	}
	if !slices.ContainsFunc(terms, func(t SearchTerm) bool { return !t.Not }) {
		return nil, Errorf(EINVALID, "The search text only leaves words out (-word): give at least one word to find.")
	}
	if err := checkSearchLimits(terms); err != nil {
		return nil, err
	}
	if err := countFacetTerms(terms); err != nil {
		return nil, err
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

// Facets numbered in the rows a backend's search statement returns (the
// first column), folded by SearchPager.Facet. FacetSampleSpan and
// FacetKeySpan are no facets: they carry, in the count column, the key
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
	FacetDecade
	// FacetMeta is the number of the first metadata facet counted
	// (SearchQuery.FacetSet's MetadataFacets, in order): the ith is
	// FacetMeta+i.
	FacetMeta = 100
)

// SearchStatement is what the next statement of a search asks a backend
// for (see SearchPager).
type SearchStatement struct {
	// Top is the highest key of the window to read (the newest
	// SearchWindow visible matches at or below it); 0 for the newest
	// window. The backend reads the window's matches and one more below
	// them (the sample, at most SearchWindow+1 matches).
	Top int64
	// After is the position within the window after which the hits
	// begin; nil for its beginning.
	After *SearchCursor
	// Hits is how many hits to return, the best after After (0 or more).
	Hits int
	// Facets asks for the total, the spans and the facets, counted over the
	// sample. Top is then 0.
	Facets bool
}

// SearchPager holds the paging logic both backends share: it hands out
// the statements one search runs (one per window it reads, at most two
// for a page, since a window holds more than a page; and one for the
// facets of a later page) and folds what they return into the result.
type SearchPager struct {
	q       *SearchQuery
	browse  bool
	limit   int
	res     *SearchResult
	docs    []SearchHit // a grouped query's documents (Hit), by work later
	windows []int64     // the window of each hit
	round   int         // hits before the current statement's
	// the current statement's window row
	n, lo, hi int64
	// sample is the size of the sample the facets were counted over
	sample int64
}

// Start returns the statements of q, in order; after each, the backend
// reports what it returned with Window (once), Hit and Facet, before
// asking for the next.
func (p *SearchPager) Start(q *SearchQuery) iter.Seq[SearchStatement] {
	p.q, p.limit = q, SearchLimit(q.Limit)
	p.res = &SearchResult{Hits: make([]SearchHit, 0, p.limit+1)}
	p.res.Metadata = metadataResult(q)
	return func(yield func(SearchStatement) bool) {
		var top int64
		var after *SearchCursor
		if q.After != nil {
			top = q.After.Window
			if q.After.Key != 0 {
				after = q.After
			}
		}
		facets := q.Facets
		windows := 2
		if q.Grouped() {
			windows = SearchGroupWindows
		}
		for range windows {
			st := SearchStatement{Top: top, After: after, Hits: p.limit + 1 - len(p.res.Hits), Facets: facets && top == 0}
			facets = facets && !st.Facets
			p.round, p.n, p.lo, p.hi = len(p.res.Hits), 0, 0, 0
			if !yield(st) {
				return
			}
			if st.Facets {
				p.sample = p.n
			}
			p.sortRound()
			if top == 0 {
				top = p.hi
			}
			for len(p.windows) < len(p.res.Hits) {
				p.windows = append(p.windows, top)
			}
			if len(p.res.Hits) > p.limit || p.n <= SearchWindow || p.lo <= 1 {
				break
			}
			top, after = p.lo-1, nil
		}
		if facets { // a later page that asks for the facets
			if yield(SearchStatement{Facets: true}) {
				p.sample = p.n
			}
		}
	}
}

// StartBrowse returns the one statement of a browse (q.Browse()): After
// (from q.After, a browse cursor), Hits (the page size and one more) and
// Facets as q asks; Top is unused. The backend reports its hits with Hit,
// in any order, and its facets with Facet: the total over the sample (the
// first SearchWindow+1 matches of the browse, from its beginning), the
// sample's span of member keys (FacetSampleSpan) and the span from the
// collection's lowest member key to the sample's highest (FacetKeySpan).
func (p *SearchPager) StartBrowse(q *SearchQuery) SearchStatement {
	p.q, p.limit, p.browse = q, SearchLimit(q.Limit), true
	p.res = &SearchResult{Hits: make([]SearchHit, 0, p.limit+1), Metadata: metadataResult(q)}
	return SearchStatement{After: q.After, Hits: p.limit + 1, Facets: q.Facets}
}

// Window reports the window row of a statement: the sample's size (at
// most SearchWindow+1) and the window's lowest and highest keys.
func (p *SearchPager) Window(n, lo, hi int64) { p.n, p.lo, p.hi = n, lo, hi }

// Hit reports a hit of a statement, in any order: for a grouped text
// query (SearchQuery.Grouped), one of the documents shown for the works
// Group reports.
func (p *SearchPager) Hit(h SearchHit) {
	if p.q.Grouped() {
		p.docs = append(p.docs, h)
		return
	}
	p.res.Hits = append(p.res.Hits, h)
}

// Group reports a work of a grouped text query, in any order: its key,
// its score and the number of its pages that match (SearchHit.Matches).
func (p *SearchPager) Group(work int64, score float64, matches int64) {
	p.res.Hits = append(p.res.Hits, SearchHit{Key: work, Work: work, Kind: KindWork, Score: score, Matches: matches})
}

// fillGroups gives each work of a grouped page its best document's title,
// kind, format and snippet, and its best pages.
func (p *SearchPager) fillGroups() {
	slices.SortFunc(p.docs, byScore)
	at := make(map[int64]int, len(p.res.Hits))
	for i, h := range p.res.Hits {
		at[h.Work] = i
	}
	seen := make(map[int64]bool, len(p.res.Hits))
	for _, d := range p.docs {
		i, ok := at[d.Work]
		if !ok {
			continue
		}
		g := &p.res.Hits[i]
		if !seen[d.Work] { // the best document speaks for its work
			seen[d.Work] = true
			g.Title, g.Snippet, g.Format = d.Title, d.Snippet, d.Format
			if d.Key == d.Work {
				g.Kind = d.Kind
			}
		}
		if d.Key != d.Work && len(g.Pages) < SearchGroupPages {
			g.Pages = append(g.Pages, SearchHit{Key: d.Key, Work: d.Work, Kind: d.Kind, Format: d.Format, Score: d.Score})
		}
	}
}

// Facet reports one row of the facets: the total (FacetTotal, count in
// n), a span, or one value of a facet (a facet's values in its order).
func (p *SearchPager) Facet(facet int, value string, n int64) {
	r := p.res
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
	case FacetDecade:
		r.Decades = append(r.Decades, fc)
	case FacetKeySpan:
		r.keySpan = n
	default:
		if i := facet - FacetMeta; i >= 0 && i < len(r.Metadata) {
			r.Metadata[i].Values = append(r.Metadata[i].Values, fc)
		}
	}
}

// metadataResult is the metadata facets of q's result before their
// values are reported: one a metadata facet of q.FacetSet, with q.Facets;
// nil without.
func metadataResult(q *SearchQuery) []FacetValues {
	if !q.Facets {
		return nil
	}
	var out []FacetValues
	for _, f := range MetadataFacets(q.FacetSet) {
		out = append(out, FacetValues{Name: f.Name})
	}
	return out
}

// sortRound orders the hits of the last statement by score (byScore).
func (p *SearchPager) sortRound() { slices.SortFunc(p.res.Hits[p.round:], byScore) }

// byScore orders hits by score, better first, and then by key.
func byScore(a, b SearchHit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// Result returns the page: the first Limit hits and, when there were
// more, Next after the last; and the facets, estimated when the sample was
// full.
func (p *SearchPager) Result() *SearchResult {
	r := p.res
	if p.q.Grouped() {
		p.fillGroups()
	}
	if p.browse {
		slices.SortFunc(r.Hits, func(a, b SearchHit) int {
			if c := cmp.Compare(b.Work, a.Work); c != 0 {
				return c
			}
			return cmp.Compare(a.Key, b.Key)
		})
		if len(r.Hits) > p.limit {
			last := r.Hits[p.limit-1]
			r.Next = &SearchCursor{Window: last.Work, Key: last.Key}
			r.Hits = r.Hits[:p.limit]
		}
	} else if len(r.Hits) > p.limit {
		last := r.Hits[p.limit-1]
		r.Next = &SearchCursor{Window: p.windows[p.limit-1], Score: last.Score, Key: last.Key}
		if p.windows[p.limit] != p.windows[p.limit-1] {
			// the page ends its window: the next begins the next window
			r.Next = &SearchCursor{Window: p.windows[p.limit]}
		}
		r.Hits = r.Hits[:p.limit]
	}
	if p.q.Facets {
		// a grouped query counts works: the sample is full when its
		// documents fill it
		full := r.Total > SearchWindow || p.q.Grouped() && p.sample > SearchWindow
		r.estimateFacets(full)
	}
	return r
}

// estimateFacets finishes the facets of a sample of at most
// SearchWindow+1 matches: when it is full (more than SearchWindow), the total is
// estimated as if the matches were as dense below the sample as within it
// (n sample matches spanning keys lo to hi, the index's keys from min to
// hi: 1 + (n−1)·(hi−min)/(hi−lo)), every count is scaled by the same
// factor, and Estimated is set. Scaling keeps the order of the values.
func (r *SearchResult) estimateFacets(full bool) {
	if !full {
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
	lists := [][]FacetCount{r.Kinds, r.Formats, r.Collections, r.Decades}
	for _, m := range r.Metadata {
		lists = append(lists, m.Values)
	}
	for _, f := range lists {
		for i := range f {
			f[i].Count = scale(f[i].Count)
		}
	}
}
