package http

// The web archive's rows of the authorization matrix (matrix_test.go):
// captures are read as the WARC files that hold them (the file of each
// read target's page), so a capture list shows a target's captures to
// those who may read the target, and a capture or its record is 404 to
// the others; the link index spans every crawl, so it is open to
// administrators (and callers with a role on the whole repository, which
// the matrix has none of) and 404 to everyone else.

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/shelfmark/shelfmark"
)

// webMatrixTarget is the crawl stored in a read target's page.
type webMatrixTarget struct {
	home    string       // the crawl's home page URL
	capture int64        // its first capture
	file    shelfmark.ID // the WARC file that holds it
}

// webMatrixTargets holds the crawl of each read target, made on first use.
var webMatrixTargets struct {
	sync.Mutex
	m map[*tset]*webMatrixTarget
}

// webTarget returns the crawl of the cell's target, storing and indexing
// it in the target's page on first use.
func (m *matrix) webTarget(c *cell) *webMatrixTarget {
	webMatrixTargets.Lock()
	defer webMatrixTargets.Unlock()
	if wt := webMatrixTargets.m[c.t]; wt != nil {
		return wt
	}
	if webMatrixTargets.m == nil {
		webMatrixTargets.m = map[*tset]*webMatrixTarget{}
	}
	host := strings.ReplaceAll(c.t.kind.name, " ", "-") + ".matrix.example.org"
	e := m.e
	fs, err := e.repo.FindResource(context.Background(), c.t.FS)
	if err != nil {
		e.t.Fatal(err)
	}
	f := e.webIndexWARC(nil, fs, host+".warc.gz", webCrawl(e.t, host))
	wt := &webMatrixTarget{home: "http://" + host + "/", file: f.file}
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	page, err := e.repo.WebCaptures(sys, shelfmark.WebCaptureQuery{SURT: "org,example,matrix," + strings.ReplaceAll(c.t.kind.name, " ", "-") + ")/", Limit: 1})
	if err != nil || len(page.Captures) != 1 {
		e.t.Fatalf("the matrix crawl of %s: %v, %d captures", c.t, err, len(page.Captures))
	}
	wt.capture = page.Captures[0].ID
	webMatrixTargets.m[c.t] = wt
	return wt
}

// linkIndex is the rule of the link index: administrators only, 404 to
// the others (a role on a collection is no role on every crawl).
func linkIndex(w *who, _ *tset) int {
	switch {
	case w.bad:
		return 401
	case w.admin:
		return 200
	}
	return 404
}

// webListed checks that a list shows the target's capture exactly when
// the caller may read the target.
func (m *matrix) webListed(c *cell, r *response) string {
	id := m.webTarget(c).capture
	found := strings.Contains(string(r.Body), `"id":`+strconv.FormatInt(id, 10)+`,`) ||
		strings.Contains(string(r.Body), `href="/web/captures/`+strconv.FormatInt(id, 10)+`"`)
	if want := c.w.reads(c.t); found != want {
		return fmt.Sprintf("the list shows the target's capture %d: %v, want %v", id, found, want)
	}
	return ""
}

// webRows are the rows of the API's web archive routes (web.go).
func (m *matrix) webRows() []row {
	return []row{
		{"GET /api/v1/web/captures", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/api/v1/web/captures?match=domain&url=" + url.QueryEscape(m.webTarget(c).home)}
		}, rule: public(200), check: m.webListed}}},
		{"GET /api/v1/web/captures/{id}", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: fmt.Sprintf("/api/v1/web/captures/%d", m.webTarget(c).capture)}
		}, rule: readTarget(200)}}},
		{"GET /api/v1/web/record", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/api/v1/web/record?at=2024&url=" + url.QueryEscape(m.webTarget(c).home)}
		}, rule: readTarget(200), check: func(c *cell, r *response) string {
			if string(r.Body) != webHome1 {
				return fmt.Sprintf("the payload %.100q, want the home page's", r.Body)
			}
			return ""
		}}}},
		{"GET /api/v1/web/links", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/api/v1/web/links?url=" + url.QueryEscape(m.webTarget(c).home+"a")}
		}, rule: linkIndex}}},
		{"GET /api/v1/web/top", []probe{
			{name: "domains", build: func(*cell) req { return req{method: "GET", path: "/api/v1/web/top"} }, rule: linkIndex},
			{name: "pages of a domain", build: func(*cell) req { return req{method: "GET", path: "/api/v1/web/top?domain=example.org&n=3"} }, rule: linkIndex},
		}},
	}
}

// uiWebRows are the rows of the web archive's pages (ui_web.go): public
// pages that list what the caller may read; a capture's page, and the
// page of a WARC file's captures, are read as the WARC file is.
func (m *matrix) uiWebRows() []row {
	return []row{
		{"GET /web", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/web?match=host&url=" + url.QueryEscape(m.webTarget(c).home)}
		}, rule: public(200), check: m.webListed}}},
		{"GET /web/domains/{domain}", []probe{{target: "read", build: func(c *cell) req {
			m.webTarget(c)
			return req{method: "GET", path: "/web/domains/example.org"}
		}, rule: public(200), check: m.webListed}}},
		{"GET /web/captures/{id}", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: fmt.Sprintf("/web/captures/%d", m.webTarget(c).capture)}
		}, rule: readTarget(200)}}},
		{"GET /web/files/{id}", []probe{{target: "read", build: func(c *cell) req {
			return req{method: "GET", path: "/web/files/" + string(m.webTarget(c).file)}
		}, rule: readTarget(200), check: func(c *cell, r *response) string {
			if r.Status == 200 {
				return m.webListed(c, r)
			}
			return ""
		}}}},
	}
}
