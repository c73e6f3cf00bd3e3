package http

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// matrixTiles is the tiles archive of the matrix's pages: one 8 × 8 tile.
func matrixTiles(t testing.TB) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	info, _ := json.Marshal(shelfmark.TileInfo{Width: 8, Height: 8, Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: []int{1}}}})
	for name, body := range map[string][]byte{shelfmark.TileInfoName: info, "0,0,8,8/8,8/0/default.jpg": nil} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err == nil && body == nil {
			err = jpeg.Encode(w, image.NewGray(image.Rect(0, 0, 8, 8)), nil)
		} else if err == nil {
			_, err = w.Write(body)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageProbes probe a page's image service (iiif_image.go): read as the
// page is, offered to every origin only when public; a work's is 404 to
// whoever asks.
func (m *matrix) imageProbes(suffix string, ok int, notFound rule) []probe {
	return []probe{
		{name: "page", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.FS) + "/image" + suffix} },
			rule: readTarget(ok), check: func(c *cell, r *response) string {
				if ok != 200 {
					return ""
				}
				cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
				if want := c.t.kind.eff == "public"; cors != want {
					return fmt.Sprintf("Access-Control-Allow-Origin * sent: %v, want %v", cors, want)
				}
				if private := strings.HasPrefix(r.Header.Get("Cache-Control"), "private"); private == cors {
					return fmt.Sprintf("Cache-Control %q with Access-Control-Allow-Origin * %v", r.Header.Get("Cache-Control"), cors)
				}
				return ""
			}},
		{name: "work", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.W) + "/image" + suffix} },
			rule: notFound},
	}
}

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
					// a signed-in caller's manifest shows what its roles
					// allow: private to it, even of a public work
					cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
					if want := c.t.kind.eff == "public" && !c.w.signed; cors != want {
						return fmt.Sprintf("Access-Control-Allow-Origin * sent: %v, want %v", cors, want)
					}
					if private := strings.HasPrefix(r.Header.Get("Cache-Control"), "private"); private == cors {
						return fmt.Sprintf("Cache-Control %q with Access-Control-Allow-Origin * %v", r.Header.Get("Cache-Control"), cors)
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
		// the image service of a page (iiif_image.go)
		{"GET /iiif/{id}/image", m.imageProbes("", 303, notFound)},
		{"GET /iiif/{id}/image/info.json", m.imageProbes("/info.json", 200, notFound)},
		{"GET /iiif/{id}/image/{region}/{size}/{rotation}/{file}", m.imageProbes("/0,0,8,8/8,8/0/default.jpg", 200, notFound)},
		// search inside a book (iiif_search.go): read as the work is
		{"GET /iiif/{id}/search/1", m.iiifSearchProbes(1, notFound)},
		{"GET /iiif/{id}/search/2", m.iiifSearchProbes(2, notFound)},
		// the work as one PDF (iiif_pdf.go): read as the work is
		{"GET /iiif/{id}/pdf", m.iiifPDFProbes(notFound)},
		// all its files as one ZIP (iiif_zip.go): read as the work is
		{"GET /iiif/{id}/zip", m.iiifZipProbes(notFound)},
	}
}

// iiifSearchProbes probe a work's search inside (as its manifest: 404
// when hidden, offered to every origin only when public) and a file
// set's (404 to whoever asks).
func (m *matrix) iiifSearchProbes(version int, notFound rule) []probe {
	return []probe{
		{name: "work", target: "read", build: func(c *cell) req {
			return req{method: "GET", path: fmt.Sprintf("/iiif/%s/search/%d?q=page", c.t.W, version)}
		}, rule: readTarget(200), check: func(c *cell, r *response) string {
			cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
			if want := c.t.kind.eff == "public" && !c.w.signed; cors != want {
				return fmt.Sprintf("Access-Control-Allow-Origin * sent: %v, want %v", cors, want)
			}
			if private := strings.HasPrefix(r.Header.Get("Cache-Control"), "private"); private == cors {
				return fmt.Sprintf("Cache-Control %q with Access-Control-Allow-Origin * %v", r.Header.Get("Cache-Control"), cors)
			}
			if !strings.Contains(string(r.Body), `"AnnotationPage"`) && !strings.Contains(string(r.Body), `"sc:AnnotationList"`) {
				return "not a search response"
			}
			return ""
		}},
		{name: "file set", target: "read", build: func(c *cell) req {
			return req{method: "GET", path: fmt.Sprintf("/iiif/%s/search/%d?q=page", c.t.FS, version)}
		}, rule: notFound},
	}
}
