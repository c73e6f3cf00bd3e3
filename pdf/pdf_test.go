package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// grayJPEG is a one-component JPEG of a generated page.
func grayJPEG(t *testing.T, words ...string) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(gen.PageImage(1, 1, words)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// countingWriter counts what reached it.
type countingWriter struct{ bytes.Buffer }

func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
			t.Fatalf("%s is not installed and SHELFMARK_REQUIRE_TOOLS is set", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

func TestWriterPoppler(t *testing.T) {
	pages := [][]byte{
		gen.JPEG(1, 1, 600, 800),
		grayJPEG(t, "SECOND", "PAGE"),
		gen.JPEG(1, 3, 900, 500),
	}
	var out countingWriter
	w := NewWriter(&out, Options{Title: "Zur Geschichte der Bücher (1820)"})
	if out.Len() != 0 {
		t.Fatal("wrote before the first page")
	}
	for i, p := range pages {
		img, err := w.AddJPEG(bytes.NewReader(p), int64(len(p)))
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if i == 1 && img.Components != 1 {
			t.Errorf("grey page has %d components", img.Components)
		}
	}
	// A bad page is refused and leaves the document as it was.
	before := w.Written()
	for _, bad := range [][]byte{nil, []byte("GIF89a........"), pages[0][:40], {0xff, 0xd8, 0xff, 0xda, 0, 2}} {
		if _, err := w.AddJPEG(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, ErrNotJPEG) {
			t.Errorf("bad JPEG %.12q: error %v, want ErrNotJPEG", bad, err)
		}
	}
	if w.Written() != before || w.Pages() != 3 {
		t.Errorf("a refused page wrote %d bytes or counted", w.Written()-before)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "work.pdf")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkXref(t, out.Bytes())
	// The images are embedded as they are.
	for i, p := range pages {
		if !bytes.Contains(out.Bytes(), p) {
			t.Errorf("page %d's JPEG is not embedded byte for byte", i+1)
		}
	}

	info, err := exec.Command(need(t, "pdfinfo"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v\n%s", err, info)
	}
	if !regexp.MustCompile(`(?m)^Pages:\s+3$`).Match(info) || !strings.Contains(string(info), "Zur Geschichte der Bücher (1820)") {
		t.Errorf("pdfinfo:\n%s", info)
	}
	// page 1 is 600×800 px at 150 dpi: 288 × 384 pt
	sizes, err := exec.Command("pdfinfo", "-f", "1", "-l", "3", path).CombinedOutput()
	if err != nil || !regexp.MustCompile(`Page +1 size: +288 x 384 pts`).Match(sizes) || !regexp.MustCompile(`Page +3 size: +432 x 240 pts`).Match(sizes) {
		t.Errorf("page sizes: %v\n%s", err, sizes)
	}
	if strings.Contains(string(info), "Syntax") {
		t.Errorf("poppler found syntax errors:\n%s", info)
	}

	// Page 2 rendered at the image's resolution is the image.
	if out, err := exec.Command(need(t, "pdftoppm"), "-f", "2", "-l", "2", "-r", "150", "-gray", "-png", "-singlefile", path, filepath.Join(dir, "p2")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "p2.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jpeg.Decode(bytes.NewReader(pages[1]))
	if err != nil {
		t.Fatal(err)
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("page 2 renders %v, its image is %v", got.Bounds(), want.Bounds())
	}
	if d := meanDiff(got, want); d > 8 {
		t.Errorf("page 2 differs from its image by %.1f grey levels on average", d)
	}
}

// meanDiff is the mean absolute difference of two images' grey levels.
func meanDiff(a, b image.Image) float64 {
	var sum, n float64
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ga, _, _, _ := a.At(x, y).RGBA()
			gb, _, _, _ := b.At(x, y).RGBA()
			d := float64(ga>>8) - float64(gb>>8)
			if d < 0 {
				d = -d
			}
			sum += d
			n++
		}
	}
	return sum / n
}

// TestWriterStreams: a page's bytes reach the output as it is added, and
// the writer keeps no more than its buffer.
func TestWriterStreams(t *testing.T) {
	big := gen.JPEG(1, 9, 2000, 2800)
	var out countingWriter
	w := NewWriter(&out, Options{})
	for i := range 3 {
		if _, err := w.AddJPEG(bytes.NewReader(big), int64(len(big))); err != nil {
			t.Fatal(err)
		}
		if got, want := int64(out.Len()), int64(i+1)*int64(len(big))-(64<<10); got < want {
			t.Errorf("after page %d, %d bytes reached the output; want ≥ %d", i+1, got, want)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Error("closed twice")
	}
}

func TestWriterEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := NewWriter(&out, Options{}).Close(); err == nil || out.Len() != 0 {
		t.Errorf("a document without pages: %v, %d bytes", err, out.Len())
	}
}

// TestWriterShortJPEG: a JPEG shorter than declared breaks the document
// with an error.
func TestWriterShortJPEG(t *testing.T) {
	p := gen.JPEG(1, 1, 300, 400)
	w := NewWriter(&bytes.Buffer{}, Options{})
	if _, err := w.AddJPEG(bytes.NewReader(p), int64(len(p))+10); err == nil {
		t.Fatal("a short JPEG was taken")
	}
	if err := w.Close(); err == nil {
		t.Error("a broken document closed without error")
	}
}

func TestTextString(t *testing.T) {
	for in, want := range map[string]string{
		"Plain (1)": `(Plain \(1\))`,
		`a\b`:       `(a\\b)`,
		"Bücher":    "<FEFF004200FC0063006800650072>",
		"𝔄":         "<FEFFD835DD04>",
	} {
		if got := textString(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// checkXref checks that the cross-reference table lists every object at
// the offset where it starts, and startxref the table (as qpdf --check
// would; poppler silently rebuilds a bad table).
func checkXref(t *testing.T, doc []byte) {
	t.Helper()
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("no startxref at the end")
	}
	off, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(doc[off:], []byte("xref\n0 ")) {
		t.Fatalf("startxref %d does not point at the table", off)
	}
	lines := strings.Split(string(doc[off:]), "\n")
	var n int
	if _, err := fmt.Sscanf(lines[1], "0 %d", &n); err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(string(doc[off+len(lines[0])+len(lines[1])+2:]), "\r\n")
	for i := 1; i < n; i++ {
		var o, gen int
		var kind string
		if _, err := fmt.Sscanf(entries[i], "%d %d %s", &o, &gen, &kind); err != nil || kind != "n" {
			t.Fatalf("xref entry %d: %q", i, entries[i])
		}
		if want := fmt.Sprintf("%d 0 obj\n", i); !bytes.HasPrefix(doc[o:], []byte(want)) {
			t.Errorf("object %d is not at %d: %.20q", i, o, doc[o:])
		}
	}
	if len(entries[0]) != 18 { // 20 bytes with the line end
		t.Errorf("xref entry %q is not 20 bytes", entries[0])
	}
}

// TestWriterMemory: writing a long document allocates a small, fixed
// amount a page, however large the page images: the images pass through.
func TestWriterMemory(t *testing.T) {
	img := gen.JPEG(1, 5, 1600, 2200) // an access copy's size
	alloc := func(pages int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := NewWriter(io.Discard, Options{Title: "A long book"})
		for range pages {
			if _, err := w.AddJPEG(bytes.NewReader(img), int64(len(img))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(10), alloc(400)
	perPage := float64(large-small) / 390
	t.Logf("%d-byte pages: %.0f bytes allocated a page; 10 pages %d bytes, 400 pages %d bytes", len(img), perPage, small, large)
	if perPage > 4096 || perPage > float64(len(img))/50 {
		t.Errorf("%.0f bytes allocated a page of %d bytes: the writer holds what it writes", perPage, len(img))
	}
}
