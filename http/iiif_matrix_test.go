package http

import (
	"fmt"
	"strings"
)

// iiifRows are the matrix rows of the routes of iiif.go: a work's
// manifest is read as the work is (404 when hidden), and only a public
// work's is offered to every origin; a file set has no manifest (404 to
// whoever asks); a collection's IIIF Collection lists the members the
// caller may read.
func (m *matrix) iiifRows() []row {
	notFound := func(w *who, _ *tset) int {
		if w.bad {
			return 401
		}
		return 404
	}
	return []row{
		{"GET /iiif/{id}/manifest", []probe{
			{name: "work", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.W) + "/manifest"} },
				rule: readTarget(200), check: func(c *cell, r *response) string {
					cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
					if want := c.t.kind.eff == "public"; cors != want {
						return fmt.Sprintf("Access-Control-Allow-Origin * sent: %v, want %v", cors, want)
					}
					if !strings.Contains(string(r.Body), `"type":"Manifest"`) {
						return "not a manifest"
					}
					return ""
				}},
			{name: "file set", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.FS) + "/manifest"} },
				rule: notFound},
		}},
		{"GET /iiif/{id}/collection", []probe{
			{name: "collection", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(m.C) + "/collection"} },
				rule: public(200), check: func(c *cell, r *response) string {
					listed := strings.Contains(string(r.Body), "/iiif/"+string(c.t.W)+"/manifest")
					if want := c.w.reads(c.t); listed != want {
						return fmt.Sprintf("the collection lists the work: %v, want %v", listed, want)
					}
					return ""
				}},
			{name: "work", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.W) + "/collection"} },
				rule: notFound},
		}},
	}
}
