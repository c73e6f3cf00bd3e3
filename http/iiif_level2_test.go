package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// quarters is testkit.Quadrants as a PNG.
func quarters(t *testing.T, w, h int) []byte {
	t.Helper()
	m := testkit.Quadrants(w, h)
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 255, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
	white = color.RGBA{255, 255, 255, 255}
	black = color.RGBA{0, 0, 0, 255}
)

// nearColour reports whether c is within 48 of want in each channel.
func nearColour(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { return int(a>>8)-int(b) < 48 && int(b)-int(a>>8) < 48 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// TestIIIFImageLevel2 serves a 1,300 × 700 page of four coloured quarters
// at level 2: info.json says so and states its limits; each form of each
// parameter is decoded and checked on the image served (its size, the
// colours at known places, gray really gray, bitonal only black and
// white); composed images revalidate and carry their canonical URI.
func TestIIIFImageLevel2(t *testing.T) {
	tools := needVips(t)
	e, _, fs, _ := tiledWork(t, tools, "Quarters", quarters(t, 1300, 700))
	svc := "/iiif/" + string(fs.ID) + "/image"

	r := e.do("GET", svc+"/info.json", nil, anonymously...)
	var info struct {
		imageInfo
		MaxArea        int      `json:"maxArea"`
		ExtraQualities []string `json:"extraQualities"`
		ExtraFeatures  []string `json:"extraFeatures"`
		ExtraFormats   []string `json:"extraFormats"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &info) != nil {
		t.Fatalf("info.json: %d %s", r.Status, r.Body)
	}
	if info.Profile != "level2" || info.MaxWidth < 1300 || info.MaxHeight < 700 || info.MaxArea < 1300*700 ||
		fmt.Sprint(info.ExtraQualities) != "[color gray bitonal]" || !slices.Contains(info.ExtraFeatures, "mirroring") || info.ExtraFormats != nil {
		t.Errorf("info.json: %s", r.Body)
	}

	type px struct {
		x, y int
		c    color.RGBA
	}
	for _, c := range []struct {
		path string
		w, h int
		px   []px
	}{
		{"full/max/0/default.png", 1300, 700, []px{{10, 10, red}, {1290, 10, green}, {10, 690, blue}, {1290, 690, white}}},
		{"0,0,650,350/max/0/default.png", 650, 350, []px{{5, 5, red}, {640, 340, red}}},
		{"650,0,650,350/325,/0/default.jpg", 325, 175, []px{{5, 5, green}, {320, 170, green}}},
		{"600,300,100,100/max/0/default.png", 100, 100, []px{{10, 10, red}, {90, 10, green}, {10, 90, blue}, {90, 90, white}}},
		{"pct:50,50,50,50/max/0/default.png", 650, 350, []px{{5, 5, white}, {640, 340, white}}},
		{"pct:0,50,50,50/,175/0/default.jpg", 325, 175, []px{{160, 80, blue}}},
		{"square/200,/0/default.png", 200, 200, []px{{10, 10, red}, {190, 10, green}, {10, 190, blue}, {190, 190, white}}},
		{"1200,600,500,500/max/0/default.png", 100, 100, []px{{50, 50, white}}}, // cut at the image's edge
		{"full/pct:25/0/default.jpg", 325, 175, []px{{10, 10, red}, {315, 165, white}}},
		{"full/!300,300/0/default.jpg", 300, 162, []px{{10, 10, red}, {290, 10, green}}},
		{"full/200,100/0/default.jpg", 200, 100, []px{{10, 10, red}, {190, 90, white}}},
		{"full/650,/90/default.png", 350, 650, []px{{340, 10, red}, {10, 10, blue}, {340, 640, green}, {10, 640, white}}},
		{"full/650,/180/default.png", 650, 350, []px{{10, 10, white}, {640, 340, red}}},
		{"full/650,/270/default.png", 350, 650, []px{{10, 10, green}, {340, 640, blue}}},
		{"full/650,/!0/default.png", 650, 350, []px{{10, 10, green}, {640, 10, red}}},
		{"full/650,/!90/default.jpg", 350, 650, []px{{340, 10, green}, {10, 10, white}}},
		{"full/650,/0/color.jpg", 650, 350, []px{{10, 10, red}, {640, 10, green}}},
		{"full/650,/0/bitonal.png", 650, 350, []px{{10, 10, black}, {640, 10, white}, {10, 340, black}, {640, 340, white}}},
	} {
		r := e.do("GET", svc+"/"+c.path, nil, anonymously...)
		m, format, err := image.Decode(bytes.NewReader(r.Body))
		if r.Status != http.StatusOK || err != nil || r.Header.Get("Content-Type") != "image/"+format ||
			m.Bounds().Dx() != c.w || m.Bounds().Dy() != c.h {
			t.Errorf("%s: %d %q, %v, %v; want %d × %d", c.path, r.Status, r.Header.Get("Content-Type"), err, m, c.w, c.h)
			continue
		}
		for _, want := range c.px {
			if got := m.At(want.x, want.y); !nearColour(got, want.c) {
				t.Errorf("%s: pixel %d,%d is %v, want %v", c.path, want.x, want.y, got, want.c)
			}
		}
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Cache-Control"), "public") {
			t.Errorf("%s: headers %v", c.path, r.Header)
		}
	}

	// gray is gray: one channel in a JPEG, grey pixels in a PNG
	r = e.do("GET", svc+"/full/650,/0/gray.jpg", nil, anonymously...)
	if m, _, err := image.Decode(bytes.NewReader(r.Body)); err != nil || m.ColorModel() != color.GrayModel {
		t.Errorf("gray.jpg: %v, %v", err, m)
	}
	r = e.do("GET", svc+"/full/650,/0/gray.png", nil, anonymously...)
	m, _, err := image.Decode(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("gray.png: %v", err)
	}
	for y := 0; y < m.Bounds().Dy(); y += 7 {
		for x := 0; x < m.Bounds().Dx(); x += 7 {
			if cr, cg, cb, _ := m.At(x, y).RGBA(); cr != cg || cg != cb {
				t.Fatalf("gray.png: pixel %d,%d is %v", x, y, m.At(x, y))
			}
		}
	}
	// bitonal is black and white only
	r = e.do("GET", svc+"/full/650,/0/bitonal.png", nil, anonymously...)
	if m, _, err = image.Decode(bytes.NewReader(r.Body)); err != nil {
		t.Fatal(err)
	}
	for y := 0; y < m.Bounds().Dy(); y++ {
		for x := 0; x < m.Bounds().Dx(); x++ {
			if c := color.GrayModel.Convert(m.At(x, y)).(color.Gray); c.Y != 0 && c.Y != 255 {
				t.Fatalf("bitonal.png: pixel %d,%d is %v", x, y, c)
			}
		}
	}

	// a composed image names its canonical URI and revalidates
	first := e.do("GET", svc+"/pct:0,0,50,50/325,175/0/default.jpg", nil, anonymously...)
	if !strings.Contains(first.Header.Get("Link"), svc+`/0,0,650,350/325,175/0/default.jpg>;rel="canonical"`) ||
		!strings.Contains(first.Header.Get("Link"), `<http://iiif.io/api/image/3/level2.json>;rel="profile"`) {
		t.Errorf("Link %q", first.Header.Get("Link"))
	}
	again := e.do("GET", svc+"/pct:0,0,50,50/325,175/0/default.jpg", nil, "Authorization", "", "If-None-Match", first.Header.Get("ETag"))
	if first.Header.Get("ETag") == "" || again.Status != http.StatusNotModified {
		t.Errorf("If-None-Match %q: %d", first.Header.Get("ETag"), again.Status)
	}
	other := e.do("GET", svc+"/pct:0,0,50,50/325,175/0/default.png", nil, anonymously...)
	if other.Header.Get("ETag") == first.Header.Get("ETag") {
		t.Errorf("the PNG and the JPEG of a region share the ETag %s", first.Header.Get("ETag"))
	}

	// the answers the spec asks for when a request cannot be served
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"1300,0,10,10/max/0/default.jpg", 400, "outside the image"},
		{"0,0,0,10/max/0/default.jpg", 400, "no width or height"},
		{"pct:0,0,50,50/651,/0/default.jpg", 400, "larger than the region"},
		{"full/pct:101/0/default.jpg", 400, "larger than the region"},
		{"full/^pct:101/0/default.jpg", 501, "upscaling"},
		{"full/^1301,/0/default.jpg", 501, "upscaling"},
		{"full/^max/0/default.jpg", 501, "upscaling"},
		{"full/max/45/default.jpg", 400, "0, 90, 180 or 270"},
		{"full/max/0/sepia.jpg", 400, "is not one of"},
		{"full/max/0/default.tif", 400, "jpg and png"},
		{"full/max/0/default.gif", 400, "jpg and png"},
		{"nothing/max/0/default.jpg", 400, "is not full"},
	} {
		r := e.do("GET", svc+"/"+c.path, nil, anonymously...)
		if r.Status != c.code || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %d %s, want %d with %q", c.path, r.Status, r.Body, c.code, c.want)
		}
	}
}

// TestIIIFImageLevel2Access: a composed image of a private page is
// refused to whoever may not read the page exactly as a tile is (404,
// even with the ETag the admin was given, and though the image is in the
// cache), private to the admin, and public again once the page is.
func TestIIIFImageLevel2Access(t *testing.T) {
	tools := needVips(t)
	e, w, fs, _ := tiledWork(t, tools, "Letters", quarters(t, 600, 800))
	ctx := context.Background()
	stranger := e.addUser("stranger", shelfmark.ScopeRead)
	svc := "/iiif/" + string(fs.ID) + "/image/"
	region, tile := svc+"100,100,300,300/150,/90/gray.jpg", svc+"0,0,512,512/512,512/0/default.jpg"
	priv, pub := shelfmark.Private, shelfmark.Public
	if _, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
		t.Fatal(err)
	}
	adm := e.do("GET", region, nil) // the admin: composed, then kept
	if adm.Status != http.StatusOK || adm.Header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(adm.Header.Get("Cache-Control"), "private") {
		t.Fatalf("a private page's region, to the admin: %d %v", adm.Status, adm.Header)
	}
	composed, _ := e.srv.iiif.ImagesComposed()
	if e.do("GET", region, nil).Status != http.StatusOK {
		t.Fatal("again")
	}
	if n, _ := e.srv.iiif.ImagesComposed(); n != composed || e.srv.iiif.ImageCacheSize() == 0 {
		t.Errorf("a repeated request composed again (%d, then %d), cache %d bytes", composed, n, e.srv.iiif.ImageCacheSize())
	}
	for who, hdrs := range map[string][]string{"anonymous": anonymously, "a stranger": as(stranger)} {
		want := e.do("GET", tile, nil, hdrs...)
		for _, h := range [][]string{hdrs, append(slices.Clone(hdrs), "If-None-Match", adm.Header.Get("ETag"))} {
			r := e.do("GET", region, nil, h...)
			if r.Status != http.StatusNotFound || r.Status != want.Status || !bytes.Equal(r.Body, want.Body) {
				t.Errorf("a private page's region, to %s (%v): %d %s; its tile: %d %s", who, h, r.Status, r.Body, want.Status, want.Body)
			}
		}
	}
	if _, err := e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &pub}); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", region, nil, anonymously...)
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, adm.Body) || r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Cache-Control"), "public") {
		t.Errorf("the region of a page made public, anonymously: %d %v", r.Status, r.Header)
	}
}

// TestIIIFImageLevel2Concurrency: many viewers asking different regions
// at once are all served, and no more images are composed at once than
// there are cores.
func TestIIIFImageLevel2Concurrency(t *testing.T) {
	tools := needVips(t)
	e, _, fs, _ := tiledWork(t, tools, "Atlas", gradient(t, 2000, 1100))
	svc := "/iiif/" + string(fs.ID) + "/image/"
	before, _ := e.srv.iiif.ImagesComposed()
	var wg sync.WaitGroup
	statuses := make([]int, 24)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s%s%d,%d,700,600/%d,/0/default.jpg", e.ts.URL, svc, 37*i, 19*i, 200+i), nil)
			res, err := e.client.Do(req)
			if err != nil {
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("viewer %d: %d", i, s)
		}
	}
	n, atOnce := e.srv.iiif.ImagesComposed()
	if n-before != len(statuses) || atOnce < 1 || atOnce > runtime.GOMAXPROCS(0) {
		t.Errorf("%d images composed, at most %d at once (GOMAXPROCS %d)", n-before, atOnce, runtime.GOMAXPROCS(0))
	}
}
