package shelfmark

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Search facets are a repository setting: an ordered list of facets
// (SearchFacet), each a name, a label and the metadata predicates its
// values come from, or, without predicates, one of the facets every
// search counts from its documents (kind, format, collection, decade).
// The order is the order the interface shows them in.
//
// A metadata facet's values are indexed by the SearchIndexer with each
// work's and collection's record (recordFacets): the literals and IRIs
// of its predicates, each value once a record, trimmed, its spaces
// folded, at most MaxFacetValueBytes bytes and MaxFacetValuesPerWork
// values a facet. They are stored twice, in the same transaction as the
// record's document:
//
//   - as rows (work, facet, value) of the table search_facets, which the
//     facet counts read: the values of the works of a search's sample (the
//     same sample of at most SearchWindow+1 matches the other facets are
//     counted over, and so only documents the reader may read), one
//     look-up of the table's primary key a work, in the search's one
//     statement (sqlstore.FacetRows);
//   - as one hidden token a value in the document's full-text index
//     (SearchFacetToken, beside the date tokens of searchfields.go), which
//     a filter matches: a filter (language:eng on the query line, or a
//     SearchFilter) is a term of the query like a word, so it is found
//     through the full-text index in the same bounded windows as words
//     and costs what a word costs, whatever the number of works holding
//     the value; a join against search_facets would instead read every
//     work holding a common value, or test every match of the words.
//
// As with the other field terms, a filter matches the record of a work,
// not the text of its pages: language:eng whale finds the English works
// whose record mentions whale.
//
// Changing the list changes what is indexed: the indexer keeps a
// fingerprint of the list it indexed with (the counter
// search_facets_config) and, when it starts with another list, reads
// every work and collection again from the beginning of the change
// sequence, in its batches, in the background; until it has caught up,
// a changed facet counts and filters the records indexed so far.
// Servers sharing a database must be given the same list.

// SearchFacet is one facet of a repository's search.
type SearchFacet struct {
	// Name is how filters and the API name the facet (language:eng,
	// f=language:eng, facets.language): a lower-case letter, then
	// lower-case letters, digits and dashes, at most 32 in all.
	Name string
	// Label is what the interface shows for a facet its catalog does not
	// name (a facet an administrator added).
	Label string
	// Predicates are the full IRIs of the metadata predicates the facet's
	// values come from; none for a built-in facet (BuiltinSearchFacets).
	Predicates []string
}

// Metadata reports whether f counts metadata values (it has predicates)
// rather than being one of the built-in facets.
func (f SearchFacet) Metadata() bool { return len(f.Predicates) > 0 }

// The built-in facets, counted from the documents themselves.
const (
	SearchFacetKind       = "kind"
	SearchFacetFormat     = "format"
	SearchFacetCollection = "collection"
	SearchFacetDecade     = "decade"
)

// BuiltinSearchFacets returns the names of the facets every search
// counts from its documents rather than from metadata.
func BuiltinSearchFacets() []string {
	return []string{SearchFacetCollection, SearchFacetDecade, SearchFacetFormat, SearchFacetKind}
}

// Limits of search facets.
const (
	// MaxSearchFacets is the most facets a repository's list may hold.
	MaxSearchFacets = 16
	// MaxSearchFacetPredicates is the most predicates one facet may name.
	MaxSearchFacetPredicates = 8
	// MaxFacetValueBytes is how many bytes of a value are kept (cut at a
	// character boundary), as indexed and as filtered by.
	MaxFacetValueBytes = 200
	// MaxFacetValuesPerWork is the most values of one facet a record is
	// indexed with (the first ones, in the order of its metadata).
	MaxFacetValuesPerWork = 32
	// MaxSearchFilters is the most facet filters one search may hold
	// (SearchQuery.Filters and the facet terms of its text together).
	MaxSearchFilters = 8
)

// dcPair is the dc: and dcterms: IRIs of a Dublin Core element.
func dcPair(name string) []string { return []string{NSDC + name, NSDCTerms + name} }

// DefaultSearchFacets returns the facets of a repository that names none:
// creator, subject, language and type (from dc: and dcterms:), then the
// built-in collection, decade, format and kind.
func DefaultSearchFacets() []SearchFacet {
	return []SearchFacet{
		{Name: "creator", Label: "Creator", Predicates: dcPair("creator")},
		{Name: "subject", Label: "Subject", Predicates: dcPair("subject")},
		{Name: "language", Label: "Language", Predicates: dcPair("language")},
		{Name: "type", Label: "Type", Predicates: dcPair("type")},
		{Name: SearchFacetCollection, Label: "Collection"},
		{Name: SearchFacetDecade, Label: "Decade"},
		{Name: SearchFacetFormat, Label: "Format"},
		{Name: SearchFacetKind, Label: "Kind"},
	}
}

// facetName is the form of SearchFacet.Name.
var facetName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// CheckSearchFacets returns EINVALID, naming what is wrong, for a list
// that is not one a repository may have: more than MaxSearchFacets
// facets, a name not of the form of SearchFacet.Name or given twice, a
// facet without predicates that is not built in, a predicate that is not
// an absolute IRI, or more than MaxSearchFacetPredicates of them.
func CheckSearchFacets(facets []SearchFacet) error {
	if len(facets) > MaxSearchFacets {
		return Errorf(EINVALID, "At most %d search facets are allowed, not %d.", MaxSearchFacets, len(facets))
	}
	seen := map[string]bool{}
	for _, f := range facets {
		if !facetName.MatchString(f.Name) {
			return Errorf(EINVALID, "The facet name %q is not one: a lower-case letter, then lower-case letters, digits and dashes (at most 32).", clip(f.Name, 40))
		}
		if seen[f.Name] {
			return Errorf(EINVALID, "The facet %q is named twice.", f.Name)
		}
		seen[f.Name] = true
		if !f.Metadata() {
			if !slices.Contains(BuiltinSearchFacets(), f.Name) {
				return Errorf(EINVALID, "The facet %q names no predicate and is neither one of the default facets (creator, subject, language, type) nor a built-in one (%s); give it predicates (%s=http://purl.org/dc/terms/%s).",
					f.Name, strings.Join(BuiltinSearchFacets(), ", "), f.Name, f.Name)
			}
			continue
		}
		if slices.Contains(BuiltinSearchFacets(), f.Name) {
			return Errorf(EINVALID, "The facet %q is built in and takes no predicates.", f.Name)
		}
		if len(f.Predicates) > MaxSearchFacetPredicates {
			return Errorf(EINVALID, "The facet %q names %d predicates; at most %d are allowed.", f.Name, len(f.Predicates), MaxSearchFacetPredicates)
		}
		for _, p := range f.Predicates {
			if !fullIRI(p) {
				return Errorf(EINVALID, "The facet %q: the predicate %q is not a full IRI.", f.Name, clip(p, 80))
			}
		}
	}
	return nil
}

// ParseSearchFacets reads a list of facets as an administrator writes it
// (the serve command's --search-facets): facets separated by semicolons
// (or new lines), each one of
//
//   - name: a facet of DefaultSearchFacets (creator, subject, language,
//     type) or a built-in one (collection, decade, format, kind);
//   - name=IRI|IRI…: a facet of the values of those predicates, labelled
//     with its name;
//   - name(Label)=IRI|IRI…: the same with a label of its own.
//
// An empty spec is DefaultSearchFacets. The list must pass
// CheckSearchFacets.
func ParseSearchFacets(spec string) ([]SearchFacet, error) {
	if strings.TrimSpace(spec) == "" {
		return DefaultSearchFacets(), nil
	}
	defaults := DefaultSearchFacets()
	var out []SearchFacet
	for entry := range strings.FieldsFuncSeq(spec, func(r rune) bool { return r == ';' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		head, preds, hasPreds := strings.Cut(entry, "=")
		head = strings.TrimSpace(head)
		var f SearchFacet
		if name, label, ok := strings.Cut(head, "("); ok && strings.HasSuffix(label, ")") {
			f.Name, f.Label = strings.TrimSpace(name), strings.TrimSpace(strings.TrimSuffix(label, ")"))
		} else {
			f.Name = head
		}
		if hasPreds {
			for p := range strings.SplitSeq(preds, "|") {
				if p = strings.TrimSpace(p); p != "" {
					f.Predicates = append(f.Predicates, p)
				}
			}
			if len(f.Predicates) == 0 {
				return nil, Errorf(EINVALID, "The facet %q has an = but no predicate after it.", clip(f.Name, 40))
			}
		} else if i := slices.IndexFunc(defaults, func(d SearchFacet) bool { return d.Name == f.Name }); i >= 0 {
			f.Predicates, f.Label = defaults[i].Predicates, cmp.Or(f.Label, defaults[i].Label)
		}
		if f.Label == "" && f.Name != "" {
			r, size := utf8.DecodeRuneInString(f.Name)
			f.Label = string(unicode.ToUpper(r)) + f.Name[size:]
		}
		out = append(out, f)
	}
	if err := CheckSearchFacets(out); err != nil {
		return nil, err
	}
	return out, nil
}

// fullIRI reports whether p is an absolute IRI a facet may name: a
// scheme, then something after its colon, no spaces or control
// characters, at most MaxIRIBytes bytes.
func fullIRI(p string) bool {
	scheme, rest, ok := strings.Cut(p, ":")
	if !ok || rest == "" || len(p) > MaxIRIBytes || !facetScheme.MatchString(scheme) {
		return false
	}
	return !strings.ContainsFunc(p, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '|' || r == ';' })
}

// facetScheme is the form of an IRI's scheme.
var facetScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// FormatSearchFacets writes facets as ParseSearchFacets reads them.
func FormatSearchFacets(facets []SearchFacet) string {
	parts := make([]string, 0, len(facets))
	for _, f := range facets {
		s := f.Name
		if f.Label != "" {
			s += "(" + f.Label + ")"
		}
		if f.Metadata() {
			s += "=" + strings.Join(f.Predicates, "|")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ";")
}

// MetadataFacets returns the facets of facets that count metadata values
// (SearchFacet.Metadata), in order, at most MaxSearchFacets.
func MetadataFacets(facets []SearchFacet) []SearchFacet {
	var out []SearchFacet
	for _, f := range facets {
		if f.Metadata() && len(out) < MaxSearchFacets {
			out = append(out, f)
		}
	}
	return out
}

// searchFacetsFingerprint is a number that changes when the metadata
// facets of a list change (their names and predicates, not their labels
// or order), never 0: the indexer compares it with the one it indexed
// with.
func searchFacetsFingerprint(facets []SearchFacet) int64 {
	meta := MetadataFacets(facets)
	slices.SortFunc(meta, func(a, b SearchFacet) int { return cmp.Compare(a.Name, b.Name) })
	h := fnv.New64a()
	for _, f := range meta {
		fmt.Fprintf(h, "%s\x00%s\x01", f.Name, strings.Join(f.Predicates, "\x00"))
	}
	// 31 bits: the counter is moved by a difference, which must not overflow
	return int64(h.Sum64()>>33) | 1
}

// SearchFacetValue is one value of a record for one facet.
type SearchFacetValue struct {
	Facet, Value string
}

// FacetValue returns v as a facet stores and filters it: cleaned
// (CleanSearchText), trimmed, every run of spaces one space, and cut to
// MaxFacetValueBytes bytes at a character boundary (then trimmed again).
func FacetValue(v string) string {
	v = strings.Join(strings.Fields(CleanSearchText(v)), " ")
	if len(v) > MaxFacetValueBytes {
		cut := MaxFacetValueBytes
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = strings.TrimSpace(v[:cut])
	}
	return v
}

// SearchFacetToken returns the hidden token a record holding value for
// facet is indexed under, and a filter by it matches: f and the decimal
// digits of a 64-bit hash of the facet's name and the value
// (FacetValue, folded to lower case, so that language:ENG finds eng).
// Like the date tokens (y1851), it is one word to both indexes' parsers
// and no stemmer changes it; two values share a token only by a hash
// collision, one in 2^64 a pair.
func SearchFacetToken(facet, value string) string {
	h := fnv.New64a()
	h.Write([]byte(facet))
	h.Write([]byte{0})
	h.Write([]byte(strings.ToLower(FacetValue(value))))
	return "f" + strconv.FormatUint(h.Sum64(), 10)
}

// SearchFacetTokens returns the hidden tokens of values, separated by
// spaces.
func SearchFacetTokens(values []SearchFacetValue) string {
	toks := make([]string, 0, len(values))
	for _, v := range values {
		toks = append(toks, SearchFacetToken(v.Facet, v.Value))
	}
	return strings.Join(toks, " ")
}

// recordFacets returns the values of a record's metadata for the
// metadata facets of facets: for each facet, the values of its
// predicates' objects (a literal's text, an IRI as written), in the
// order of the predicates and then of the metadata, each FacetValue once
// and not empty, at most MaxFacetValuesPerWork a facet.
func recordFacets(fields []Field, facets []SearchFacet) []SearchFacetValue {
	byPred := make(map[string][]Term, len(fields))
	for _, f := range fields {
		byPred[f.Predicate] = append(byPred[f.Predicate], f.Objects...)
	}
	var out []SearchFacetValue
	for _, f := range MetadataFacets(facets) {
		seen := map[string]bool{}
		for _, p := range f.Predicates {
			for _, o := range byPred[p] {
				v := FacetValue(o.Value)
				if v == "" || seen[v] || len(seen) >= MaxFacetValuesPerWork {
					continue
				}
				seen[v] = true
				out = append(out, SearchFacetValue{Facet: f.Name, Value: v})
			}
		}
	}
	return out
}

// SearchFilter narrows a search to the works whose record holds Value
// (as FacetValue makes it, in any case) for the metadata facet Facet.
type SearchFilter struct {
	Facet, Value string
}

// ParseSearchFilter reads a filter written name:value (the f parameter
// of the search page and the API). A name that is not one of facets'
// metadata facets is EINVALID naming them (searchFacetError).
func ParseSearchFilter(s string, facets []SearchFacet) (SearchFilter, error) {
	name, value, ok := strings.Cut(s, ":")
	f := SearchFilter{Facet: strings.ToLower(strings.TrimSpace(name)), Value: FacetValue(value)}
	if !ok || f.Value == "" {
		return f, Errorf(EINVALID, "A facet filter is written name:value (language:eng), not %q; the facets are %s.", clip(s, 60), facetNames(facets))
	}
	if !slices.ContainsFunc(MetadataFacets(facets), func(m SearchFacet) bool { return m.Name == f.Facet }) {
		return f, searchFacetError(f.Facet, facets)
	}
	return f, nil
}

// ParseSearchFilters reads the facet filters of a search's f parameters
// (ParseSearchFilter each): EINVALID, naming the facets, for one that is
// not one, and for more than MaxSearchFilters.
func ParseSearchFilters(fs []string, facets []SearchFacet) ([]SearchFilter, error) {
	if len(fs) > MaxSearchFilters {
		return nil, Errorf(EINVALID, "%d facet filters are given; at most %d are allowed.", len(fs), MaxSearchFilters)
	}
	var out []SearchFilter
	for _, f := range fs {
		sf, err := ParseSearchFilter(f, facets)
		if err != nil {
			return nil, err
		}
		out = append(out, sf)
	}
	return out, nil
}

// facetNames lists the names of the metadata facets of facets, or says
// there are none.
func facetNames(facets []SearchFacet) string {
	var names []string
	for _, f := range MetadataFacets(facets) {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "none (this repository has no metadata facets)"
	}
	return strings.Join(names, ", ")
}

// searchFacetError is the EINVALID of a filter on a facet there is not.
func searchFacetError(name string, facets []SearchFacet) error {
	return Errorf(EINVALID, "There is no facet %q to filter by; the facets are %s.", clip(name, 40), facetNames(facets))
}

// queryFacetNames returns the names a word of a query's text may name as
// a facet filter (language:eng): the metadata facets of facets, but not
// a search field (title:, creator:, subject:, date: keep searching words
// of their field; their facets are filtered by SearchQuery.Filters).
func queryFacetNames(facets []SearchFacet) []string {
	var out []string
	for _, f := range MetadataFacets(facets) {
		if !slices.Contains(SearchFields(), f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// Terms returns the terms q's text and filters must match: its Text
// parsed as ParseSearchText does, where a word name:value or
// name:"a value" for a metadata facet of q.FacetSet (one that is not a
// search field) is a facet term, then one facet term for each of
// q.Filters. A filter on a facet q.FacetSet does not hold, or more than
// MaxSearchFilters facet terms in all, is EINVALID; so is a text without
// a term to find, unless filters are given (the text may then be empty).
func (q *SearchQuery) Terms() ([]SearchTerm, error) {
	var extra []SearchTerm
	for _, f := range q.Filters {
		if !slices.ContainsFunc(MetadataFacets(q.FacetSet), func(m SearchFacet) bool { return m.Name == f.Facet }) {
			return nil, searchFacetError(f.Facet, q.FacetSet)
		}
		v := FacetValue(f.Value)
		if v == "" {
			return nil, Errorf(EINVALID, "The filter on %s has no value.", f.Facet)
		}
		extra = append(extra, SearchTerm{Text: v, Field: SearchFieldFacet, Facet: f.Facet})
	}
	return parseSearchText(q.Text, queryFacetNames(q.FacetSet), extra)
}

// SearchFieldFacet is the Field of a facet term: its Facet names the
// facet and its Text is the value (FacetValue), which it matches whole
// through the hidden token of SearchFacetToken.
const SearchFieldFacet = "facet"

// FacetToken returns the hidden token a facet term matches
// (SearchFacetToken); "" for another term.
func (t SearchTerm) FacetToken() string {
	if t.Field != SearchFieldFacet {
		return ""
	}
	return SearchFacetToken(t.Facet, t.Text)
}

// countFacetTerms refuses more than MaxSearchFilters facet terms.
func countFacetTerms(terms []SearchTerm) error {
	n := 0
	for _, t := range terms {
		if t.Field == SearchFieldFacet {
			n++
		}
	}
	if n > MaxSearchFilters {
		return Errorf(EINVALID, "The search has %d facet filters; at most %d are allowed.", n, MaxSearchFilters)
	}
	return nil
}

// FacetValues is the counts of one metadata facet of a search
// (SearchResult.Metadata).
type FacetValues struct {
	// Name is the facet's (SearchFacet.Name).
	Name string
	// Values are its most frequent values, at most SearchFacetLimit, most
	// first and then in byte order.
	Values []FacetCount
}
