package http

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/worker"
)

// needVips skips a test without vips, except under CI.
func needVips(t *testing.T) worker.Tools {
	t.Helper()
	tools := worker.FindTools()
	tools.TempDir = t.TempDir()
	if tools.Vips == "" || tools.Vipsthumbnail == "" {
		if os.Getenv("CI") != "" || os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
			t.Fatal("vips is not installed (scripts/testdeps.sh installs it)")
		}
		t.Skip("vips is not installed")
	}
	return tools
}

// tiledPage stores a page image (PNG bytes) in a new file set of work w
// with the derivatives the derive job makes (thumbnail, access copy,
// tiles, made by the same tools) and returns the file set and the tiles
// archive's path.
func tiledPage(t *testing.T, e *policyEnv, tools worker.Tools, w shelfmark.ID, img []byte) (*shelfmark.Resource, string) {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(src, img, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	thumb, err := tools.Thumbnail(ctx, src, "image/png", worker.ThumbnailSize)
	if err != nil {
		t.Fatal(err)
	}
	access, err := tools.Access(ctx, src, "image/png", worker.AccessSize)
	if err != nil {
		t.Fatal(err)
	}
	pyr, err := tools.Tiles(ctx, src, "image/png", []shelfmark.TileSize{
		{Width: thumb.Width, Height: thumb.Height, Use: shelfmark.UseThumbnail},
		{Width: access.Width, Height: access.Height, Use: shelfmark.UseAccess}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pyr.Close() })
	zb, err := os.ReadFile(pyr.Path)
	if err != nil {
		t.Fatal(err)
	}
	fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w}})[0]
	orig := e.putBytes("page.png", "image/png", img)
	orig.Format = &shelfmark.Format{PRONOM: "fmt/13", Name: "Portable Network Graphics", MediaType: "image/png", Width: cfg.Width, Height: cfg.Height}
	th := e.putBytes("page.thumbnail.jpg", "image/jpeg", thumb.Data)
	ac := e.putBytes("page.access.jpg", "image/jpeg", access.Data)
	ti := e.putBytes("page.tiles.zip", "application/zip", zb)
	th.Use, ac.Use, ti.Use = shelfmark.UseThumbnail, shelfmark.UseAccess, shelfmark.UseTiles
	var files []*shelfmark.NewResource
	for _, f := range []*shelfmark.File{orig, th, ac, ti} {
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: f})
	}
	e.createAll(ctx, files)
	return fs, pyr.Path
}

// tiledWork makes a public work of one page image (PNG bytes) with its
// derivatives (tiledPage), in a new environment, and returns the
// environment, the work, its page and the page's tiles archive.
func tiledWork(t *testing.T, tools worker.Tools, title string, img []byte) (*policyEnv, *shelfmark.Resource, *shelfmark.Resource, string) {
	t.Helper()
	e := newPolicyEnv(t, "sqlite", Options{})
	w := e.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled(title)}})[0]
	fs, zpath := tiledPage(t, e, tools, w.ID, img)
	return e, w, fs, zpath
}

// gradient is a w × h PNG.
func gradient(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 120, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// imageInfo is an info.json as tests read it.
type imageInfo struct {
	Context   string              `json:"@context"`
	ID        string              `json:"id"`
	Type      string              `json:"type"`
	Profile   string              `json:"profile"`
	Width     int                 `json:"width"`
	Height    int                 `json:"height"`
	MaxWidth  int                 `json:"maxWidth"`
	MaxHeight int                 `json:"maxHeight"`
	Sizes     []map[string]int    `json:"sizes"`
	Tiles     []shelfmark.TileSet `json:"tiles"`
}

// TestIIIFImage serves a 2,000 × 1,100 page through the Image API: the
// base URI redirects to info.json, which describes the pyramid; every
// tile of the archive is served as stored, under its level 0 request; the
// whole image at max and at the listed sizes is the access copy and the
// thumbnail; the manifest paints the page from the service.
func TestIIIFImage(t *testing.T) {
	tools := needVips(t)
	e, w, fs, zpath := tiledWork(t, tools, "Atlas", gradient(t, 2000, 1100))
	svc := "/iiif/" + string(fs.ID) + "/image"

	// the base URI
	req, _ := http.NewRequest("GET", e.ts.URL+svc, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), svc+"/info.json") {
		t.Errorf("base URI: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}

	// info.json
	r := e.do("GET", svc+"/info.json", nil, anonymously...)
	var info imageInfo
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &info) != nil {
		t.Fatalf("info.json: %d %s", r.Status, r.Body)
	}
	if info.Context != imageContext || info.Type != "ImageService3" || info.Profile != "level2" || !strings.HasSuffix(info.ID, svc) ||
		info.Width != 2000 || info.Height != 1100 || info.MaxWidth != 1600 || info.MaxHeight != 880 {
		t.Errorf("info.json: %s", r.Body)
	}
	// two sizes beside three levels would be read as levels by
	// OpenSeadragon (see infoSizes): the sizes are served, not listed
	if len(info.Tiles) != 1 || info.Tiles[0].Width != 512 || fmt.Sprint(info.Tiles[0].ScaleFactors) != "[1 2 4]" || info.Sizes != nil {
		t.Errorf("info.json tiles %v, sizes %v", info.Tiles, info.Sizes)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("info.json headers %v", r.Header)
	}
	if ld := e.do("GET", svc+"/info.json", nil, "Accept", "application/ld+json"); !strings.HasPrefix(ld.Header.Get("Content-Type"), "application/ld+json;profile=") {
		t.Errorf("info.json asked for as JSON-LD: %q", ld.Header.Get("Content-Type"))
	}

	// every tile, as stored
	zr, err := zip.OpenReader(zpath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tiles := 0
	for _, f := range zr.File {
		if f.Name == shelfmark.TileInfoName {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := io.ReadAll(rc)
		rc.Close()
		r := e.do("GET", svc+"/"+f.Name, nil, anonymously...)
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, want) || r.Header.Get("Content-Type") != "image/jpeg" {
			t.Errorf("tile %s: %d %q, %d bytes, want the archive's %d", f.Name, r.Status, r.Header.Get("Content-Type"), len(r.Body), len(want))
		}
		tiles++
	}
	if tiles != 4*3+2*2+1 { // 2,000 × 1,100 in 512-pixel tiles at scale 1, 2 and 4
		t.Errorf("%d tiles, want 17", tiles)
	}

	// the whole image: max is the access copy, the sizes are the thumbnail and the access copy
	for path, want := range map[string][2]int{
		"full/max/0/default.jpg":      {1600, 880},
		"full/1600,880/0/default.jpg": {1600, 880},
		"full/400,/0/default.jpg":     {400, 220},
		"full/,220/0/default.jpg":     {400, 220},
		"full/!400,400/0/default.jpg": {400, 220},
	} {
		r := e.do("GET", svc+"/"+path, nil, anonymously...)
		img, _, err := image.DecodeConfig(bytes.NewReader(r.Body))
		if r.Status != http.StatusOK || err != nil || img.Width != want[0] || img.Height != want[1] {
			t.Errorf("%s: %d, %v, %d × %d; want %v", path, r.Status, err, img.Width, img.Height, want)
		}
	}

	// revalidation
	first := e.do("GET", svc+"/0,0,512,512/512,512/0/default.jpg", nil, anonymously...)
	again := e.do("GET", svc+"/0,0,512,512/512,512/0/default.jpg", nil, "Authorization", "", "If-None-Match", first.Header.Get("ETag"))
	if first.Header.Get("ETag") == "" || again.Status != http.StatusNotModified {
		t.Errorf("If-None-Match %q: %d", first.Header.Get("ETag"), again.Status)
	}

	// the manifest paints the page from its service
	d := readIIIF(t, e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...))
	if len(d.Items) != 1 || d.Items[0].Width != 2000 || d.Items[0].Height != 1100 {
		t.Fatalf("manifest: %+v", d.Items)
	}
	body := d.Items[0].Items[0].Items[0].Body
	b, _ := json.Marshal(body)
	if !strings.HasSuffix(fmt.Sprint(body["id"]), svc+"/full/max/0/default.jpg") || !strings.Contains(string(b), `"type":"ImageService3"`) ||
		!strings.Contains(string(b), `"profile":"level2"`) {
		t.Errorf("painting body %s", b)
	}
	raw := e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...)
	validatePrezi3(t, "Manifest", raw.Body)
}

// TestIIIFImageBadRequests: each request the service cannot answer gets
// a 400 that says why (a 501 for upscaling, which it does not offer); ids
// that are not pages get a 404 that says what they are.
func TestIIIFImageBadRequests(t *testing.T) {
	tools := needVips(t)
	e, w, fs, _ := tiledWork(t, tools, "Atlas", gradient(t, 1300, 700))
	ctx := context.Background()
	svc := "/iiif/" + string(fs.ID) + "/image/"
	for _, c := range []struct{ path, want string }{
		{"1300,0,10,10/10,10/0/default.jpg", "outside the image"},
		{"0,5000,10,10/10,10/0/default.jpg", "outside the image"},
		{"0,0,0,10/max/0/default.jpg", "no width or height"},
		{"0,0,512,512/0,0/0/default.jpg", "without width or height"},
		{"0,0,512,512/0,/0/default.jpg", "without width or height"},
		{"full/99999999,/0/default.jpg", "larger than the region"},
		{"full/999999999,/0/default.jpg", "is not max"},
		{"a,b,c,d/max/0/default.jpg", "is not full"},
		{"0,0,512/max/0/default.jpg", "is not full"},
		{"-1,0,512,512/max/0/default.jpg", "is not full"},
		{"full/max/361/default.jpg", "from 0 to 360"},
		{"full/max/abc/default.jpg", "from 0 to 360"},
		{"full/max/NaN/default.jpg", "from 0 to 360"},
		{"full/max/0/sepia.jpg", "is not one of"},
		{"full/max/0/default.exe", "not an Image API format"},
		{"full/max/0/default.webp", "jpg and png"},
		{"full/max/45/default.jpg", "0, 90, 180 or 270"},
		{"full/max/0/default", "{quality}.{format}"},
	} {
		r := e.do("GET", svc+c.path, nil, anonymously...)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %d %s, want 400 with %q", c.path, r.Status, r.Body, c.want)
		}
	}
	// a size after ^ that needs upscaling is not implemented (501)
	for _, p := range []string{"full/^max/0/default.jpg", "full/^2000,/0/default.jpg"} {
		if r := e.do("GET", svc+p, nil, anonymously...); r.Status != http.StatusNotImplemented || !strings.Contains(string(r.Body), "upscaling") {
			t.Errorf("%s: %d %s, want 501 about upscaling", p, r.Status, r.Body)
		}
	}
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Maps")}})[0]
	bare := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
	for _, c := range []struct{ id, want string }{
		{string(w.ID), "is a work"},
		{string(coll.ID), "not a page"},
		{string(bare.ID), "no image tiles"},
		{"not-an-id", ""},
	} {
		r := e.do("GET", "/iiif/"+c.id+"/image/info.json", nil, anonymously...)
		if r.Status/100 != 4 || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("info.json of %s: %d %s, want 4xx with %q", c.id, r.Status, r.Body, c.want)
		}
	}
}

// TestIIIFImageAccess: a private page's service is 404 to whoever may not
// read it, private (no other origins, no shared caches) to whoever may,
// and a page whose work becomes private stops being served at once.
func TestIIIFImageAccess(t *testing.T) {
	tools := needVips(t)
	e, w, fs, _ := tiledWork(t, tools, "Letters", gradient(t, 600, 800))
	ctx := context.Background()
	tile := "/iiif/" + string(fs.ID) + "/image/0,0,512,512/512,512/0/default.jpg"
	info := "/iiif/" + string(fs.ID) + "/image/info.json"
	for _, p := range []string{tile, info} {
		if r := e.do("GET", p, nil, anonymously...); r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("public %s: %d %v", p, r.Status, r.Header)
		}
	}
	priv := shelfmark.Private
	if _, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tile, info} {
		if r := e.do("GET", p, nil, anonymously...); r.Status != http.StatusNotFound {
			t.Errorf("%s of a work made private, anonymously: %d", p, r.Status)
		}
		r := e.do("GET", p, nil) // the admin
		if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(r.Header.Get("Cache-Control"), "private") {
			t.Errorf("%s of a private work, to the admin: %d %v", p, r.Status, r.Header)
		}
	}
}

// TestIIIFImageValidator runs the IIIF consortium's validator
// (iiif-validator, installed by scripts/testdeps.sh) at level 2, the
// level info.json claims, on its test image served by Shelfmark.
func TestIIIFImageValidator(t *testing.T) {
	tools := needVips(t)
	build := os.Getenv("SHELFMARK_BUILD_DIR")
	if build == "" {
		build = filepath.Join("..", ".build")
	}
	py := filepath.Join(build, "venv", "bin", "python")
	validate := filepath.Join(build, "venv", "bin", "iiif-validate.py")
	if _, err := os.Stat(validate); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("iiif-validator is not installed in %s (scripts/testdeps.sh installs it)", build)
		}
		t.Skip("iiif-validator is not installed (scripts/testdeps.sh installs it)")
	}
	// the validator's test image: 10 × 10 squares of 100 pixels in the
	// colours its package lists
	out, err := exec.Command(py, "-c", "import json; from iiif_validator.validator import ValidationInfo; print(json.dumps(ValidationInfo().colorInfo))").Output()
	if err != nil {
		t.Fatal(err)
	}
	var colours [10][10][3]uint8
	if i := bytes.IndexByte(out, '['); i >= 0 { // the package prints a line on import
		out = out[i:]
	}
	if err := json.Unmarshal(out, &colours); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 1000, 1000))
	for y := 0; y < 1000; y++ {
		for x := 0; x < 1000; x++ {
			c := colours[x/100][y/100]
			img.Set(x, y, color.RGBA{c[0], c[1], c[2], 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	e, _, fs, _ := tiledWork(t, tools, "Squares", buf.Bytes())
	ctx := context.Background()
	host := strings.TrimPrefix(e.ts.URL, "http://")
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, py, validate, "-s", host, "-p", "iiif/"+string(fs.ID), "-i", "image", "--version=3.0", "--level", "2")
	res, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(res), "0 failures") {
		t.Errorf("iiif-validator at level 2: %v\n%s", err, res)
	}
	t.Logf("%s", res)
	// and the tests of the features beyond level 2 that info.json lists
	// in extraFeatures
	cmd = exec.CommandContext(cctx, py, validate, "-s", host, "-p", "iiif/"+string(fs.ID), "-i", "image", "--version=3.0",
		"--test", "rot_mirror", "--test", "rot_mirror_180", "--test", "linkheader_canonical", "--test", "linkheader_profile")
	res, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(res), "(4 tests, 0 failures)") {
		t.Errorf("iiif-validator, extra features: %v\n%s", err, res)
	}
	t.Logf("%s", res)
}

// TestIIIFImagePDF: a page whose original is a PDF gets a canvas per PDF
// page, each painted from that page's image service (/iiif/{page}~n/image),
// which serves the page's tiles and the rendered page as max, and composes
// other requests from that page's tiles.
func TestIIIFImagePDF(t *testing.T) {
	tools := needVips(t)
	if tools.Pdftoppm == "" {
		t.Skip("pdftoppm is not installed")
	}
	ctx := context.Background()
	doc := gen.PDF(5, 1, strings.Repeat("a page of a patent to read ", 700))
	if _, err := tools.PDFTiles(ctx, filepath.Join(t.TempDir(), "x.pdf")); err == nil {
		t.Fatal("a missing PDF made tiles")
	}
	src := filepath.Join(t.TempDir(), "patent.pdf")
	if err := os.WriteFile(src, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	pyr, err := tools.PDFTiles(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer pyr.Close()
	pages := len(pyr.Info.Pages)
	zb, err := os.ReadFile(pyr.Path)
	if err != nil || pages < 2 {
		t.Fatalf("%d pages, %v", pages, err)
	}
	e := newPolicyEnv(t, "sqlite", Options{})
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("A patent")}})[0]
	fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
	orig := e.putBytes("patent.pdf", "application/pdf", doc)
	orig.Format = &shelfmark.Format{PRONOM: "fmt/18", Name: "Acrobat PDF 1.4", MediaType: "application/pdf", Pages: pages, Width: 612, Height: 792}
	ti := e.putBytes("patent.tiles.zip", "application/zip", zb)
	ti.Use = shelfmark.UseTiles
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: orig}, {Kind: shelfmark.KindFile, Parent: fs.ID, File: ti}})

	r := e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...)
	d := readIIIF(t, r)
	if len(d.Items) != pages {
		t.Fatalf("%d canvases for a PDF of %d pages", len(d.Items), pages)
	}
	for i, c := range d.Items {
		svc := "/iiif/" + string(fs.ID) + "~" + fmt.Sprint(i+1) + "/image"
		body, _ := json.Marshal(c.Items[0].Items[0].Body)
		if c.Width != pyr.Info.Pages[i].Width || c.Height != pyr.Info.Pages[i].Height || !strings.Contains(string(body), svc) {
			t.Errorf("canvas %d: %d × %d, %s", i+1, c.Width, c.Height, body)
		}
		if i > 0 && (!strings.HasSuffix(c.ID, "/canvas/"+string(fs.ID)+"/"+fmt.Sprint(i+1)) || !strings.Contains(fmt.Sprint(c.Label), fmt.Sprintf("PDF page %d", i+1))) {
			t.Errorf("canvas %d: %s %v", i+1, c.ID, c.Label)
		}
	}
	validatePrezi3(t, "Manifest", r.Body)

	// page 2's service
	svc := "/iiif/" + string(fs.ID) + "~2/image"
	var info imageInfo
	ir := e.do("GET", svc+"/info.json", nil, anonymously...)
	if ir.Status != http.StatusOK || json.Unmarshal(ir.Body, &info) != nil || !strings.HasSuffix(info.ID, svc) ||
		info.Width != pyr.Info.Pages[1].Width || info.Height != pyr.Info.Pages[1].Height {
		t.Fatalf("info.json of page 2: %d %s", ir.Status, ir.Body)
	}
	for path, want := range map[string][2]int{
		"full/max/0/default.jpg":            {info.Width, info.Height},
		"0,0,512,512/512,512/0/default.jpg": {512, 512},
		// composed from page 2's own tiles (level 2)
		"0,0,300,200/150,/90/gray.png": {100, 150},
		"full/pct:10/0/default.jpg":    {(info.Width + 5) / 10, (info.Height + 5) / 10},
	} {
		r := e.do("GET", svc+"/"+path, nil, anonymously...)
		cfg, _, err := image.DecodeConfig(bytes.NewReader(r.Body))
		if r.Status != http.StatusOK || err != nil || cfg.Width != want[0] || cfg.Height != want[1] {
			t.Errorf("page 2, %s: %d, %v, %d × %d; want %v", path, r.Status, err, cfg.Width, cfg.Height, want)
		}
	}
	for _, c := range []struct {
		id   string
		code int
		want string
	}{
		{string(fs.ID), 404, "is a PDF"},
		{string(fs.ID) + "~" + fmt.Sprint(pages+1), 404, "has no image service"},
		{string(fs.ID) + "~0", 400, "page number"},
		{string(fs.ID) + "~02", 400, "page number"},
		{string(fs.ID) + "~x", 400, "page number"},
	} {
		r := e.do("GET", "/iiif/"+c.id+"/image/info.json", nil, anonymously...)
		if r.Status != c.code || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("info.json of %s: %d %s, want %d with %q", c.id, r.Status, r.Body, c.code, c.want)
		}
	}
}
