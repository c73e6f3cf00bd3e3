package http

// The shapes of the leak fixture where what decides a resource's access
// is not the resource's own row: a public work held by a private work, a
// page image kept private in a public page of a public work (before the
// pipeline made its derivatives, and after), and a work's source record
// kept in a private file set. What hides them is their effective access
// (the root package's effective.go), which every index must follow.

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/worker"
)

// The secrets of the shapes.
const (
	leakChildTitle = "zqxjkosprey"  // the public child work of a private work
	leakChildText  = "zqxjkpetrel"  // a word on its page
	leakEarlyOCR   = "zqxjkgannet"  // the OCR of a page image private before the jobs ran
	leakLateOCR    = "zqxjkfulmar"  // the OCR of a page image made private after them
	leakRecord     = "zqxjkcurlew"  // a word of a source record in a private file set
	leakImageBytes = "LEAKjpg4Qz9w" // a comment inside the private page images' JPEG derivatives
)

// leakShapes are the resources of the shapes, for the tests that look at
// them one by one.
type leakShapes struct {
	parent, child             shelfmark.ID // the private work and its public child work
	early, earlyFS, earlyF    shelfmark.ID // a public work, its page, and the page's image private from the start
	late, lateFS, lateF       shelfmark.ID // the same, the image made private after the jobs
	earlyDerived, lateDerived []shelfmark.ID
	record, recordFS          shelfmark.ID // a public work's source record and its private file set
	recordWork                shelfmark.ID
}

// leakJPEG is a small JPEG holding a marker in a comment segment, which
// a PDF or an image served as stored carries along.
func leakJPEG(t testing.TB, marker string) []byte {
	img := image.NewGray(image.Rect(0, 0, 16, 12))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	img.Set(3, 3, color.Gray{Y: 200})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return withJPEGComment(b.Bytes(), marker)
}

// withJPEGComment returns the JPEG jpg with a comment segment (COM)
// holding marker right after its start of image.
func withJPEGComment(jpg []byte, marker string) []byte {
	out := append([]byte{}, jpg[:2]...)
	out = append(out, 0xFF, 0xFE, byte((2+len(marker))>>8), byte(2+len(marker)))
	out = append(out, marker...)
	return append(out, jpg[2:]...)
}

// leakMARCXML is a MARCXML record whose title holds word.
func leakMARCXML(word string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<record xmlns="http://www.loc.gov/MARC21/slim">
  <leader>00000nam a2200000 a 4500</leader>
  <controlfield tag="001">leak-1</controlfield>
  <datafield tag="245" ind1="0" ind2="0"><subfield code="a">` + word + ` catalogue</subfield></datafield>
</record>`)
}

// addLeakShapes makes the hidden parts of the shapes in the fixture's
// collection (the public works and pages, s, are made with the fixture's
// other public resources, before anything hidden), runs the jobs that make
// the page images' derivatives and text, and adds their secrets to the
// fixture. The search indexer and the OAI-PMH projector run after it.
func (f *leakFixture) addLeakShapes(t *testing.T, s *leakShapes) {
	e := f.e
	ctx := context.Background()
	s.parent = e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Visibility: shelfmark.Private,
		Metadata: titled("Series of notebooks")}})[0].ID
	// the child: public, in the public collection, under the private work
	s.child = e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Parent: s.parent, MemberOf: []shelfmark.ID{f.C},
		Metadata: titled(leakChildTitle + " notebook")}})[0].ID
	sets := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFileSet, Parent: s.child},
		{Kind: shelfmark.KindFileSet, Parent: s.recordWork, Visibility: shelfmark.Private},
	})
	childFS := sets[0].ID
	s.recordFS = sets[1].ID
	childText := e.putBytes("notebook.txt", "text/plain", []byte("Notebook: "+leakChildText))
	page := func(marker string) *shelfmark.File { return e.putBytes("page.jpg", "image/jpeg", leakJPEG(t, marker)) }
	rec := e.putBytes("record.xml", "application/marcxml+xml", leakMARCXML(leakRecord))
	rec.Use = shelfmark.UseSource
	files := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFile, Parent: childFS, File: childText},
		{Kind: shelfmark.KindFile, Parent: s.earlyFS, File: page(leakImageBytes), Visibility: shelfmark.Private},
		{Kind: shelfmark.KindFile, Parent: s.lateFS, File: page(leakImageBytes)},
		{Kind: shelfmark.KindFile, Parent: s.recordFS, File: rec},
	})
	childF := files[0].ID
	s.earlyF, s.lateF, s.record = files[1].ID, files[2].ID, files[3].ID

	// the pipeline: every page image gets a thumbnail, an access copy and
	// tiles (made by the derive job's tools, the JPEGs with a comment
	// holding the secret), its OCR and its text; the child's text file
	// its text
	tools := needVips(t)
	src := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(src, gradient(t, 96, 64), 0o644); err != nil {
		t.Fatal(err)
	}
	thumbImg, err := tools.Thumbnail(ctx, src, "image/png", worker.ThumbnailSize)
	if err != nil {
		t.Fatal(err)
	}
	accessImg, err := tools.Access(ctx, src, "image/png", worker.AccessSize)
	if err != nil {
		t.Fatal(err)
	}
	pyr, err := tools.Tiles(ctx, src, "image/png", []shelfmark.TileSize{
		{Width: thumbImg.Width, Height: thumbImg.Height, Use: shelfmark.UseThumbnail},
		{Width: accessImg.Width, Height: accessImg.Height, Use: shelfmark.UseAccess}})
	if err != nil {
		t.Fatal(err)
	}
	zb, err := os.ReadFile(pyr.Path)
	pyr.Close()
	if err != nil {
		t.Fatal(err)
	}
	derive := map[shelfmark.ID]string{s.earlyF: leakEarlyOCR, s.lateF: leakLateOCR}
	made := map[shelfmark.ID][]*shelfmark.File{}
	for id, word := range derive {
		ocr := e.putBytes("page.hocr", "text/html", []byte(`<html><body><div class="ocr_page" title="bbox 0 0 96 64"><span class="ocrx_word" title="bbox 1 1 40 10">`+
			word+`</span></div></body></html>`))
		ocr.Use = shelfmark.UseOCR
		txt := e.putBytes("page.txt", "text/plain", []byte("Page text: "+word))
		txt.Use = shelfmark.UseText
		thumb := e.putBytes("page.thumbnail.jpg", "image/jpeg", withJPEGComment(thumbImg.Data, leakImageBytes))
		thumb.Use = shelfmark.UseThumbnail
		access := e.putBytes("page.access.jpg", "image/jpeg", withJPEGComment(accessImg.Data, leakImageBytes))
		access.Use = shelfmark.UseAccess
		tiles := e.putBytes("page.tiles.zip", "application/zip", zb)
		tiles.Use = shelfmark.UseTiles
		made[id] = []*shelfmark.File{thumb, access, tiles, ocr, txt}
	}
	k := func(id shelfmark.ID) int64 {
		key, err := e.repo.IDs().Key(id)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	now := time.Now().Add(time.Minute) // every job enqueued so far is ready
	jobs, err := e.repo.ClaimJobs(ctx, shelfmark.Claim{Queue: shelfmark.QueueCharacterize, Worker: "leak", N: 1000, Now: now, Lease: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		res := &shelfmark.JobResult{}
		for id, word := range derive {
			if j.Resource == k(id) {
				res.Derivatives = made[id]
				fs := s.earlyFS
				if id == s.lateF {
					fs = s.lateFS
				}
				res.Docs = []shelfmark.SearchDoc{{Key: k(fs), Work: k(map[shelfmark.ID]shelfmark.ID{s.earlyFS: s.early, s.lateFS: s.late}[fs]),
					Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "Page text: " + word}}
			}
		}
		if j.Resource == k(childF) {
			res.Docs = []shelfmark.SearchDoc{{Key: k(childFS), Work: k(s.child), Kind: shelfmark.KindFileSet, Format: "Plain Text", Body: "Notebook: " + leakChildText}}
		}
		if err := e.repo.FinishJob(ctx, j, res); err != nil {
			t.Fatal(err)
		}
	}
	derived := func(fs shelfmark.ID, work shelfmark.ID) []shelfmark.ID {
		got, err := e.repo.ChildFiles(ctx, work, []shelfmark.ID{fs})
		if err != nil {
			t.Fatal(err)
		}
		var out []shelfmark.ID
		for _, r := range got[fs] {
			if r.File.Use != shelfmark.UseOriginal {
				out = append(out, r.ID)
			}
		}
		if len(out) != 5 {
			t.Fatalf("%d derivatives in %s", len(out), fs)
		}
		return out
	}
	s.earlyDerived, s.lateDerived = derived(s.earlyFS, s.early), derived(s.lateFS, s.late)
	// the late image is made private, as a curator would, after its jobs
	e.do("PATCH", resPath(s.lateF, ""), `{"visibility": "private"}`, "Content-Type", ctJSON).want(t, http.StatusOK)

	f.secret = append(f.secret, s.child, childFS, childF, s.parent, s.earlyF, s.lateF, s.record, s.recordFS)
	f.secret = append(f.secret, s.earlyDerived...)
	f.secret = append(f.secret, s.lateDerived...)
	f.words = append(f.words, leakChildTitle, leakChildText, leakEarlyOCR, leakLateOCR, leakRecord)
	f.bytes = append(f.bytes, []byte(leakImageBytes))
}

// iiifReads are the IIIF requests of an id beyond its routes' patterns:
// the image service's whole image and a region, and the search inside a
// work for the words of hidden pages.
func iiifReads(id shelfmark.ID) []req {
	return []req{
		{method: "GET", path: "/iiif/" + string(id) + "/image/full/max/0/default.jpg"},
		{method: "GET", path: "/iiif/" + string(id) + "/image/0,0,8,8/!100,100/0/default.png"},
		{method: "GET", path: "/iiif/" + string(id) + "/search/1?q=" + leakLateOCR},
		{method: "GET", path: "/iiif/" + string(id) + "/search/2?q=" + leakChildText},
	}
}

// TestLeakPrivateImage: a page image kept private in a public page of a
// public work hides everything made from it, to an anonymous reader: its
// thumbnail, access copy, OCR and text (content and search snippets), the
// page's IIIF image service, its OCR in the manifest and the work's PDF —
// whether it was private before the pipeline ran or made private after;
// and the same reads show them again once it is public.
func TestLeakPrivateImage(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newLeakFixture(t, backend)
		e, s := f.e, f.shapes
		anon := func(method, path string) *response { return e.do(method, path, nil, as("")...) }
		check := func(what string, hidden bool) {
			t.Helper()
			for _, c := range []struct {
				name          string
				work, fs, img shelfmark.ID
				derived       []shelfmark.ID
				word          string
			}{
				{"private before the jobs", s.early, s.earlyFS, s.earlyF, s.earlyDerived, leakEarlyOCR},
				{"made private after them", s.late, s.lateFS, s.lateF, s.lateDerived, leakLateOCR},
			} {
				for _, d := range append([]shelfmark.ID{c.img}, c.derived...) {
					for _, p := range []string{resPath(d, ""), resPath(d, "/content")} {
						if got := anon("GET", p).Status; (got == http.StatusNotFound) != hidden {
							t.Errorf("%s, %s: GET %s: %d", what, c.name, p, got)
						}
					}
				}
				// the page itself stays readable: only its image is hidden
				anon("GET", resPath(c.fs, "")).want(t, http.StatusOK)
				if got := anon("GET", "/iiif/"+string(c.fs)+"/image/info.json").Status; (got == http.StatusNotFound) != hidden {
					t.Errorf("%s, %s: IIIF image info: %d", what, c.name, got)
				}
				if got := anon("GET", "/iiif/"+string(c.fs)+"/image/full/max/0/default.jpg").Status; (got == http.StatusNotFound) != hidden {
					t.Errorf("%s, %s: IIIF image: %d", what, c.name, got)
				}
				search := anon("GET", "/api/v1/search?q="+c.word)
				if found := bytes.Contains(search.Body, []byte(c.word)); found == hidden {
					t.Errorf("%s, %s: search for its text: %d %.300s", what, c.name, search.Status, search.Body)
				}
				within := anon("GET", "/iiif/"+string(c.work)+"/search/2?q="+c.word)
				var hits struct {
					Items []json.RawMessage `json:"items"`
				}
				if err := json.Unmarshal(within.Body, &hits); err != nil || (len(hits.Items) == 0) != hidden {
					t.Errorf("%s, %s: IIIF search in the work: %d %.300s", what, c.name, within.Status, within.Body)
				}
				manifest := anon("GET", "/iiif/"+string(c.work)+"/manifest").want(t, http.StatusOK)
				named := 0
				for _, d := range append([]shelfmark.ID{c.img}, c.derived...) {
					if bytes.Contains(manifest.Body, []byte(d)) {
						named++
					}
				}
				if (named == 0) != hidden {
					t.Errorf("%s, %s: the manifest names %d of the image and its derivatives", what, c.name, named)
				}
				pdf := anon("GET", "/iiif/"+string(c.work)+"/pdf")
				if shows := pdf.Status == http.StatusOK && bytes.Contains(pdf.Body, []byte(leakImageBytes)); shows == hidden {
					t.Errorf("%s, %s: the work's PDF: %d, holds the image: %v", what, c.name, pdf.Status, shows)
				}
			}
		}
		check("private", true)
		// the private image shown to its administrator is private to them,
		// though its page and work are public
		for _, fs := range []shelfmark.ID{s.earlyFS, s.lateFS} {
			p := "/iiif/" + string(fs) + "/image/full/max/0/default.jpg"
			r := e.do("GET", p, nil).want(t, http.StatusOK)
			if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "private") || r.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("the administrator's GET %s: Cache-Control %q, Access-Control-Allow-Origin %q; want private to them", p, cc, r.Header.Get("Access-Control-Allow-Origin"))
			}
		}
		public := `{"visibility": "public"}`
		e.do("PATCH", resPath(s.earlyF, ""), public, "Content-Type", ctJSON).want(t, http.StatusOK)
		e.do("PATCH", resPath(s.lateF, ""), public, "Content-Type", ctJSON).want(t, http.StatusOK)
		check("made public", false)
	})
}

// TestLeakNestedWork: a public work held by a private (or embargoed)
// work is found by no index an anonymous reader reaches — search (its
// title and its page's text), OAI-PMH (GetRecord, ListRecords,
// ListIdentifiers), the sitemap — exactly as REST hides it; once the
// parent is public, every one of them shows it; and made private again,
// OAI-PMH reports it deleted.
func TestLeakNestedWork(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newLeakFixture(t, backend)
		e, s := f.e, f.shapes
		ctx := context.Background()
		anon := func(path string) *response { return e.do("GET", path, nil, as("")...) }
		oaiID := "oai:repo.example.org:" + string(s.child)
		seen := func(what string, want bool) {
			t.Helper()
			if _, err := e.proj.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			if got := anon(resPath(s.child, "")).Status == http.StatusOK; got != want {
				t.Errorf("%s: REST reads the child: %v", what, got)
			}
			for _, q := range []string{leakChildTitle, leakChildText} {
				if got := bytes.Contains(anon("/api/v1/search?q="+q).Body, []byte(s.child)); got != want {
					t.Errorf("%s: search for %s finds the child: %v", what, q, got)
				}
				if got := bytes.Contains(anon("/search?q="+q).Body, []byte(s.child)); got != want {
					t.Errorf("%s: the search page for %s finds the child: %v", what, q, got)
				}
			}
			rec := anon("/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier=" + oaiID)
			if got := bytes.Contains(rec.Body, []byte(leakChildTitle)); got != want {
				t.Errorf("%s: GetRecord shows the child: %v: %.400s", what, got, rec.Body)
			}
			var all []byte
			for _, verb := range []string{"ListRecords", "ListIdentifiers"} {
				for path := "/oai?verb=" + verb + "&metadataPrefix=oai_dc"; path != ""; {
					r := anon(path)
					all = append(all, r.Body...)
					path = ""
					if i := bytes.Index(r.Body, []byte("<resumptionToken")); i >= 0 {
						rest := r.Body[i:]
						if a, b := bytes.IndexByte(rest, '>'), bytes.Index(rest, []byte("</resumptionToken>")); a >= 0 && b > a+1 {
							path = "/oai?verb=" + verb + "&resumptionToken=" + string(rest[a+1:b])
						}
					}
				}
			}
			live := bytes.Contains(all, []byte(oaiID+"</identifier>\n")) || strings.Contains(oaiLiveIDs(all), oaiID)
			if live != want {
				t.Errorf("%s: ListRecords/ListIdentifiers list the child as a live record: %v", what, live)
			}
			if got := bytes.Contains(anon("/sitemaps/1.xml").Body, []byte(s.child)); got != want {
				t.Errorf("%s: the sitemap lists the child: %v", what, got)
			}
		}
		if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Logger: e.srv.log}).CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		seen("under a private work", false)
		e.do("PATCH", resPath(s.parent, ""), `{"visibility": "public"}`, "Content-Type", ctJSON).want(t, http.StatusOK)
		seen("under a public work", true)
		e.do("PATCH", resPath(s.parent, ""), `{"embargo": "2999-01-01T00:00:00Z"}`, "Content-Type", ctJSON).want(t, http.StatusOK)
		seen("under an embargoed work", false)
		rec := anon("/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier=" + oaiID)
		if !bytes.Contains(rec.Body, []byte(`status="deleted"`)) {
			t.Errorf("the child of a work withdrawn from view is not a deleted record: %.400s", rec.Body)
		}
	})
}

// oaiLiveIDs returns the identifiers of the headers in an OAI-PMH
// response that are not marked deleted, joined by spaces.
func oaiLiveIDs(body []byte) string {
	var out []string
	for _, h := range strings.Split(string(body), "<header")[1:] {
		if strings.HasPrefix(h, ` status="deleted"`) {
			continue
		}
		if a, b := strings.Index(h, "<identifier>"), strings.Index(h, "</identifier>"); a >= 0 && b > a {
			out = append(out, h[a+len("<identifier>"):b])
		}
	}
	return strings.Join(out, " ")
}

// TestLeakSourceRecord: OAI-PMH's marcxml publishes a work's source
// record only while the record's file is in public view: not from a
// private file set of a public work.
func TestLeakSourceRecord(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newLeakFixture(t, backend)
		e, s := f.e, f.shapes
		ctx := context.Background()
		get := func() []byte {
			if _, err := e.proj.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			return e.do("GET", "/oai?verb=GetRecord&metadataPrefix=marcxml&identifier=oai:repo.example.org:"+string(s.recordWork), nil, as("")...).Body
		}
		if b := get(); bytes.Contains(b, []byte(leakRecord)) {
			t.Fatalf("marcxml publishes a record of a private file set: %.400s", b)
		}
		e.do("PATCH", resPath(s.recordFS, ""), `{"visibility": "public"}`, "Content-Type", ctJSON).want(t, http.StatusOK)
		if b := get(); !bytes.Contains(b, []byte(leakRecord)) {
			t.Fatalf("marcxml does not publish the record once its file set is public: %.400s", b)
		}
		e.do("PATCH", resPath(s.record, ""), `{"visibility": "private"}`, "Content-Type", ctJSON).want(t, http.StatusOK)
		if b := get(); bytes.Contains(b, []byte(leakRecord)) {
			t.Fatalf("marcxml publishes a record made private: %.400s", b)
		}
	})
}
