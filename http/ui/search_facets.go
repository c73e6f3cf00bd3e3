package ui

// The search page's facets in the repository's order (kit.Deps.SearchFacets):
// the built-in ones (kind, format, decade, collection) and the metadata
// ones (creator, subject, language, type and those an administrator
// named), each value a link that adds its filter (f=name:value) to the
// search, and each filter in force removable.

import (
	"net/url"
	"slices"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// searchFacetGroup is one facet as the page shows it.
type searchFacetGroup struct {
	// ID makes the id of its heading (facet-NAME).
	ID     string
	Label  string
	Values []searchFacet
}

// searchFacetLabel names a facet: from the catalog for the facets the
// repository has by default, else the label its administrator gave it.
func searchFacetLabel(p *uiPage, f shelfmark.SearchFacet) string {
	switch f.Name {
	case shelfmark.SearchFacetKind:
		return p.T("search.facet.kind")
	case shelfmark.SearchFacetFormat:
		return p.T("search.facet.format")
	case shelfmark.SearchFacetCollection:
		return p.T("search.facet.collection")
	case shelfmark.SearchFacetDecade:
		return p.T("search.facet.decade")
	case "creator":
		return p.T("search.facet.creator")
	case "subject":
		return p.T("search.facet.subject")
	case "language":
		return p.T("search.facet.language")
	case "type":
		return p.T("search.facet.type")
	}
	return f.Label
}

// facetValueLabel shows a value of a metadata facet: a language's code
// by the language's name in the page's language (as a work page names
// it), a DCMI type (its IRI or its name, StillImage or "Still Image") by
// its name from the catalog, any other value as it is.
func facetValueLabel(p *uiPage, f shelfmark.SearchFacet, value string) string {
	if slices.ContainsFunc(f.Predicates, func(pr string) bool { return strings.HasSuffix(pr, "/language") }) {
		if name := labels.LanguageName(p.Lang, value); name != "" {
			return name
		}
	}
	if slices.ContainsFunc(f.Predicates, func(pr string) bool { return strings.HasSuffix(pr, "/type") }) {
		short := strings.ReplaceAll(strings.TrimPrefix(value, "http://purl.org/dc/dcmitype/"), " ", "")
		for _, t := range dcmiTypes {
			if strings.EqualFold(t.code, short) {
				return p.T(t.key)
			}
		}
	}
	return value
}

// searchFilterParams are the f parameters of v: the facet filters in force.
func searchFilterParams(v url.Values) []string { return v["f"] }

// withFilters returns v with its f parameters replaced by fs.
func withFilters(v url.Values, fs []string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	if len(fs) == 0 {
		delete(out, "f")
	} else {
		out["f"] = fs
	}
	return out
}

// searchFacetGroups lists the facets of a result in the repository's
// order: the built-in ones already made (d.Kinds …), and each metadata
// facet's values, each linking to the search with its filter added (or,
// active when in force, shown without a link). A facet without values is
// left out.
func searchFacetGroups(p *uiPage, d *searchPageData, v url.Values, facets []shelfmark.SearchFacet, res *shelfmark.SearchResult) []searchFacetGroup {
	meta := map[string][]shelfmark.FacetCount{}
	for _, m := range res.Metadata {
		meta[m.Name] = m.Values
	}
	inForce := searchFilterParams(v)
	var out []searchFacetGroup
	for _, f := range facets {
		g := searchFacetGroup{ID: f.Name, Label: searchFacetLabel(p, f)}
		switch f.Name {
		case shelfmark.SearchFacetKind:
			g.Values = d.Kinds
		case shelfmark.SearchFacetFormat:
			g.Values = d.Formats
		case shelfmark.SearchFacetDecade:
			g.Values = d.Decades
		case shelfmark.SearchFacetCollection:
			g.Values = d.Collections
		}
		for _, c := range meta[f.Name] {
			param := f.Name + ":" + c.Value
			active := slices.ContainsFunc(inForce, func(x string) bool { return sameFilter(x, param) })
			u := ""
			if !active {
				u = searchURL(withFilters(v, append(slices.Clip(inForce), param)))
			}
			g.Values = append(g.Values, searchFacet{Label: facetValueLabel(p, f, c.Value), Count: c.Count, Active: active, URL: u})
		}
		if len(g.Values) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// sameFilter reports whether two f parameters filter alike (the same
// facet and value, as shelfmark.FacetValue makes it, in any case).
func sameFilter(a, b string) bool {
	an, av, _ := strings.Cut(a, ":")
	bn, bv, _ := strings.Cut(b, ":")
	return strings.EqualFold(strings.TrimSpace(an), strings.TrimSpace(bn)) && strings.EqualFold(shelfmark.FacetValue(av), shelfmark.FacetValue(bv))
}

// facetFilters lists the facet filters in force (the f parameters), each
// named by its facet and its value's label, with the address without it.
func facetFilters(p *uiPage, v url.Values, facets []shelfmark.SearchFacet) []searchFilter {
	inForce := searchFilterParams(v)
	var out []searchFilter
	for i, x := range inForce {
		name, value, _ := strings.Cut(x, ":")
		label, vlabel := name, shelfmark.FacetValue(value)
		if j := slices.IndexFunc(facets, func(f shelfmark.SearchFacet) bool { return f.Name == strings.ToLower(strings.TrimSpace(name)) }); j >= 0 {
			label, vlabel = searchFacetLabel(p, facets[j]), facetValueLabel(p, facets[j], vlabel)
		}
		rest := slices.Delete(slices.Clone(inForce), i, i+1)
		out = append(out, searchFilter{Label: p.T("search.filter.facet", label, vlabel), Remove: searchURL(withFilters(v, rest))})
	}
	return out
}
