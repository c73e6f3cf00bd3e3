package http

import (
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// uiReadRows are the matrix rows of the routes of ui_read.go and
// ui_search.go: the pages are public; what they list is what the caller
// may read (a collection page), or the public works alone (search).
func (m *matrix) uiReadRows() []row {
	links := func(r *response, id shelfmark.ID) bool {
		return strings.Contains(string(r.Body), `href="/works/`+string(id))
	}
	return []row{
		{"GET /{$}", []probe{{build: func(*cell) req { return req{method: "GET", path: "/"} }, rule: public(200),
			check: func(c *cell, r *response) string {
				if !strings.Contains(string(r.Body), `href="/collections/`+string(m.C)+`"`) {
					return "the home page does not list the public collection C"
				}
				return ""
			}}}},
		{"GET /collections/{id}", []probe{
			{name: "collection", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/collections/" + string(m.C)} },
				rule: public(200), check: func(c *cell, r *response) string {
					// the members the caller sees are those it may read
					if got, want := links(r, c.t.W), c.w.reads(c.t); got != want {
						return fmt.Sprintf("the collection page lists the work: %v, want %v", got, want)
					}
					if got, want := strings.Contains(string(r.Body), c.t.titleWord+"<"), c.w.reads(c.t); got != want {
						return fmt.Sprintf("the collection page shows the work's title: %v, want %v", got, want)
					}
					return ""
				}},
			// a work's id: its own page for those who may read it, 404 for
			// the others
			{name: "work", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/collections/" + string(c.t.W)} },
				rule: readTarget(303)},
		}},
		{"GET /search", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/search?q=" + c.t.titleWord}
		}, rule: public(200), check: func(c *cell, r *response) string {
			// search lists the work exactly when the caller may read it
			// (shelfmark.SearchReader)
			if got, want := links(r, c.t.W), c.w.reads(c.t); got != want {
				return fmt.Sprintf("the search page lists the work: %v, want %v", got, want)
			}
			return ""
		}}}},
	}
}
