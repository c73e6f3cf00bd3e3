package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// anonymously are the headers of a request without a credential.
var anonymously = []string{"Authorization", ""}

// scannedBook makes a work of n pages (file sets) in order, each with a
// TIFF original characterized at 2000×3000 pixels, a JPEG access copy and
// a thumbnail; page 2 (when there is one) has an hOCR derivative.
func scannedBook(t testing.TB, e *policyEnv, n int, vis shelfmark.Visibility, meta []shelfmark.Statement, colls ...shelfmark.ID) (*shelfmark.Resource, []shelfmark.ID) {
	return scannedBookOf(t, e, bookShape{pages: n, vis: vis, meta: meta, colls: colls})
}

// bookShape is what scannedBookOf makes: a work of pages, its
// visibility, metadata and collections, and whether each page has a title
// of its own ("Folio n") and an hOCR and an ALTO file (else only the
// second page has an hOCR).
type bookShape struct {
	pages      int
	vis        shelfmark.Visibility
	meta       []shelfmark.Statement
	colls      []shelfmark.ID
	titled     bool
	ocrOnEvery bool
}

// scannedBookOf is scannedBook of any bookShape.
func scannedBookOf(t testing.TB, e *policyEnv, b bookShape) (*shelfmark.Resource, []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: b.vis, Metadata: b.meta, MemberOf: b.colls}})[0]
	sets := make([]*shelfmark.NewResource, b.pages)
	for i := range sets {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
		if b.titled {
			sets[i].Metadata = titled(fmt.Sprintf("Folio %d", i+1))
		}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, len(fss))
	tif := e.putBytes("page.tif", "image/tiff", []byte("a page"))
	tif.Format = &shelfmark.Format{PRONOM: "fmt/353", Name: "Tagged Image File Format", MediaType: "image/tiff", Width: 2000, Height: 3000}
	jpg := e.putBytes("page.jpg", "image/jpeg", []byte("an access copy"))
	hocr := e.putBytes("page.hocr", "application/xhtml+xml", []byte("<html/>"))
	alto := e.putBytes("page.alto.xml", "application/xml", []byte("<alto/>"))
	var files []*shelfmark.NewResource
	for i, fs := range fss {
		ids[i] = fs.ID
		orig, acc, th, oc, al := *tif, *jpg, *jpg, *hocr, *alto
		acc.Use, th.Use, oc.Use, al.Use = shelfmark.UseAccess, shelfmark.UseThumbnail, shelfmark.UseOCR, shelfmark.UseALTO
		th.Name = fmt.Sprintf("thumb%04d.jpg", i+1)
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &orig},
			&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &acc},
			&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &th})
		switch {
		case b.ocrOnEvery:
			files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &oc},
				&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &al})
		case i == 1:
			files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &oc})
		}
	}
	e.createAll(ctx, files)
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	return w, ids
}

// iiifDoc is the JSON of a Presentation 3.0 document, as tests read it.
type iiifDoc struct {
	Context  string              `json:"@context"`
	ID       string              `json:"id"`
	Type     string              `json:"type"`
	Label    map[string][]string `json:"label"`
	Summary  map[string][]string `json:"summary"`
	Rights   string              `json:"rights"`
	Homepage []map[string]any    `json:"homepage"`
	Metadata []map[string]any    `json:"metadata"`
	Required map[string]any      `json:"requiredStatement"`
	Thumb    []map[string]any    `json:"thumbnail"`
	Items    []iiifItem          `json:"items"`
}

// iiifItem is a Canvas (of a Manifest) or a reference (of a Collection).
type iiifItem struct {
	ID      string              `json:"id"`
	Type    string              `json:"type"`
	Label   map[string][]string `json:"label"`
	Width   int                 `json:"width"`
	Height  int                 `json:"height"`
	Thumb   []map[string]any    `json:"thumbnail"`
	SeeAlso []map[string]any    `json:"seeAlso"`
	Items   []struct {
		Type  string `json:"type"`
		Items []struct {
			Motivation string         `json:"motivation"`
			Body       map[string]any `json:"body"`
			Target     string         `json:"target"`
		} `json:"items"`
	} `json:"items"`
}

func readIIIF(t *testing.T, r *response) *iiifDoc {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s %s: %d %s", r.Method, r.Path, r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != iiifMediaType {
		t.Errorf("%s: Content-Type %q", r.Path, ct)
	}
	var d iiifDoc
	if err := json.Unmarshal(r.Body, &d); err != nil {
		t.Fatalf("%s: %v: %s", r.Path, err, r.Body)
	}
	return &d
}

func TestIIIFManifest(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{BaseURL: "https://repo.example.org"})
	meta := append(titled("A herbal"),
		lit(shelfmark.NSDC+"creator", "Fuchs, Leonhart"),
		lit(shelfmark.NSDCTerms+"abstract", "Woodcuts of plants."),
		iri(shelfmark.NSDCTerms+"license", "http://creativecommons.org/publicdomain/mark/1.0/"),
		lit(shelfmark.NSDCTerms+"rightsHolder", "The Library"))
	w, pages := scannedBook(t, e, 3, shelfmark.Public, meta)
	r := e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...)
	d := readIIIF(t, r)
	base := "https://repo.example.org"
	if d.Context != iiifContext || d.Type != "Manifest" || d.ID != base+"/iiif/"+string(w.ID)+"/manifest" {
		t.Errorf("manifest header: %s %s %s", d.Context, d.Type, d.ID)
	}
	if fmt.Sprint(d.Label) != "map[none:[A herbal]]" || fmt.Sprint(d.Summary) != "map[none:[Woodcuts of plants.]]" {
		t.Errorf("label %v, summary %v", d.Label, d.Summary)
	}
	if d.Rights != "http://creativecommons.org/publicdomain/mark/1.0/" {
		t.Errorf("rights %q", d.Rights)
	}
	if len(d.Homepage) != 1 || d.Homepage[0]["id"] != base+"/works/"+string(w.ID) || d.Homepage[0]["format"] != "text/html" {
		t.Errorf("homepage %v", d.Homepage)
	}
	if got := fmt.Sprint(d.Required["value"]); !strings.Contains(got, "The Library") {
		t.Errorf("requiredStatement %v", d.Required)
	}
	var creator bool
	for _, md := range d.Metadata {
		if strings.Contains(fmt.Sprint(md["value"]), "Fuchs, Leonhart") {
			l, _ := md["label"].(map[string]any)
			creator = fmt.Sprint(l["en"]) == "["+labels.Translate(e.srv.ui.Catalogs().Messages("en"), "work.field.creator")+"]" && l["de"] != nil
		}
	}
	if !creator {
		t.Errorf("metadata lacks the labelled creator: %v", d.Metadata)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("a public work's manifest is not offered to every origin")
	}
	if len(d.Items) != len(pages) {
		t.Fatalf("%d canvases, want %d", len(d.Items), len(pages))
	}
	for i, c := range d.Items {
		want := base + "/iiif/" + string(w.ID) + "/canvas/" + string(pages[i])
		if c.ID != want || c.Type != "Canvas" || c.Width != 2000 || c.Height != 3000 {
			t.Errorf("canvas %d: %s %s %d×%d, want %s 2000×3000", i, c.ID, c.Type, c.Width, c.Height, want)
		}
		if fmt.Sprint(c.Label) != fmt.Sprintf("map[de:[Seite %d] en:[Page %d] es:[Página %d] fr:[Page %d]]", i+1, i+1, i+1, i+1) {
			t.Errorf("canvas %d label %v", i, c.Label)
		}
		// English first (a viewer that does not choose by language shows
		// the first value), the others after it in order
		if i == 0 && !strings.Contains(string(r.Body), `"label":{"en":["Page 1"],"de":["Seite 1"],"es":["Página 1"],"fr":["Page 1"]}`) {
			t.Errorf("the canvas's label map does not begin with English: %.400s", r.Body)
		}
		if len(c.Items) != 1 || len(c.Items[0].Items) != 1 {
			t.Fatalf("canvas %d: annotations %+v", i, c.Items)
		}
		a := c.Items[0].Items[0]
		if a.Motivation != "painting" || a.Target != c.ID || a.Body["type"] != "Image" || a.Body["format"] != "image/jpeg" ||
			!strings.HasPrefix(fmt.Sprint(a.Body["id"]), base+"/api/v1/resources/") {
			t.Errorf("canvas %d painting %+v", i, a)
		}
		if len(c.Thumb) != 1 {
			t.Errorf("canvas %d thumbnail %v", i, c.Thumb)
		}
		if hasOCR := len(c.SeeAlso) == 1 && c.SeeAlso[0]["profile"] == hocrProfile && c.SeeAlso[0]["format"] == "application/xhtml+xml"; hasOCR != (i == 1) {
			t.Errorf("canvas %d seeAlso %v", i, c.SeeAlso)
		}
	}
	if len(d.Thumb) != 1 || d.Thumb[0]["id"] != d.Items[0].Thumb[0]["id"] {
		t.Errorf("manifest thumbnail %v", d.Thumb)
	}
	validatePrezi3(t, "Manifest", r.Body)

	// a collection: its members as references, paged
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Herbals")}})[0]
	sub := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Later herbals"), MemberOf: []shelfmark.ID{coll.ID}}})[0]
	var works []*shelfmark.NewResource
	for i := 0; i < iiifCollectionPage+1; i++ {
		works = append(works, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: titled(fmt.Sprint("Herbal ", i)), MemberOf: []shelfmark.ID{coll.ID}})
	}
	e.createAll(ctx, works)
	r = e.do("GET", "/iiif/"+string(coll.ID)+"/collection", nil, anonymously...)
	c := readIIIF(t, r)
	if c.Type != "Collection" || len(c.Items) != iiifCollectionPage+1 || c.Items[len(c.Items)-1].Type != "Collection" {
		t.Fatalf("collection: %s with %d items", c.Type, len(c.Items))
	}
	validatePrezi3(t, "Collection", r.Body)
	seen := map[string]bool{}
	path := strings.TrimPrefix(c.Items[len(c.Items)-1].ID, base)
	for _, it := range c.Items[:len(c.Items)-1] {
		seen[it.ID] = true
	}
	c = readIIIF(t, e.do("GET", path, nil, anonymously...))
	for _, it := range c.Items {
		seen[it.ID] = true
		if it.Type == "Collection" && strings.Contains(it.ID, "after=") {
			t.Errorf("the last page links a next one: %s", it.ID)
		}
	}
	if len(seen) != iiifCollectionPage+2 || !seen[base+"/iiif/"+string(sub.ID)+"/collection"] {
		t.Errorf("the collection's pages list %d members, want %d with the sub-collection", len(seen), iiifCollectionPage+2)
	}
}

// TestIIIFAccess: a hidden work's manifest is 404 as in the API; a readable
// one that is not public is not offered to other origins; collections and
// file sets have no manifest.
func TestIIIFAccess(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	priv, pages := scannedBook(t, e, 2, shelfmark.Private, titled("A private diary"))
	path := "/iiif/" + string(priv.ID) + "/manifest"
	r := e.do("GET", path, nil, anonymously...)
	if r.Status != http.StatusNotFound || !strings.Contains(r.Header.Get("Content-Type"), "json") || strings.Contains(string(r.Body), "diary") {
		t.Errorf("anonymous, private work: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	r = e.do("GET", path, nil) // the admin
	if d := readIIIF(t, r); len(d.Items) != 2 {
		t.Errorf("the admin's manifest of a private work: %d canvases", len(d.Items))
	}
	if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("a private work's manifest is offered to %q", h)
	}
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Diaries")}})[0]
	for _, c := range []struct{ path, want string }{
		{"/iiif/" + string(pages[0]) + "/manifest", "is a page (file set)"},
		{"/iiif/" + string(coll.ID) + "/manifest", "/iiif/" + string(coll.ID) + "/collection"},
		{"/iiif/" + string(priv.ID) + "/collection", "is a work, not a collection"},
		{"/iiif/not-an-id/manifest", ""},
		{"/iiif/" + string(coll.ID) + "/collection?after=garbage", "after"},
	} {
		r := e.do("GET", c.path, nil)
		if r.Status/100 != 4 || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("GET %s: %d %s, want 4xx with %q", c.path, r.Status, r.Body, c.want)
		}
		if strings.Contains(c.path, "after=") && r.Status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", c.path, r.Status)
		}
	}
}

// TestIIIFManifestCost: the manifest of a 300-page work runs the
// statements the manifest of a 10-page one runs (a read of the children
// and one of their files per 1,000 pages), and a work of more pages than
// one read takes lists them all, in order.
func TestIIIFManifestCost(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		small, _ := scannedBook(t, e, 10, shelfmark.Public, titled("Ten pages"))
		large, _ := scannedBook(t, e, 300, shelfmark.Public, titled("Three hundred pages"))
		stmts := func(w shelfmark.ID) []string {
			e.do("GET", "/iiif/"+string(w)+"/manifest", nil, anonymously...)
			mark := e.tr.mark()
			r := e.do("GET", "/iiif/"+string(w)+"/manifest", nil, anonymously...)
			if r.Status != http.StatusOK {
				t.Fatalf("%s: %d", w, r.Status)
			}
			return e.tr.since(mark)
		}
		a, b := stmts(small.ID), stmts(large.ID)
		if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) == 0 {
			t.Errorf("the cached manifest of a 10-page work ran %d statements, of a 300-page one %d:\n%s\n---\n%s", len(a), len(b),
				strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		// built anew (the admin is not served from the cache)
		built := func(w shelfmark.ID) []string {
			mark := e.tr.mark()
			if r := e.do("GET", "/iiif/"+string(w)+"/manifest", nil); r.Status != http.StatusOK {
				t.Fatalf("%s: %d", w, r.Status)
			}
			return e.tr.sinceSorted(mark)
		}
		built(small.ID) // the admin's session, alike
		c, d := built(small.ID), built(large.ID)
		if strings.Join(c, "\n") != strings.Join(d, "\n") || len(c) <= len(a) {
			t.Errorf("the manifest of a 10-page work ran %d statements, of a 300-page one %d (cached: %d):\n%s\n---\n%s", len(c), len(d), len(a),
				strings.Join(c, "\n"), strings.Join(d, "\n"))
		}
		t.Logf("%s: %d statements for the manifest of a 10-page and of a 300-page work, %d when cached", backend, len(c), len(a))
	})
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	n := iiifChildPage + 5
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("A long book")}})[0]
	sets := make([]*shelfmark.NewResource, n)
	for i := range sets {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, n)
	for i := range fss {
		ids[n-1-i] = fss[i].ID // the order is not the order of creation
	}
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	d := readIIIF(t, e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...))
	if len(d.Items) != n {
		t.Fatalf("%d canvases, want %d", len(d.Items), n)
	}
	for i, c := range d.Items {
		if !strings.HasSuffix(c.ID, "/canvas/"+string(ids[i])) {
			t.Fatalf("canvas %d is %s, want page %s", i, c.ID, ids[i])
		}
		if c.Width != 0 || c.Height != 0 {
			t.Fatalf("canvas %d has a size without a characterized image: %d×%d", i, c.Width, c.Height)
		}
	}
	// the read that ran a page ahead has ended with the build
	pageReaderStops(t)
}

// TestIIIFManifestHalves: a manifest reads a book's children as two
// halves at once, split at a position (eachChild), and still lists each
// child the caller may see once, in order: with pages deleted and hidden
// on both sides of the split and at it, and with children not yet
// ordered after the ordered ones, for a reader who sees every page and
// for one who does not. The listing's scan bound is lowered below a half
// and below the run of hidden pages past the split, so that a half's read
// returns fewer children than it asked for and goes on from where its
// scan stopped.
func TestIIIFManifestHalves(t *testing.T) {
	e := newPolicyEnvTuned(t, "sqlite", Options{}, envTuning{maxListScan: 20})
	ctx := context.Background()
	half := iiifChildPage / 2
	n := iiifChildPage + half + 7 // three halves and a bit
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("A ragged book"), Visibility: shelfmark.Public}})[0]
	hidden := map[int]bool{2: true, half - 1: true, half + 1: true, half + 2: true, 2 * half: true, 2*half + 1: true}
	for i := half + 10; i < half+40; i++ {
		hidden[i] = true // a run of hidden pages just past the split
	}
	sets := make([]*shelfmark.NewResource, n)
	for i := range sets {
		v := shelfmark.Public
		if hidden[i+1] {
			v = shelfmark.Private
		}
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Visibility: v}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, n)
	for i := range fss {
		ids[i] = fss[i].ID
	}
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	// deleted at positions on both sides of the split and at it
	deleted := map[int]bool{1: true, 5: true, half: true, half + 3: true, 2*half - 1: true, 2*half + 2: true}
	for p := range deleted {
		if err := e.repo.DeleteResource(ctx, ids[p-1], 0); err != nil {
			t.Fatal(err)
		}
	}
	// children added after the order: after the ordered ones, by key
	more := make([]*shelfmark.NewResource, 12)
	for i := range more {
		v := shelfmark.Public
		if i%4 == 1 {
			v = shelfmark.Private
		}
		more[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Visibility: v}
	}
	extra := e.createAll(ctx, more)
	for _, c := range []struct {
		who     string
		hdrs    []string
		private bool
	}{{"anonymous", anonymously, false}, {"admin", nil, true}} {
		var want []shelfmark.ID
		for i, id := range ids {
			if !deleted[i+1] && (c.private || !hidden[i+1]) {
				want = append(want, id)
			}
		}
		for i, r := range extra {
			if c.private || i%4 != 1 {
				want = append(want, r.ID)
			}
		}
		d := readIIIF(t, e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, c.hdrs...))
		got := make([]shelfmark.ID, len(d.Items))
		for i, it := range d.Items {
			got[i] = shelfmark.ID(it.ID[strings.LastIndex(it.ID, "/")+1:])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d canvases, want %d; first difference at %d", c.who, len(got), len(want), firstDiff(got, want))
		}
	}
	pageReaderStops(t)
}

// firstDiff is the first index at which a and b differ.
func firstDiff[T comparable](a, b []T) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// pageReaderStops fails unless no goroutine is in a manifest's page reader
// (eachChild and its readChildren) within a few seconds: it may still be returning from its
// last step as the answer is written, but never waiting beyond it.
func pageReaderStops(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(st, "eachChild") && !strings.Contains(st, "readChildren") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a reader of a manifest's pages outlived its build:\n%s", st)
		}
	}
}

// prezi3Python is the test virtualenv's python, with iiif-prezi3; without
// the package the test skips, except under CI.
func prezi3Python(t *testing.T) string {
	t.Helper()
	build := os.Getenv("SHELFMARK_BUILD_DIR")
	if build == "" {
		build = filepath.Join("..", ".build")
	}
	py := filepath.Join(build, "venv", "bin", "python")
	if err := exec.Command(py, "-c", "import iiif_prezi3").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("iiif-prezi3 is not installed in %s (scripts/testdeps.sh installs it): %v", py, err)
		}
		t.Skipf("iiif-prezi3 is not installed in %s (scripts/testdeps.sh installs it)", py)
	}
	return py
}

// validatePrezi3 loads a document into iiif-prezi3's models (which follow
// the Presentation 3.0 schema) and fails on any validation error. Without
// the package it skips, except under CI.
func validatePrezi3(t *testing.T, model string, doc []byte) {
	t.Helper()
	py := prezi3Python(t)
	f := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(f, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
from iiif_prezi3 import ` + model + `
with open(sys.argv[1]) as f:
    doc = json.load(f)
m = ` + model + `(**doc)
json.loads(m.json())
`
	out, err := exec.Command(py, "-c", script, f).CombinedOutput()
	if err != nil {
		t.Errorf("iiif-prezi3 refuses the %s: %v\n%s", model, err, out)
	}
}

// BenchmarkIIIFManifest serves the manifest of a 1,200-page scanned book:
// built from the stored rows (to the admin, who is never served from the
// cache) and cached (to anonymous callers), plain and gzipped; and built,
// of a book whose every page has a title and an hOCR and an ALTO file, as
// an OCR'd book's pages have.
func BenchmarkIIIFManifest(b *testing.B) {
	e := newPolicyEnv(b, "sqlite", Options{})
	w, _ := scannedBook(b, e, 1200, shelfmark.Public, titled("Twelve hundred pages"))
	ocrd, _ := scannedBookOf(b, e, bookShape{pages: 1200, vis: shelfmark.Public, meta: titled("Twelve hundred folios"), titled: true, ocrOnEvery: true})
	for _, c := range []struct {
		name string
		book shelfmark.ID
		hdrs []string
	}{{"built", w.ID, nil}, {"built-gzip", w.ID, []string{"Accept-Encoding", "gzip"}}, {"built-ocr", ocrd.ID, nil}, {"built-ocr-gzip", ocrd.ID, []string{"Accept-Encoding", "gzip"}},
		{"cached", w.ID, anonymously}, {"cached-gzip", w.ID, append([]string{"Accept-Encoding", "gzip"}, anonymously...)}} {
		path := "/iiif/" + string(c.book) + "/manifest"
		b.Run(c.name, func(b *testing.B) {
			e.do("GET", path, nil, c.hdrs...)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := e.do("GET", path, nil, c.hdrs...); r.Status != http.StatusOK {
					b.Fatalf("%d", r.Status)
				}
			}
		})
	}
}

// BenchmarkIIIFListPages reads what a manifest's build reads of 500
// pages of a book as OCR leaves it (a title and five files a page:
// original, access copy, thumbnail, hOCR and ALTO), as one of the two
// halves a build reads at once: the part of a build that is most of its
// processor time. Per page, it is the cost of reading a book's rows.
func BenchmarkIIIFListPages(b *testing.B) {
	e := newPolicyEnv(b, "sqlite", Options{})
	w, _ := scannedBookOf(b, e, bookShape{pages: 1200, vis: shelfmark.Public, meta: titled("Twelve hundred folios"), titled: true, ocrOnEvery: true})
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("bench"))
	buf := new(shelfmark.PageBuffer)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pg, err := e.repo.ListPages(ctx, w.ID, shelfmark.PageRequest{Limit: 500, Metadata: true}, buf)
		if err != nil {
			b.Fatal(err)
		}
		if len(pg.Items) != 500 {
			b.Fatalf("%d pages", len(pg.Items))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/500, "µs/page")
}

// TestIIIFManifestOCRBook: a book whose pages have titles of their own
// and an hOCR and an ALTO file each lists each canvas with its title as
// its label (in no language, as the title has none) and both files as
// its seeAlso, hOCR first, each named by profile and labelled, and each
// canvas's ids lead to what they name: its thumbnail's and its OCR's
// bytes. Served anonymously (then from the cache) and to the admin, the
// manifest is the same.
func TestIIIFManifestOCRBook(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w, pages := scannedBookOf(t, e, bookShape{pages: 5, vis: shelfmark.Public, meta: titled("A chronicle"), titled: true, ocrOnEvery: true})
	path := "/iiif/" + string(w.ID) + "/manifest"
	r := e.do("GET", path, nil)
	d := readIIIF(t, r)
	if len(d.Items) != len(pages) {
		t.Fatalf("%d canvases, want %d", len(d.Items), len(pages))
	}
	fetch := func(id string) string {
		u, err := url.Parse(id)
		if err != nil {
			t.Fatal(err)
		}
		return string(e.do("GET", u.RequestURI(), nil).want(t, http.StatusOK).Body)
	}
	for i, c := range d.Items {
		if fmt.Sprint(c.Label) != fmt.Sprintf("map[none:[Folio %d]]", i+1) {
			t.Errorf("canvas %d label %v", i, c.Label)
		}
		if len(c.Thumb) != 1 || fetch(fmt.Sprint(c.Thumb[0]["id"])) != "an access copy" {
			t.Errorf("canvas %d thumbnail %v", i, c.Thumb)
		}
		if len(c.SeeAlso) != 2 {
			t.Fatalf("canvas %d seeAlso %v", i, c.SeeAlso)
		}
		for j, want := range []struct{ profile, format, body string }{
			{hocrProfile, "application/xhtml+xml", "<html/>"}, {altoProfile, "application/xml", "<alto/>"},
		} {
			sa := c.SeeAlso[j]
			label, _ := sa["label"].(map[string]any)
			if sa["profile"] != want.profile || sa["format"] != want.format || sa["type"] != "Dataset" || label["en"] == nil ||
				fetch(fmt.Sprint(sa["id"])) != want.body {
				t.Errorf("canvas %d seeAlso %d: %v", i, j, sa)
			}
		}
	}
	validatePrezi3(t, "Manifest", r.Body)
	for range 2 {
		if got := e.do("GET", path, nil, anonymously...).want(t, http.StatusOK).Body; string(got) != string(r.Body) {
			t.Errorf("anonymous manifest differs from the admin's:\n%.300s\n%.300s", got, r.Body)
		}
	}
}

// TestIIIFManifestBuffers: the buffers a built manifest is written in
// are kept for the next build, but never one the cache of anonymous
// manifests holds: builds of two books, signed in and anonymously,
// interleaved, each answer is the same bytes as that book's and caller's
// first, and the cached ones stay whole while other builds reuse buffers
// (the smaller book's build fits in the larger's buffer). A pool hands a
// buffer back to the processor that kept it, so a buffer given back while
// the cache holds it shows in most runs of this test, not in every one.
//
// The memory the pages are read into (shelfmark.PageBuffer) is reused the
// same way, from one build to the next whoever asks: a private OCR file
// on every other page of A is in each of the admin's manifests of A and
// in none of the anonymous ones, though those are read into the memory
// the admin's were.
func TestIIIFManifestBuffers(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	a, aPages := scannedBook(t, e, 70, shelfmark.Public, titled("Book A"))
	b, _ := scannedBook(t, e, 40, shelfmark.Public, titled("Book B")) // smaller: its build fits in A's buffers
	hocr := e.putBytes("private.hocr", "application/xhtml+xml", []byte("<html/>"))
	hocr.Use = shelfmark.UseOCR
	var private []*shelfmark.NewResource
	for i := 0; i < len(aPages); i += 2 {
		f := *hocr
		private = append(private, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: aPages[i], Visibility: shelfmark.Private, File: &f})
	}
	var hidden []string
	for _, r := range e.createAll(context.Background(), private) {
		hidden = append(hidden, string(r.ID))
	}
	first := map[string][]byte{}
	for round := range 16 {
		for _, w := range []shelfmark.ID{a.ID, b.ID, a.ID} {
			for _, who := range []struct {
				name string
				hdrs []string
			}{{"admin", nil}, {"anonymous", anonymously}} {
				got := e.do("GET", "/iiif/"+string(w)+"/manifest", nil, who.hdrs...).want(t, http.StatusOK).Body
				key := string(w) + " " + who.name
				if w == a.ID {
					for _, id := range hidden {
						if shown := bytes.Contains(got, []byte(id)); shown != (who.name == "admin") {
							t.Fatalf("round %d, %s: the private file %s shown: %v", round, key, id, shown)
						}
					}
				}
				if want, ok := first[key]; !ok {
					first[key] = bytes.Clone(got)
				} else if !bytes.Equal(got, want) {
					t.Fatalf("round %d, %s: the manifest differs from the first (%d bytes against %d)", round, key, len(got), len(want))
				}
			}
		}
	}
	if bytes.Equal(first[string(a.ID)+" admin"], first[string(b.ID)+" admin"]) {
		t.Fatal("the two books' manifests are the same")
	}
}

// TestIIIFCachedGzip: a cached manifest is gzipped once and sent as it
// is to every client that accepts gzip: the same bytes each time, the
// manifest once decompressed, with the uncompressed form's ETag and 304;
// a client that refuses gzip gets it plain, and a signed-in caller's
// built manifest is compressed as any response is.
func TestIIIFCachedGzip(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w, _ := scannedBook(t, e, 30, shelfmark.Public, titled("A gazetteer"))
	path := "/iiif/" + string(w.ID) + "/manifest"
	anonGzip := append([]string{"Accept-Encoding", "gzip"}, anonymously...)
	plain := e.do("GET", path, nil, anonymously...).want(t, http.StatusOK)
	cached := e.do("GET", path, nil, anonymously...).want(t, http.StatusOK)
	if !bytes.Equal(plain.Body, cached.Body) || cached.Header.Get("Content-Encoding") != "" {
		t.Fatalf("the cached manifest differs from the built one, or is encoded %q", cached.Header.Get("Content-Encoding"))
	}
	etag := cached.Header.Get("ETag")
	var first []byte
	for i := range 3 {
		z := e.do("GET", path, nil, anonGzip...).want(t, http.StatusOK)
		if z.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("request %d accepting gzip: Content-Encoding %q", i, z.Header.Get("Content-Encoding"))
		}
		if got := gunzip(t, z.Body); !bytes.Equal(got, plain.Body) {
			t.Fatalf("request %d: the gzipped manifest differs once decompressed (%d vs %d bytes)", i, len(got), len(plain.Body))
		}
		// a Content-Length: the bytes were kept, not compressed on the way out
		if z.Header.Get("Content-Length") != strconv.Itoa(len(z.Body)) || z.Header.Get("ETag") != etag ||
			z.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(z.Header.Get("Cache-Control"), "public") {
			t.Errorf("request %d: Content-Length %q for %d bytes, ETag %q (plain %q), headers %v", i,
				z.Header.Get("Content-Length"), len(z.Body), z.Header.Get("ETag"), etag, z.Header)
		}
		wantVary(t, z)
		if first == nil {
			first = z.Body
		} else if !bytes.Equal(z.Body, first) {
			t.Errorf("request %d: other gzipped bytes than the first (compressed again)", i)
		}
	}
	if len(first) >= len(plain.Body)/4 {
		t.Errorf("%d bytes gzipped from %d", len(first), len(plain.Body))
	}
	e.do("GET", path, nil, append([]string{"If-None-Match", etag}, anonGzip...)...).want(t, http.StatusNotModified)
	head := e.do("HEAD", path, nil, anonGzip...).want(t, http.StatusOK)
	if len(head.Body) != 0 || head.Header.Get("Content-Length") != strconv.Itoa(len(first)) || head.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("HEAD: %d bytes, Content-Length %s, Content-Encoding %q", len(head.Body), head.Header.Get("Content-Length"), head.Header.Get("Content-Encoding"))
	}
	refused := e.do("GET", path, nil, append([]string{"Accept-Encoding", "gzip;q=0, identity"}, anonymously...)...).want(t, http.StatusOK)
	if refused.Header.Get("Content-Encoding") != "" || !bytes.Equal(refused.Body, plain.Body) {
		t.Errorf("gzip refused: Content-Encoding %q", refused.Header.Get("Content-Encoding"))
	}
	signed := e.do("GET", path, nil, "Accept-Encoding", "gzip").want(t, http.StatusOK)
	if signed.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, signed.Body), plain.Body) ||
		!strings.Contains(signed.Header.Get("Cache-Control"), "private") {
		t.Errorf("signed in: Content-Encoding %q, Cache-Control %q", signed.Header.Get("Content-Encoding"), signed.Header.Get("Cache-Control"))
	}
}

// TestIIIFBuiltGzip: a manifest built for a signed-in caller that
// accepts gzip, large enough for its hash and its compression to be done
// side by side, is sent compressed as it was made (with its length), the
// manifest once decompressed, with the plain answer's ETag, answering 304
// to it, and private; compressed twice (the writers and buffers kept from
// one build to the next), it is the same manifest.
func TestIIIFBuiltGzip(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w, _ := scannedBook(t, e, 200, shelfmark.Public, titled("A directory"))
	path := "/iiif/" + string(w.ID) + "/manifest"
	plain := e.do("GET", path, nil).want(t, http.StatusOK)
	if len(plain.Body) < 64<<10 {
		t.Fatalf("a manifest of %d bytes: too small to be compressed beside its hash", len(plain.Body))
	}
	etag := plain.Header.Get("ETag")
	for i := range 2 {
		z := e.do("GET", path, nil, "Accept-Encoding", "gzip").want(t, http.StatusOK)
		if z.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(gunzip(t, z.Body), plain.Body) {
			t.Fatalf("request %d: Content-Encoding %q, or other bytes once decompressed", i, z.Header.Get("Content-Encoding"))
		}
		if z.Header.Get("Content-Length") != strconv.Itoa(len(z.Body)) || z.Header.Get("ETag") != etag || etag == "" ||
			!strings.Contains(z.Header.Get("Cache-Control"), "private") || len(z.Body) >= len(plain.Body)/4 {
			t.Errorf("request %d: Content-Length %q for %d bytes (of %d), ETag %q (plain %q), headers %v", i,
				z.Header.Get("Content-Length"), len(z.Body), len(plain.Body), z.Header.Get("ETag"), etag, z.Header)
		}
		wantVary(t, z)
	}
	e.do("GET", path, nil, "Accept-Encoding", "gzip", "If-None-Match", etag).want(t, http.StatusNotModified)
}

// TestIIIFCacheFresh: a cached manifest is not served once a change
// touches the work, one of its pages or one of their files; a change
// elsewhere leaves it cached.
func TestIIIFCacheFresh(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		ctx := context.Background()
		w, pages := scannedBook(t, e, 3, shelfmark.Public, titled("A herbal"))
		path := "/iiif/" + string(w.ID) + "/manifest"
		get := func() (*iiifDoc, []string) {
			t.Helper()
			mark := e.tr.mark()
			d := readIIIF(t, e.do("GET", path, nil, anonymously...))
			return d, e.tr.since(mark)
		}
		readsFiles := func(stmts []string) bool {
			return strings.Contains(strings.Join(stmts, "\n"), "file")
		}
		get()
		if d, st := get(); len(d.Items) != 3 || readsFiles(st) {
			t.Fatalf("the second read: %d canvases, built anew: %v", len(d.Items), readsFiles(st))
		}
		// a change elsewhere
		scannedBook(t, e, 2, shelfmark.Public, titled("Another"))
		if _, st := get(); readsFiles(st) {
			t.Error("a change of another work rebuilt the manifest")
		}
		// a new page
		fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
		if d, _ := get(); len(d.Items) != 4 {
			t.Errorf("after a page was added: %d canvases", len(d.Items))
		}
		// a new file of a page: its OCR
		oc := e.putBytes("p.hocr", "application/xhtml+xml", []byte("<html/>"))
		oc.Use = shelfmark.UseOCR
		e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: pages[0], File: oc}})
		if d, _ := get(); len(d.Items[0].SeeAlso) != 1 {
			t.Errorf("after an OCR file was added to page 1: seeAlso %v", d.Items[0].SeeAlso)
		}
		// a new order
		order := []shelfmark.ID{fs.ID, pages[2], pages[1], pages[0]}
		if _, err := e.repo.SetOrder(ctx, w.ID, order, 0); err != nil {
			t.Fatal(err)
		}
		if d, _ := get(); !strings.HasSuffix(d.Items[0].ID, string(fs.ID)) || !strings.HasSuffix(d.Items[3].ID, string(pages[0])) {
			t.Errorf("after a new order: first canvas %s, last %s", d.Items[0].ID, d.Items[3].ID)
		}
		// a page made private, then deleted
		priv := shelfmark.Private
		if _, err := e.repo.UpdateResource(ctx, pages[1], shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
			t.Fatal(err)
		}
		if d, _ := get(); len(d.Items) != 3 {
			t.Errorf("after a page was made private: %d canvases for anonymous", len(d.Items))
		}
		if err := e.repo.DeleteResource(ctx, pages[2], 0); err != nil {
			t.Fatal(err)
		}
		if d, _ := get(); len(d.Items) != 2 {
			t.Errorf("after a page was deleted: %d canvases", len(d.Items))
		}
		// the work made private
		if _, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
			t.Fatal(err)
		}
		if r := e.do("GET", path, nil, anonymously...); r.Status != http.StatusNotFound {
			t.Errorf("after the work was made private: %d for anonymous", r.Status)
		}
	})
}

// TestIIIFManifestPDFPage: a page whose original is a PDF gets a canvas
// of its first page's size in points, as characterization read it,
// painted with its access copy.
func TestIIIFManifestPDFPage(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("A patent")}})[0]
	fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
	pdf := e.putBytes("patent.pdf", "application/pdf", []byte("%PDF-1.4 a patent"))
	pdf.Format = &shelfmark.Format{PRONOM: "fmt/18", Name: "Acrobat PDF 1.4", MediaType: "application/pdf", Pages: 3, Width: 612, Height: 792}
	acc := e.putBytes("patent.access.jpg", "image/jpeg", []byte("page one"))
	acc.Use = shelfmark.UseAccess
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: pdf}, {Kind: shelfmark.KindFile, Parent: fs.ID, File: acc}})
	r := e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...)
	d := readIIIF(t, r)
	if len(d.Items) != 1 || d.Items[0].Width != 612 || d.Items[0].Height != 792 {
		t.Fatalf("canvas %+v", d.Items)
	}
	if body := d.Items[0].Items[0].Items[0].Body; !strings.HasSuffix(fmt.Sprint(body["id"]), "/content") || body["format"] != "image/jpeg" {
		t.Errorf("painting body %v", body)
	}
	validatePrezi3(t, "Manifest", r.Body)
}

// TestIIIFManifestReaderStops: a build that fails on its first page (a PDF
// page whose tiles are not in the store) answers an error, and the reader
// that ran a page ahead of it stops with it, though it was waiting to hand
// on the next page.
func TestIIIFManifestReaderStops(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	// three reads: the third waits to be taken when the first fails
	n := 2*iiifChildPage + 5
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("A broken book")}})[0]
	sets := make([]*shelfmark.NewResource, n)
	for i := range sets {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	fss := e.createAll(ctx, sets)
	// the first page: a PDF whose tiles archive is not in the store
	e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFile, Parent: fss[0].ID, File: &shelfmark.File{Name: "p.pdf", MediaType: "application/pdf", Size: 100,
			SHA256: strings.Repeat("e", 64), Use: shelfmark.UseOriginal}},
		{Kind: shelfmark.KindFile, Parent: fss[0].ID, File: &shelfmark.File{Name: "p.tiles.zip", MediaType: "application/zip", Size: 100,
			SHA256: strings.Repeat("f", 64), Use: shelfmark.UseTiles}},
	})
	if r := e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil); r.Status == http.StatusOK {
		t.Fatalf("a manifest whose first page cannot be read: %d %s", r.Status, r.Body)
	}
	pageReaderStops(t)
}
