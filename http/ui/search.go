package ui

// The interface's search page: the same engine query as GET
// /api/v1/search?group=work (what the reader may read, as the engine
// decides), with its facets, highlighted snippets, each work once with the
// pages its words were found on (each linking to that page in the viewer,
// searching the book for the words), and keyset paging through the search
// cursor. One page runs the search's statements, one more that reads the
// metadata of the hits' works (title, creator, date) and of the
// collections of the facet, and one that reads the numbers of the pages
// listed, whatever the number of hits: never a request or a statement per
// hit.

import (
	"cmp"
	"context"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// searchPageData is the content of the search page.
type searchPageData struct {
	// the form's values
	Q, Collection, Kind, Format, Sort string
	// CollectionTitle names the collection filter.
	CollectionTitle string
	// Searched is set when there are results to show (a query was run).
	Searched bool
	// Browse is set when the results list a collection without words
	// (newest members first), Everything when they list everything the
	// reader may read (no words, no collection: newest first).
	Browse, Everything bool
	// Error is the message of a query the engine refused (400).
	Error     string
	Hits      []searchPageHit
	Total     int64
	Estimated bool
	// Filters are the filters in force, each with the address without it.
	Filters []searchFilter
	// the facets, each value with the address that filters by it
	Kinds, Formats, Collections []searchFacet
	// Decades are the decades of the hits' works, in time order, each
	// linking to the search with a date: term for it.
	Decades []searchFacet
	// F are the facet filters in force (the f parameters, name:value),
	// which the form sends again.
	F []string
	// Groups are the facets in the repository's order, the built-in ones
	// above among them, each with its values (searchFacetGroups).
	Groups []searchFacetGroup
	// Sorts are the orders a search offers, each with its address (the
	// one in force Active), and Sorted says what that order is (empty for
	// a browse).
	Sorts  []searchFacet
	Sorted string
	// Next is the address of the next page; First that of the first page,
	// when this is a later one.
	Next, First string
}

// searchPageHit is one hit: a work (or collection).
type searchPageHit struct {
	URL   string
	Title string
	// Creator and Date are the work's, "" when it has none.
	Creator, Date string
	Kind          shelfmark.Kind
	// KindLabel names the kind.
	KindLabel string
	// Page is set for a hit in the text of a page: URL then leads to the
	// page inside its work (#page-<file set id>), and WorkTitle names the
	// work.
	Page      bool
	WorkTitle string
	// Thumb is the address of the thumbnail of the hit's page (its best
	// page for a work, else its first), "" when there is none to show.
	Thumb  string
	Format string
	// Snippet is escaped text with <mark> around the matches.
	Snippet template.HTML
	// Matches is how many of the work's pages the words were found on;
	// Pages those of them with a number (a place in the work's order),
	// in page order, and More how many more matched; InBook leads to the
	// best of them in the viewer, searching the book for the words.
	Matches int64
	Pages   []searchPageRef
	More    int64
	InBook  string
}

// searchPageRef is a page of a work that matched, linking into the
// viewer with the search's words.
type searchPageRef struct {
	// Number is its position in the work's order.
	Number int64
	URL    string
}

// searchFacet is one value of a facet.
type searchFacet struct {
	Label  string
	Count  int64
	URL    string
	Active bool
}

// searchFilter is a filter in force.
type searchFilter struct {
	Label  string
	Remove string
}

// searchPage handles GET /search?q=&collection=&kind=&format=&f=&after=&sort=.
// Without words it shows the form (keeping the filters, so a search box of
// a collection searches in it) and, with a collection filter, what the
// collection holds (the engine's browse: its members' documents the reader
// may read, newest first, with facets; the collection page's facets lead
// here), without one everything the reader may read, newest first; a
// query the engine refuses is the form again with its message (400), and
// so is one stopped at the search's deadline (503, with Retry-After).
func (s *Handler) searchPage(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	p := s.page(w, r, "search.title")
	p.Nav = "search"
	d := &searchPageData{Q: v.Get("q"), Collection: v.Get("collection"), Kind: v.Get("kind"), Format: v.Get("format"), Sort: v.Get("sort"),
		F: searchFilterParams(v)}
	if shelfmark.CheckSearchSort(d.Sort) != nil {
		d.Sort = "" // the form does not send a refused order again
	}
	p.Data = d
	q, err := s.searchPageQuery(v)
	if err == nil && d.Collection != "" {
		d.CollectionTitle = s.searchCollectionTitle(r.Context(), shelfmark.ID(d.Collection), p)
	}
	d.Filters = append(searchFilters(p, d, v), facetFilters(p, v, s.deps.SearchFacets)...)
	if err == nil && s.deps.Storage == nil {
		err = shelfmark.Errorf(shelfmark.EUNAVAILABLE, "Search is not available on this server.")
	}
	var res *shelfmark.SearchResult
	info := &searchInfo{meta: map[int64][]shelfmark.Statement{}, numbers: map[int64]int64{}, res: s.deps.Resources}
	if err == nil {
		err = s.deps.Storage.View(r.Context(), func(tx shelfmark.ReadTx) error {
			var err error
			if q.Reader, err = s.deps.Resources.SearchReader(r.Context(), tx); err != nil {
				return err
			}
			if res, err = tx.Search(r.Context(), q); err != nil {
				return err
			}
			return info.read(r.Context(), tx, res)
		})
	}
	if err != nil {
		status := http.StatusBadRequest
		switch {
		case shelfmark.ErrorCode(err) == shelfmark.EINVALID:
		case shelfmark.IsSearchTimeout(err):
			// stopped at the search's deadline: the form again, with the
			// advice, as 503 with Retry-After
			status = http.StatusServiceUnavailable
			kit.RetryAfter(w, err)
		default:
			return err
		}
		d.Error = shelfmark.ErrorMessage(err)
		p.Title = p.T("search.invalid")
		return s.render(w, r, status, "search", p)
	}
	if q.Browse() {
		d.Browse = true
		p.Title = p.T("search.browsetitle", d.CollectionTitle)
	} else if q.Everything() {
		d.Everything = true
	} else if strings.TrimSpace(d.Q) != "" {
		p.Title = p.T("search.titlefor", d.Q)
	}
	s.fillSearchPage(p, d, v, q, res, info)
	return s.render(w, r, http.StatusOK, "search", p)
}

// searchPageQuery reads the page's parameters into an engine query; a
// parameter the engine would refuse is EINVALID with its message.
func (s *Handler) searchPageQuery(v url.Values) (shelfmark.SearchQuery, error) {
	q := shelfmark.SearchQuery{Text: v.Get("q"), Kind: shelfmark.Kind(v.Get("kind")), Format: v.Get("format"), Now: s.now(), Facets: true, Group: true,
		FacetSet: s.deps.SearchFacets}
	filters, err := shelfmark.ParseSearchFilters(searchFilterParams(v), q.FacetSet)
	if err != nil {
		return q, err
	}
	q.Filters = filters
	if strings.TrimSpace(q.Text) != "" || len(q.Filters) > 0 {
		if _, err := q.Terms(); err != nil {
			return q, err
		}
	}
	if c := v.Get("collection"); c != "" {
		k, err := s.deps.Resources.IDs().Key(shelfmark.ID(c))
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "The collection filter must be the id of a collection: %s", shelfmark.ErrorMessage(err))
		}
		q.Collection = k
	}
	if q.Kind != "" && q.Kind != shelfmark.KindCollection && q.Kind != shelfmark.KindWork && q.Kind != shelfmark.KindFileSet {
		return q, shelfmark.Errorf(shelfmark.EINVALID, "The kind filter must be collection, work or fileset, not %q.", kit.TruncateParam(string(q.Kind)))
	}
	q.Sort = v.Get("sort")
	if err := shelfmark.CheckSearchSort(q.Sort); err != nil {
		return q, err
	}
	if a := v.Get("after"); a != "" {
		after, err := kit.DecodeSearchCursor(a)
		if err != nil {
			return q, shelfmark.Errorf(shelfmark.EINVALID, "The page address is not one this server gave out: go back to the first page of results.")
		}
		q.After = after
	}
	return q, nil
}

// searchCollectionTitle names the collection a search is filtered by, as
// far as the caller may see it (its id otherwise).
func (s *Handler) searchCollectionTitle(ctx context.Context, id shelfmark.ID, p *uiPage) string {
	res, err := s.deps.Resources.FindResource(ctx, id)
	if err != nil || res.Kind != shelfmark.KindCollection {
		return string(id)
	}
	if t := readTitle(res.Metadata, p.Lang); t != "" {
		return t
	}
	return p.T("read.untitled")
}

// searchInfo is what a results page shows beyond the engine's hits: the
// metadata of the hits' works and of the facet's collections, the
// numbers of the pages listed, and a thumbnail of each hit the reader may
// see.
type searchInfo struct {
	meta    map[int64][]shelfmark.Statement
	numbers map[int64]int64
	// thumbs is the thumbnail file of each hit, by its key
	// (HitThumbnails).
	thumbs map[int64]shelfmark.ID
	res    shelfmark.ResourceService
}

// read reads, in one statement each, the metadata of the hits' works and
// of the collections of the facet (the engine shows only what the reader
// may read, and counts only such collections), the positions of the
// pages the hits list, the first page of each work hit without one, and
// the thumbnails of the hits' pages (those the reader may see; a work
// found by its record shows the page its metadata names, else its first).
func (in *searchInfo) read(ctx context.Context, tx shelfmark.ReadTx, res *shelfmark.SearchResult) error {
	var keys, pages []int64
	seen := map[int64]bool{}
	add := func(k int64) {
		if kit.HasID(k) && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, h := range res.Hits {
		add(h.Work)
		for _, pg := range h.Pages {
			pages = append(pages, pg.Key)
		}
	}
	for _, c := range res.Collections {
		if k, err := strconv.ParseInt(c.Value, 10, 64); err == nil {
			add(k)
		}
	}
	if len(keys) > 0 {
		fields, err := tx.FieldsOf(ctx, keys)
		if err != nil {
			return err
		}
		for k, fs := range fields {
			in.meta[k] = shelfmark.StatementsOf(fs)
		}
	}
	if len(pages) > 0 {
		rows, err := tx.Resources(ctx, pages)
		if err != nil {
			return err
		}
		for _, row := range rows {
			in.numbers[row.Key] = row.Position
		}
	}
	// the works' metadata names the page that represents each
	var err error
	in.thumbs, err = in.res.HitThumbnails(ctx, tx, res.Hits, in.meta)
	return err
}

// thumb is the address of hit k's thumbnail, "" when it has none the
// reader may see.
func (in *searchInfo) thumb(k int64) string {
	if id, ok := in.thumbs[k]; ok {
		return kit.ContentURL(id)
	}
	return ""
}

// title is the title of the work or collection k in lang, "" when none.
func (in *searchInfo) title(k int64, lang string) string { return readTitle(in.meta[k], lang) }

// searchDecades lists the decade facet in time order, each value linking
// to the search narrowed by a date: term for its decade (active when the
// search holds that term already).
func searchDecades(p *uiPage, v url.Values, decades []shelfmark.FacetCount) []searchFacet {
	var out []searchFacet
	years := make([]int, 0, len(decades))
	counts := map[int]int64{}
	for _, f := range decades {
		y, err := strconv.Atoi(f.Value)
		if err != nil || y < shelfmark.MinSearchYear-1 || y > shelfmark.MaxSearchYear {
			continue
		}
		years = append(years, y)
		counts[y] = f.Count
	}
	slices.Sort(years)
	q := strings.TrimSpace(v.Get("q"))
	for _, y := range years {
		term := "date:" + shelfmark.FormatSearchYears(max(y, shelfmark.MinSearchYear), y+9)
		active := slices.Contains(strings.Fields(q), term)
		out = append(out, searchFacet{Label: p.T("search.decade", strconv.Itoa(y)), Count: counts[y], Active: active,
			URL: searchURL(v, "q", strings.TrimSpace(q+" "+term))})
	}
	return out
}

// searchSortText names an order of the hits (label) and says what it
// is (sorted), from the catalog.
func searchSortText(p *uiPage, sort string) (label, sorted string) {
	switch sort {
	case shelfmark.SearchSortNewest:
		return p.T("search.sort.newest"), p.T("search.sorted.newest")
	case shelfmark.SearchSortDate:
		return p.T("search.sort.date"), p.T("search.sorted.date")
	case shelfmark.SearchSortDateDesc:
		return p.T("search.sort.date-desc"), p.T("search.sorted.date-desc")
	case shelfmark.SearchSortTitle:
		return p.T("search.sort.title"), p.T("search.sorted.title")
	}
	return p.T("search.sort.relevance"), p.T("search.sorted")
}

// searchURL is the search page's address for v with the parameters of
// set changed ("" removes one); paging starts again unless set names
// after. The facet filters (f, any number) are kept.
func searchURL(v url.Values, set ...string) string {
	out := url.Values{}
	for _, k := range []string{"q", "collection", "kind", "format", "sort"} {
		if x := v.Get(k); x != "" {
			out.Set(k, x)
		}
	}
	if fs := searchFilterParams(v); len(fs) > 0 {
		out["f"] = fs
	}
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			out.Del(set[i])
		} else {
			out.Set(set[i], set[i+1])
		}
	}
	return "/search?" + out.Encode()
}

// searchFilters lists the filters of a search, each with the address
// without it.
func searchFilters(p *uiPage, d *searchPageData, v url.Values) []searchFilter {
	var fs []searchFilter
	if d.Collection != "" {
		title := d.CollectionTitle
		if title == "" {
			title = d.Collection
		}
		fs = append(fs, searchFilter{Label: p.T("search.filter.collection", title), Remove: searchURL(v, "collection", "")})
	}
	if d.Kind != "" {
		fs = append(fs, searchFilter{Label: p.T("search.filter.kind", readKindLabel(p, shelfmark.Kind(d.Kind))), Remove: searchURL(v, "kind", "")})
	}
	if d.Format != "" {
		fs = append(fs, searchFilter{Label: p.T("search.filter.format", d.Format), Remove: searchURL(v, "format", "")})
	}
	return fs
}

// fillSearchPage turns a result into the page's hits, facets, filters and
// paging links.
func (s *Handler) fillSearchPage(p *uiPage, d *searchPageData, v url.Values, q shelfmark.SearchQuery, res *shelfmark.SearchResult, info *searchInfo) {
	ids := s.deps.Resources.IDs()
	d.Searched = true
	d.Total, d.Estimated = res.Total, res.Estimated
	for _, h := range res.Hits {
		if !kit.HasID(h.Key) || !kit.HasID(h.Work) {
			continue // a document of no resource: nothing to link to
		}
		hit := searchPageHit{Kind: h.Kind, KindLabel: readKindLabel(p, h.Kind), Title: cutText(h.Title, readTitleMax), Format: h.Format,
			Snippet: template.HTML(kit.SnippetHTML(h.Snippet))}
		hit.Thumb = info.thumb(h.Key)
		meta := info.meta[h.Work]
		hit.Creator = readValue(meta, p.Lang, readTitleMax, shelfmark.NSDCTerms+"creator", shelfmark.NSDC+"creator")
		hit.Date = readValue(meta, p.Lang, 40, shelfmark.NSDCTerms+"date", shelfmark.NSDC+"date", shelfmark.NSDCTerms+"issued", shelfmark.NSDCTerms+"created")
		work := ids.Encode(h.Work)
		switch h.Kind {
		case shelfmark.KindFileSet:
			// a page of its own (the search was not grouped: a kind or
			// format filter without words lists pages)
			id := ids.Encode(h.Key)
			hit.Page = true
			hit.WorkTitle = info.title(h.Work, p.Lang)
			if hit.WorkTitle == "" {
				hit.WorkTitle = p.T("read.untitled")
			}
			hit.URL = "/works/" + string(work) + "?page=" + string(id) + "#page-" + string(id)
		default:
			hit.URL = readURL(h.Kind, ids.Encode(h.Key))
		}
		if hit.Title == "" {
			hit.Title = info.title(h.Work, p.Lang)
		}
		if hit.Title == "" && !hit.Page {
			hit.Title = p.T("read.untitled")
		}
		hit.Matches = h.Matches
		for i, pg := range h.Pages {
			if !kit.HasID(pg.Key) {
				continue
			}
			id := string(ids.Encode(pg.Key))
			u := url.Values{"page": {id}}
			if strings.TrimSpace(d.Q) != "" {
				u.Set("q", d.Q) // the viewer searches the book for the words
			}
			href := "/works/" + string(work) + "?" + u.Encode() + "#page-" + id
			if i == 0 {
				hit.InBook = href // the best page
			}
			// an unordered page has no number a reader would find it by
			if n := info.numbers[pg.Key]; n > 0 && n < shelfmark.UnorderedBase {
				hit.Pages = append(hit.Pages, searchPageRef{Number: n, URL: href})
			}
		}
		hit.More = max(0, h.Matches-int64(len(hit.Pages)))
		slices.SortFunc(hit.Pages, func(a, b searchPageRef) int { return cmp.Compare(a.Number, b.Number) })
		d.Hits = append(d.Hits, hit)
	}
	for _, f := range res.Kinds {
		d.Kinds = append(d.Kinds, searchFacet{Label: readKindLabel(p, shelfmark.Kind(f.Value)), Count: f.Count, Active: f.Value == d.Kind, URL: searchURL(v, "kind", f.Value)})
	}
	for _, f := range res.Formats {
		if f.Value == "" {
			continue // metadata, not a file's text
		}
		d.Formats = append(d.Formats, searchFacet{Label: f.Value, Count: f.Count, Active: f.Value == d.Format, URL: searchURL(v, "format", f.Value)})
	}
	d.Decades = searchDecades(p, v, res.Decades)
	for _, f := range res.Collections {
		k, err := strconv.ParseInt(f.Value, 10, 64)
		if err != nil || !kit.HasID(k) {
			continue
		}
		cid := string(ids.Encode(k))
		label := info.title(k, p.Lang)
		if label == "" {
			label = p.T("read.untitled")
		}
		d.Collections = append(d.Collections, searchFacet{Label: label, Count: f.Count, Active: cid == d.Collection, URL: searchURL(v, "collection", cid)})
	}
	d.Groups = searchFacetGroups(p, d, v, s.deps.SearchFacets, res)
	if !d.Browse { // a browse is newest member first, whatever the sort
		// without words (everything, or only facet filters) there is
		// nothing to rank: newest first is the default, and relevance no
		// choice
		first := shelfmark.SearchSortRelevance
		unsorted := q
		unsorted.Sort = ""
		noWords := d.Everything || unsorted.ByKey()
		if noWords {
			first = shelfmark.SearchSortNewest
		}
		for _, srt := range shelfmark.SearchSorts() {
			if noWords && srt == shelfmark.SearchSortRelevance {
				continue
			}
			active := srt == q.Sort || (q.Sort == "" || q.Sort == shelfmark.SearchSortRelevance) && srt == first
			value := srt
			if srt == first {
				value = "" // the default: the address without it
			}
			label, sorted := searchSortText(p, srt)
			d.Sorts = append(d.Sorts, searchFacet{Label: label, Active: active, URL: searchURL(v, "sort", value)})
			if active {
				d.Sorted = sorted
			}
		}
	}
	if res.Next != nil {
		d.Next = searchURL(v, "after", kit.EncodeSearchCursor(*res.Next))
	}
	if q.After != nil {
		d.First = searchURL(v)
	}
}
