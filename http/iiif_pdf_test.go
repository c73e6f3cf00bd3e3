package http

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// pdfTestJPEG is a grey JPEG of a generated page image with words.
func pdfTestJPEG(t testing.TB, words ...string) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(gen.PageImage(4, len(words), words)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pdfBook makes a work whose pages (in order) have the given JPEG access
// copies (nil: a page with only a text file), and returns it with its
// pages.
func pdfBook(t testing.TB, e *policyEnv, vis shelfmark.Visibility, title string, access ...[]byte) (*shelfmark.Resource, []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: vis, Metadata: titled(title)}})[0]
	sets := make([]*shelfmark.NewResource, len(access))
	for i := range sets {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, len(fss))
	var files []*shelfmark.NewResource
	for i, fs := range fss {
		ids[i] = fs.ID
		var f *shelfmark.File
		if access[i] == nil {
			f = e.putBytes("notes.txt", "text/plain", []byte("no image"))
		} else {
			f = e.putBytes("page.access.jpg", "image/jpeg", access[i])
			f.Use = shelfmark.UseAccess
		}
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: f})
	}
	e.createAll(ctx, files)
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	return w, ids
}

// pdfInfoPages is the page count pdfinfo reads in a PDF.
func pdfInfoPages(t *testing.T, pdfinfo string, doc []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "work.pdf")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdfinfo, p).CombinedOutput()
	if err != nil || strings.Contains(string(out), "Syntax") {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("pdfinfo: no page count\n%s", out)
	}
	return string(m[1])
}

// TestIIIFPDF: a work's PDF has a page for each page image the caller may
// read, in the work's order, each the stored JPEG; it is a download named
// after the work, offered to every origin only when the work is public;
// the manifest links it as its rendering.
func TestIIIFPDF(t *testing.T) {
	pdfinfo, err := exec.LookPath("pdfinfo")
	if err != nil {
		t.Skip("pdfinfo (poppler) is not installed")
	}
	e := newPolicyEnv(t, "sqlite", Options{BaseURL: "https://repo.example.org"})
	ctx := context.Background()
	second := pdfTestJPEG(t, "SECOND", "PAGE", "OF", "THE", "HERBAL")
	pages := [][]byte{gen.JPEG(1, 1, 600, 800), second, nil, gen.JPEG(1, 3, 900, 500), []byte("not a JPEG at all")}
	w, ids := pdfBook(t, e, shelfmark.Public, "A herbal: plants/woodcuts", pages...)
	// a page of the public work that only its editors may read
	hidden := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID, Visibility: shelfmark.Private}})[0]
	hiddenJPEG := gen.JPEG(1, 4, 300, 300)
	hf := e.putBytes("hidden.jpg", "image/jpeg", hiddenJPEG)
	hf.Use = shelfmark.UseAccess
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: hidden.ID, File: hf}})
	if _, err := e.repo.SetOrder(ctx, w.ID, append(ids, hidden.ID), 0); err != nil {
		t.Fatal(err)
	}

	r := e.do("GET", "/iiif/"+string(w.ID)+"/pdf", nil, anonymously...)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("anonymous: %d %s %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename="A herbal: plants-woodcuts.pdf"; filename*=UTF-8''A%20herbal%3A%20plants-woodcuts.pdf` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Cache-Control") == "private" {
		t.Errorf("a public work's PDF: CORS %q, Cache-Control %q", r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Cache-Control"))
	}
	if got := pdfInfoPages(t, pdfinfo, r.Body); got != "3" {
		t.Errorf("anonymous: %s pages, want 3 (the JPEG pages the public may read)", got)
	}
	for i, p := range pages[:4] {
		if p != nil && !bytes.Contains(r.Body, p) {
			t.Errorf("page %d's JPEG is not in the PDF as stored", i+1)
		}
	}
	if bytes.Contains(r.Body, hiddenJPEG) {
		t.Error("the hidden page is in the public's PDF")
	}

	// page 2, rendered at the PDF's 150 dpi, is the page image
	if pdftoppm, err := exec.LookPath("pdftoppm"); err == nil {
		dir := t.TempDir()
		p := filepath.Join(dir, "work.pdf")
		if err := os.WriteFile(p, r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(pdftoppm, "-f", "2", "-l", "2", "-r", "150", "-gray", "-png", "-singlefile", p, filepath.Join(dir, "p2")).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm: %v\n%s", err, out)
		}
		f, err := os.Open(filepath.Join(dir, "p2.png"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := jpeg.Decode(bytes.NewReader(second))
		if got.Bounds() != want.Bounds() {
			t.Fatalf("page 2 renders %v, its image is %v", got.Bounds(), want.Bounds())
		}
		if d := pdfTestDiff(got, want); d > 8 {
			t.Errorf("page 2 differs from its image by %.1f grey levels on average", d)
		}
	}

	// the admin reads the hidden page too
	r = e.do("GET", "/iiif/"+string(w.ID)+"/pdf", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("admin: %d %s", r.Status, r.Body)
	}
	if got := pdfInfoPages(t, pdfinfo, r.Body); got != "4" {
		t.Errorf("admin: %s pages, want 4", got)
	}

	// the manifest links the PDF
	readIIIF(t, e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...))
	var m struct {
		Rendering []struct {
			ID, Type, Format string
			Label            map[string][]string
		}
	}
	e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...).json(t, &m)
	if len(m.Rendering) != 1 || m.Rendering[0].ID != "https://repo.example.org/iiif/"+string(w.ID)+"/pdf" ||
		m.Rendering[0].Type != "Text" || m.Rendering[0].Format != "application/pdf" ||
		m.Rendering[0].Label["en"][0] != "The whole work as PDF" || m.Rendering[0].Label["de"][0] != "Das ganze Werk als PDF" {
		t.Errorf("manifest rendering %+v", m.Rendering)
	}
}

// TestIIIFPDFAccess: a private work's PDF is refused to whoever may not
// read it, as its manifest is; what is not a work with page images has
// none.
func TestIIIFPDFAccess(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	priv, ids := pdfBook(t, e, shelfmark.Private, "A private diary", gen.JPEG(1, 1, 300, 400))
	path := "/iiif/" + string(priv.ID) + "/pdf"
	r := e.do("GET", path, nil, anonymously...)
	if r.Status != http.StatusNotFound || r.Header.Get("Content-Type") == "application/pdf" || strings.Contains(string(r.Body), "diary") {
		t.Errorf("anonymous, private work: %d %s %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	r = e.do("GET", path, nil) // the admin
	if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "" || !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
		t.Errorf("admin, private work: %d, CORS %q, Cache-Control %q", r.Status, r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Cache-Control"))
	}
	bare, _ := pdfBook(t, e, shelfmark.Public, "Notes only", nil)
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Diaries")}})[0]
	for _, c := range []struct{ path, want string }{
		{"/iiif/" + string(ids[0]) + "/pdf", "is a page (file set)"},
		{"/iiif/" + string(coll.ID) + "/pdf", "not a work"},
		{"/iiif/" + string(bare.ID) + "/pdf", "no page images"},
		{"/iiif/not-an-id/pdf", ""},
	} {
		r := e.do("GET", c.path, nil)
		if r.Status/100 != 4 || !strings.Contains(string(r.Body), c.want) || r.Header.Get("Content-Type") == "application/pdf" {
			t.Errorf("GET %s: %d %s, want 4xx with %q", c.path, r.Status, r.Body, c.want)
		}
	}
	// no PDF, no rendering in the manifest
	if r := e.do("GET", "/iiif/"+string(bare.ID)+"/manifest", nil); strings.Contains(string(r.Body), `"rendering"`) {
		t.Errorf("the manifest of a work without page images offers a PDF: %s", r.Body)
	}
}

// TestIIIFPDFCost: the PDF of a 60-page work runs the statements the PDF
// of a 3-page one runs (a read of the children and one of their files
// per 1,000 pages): the images are read from the blob store, once each.
func TestIIIFPDFCost(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		img := gen.JPEG(1, 1, 200, 300)
		book := func(n int) shelfmark.ID {
			pages := make([][]byte, n)
			for i := range pages {
				pages[i] = img
			}
			w, _ := pdfBook(t, e, shelfmark.Public, "A book", pages...)
			return w.ID
		}
		sameStatements(t, e, backend, "PDF", "/iiif/{id}/pdf", book(3), book(60))
	})
}

// pdfTestDiff is the mean absolute difference of two images' grey levels.
func pdfTestDiff(a, b image.Image) float64 {
	var sum, n float64
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ga, _, _, _ := a.At(x, y).RGBA()
			gb, _, _, _ := b.At(x, y).RGBA()
			d := float64(ga>>8) - float64(gb>>8)
			sum += max(d, -d)
			n++
		}
	}
	return sum / n
}

// matrixJPEG is the access copy of the matrix's pages: an 8 × 8 JPEG.
func matrixJPEG(t testing.TB) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// iiifPDFProbes probe a work's PDF (workFileProbes).
func (m *matrix) iiifPDFProbes(notFound rule) []probe {
	return m.workFileProbes("pdf", "application/pdf", "%PDF-", notFound)
}

// workFileProbes probe a work as one file, /iiif/{id}/suffix, of media
// type ctype, whose bytes begin with magic: read as the work is (404 when
// hidden, offered to every origin and to shared caches only when public),
// and a file set's (404 to whoever asks).
func (m *matrix) workFileProbes(suffix, ctype, magic string, notFound rule) []probe {
	return []probe{
		{name: "work", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.W) + "/" + suffix} },
			rule: readTarget(200), check: func(c *cell, r *response) string {
				if ct := r.Header.Get("Content-Type"); ct != ctype || !bytes.HasPrefix(r.Body, []byte(magic)) {
					return fmt.Sprintf("not a %s: %s %.40q", ctype, ct, r.Body)
				}
				cors := r.Header.Get("Access-Control-Allow-Origin") == "*"
				if want := c.t.kind.eff == "public" && !c.w.signed; cors != want {
					return fmt.Sprintf("Access-Control-Allow-Origin * sent: %v, want %v", cors, want)
				}
				if private := strings.HasPrefix(r.Header.Get("Cache-Control"), "private"); private == cors {
					return fmt.Sprintf("Cache-Control %q with Access-Control-Allow-Origin * %v", r.Header.Get("Cache-Control"), cors)
				}
				return ""
			}},
		{name: "file set", target: "read", build: func(c *cell) req { return req{method: "GET", path: "/iiif/" + string(c.t.FS) + "/" + suffix} },
			rule: notFound},
	}
}

// sameStatements checks that GET path of the small work and of the large
// one run the same statements, anonymously (once for the small one
// first, so that nothing is read for the first time).
func sameStatements(t *testing.T, e *policyEnv, backend, what, path string, small, large shelfmark.ID) {
	t.Helper()
	stmts := func(w shelfmark.ID) []string {
		mark := e.tr.mark()
		r := e.do("GET", strings.ReplaceAll(path, "{id}", string(w)), nil, anonymously...)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d", w, r.Status)
		}
		return e.tr.sinceSorted(mark)
	}
	stmts(small)
	a, b := stmts(small), stmts(large)
	if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) == 0 {
		t.Errorf("the %s of a small work ran %d statements, of a large one %d:\n%s\n---\n%s", what, len(a), len(b),
			strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	t.Logf("%s: %d statements for the %s of a small and of a large work", backend, len(a), what)
}

// BenchmarkIIIFPDF streams the PDF of a 1,200-page book (each page a
// 1600×2200 JPEG access copy) to an anonymous reader.
func BenchmarkIIIFPDF(b *testing.B) {
	e := newPolicyEnv(b, "sqlite", Options{})
	img := gen.JPEG(1, 5, 1600, 2200)
	pages := make([][]byte, 1200)
	for i := range pages {
		pages[i] = img
	}
	w, _ := pdfBook(b, e, shelfmark.Public, "A long book", pages...)
	var size int
	for b.Loop() {
		resp := e.stream("GET", "/iiif/"+string(w.ID)+"/pdf", nil, anonymously...)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
		size = int(n)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB/op")
	b.SetBytes(int64(size))
}
