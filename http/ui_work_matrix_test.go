package http

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// uiWorkRows are the matrix rows of the routes of ui_work.go: a work's
// page, its citations and its History page are read as the work is (404
// when hidden); restoring a version takes a curator; the sitemap, its
// pages and robots.txt are public.
func (m *matrix) uiWorkRows() []row {
	get := func(p string) func(*cell) req { return func(*cell) req { return req{method: "GET", path: p} } }
	work := func(rest string) func(*cell) req {
		return func(c *cell) req { return req{method: "GET", path: "/works/" + string(c.t.W) + rest} }
	}
	return []row{
		{"GET /works/{id}", []probe{
			{name: "work", target: "read", build: work(""), rule: readTarget(200), check: htmlPageOf("work-title")},
			{name: "file set", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/works/" + string(c.t.FS)} },
				rule: readTarget(http.StatusSeeOther)},
		}},
		{"GET /works/{id}/history", []probe{{target: "read", build: work("/history"), rule: readTarget(200), check: htmlPageOf("versions-h")}}},
		{"POST /works/{id}/history/{v}/restore", []probe{{target: "fresh", build: func(c *cell) req {
			c.e.preserveAt(time.Now(), c.t.W) // its first version, to restore
			return formReq("/works/"+string(c.t.W)+"/history/1/restore", url.Values{"version": {m.versionOf(c.t.W)}})
		}, rule: writeTarget(http.StatusSeeOther, 404, (*who).deletesWork)}}},
		{"GET /works/{id}/cite.bib", []probe{{target: "read", build: work("/cite.bib"), rule: readTarget(200)}}},
		{"GET /works/{id}/cite.ris", []probe{{target: "read", build: work("/cite.ris"), rule: readTarget(200)}}},
		{"GET /sitemap.xml", []probe{{build: get("/sitemap.xml"), rule: public(200)}}},
		{"GET /sitemaps/{file}", []probe{{build: get("/sitemaps/1.xml"), rule: public(200), check: checkSitemap}}},
		{"GET /robots.txt", []probe{{build: get("/robots.txt"), rule: public(200)}}},
	}
}

// htmlPageOf checks that a page has the element id.
func htmlPageOf(id string) func(*cell, *response) string {
	return func(_ *cell, r *response) string {
		if !bytesContains(r.Body, `id="`+id+`"`) {
			return "the page lacks #" + id
		}
		return ""
	}
}

// checkSitemap checks that the sitemap lists public works only.
func checkSitemap(c *cell, r *response) string {
	for _, t := range c.m.reads {
		listed := bytesContains(r.Body, "/works/"+string(t.W)+"<")
		if public := t.kind.eff == "public"; listed != public {
			return "sitemap lists " + t.String() + ": " + map[bool]string{true: "yes", false: "no"}[listed]
		}
	}
	return ""
}

func bytesContains(b []byte, s string) bool { return strings.Contains(string(b), s) }
