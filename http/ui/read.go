package ui

// This file serves the interface's home and collection pages; the search
// page is in search.go. Both ask the engine for what they list
// (ListResources, FindResource, ListMembers), with the request's caller on
// the context, so a page shows exactly what the API would give the same
// caller: one keyset page of bounded size, its items' titles read with the
// page in one statement.

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// Sizes of the lists of the home and collection pages.
const (
	// homeCollections and homeWorks are how many collections and recent
	// works the home page lists.
	homeCollections = 24
	homeWorks       = 12
	// collectionPageSize is how many members a collection page lists.
	collectionPageSize = 50
	// readTitleMax is how many characters of a title a list shows.
	readTitleMax = 300
	// readDescriptionMax is how many characters of a description a
	// collection page shows.
	readDescriptionMax = 2000
)

// uiReadRoutes are the routes of this file and of search.go.
func (s *Handler) uiReadRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/{$}", Handle: s.uiWrap(s.homePage)},
		{Method: "GET", Pattern: "/collections/{id}", Handle: s.uiWrap(s.collectionPage)},
		{Method: "GET", Pattern: "/search", Handle: s.uiWrap(s.searchPage)},
	}
}

// readItem is one resource in a list of a page.
type readItem struct {
	ID    shelfmark.ID
	Kind  shelfmark.Kind
	Title string
	// URL is the resource's page.
	URL string
	// KindLabel names the kind; VisLabel the visibility when it is not
	// public (signed-in callers see such items, and the list says so).
	KindLabel, VisLabel string
}

// readItems turns a page of the engine into list items, titled in the
// page's language.
func readItems(items []*shelfmark.Resource, p *uiPage) []readItem {
	out := make([]readItem, 0, len(items))
	for _, it := range items {
		ri := readItem{ID: it.ID, Kind: it.Kind, Title: readTitle(it.Metadata, p.Lang), URL: readURL(it.Kind, it.ID),
			KindLabel: readKindLabel(p, it.Kind), VisLabel: readVisLabel(p, it.Visibility)}
		if ri.Title == "" {
			ri.Title = p.T("read.untitled")
		}
		out = append(out, ri)
	}
	return out
}

// readKindLabel names a kind of resource in the page's language.
func readKindLabel(p *uiPage, k shelfmark.Kind) string {
	switch k {
	case shelfmark.KindCollection:
		return p.T("read.kind.collection")
	case shelfmark.KindWork:
		return p.T("read.kind.work")
	case shelfmark.KindFileSet:
		return p.T("read.kind.page")
	}
	return string(k)
}

// readVisLabel names a visibility other than public ("" for public).
func readVisLabel(p *uiPage, v shelfmark.Visibility) string {
	switch v {
	case shelfmark.Public:
		return ""
	case shelfmark.Authenticated:
		return p.T("read.vis.authenticated")
	}
	return p.T("read.vis.private")
}

// readURL is the page of a collection or work.
func readURL(kind shelfmark.Kind, id shelfmark.ID) string {
	if kind == shelfmark.KindCollection {
		return "/collections/" + string(id)
	}
	return "/works/" + string(id)
}

// readTitle picks a resource's title from its metadata: a dcterms:title
// or dc:title in the page's language, else one without a language, else
// the first; "" when there is none. A long title is cut for lists.
func readTitle(stmts []shelfmark.Statement, lang string) string {
	return readValue(stmts, lang, readTitleMax, shelfmark.NSDCTerms+"title", shelfmark.NSDC+"title")
}

// readValue picks the literal of the first of predicates (dcterms before
// dc) that the metadata has, preferring lang, then no language, cut to
// max characters.
func readValue(stmts []shelfmark.Statement, lang string, max int, predicates ...string) string {
	for _, p := range predicates {
		best, rank := "", 0
		for _, st := range stmts {
			if st.Predicate != p || st.Object.Kind != shelfmark.Literal || strings.TrimSpace(st.Object.Value) == "" {
				continue
			}
			r := 1
			switch l := st.Object.Lang; {
			case l == lang || strings.HasPrefix(l, lang+"-"):
				r = 3
			case l == "":
				r = 2
			}
			if r > rank {
				best, rank = st.Object.Value, r
			}
		}
		if rank > 0 {
			return cutText(best, max)
		}
	}
	return ""
}

// cutText shortens s to at most n characters, with an ellipsis.
func cutText(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimSpace(s[:i]) + "…"
}

// homeData is the content of the home page.
type homeData struct {
	Collections []readItem
	// MoreCollections is the address of the next page of collections.
	MoreCollections string
	Works           []readItem
}

// homePage handles GET /: the collections the caller may see (newest
// first, keyset-paged by ?after=), the newest public works and a search
// box.
func (s *Handler) homePage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	after := shelfmark.Cursor(r.URL.Query().Get("after"))
	colls, err := s.deps.Resources.ListResources(ctx, shelfmark.KindCollection, shelfmark.PageRequest{After: after, Limit: homeCollections, Metadata: true})
	if err != nil {
		return err
	}
	// the recent works are the public ones, for everyone: asked for as
	// anonymous, the policy judges each row by its own visibility, without
	// a statement per row the caller might see by a role or as depositor
	public := shelfmark.WithCaller(ctx, shelfmark.Anonymous())
	works, err := s.deps.Resources.ListResources(public, shelfmark.KindWork, shelfmark.PageRequest{Limit: homeWorks, Metadata: true})
	if err != nil {
		return err
	}
	p := s.cachedPage(w, r, "")
	p.Title = p.Site
	p.Nav, p.public = "home", true // an anonymous caller is shown public collections and works only
	d := &homeData{Collections: readItems(colls.Items, p), Works: readItems(works.Items, p)}
	if colls.Next != "" {
		d.MoreCollections = "/?after=" + url.QueryEscape(string(colls.Next)) + "#collections"
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "home", p)
}

// collectionData is the content of a collection page.
type collectionData struct {
	ID          shelfmark.ID
	Title       string
	Description string
	// VisLabel names the collection's visibility when it is not public.
	VisLabel string
	Members  []readItem
	// Next is the address of the next page of members; First that of
	// the first page, when this is a later one.
	Next, First string
	// Kinds and Formats are the facets of what the collection holds in
	// public view (its members' documents: their metadata and the text of
	// their pages), each value leading to the search page filtered by it;
	// Estimated says the counts are estimates. Browse is the search page
	// listing all of it.
	Kinds, Formats []searchFacet
	Estimated      bool
	Browse         string
	// Editable says the caller may change the collection (its page then
	// links to its roles and to a new sub-collection); writers may also
	// deposit into it, as far as their roles allow.
	Editable bool
	// Usage is how often the collection's works were looked at and taken
	// (COUNTER's totals), nil when the server counts none.
	Usage *shelfmark.UsageTotals
}

// collectionPage handles GET /collections/{id}?after=: the collection's
// title and description and one keyset page of its members (as the
// engine lets the caller see them), with a search box for the collection
// and the facets of what it holds that the caller may read (collectionFacets). A page deep in a collection of millions costs what the
// first does. A work's id is sent to its own page; what the caller may
// not read is a 404 page, a deleted collection a 410 tombstone page.
func (s *Handler) collectionPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := shelfmark.ID(r.PathValue("id"))
	if id.Check() != nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No collection has the id %q.", kit.TruncateParam(string(id)))
	}
	res, err := s.deps.Resources.FindResource(ctx, id)
	if err != nil {
		return err
	}
	switch res.Kind {
	case shelfmark.KindCollection:
	case shelfmark.KindWork:
		http.Redirect(w, r, "/works/"+string(id), http.StatusSeeOther)
		return nil
	default:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a collection.", id, res.Kind)
	}
	after := r.URL.Query().Get("after")
	members, err := s.deps.Resources.ListMembers(ctx, id, shelfmark.PageRequest{After: shelfmark.Cursor(after), Limit: collectionPageSize, Metadata: true})
	if err != nil {
		return err
	}
	p := s.cachedPage(w, r, "")
	p.public = res.VisibilityAt(s.now()) == shelfmark.Public
	d := &collectionData{ID: id, Title: readTitle(res.Metadata, p.Lang),
		Description: readValue(res.Metadata, p.Lang, readDescriptionMax, shelfmark.NSDCTerms+"description", shelfmark.NSDC+"description", shelfmark.NSDCTerms+"abstract"),
		Members:     readItems(members.Items, p), VisLabel: readVisLabel(p, res.Visibility)}
	if d.Title == "" {
		d.Title = p.T("read.untitled")
	}
	if p.MayWrite() {
		d.Editable = s.deps.Resources.CheckEdit(ctx, id) == nil
	}
	p.Title = d.Title
	if members.Next != "" {
		d.Next = "/collections/" + string(id) + "?after=" + url.QueryEscape(string(members.Next))
	}
	if after != "" {
		d.First = "/collections/" + string(id)
	}
	if err := s.collectionFacets(r, res, p, d); err != nil {
		return err
	}
	d.Usage = s.usageTotals(r, id)
	p.Data = d
	return s.render(w, r, http.StatusOK, "collection", p)
}

// collectionFacets fills the facets of a collection page: the kinds and
// formats of the documents of the collection's members the caller may
// read, as the search engine's browse of the collection counts them (the
// works search shows the caller: public ones to an anonymous reader;
// exact up to shelfmark.SearchWindow documents and estimated
// above, from a bounded sample: one statement whatever the collection's
// size). Without a search index there are none.
func (s *Handler) collectionFacets(r *http.Request, res *shelfmark.Resource, p *uiPage, d *collectionData) error {
	if s.deps.Storage == nil {
		return nil
	}
	key, err := s.deps.Resources.IDs().Key(res.ID)
	if err != nil {
		return err
	}
	q := shelfmark.SearchQuery{Collection: key, Limit: 1, Facets: true, Now: s.now()}
	var found *shelfmark.SearchResult
	if err := s.deps.Storage.View(r.Context(), func(tx shelfmark.ReadTx) (err error) {
		if q.Reader, err = s.deps.Resources.SearchReader(r.Context(), tx); err != nil {
			return err
		}
		found, err = tx.Search(r.Context(), q)
		return err
	}); err != nil {
		return err
	}
	v := url.Values{"collection": {string(res.ID)}}
	d.Estimated = found.Estimated
	for _, f := range found.Kinds {
		d.Kinds = append(d.Kinds, searchFacet{Label: readKindLabel(p, shelfmark.Kind(f.Value)), Count: f.Count, URL: searchURL(v, "kind", f.Value)})
	}
	for _, f := range found.Formats {
		if f.Value != "" {
			d.Formats = append(d.Formats, searchFacet{Label: f.Value, Count: f.Count, URL: searchURL(v, "format", f.Value)})
		}
	}
	if found.Total > 0 {
		d.Browse = searchURL(v)
	}
	return nil
}
