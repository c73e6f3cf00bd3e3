package siegfried

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// sample is a generated file and what identifying it must give.
type sample struct {
	name string
	data []byte
	want shelfmark.Format // Name and Note are checked only when set
}

// longText makes gen.PDF write several pages (48 lines of 90 characters
// a page).
var longText = strings.Repeat("shelfmark ", 2600)

func samples() []sample {
	text := []byte("Shelfmark plain text file.\nIt has two lines.\n")
	return []sample{
		{"doc.pdf", gen.PDF(1, 1, "A one-page document."), shelfmark.Format{
			PRONOM: "fmt/18", Name: "Acrobat PDF 1.4 - Portable Document Format", Version: "1.4", MediaType: "application/pdf", Pages: 1, Width: 612, Height: 792}},
		{"long.pdf", gen.PDF(1, 2, longText), shelfmark.Format{
			PRONOM: "fmt/18", Version: "1.4", MediaType: "application/pdf", Pages: 7, Width: 612, Height: 792}},
		{"scan.tif", gen.TIFF(1, 3, 600, 800), shelfmark.Format{
			PRONOM: "fmt/353", Name: "Tagged Image File Format", MediaType: "image/tiff", Width: 600, Height: 800}},
		{"odd.tif", gen.TIFF(1, 4, 333, 77), shelfmark.Format{
			PRONOM: "fmt/353", MediaType: "image/tiff", Width: 333, Height: 77}},
		{"photo.jpg", gen.JPEG(1, 5, 640, 480), shelfmark.Format{
			PRONOM: "fmt/43", Name: "JPEG File Interchange Format", Version: "1.01", MediaType: "image/jpeg", Width: 640, Height: 480}},
		{"figure.png", gen.PNG(1, 6, 320, 200), shelfmark.Format{
			PRONOM: "fmt/11", Name: "Portable Network Graphics", Version: "1.0", MediaType: "image/png", Width: 320, Height: 200}},
		{"page.png", gen.PageImage(1, 7, strings.Fields("PAGE 7 OF THE WORKS")), shelfmark.Format{
			PRONOM: "fmt/11", Version: "1.0", MediaType: "image/png", Width: gen.PageWidth, Height: gen.PageHeight}},
		{"patent.xml", gen.PatentXML(1, 8), shelfmark.Format{
			PRONOM: "fmt/101", Name: "Extensible Markup Language", Version: "1.0", MediaType: "application/xml"}},
		{"readme.txt", text, shelfmark.Format{
			PRONOM: "x-fmt/111", Name: "Plain Text File", MediaType: "text/plain"}},
		// Exercises the container matcher.
		{"book.epub", epub(), shelfmark.Format{
			PRONOM: "fmt/483", Name: "ePub Format", MediaType: "application/epub+zip"}},
	}
}

// epub returns a minimal EPUB: a ZIP whose first entry, stored, is the
// mimetype file PRONOM's container signature looks for.
func epub() []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range []struct {
		name, body string
		method     uint16
	}{
		{"mimetype", "application/epub+zip", zip.Store},
		{"META-INF/container.xml", `<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>`, zip.Deflate},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		if err != nil {
			panic(err)
		}
		if _, err := io.WriteString(w, e.body); err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// newIdentifier is shared by the tests (loading takes ~30 ms).
var newIdentifier = sync.OnceValues(New)

func identifier(tb testing.TB) *Identifier {
	tb.Helper()
	id, err := newIdentifier()
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func check(t *testing.T, got *shelfmark.Format, want shelfmark.Format) {
	t.Helper()
	if got == nil {
		t.Fatal("nil format")
	}
	if want.Name == "" {
		want.Name = got.Name
	}
	if want.Note == "" {
		want.Note = got.Note
	}
	if *got != want {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}
}

func TestIdentify(t *testing.T) {
	id := identifier(t)
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			f, err := id.Identify(context.Background(), bytes.NewReader(s.data), s.name, int64(len(s.data)))
			if err != nil {
				t.Fatal(err)
			}
			check(t, f, s.want)
			if !f.Known() || f.Note == "" {
				t.Errorf("Known %v, Note %q", f.Known(), f.Note)
			}
			if n := bytes.Count(s.data, []byte("/Type /Page ")); n != f.Pages {
				t.Errorf("%d pages, the PDF has %d page objects", f.Pages, n)
			}
		})
	}
}

// Binary formats are identified by their bytes: no name, no size.
func TestIdentifyWithoutNameOrSize(t *testing.T) {
	id := identifier(t)
	for _, s := range samples() {
		if s.want.PRONOM == "x-fmt/111" {
			continue // text without a .txt name is flagged, see TestPlainTextWithoutName
		}
		t.Run(s.name, func(t *testing.T) {
			f, err := id.Identify(context.Background(), bytes.NewReader(s.data), "", -1)
			if err != nil {
				t.Fatal(err)
			}
			check(t, f, s.want)
		})
	}
}

func TestPlainTextWithoutName(t *testing.T) {
	b := []byte("just some words\n")
	f, err := identifier(t).Identify(context.Background(), bytes.NewReader(b), "", -1)
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != "x-fmt/111" || !strings.Contains(f.Note, "text match") {
		t.Errorf("got %+v", *f)
	}
}

func TestEmpty(t *testing.T) {
	id := identifier(t)
	want := shelfmark.Format{PRONOM: shelfmark.FormatUnknown, Note: "empty file"}
	f, err := id.Identify(context.Background(), bytes.NewReader(nil), "empty.pdf", 0)
	if err != nil {
		t.Fatal(err)
	}
	check(t, f, want)
	if f.Known() {
		t.Error("Known() for an empty file")
	}

	p := filepath.Join(t.TempDir(), "empty.tif")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err = id.Identify(context.Background(), fh, "empty.tif", -1)
	if err != nil {
		t.Fatal(err)
	}
	check(t, f, want)
}

// Bytes no signature matches are UNKNOWN, not an error.
func TestUnknown(t *testing.T) {
	b := bytes.Repeat([]byte{0x00, 0x9c, 0x01, 0xfe}, 300)
	f, err := identifier(t).Identify(context.Background(), bytes.NewReader(b), "", int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != shelfmark.FormatUnknown || f.Known() || f.Note == "" || f.MediaType != "" {
		t.Errorf("got %+v", *f)
	}
}

// A PDF cut in half has no %%EOF: PRONOM's PDF signatures need it, so it
// is UNKNOWN (with the PDF ids as possibilities when named .pdf), and as
// text it is plain text. Either way: no crash, no hang, no error.
func TestTruncatedPDF(t *testing.T) {
	id := identifier(t)
	full := gen.PDF(1, 2, longText)
	b := full[:len(full)/2]
	f, err := id.Identify(context.Background(), bytes.NewReader(b), "cut.pdf", int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != shelfmark.FormatUnknown || !strings.Contains(f.Note, "fmt/18") {
		t.Errorf("named .pdf: got %+v", *f)
	}
	f, err = id.Identify(context.Background(), bytes.NewReader(b), "", -1)
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != "x-fmt/111" {
		t.Errorf("unnamed: got %+v", *f)
	}
	// A few bytes of a PDF, and a PDF without its last byte.
	for _, b := range [][]byte{full[:5], full[:len(full)-1]} {
		if _, err := id.Identify(context.Background(), bytes.NewReader(b), "cut.pdf", -1); err != nil {
			t.Errorf("%d bytes: %v", len(b), err)
		}
	}
}

// A ZIP cut short cannot be opened: UNKNOWN, and the Note says why.
func TestTruncatedZIP(t *testing.T) {
	b := epub()[:60]
	f, err := identifier(t).Identify(context.Background(), bytes.NewReader(b), "cut.epub", -1)
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != shelfmark.FormatUnknown || !strings.Contains(f.Note, "not a valid zip file") {
		t.Errorf("got %+v", *f)
	}
}

// A truncated image is still identified by its header; the dimensions
// that cannot be read are 0 and the Note says why.
func TestTruncatedTIFF(t *testing.T) {
	b := gen.TIFF(1, 3, 600, 800)[:3000]
	f, err := identifier(t).Identify(context.Background(), bytes.NewReader(b), "cut.tif", -1)
	if err != nil {
		t.Fatal(err)
	}
	if f.PRONOM != "fmt/353" || f.Width != 0 || !strings.Contains(f.Note, "dimensions not read") {
		t.Errorf("got %+v", *f)
	}
}

// The reader ending before the size given is an error, not a guess.
func TestShortReader(t *testing.T) {
	b := gen.TIFF(1, 3, 100, 100)
	_, err := identifier(t).Identify(context.Background(), bytes.NewReader(b), "x.tif", int64(len(b))+100_000)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

// seekOnly hides a reader's ReadAt, forcing the seek-and-read path.
type seekOnly struct{ io.ReadSeeker }

// A 2 GiB TIFF (sparse: a real TIFF followed by a hole) costs a bounded
// number of bytes read, whether read as an *os.File (positioned reads)
// or as a plain io.ReadSeeker.
func TestLargeFileReadsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a 2 GiB sparse file")
	}
	const size = 2 << 30
	const bound = 512 << 10 // BOF and EOF windows at block granularity, plus the IFD
	tif := gen.TIFF(1, 9, 600, 800)
	p := filepath.Join(t.TempDir(), "big.tif")
	if err := os.WriteFile(p, tif, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	id := identifier(t)
	want := shelfmark.Format{PRONOM: "fmt/353", MediaType: "image/tiff", Width: 600, Height: 800}

	for _, c := range []struct {
		name string
		r    io.ReadSeeker
		size int64
	}{{"os.File", fh, -1}, {"os.File with size", fh, size}, {"ReadSeeker", seekOnly{fh}, -1}} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := fh.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			f, src, err := id.identify(context.Background(), c.r, "big.tif", c.size)
			if err != nil {
				t.Fatal(err)
			}
			check(t, f, want)
			n, reads := src.stats()
			t.Logf("read %d bytes in %d reads of a %d-byte file", n, reads, int64(size))
			if n > bound || n == 0 {
				t.Errorf("read %d bytes, want (0, %d]", n, bound)
			}
			if _, ok := c.r.(*os.File); ok {
				// Positioned reads only: the file offset did not move.
				if off, err := fh.Seek(0, io.SeekCurrent); err != nil || off != 0 {
					t.Errorf("file offset %d (%v) after Identify, want 0", off, err)
				}
			}
		})
	}
}

// Small and large files read about the same number of bytes.
func TestReadsIndependentOfSize(t *testing.T) {
	id := identifier(t)
	read := func(b []byte) int64 {
		t.Helper()
		f, src, err := id.identify(context.Background(), bytes.NewReader(b), "x.jpg", -1)
		if err != nil || f.PRONOM != "fmt/43" {
			t.Fatalf("%+v, %v", f, err)
		}
		n, _ := src.stats()
		return n
	}
	small, large := read(gen.JPEG(1, 1, 200, 200)), read(gen.JPEG(1, 1, 3000, 4000))
	t.Logf("small JPEG: %d bytes read, large: %d", small, large)
	if large > 256<<10 {
		t.Errorf("large JPEG: read %d bytes", large)
	}
}

func TestContext(t *testing.T) {
	id := identifier(t)
	b := gen.TIFF(1, 3, 600, 800)

	t.Run("canceled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := id.Identify(ctx, bytes.NewReader(b), "x.tif", -1)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("deadline passed", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		_, err := id.Identify(ctx, bytes.NewReader(b), "x.tif", -1)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("canceled during a read", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &hookReader{ReadSeeker: bytes.NewReader(b), hook: cancel}
		_, err := id.Identify(ctx, r, "x.tif", -1)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("reader blocks past the deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20e6) // 20 ms
		defer cancel()
		unblock := make(chan struct{})
		defer close(unblock)
		r := &hookReader{ReadSeeker: bytes.NewReader(b), hook: func() { <-unblock }}
		_, err := id.Identify(ctx, r, "x.tif", -1)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})
}

// hookReader calls hook before its first read.
type hookReader struct {
	io.ReadSeeker
	once sync.Once
	hook func()
}

func (h *hookReader) Read(p []byte) (int, error) {
	h.once.Do(h.hook)
	return h.ReadSeeker.Read(p)
}

func TestConcurrent(t *testing.T) {
	id := identifier(t)
	ss := samples()
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(ss))
	for g := range 8 {
		wg.Go(func() {
			for k := range 3 * len(ss) {
				s := ss[(g+k)%len(ss)]
				f, err := id.Identify(context.Background(), bytes.NewReader(s.data), s.name, int64(len(s.data)))
				switch {
				case err != nil:
					errs <- err
					return
				case f.PRONOM != s.want.PRONOM || f.Width != s.want.Width || f.Pages != s.want.Pages:
					errs <- fmt.Errorf("%s: got %+v", s.name, *f)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSignatureFile(t *testing.T) {
	if len(signature) > 2<<20 {
		t.Errorf("shelfmark.sig is %d bytes, want < 2 MiB", len(signature))
	}
	ids := identifier(t).sf.Identifiers()
	if len(ids) != 1 || ids[0][0] != "pronom" || !strings.Contains(ids[0][1], "max BOF 32768; max EOF 16384") {
		t.Errorf("identifiers %q: want one PRONOM identifier with bounded BOF/EOF", ids)
	}
}

func TestPageTreeCount(t *testing.T) {
	for _, c := range []struct {
		pdf  string
		want int
	}{
		{"1 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj", 1},
		{"1 0 obj<</Count 12/Kids[2 0 R 3 0 R]/Type/Pages>>endobj", 12},
		// An intermediate node and the root: the root's count wins.
		{"4 0 obj\n<< /Type /Pages /Parent 1 0 R /Count 5 >>\nendobj\n1 0 obj\n<< /Type /Pages /Count 9 >>\nendobj", 9},
		// Pages and outlines are not page tree nodes.
		{"3 0 obj\n<< /Type /Page /Count 40 >>\nendobj\n5 0 obj << /Type /Outlines /Count 33 >> endobj", 0},
		// An indirect count is not read; another object's count is not taken.
		{"1 0 obj\n<< /Type /Pages /Count 7 0 R >>\nendobj\n2 0 obj << /Count 8 >> endobj", 0},
		{"%PDF-1.5 no page tree here", 0},
	} {
		if got := pageTreeCount([]byte(c.pdf)); got != c.want {
			t.Errorf("pageTreeCount(%q) = %d, want %d", c.pdf, got, c.want)
		}
	}
}

// The first page's size is its first believable /MediaBox, in points.
func TestMediaBox(t *testing.T) {
	for _, c := range []struct {
		pdf  string
		w, h int
	}{
		{"<< /Type /Page /MediaBox [0 0 612 792] >>", 612, 792},
		{"<< /Type /Pages /MediaBox[ 0 0 595.28 841.89 ] /Count 2 >>", 595, 842},
		{"/MediaBox [10 20 -5 2] /MediaBox [0 0 420 595]", 15, 18},
		{"/MediaBox [0 0 0 0] /MediaBox [0 0 99999 10] /MediaBox [0 0 300 400]", 300, 400},
		{"/MediaBox 5 0 R", 0, 0},
		{"/MediaBox [0 0 612]", 0, 0},
	} {
		if w, h := mediaBox([]byte(c.pdf)); w != c.w || h != c.h {
			t.Errorf("mediaBox(%q) = %d × %d, want %d × %d", c.pdf, w, h, c.w, c.h)
		}
	}
}

// A PDF over 2 MiB is scanned at both ends only.
func TestPDFPagesWindows(t *testing.T) {
	filler := bytes.Repeat([]byte("% filler comment line\n"), 3*pdfWindow/22)
	head := append([]byte("%PDF-1.4\n1 0 obj\n<< /Type /Pages /Count 3 >>\nendobj\n"), filler...)
	middle := []byte("9 0 obj\n<< /Type /Pages /Count 999 >>\nendobj\n")
	tail := []byte("2 0 obj\n<< /Type /Pages /Count 42 >>\nendobj\ntrailer\n%%EOF\n")
	for _, c := range []struct {
		b    []byte
		want int
	}{
		{bytes.Join([][]byte{head, middle, filler, tail}, nil), 42},
		{bytes.Join([][]byte{head, middle, filler}, nil), 3},
	} {
		got, _, _, err := pdfPages(bytes.NewReader(c.b), int64(len(c.b)))
		if err != nil || got != c.want {
			t.Errorf("pdfPages = %d, %v; want %d", got, err, c.want)
		}
	}
}

// BenchmarkIdentify identifies a mix of the generated files held in
// memory and reports identifications per second.
func BenchmarkIdentify(b *testing.B) {
	id := identifier(b)
	ss := samples()
	var n int
	for i := 0; b.Loop(); i++ {
		s := ss[i%len(ss)]
		f, err := id.Identify(context.Background(), bytes.NewReader(s.data), s.name, int64(len(s.data)))
		if err != nil || f.PRONOM != s.want.PRONOM {
			b.Fatalf("%s: %+v, %v", s.name, f, err)
		}
		n += len(s.data)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	b.ReportMetric(float64(n)/float64(b.N), "bytes/file")
}

// BenchmarkIdentifyEach identifies each generated file alone.
func BenchmarkIdentifyEach(b *testing.B) {
	id := identifier(b)
	for _, s := range samples() {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := id.Identify(context.Background(), bytes.NewReader(s.data), s.name, int64(len(s.data))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
		})
	}
}

// source.Slice and EofSlice return the right bytes, io.EOF exactly when
// clipped at an end, and slices that stay valid after eviction.
func TestSource(t *testing.T) {
	data := make([]byte, (maxBlocks+6)*blockSize+123) // more blocks than are cached
	for k := range data {
		data[k] = byte(k * 7 / 3)
	}
	for _, r := range []io.ReadSeeker{bytes.NewReader(data), seekOnly{bytes.NewReader(data)}} {
		src := newSource(context.Background(), r, int64(len(data)))
		size := int64(len(data))
		var kept [][2]any
		for _, c := range []struct {
			off int64
			l   int
		}{{0, 8}, {0, 4096}, {blockSize - 3, 10}, {blockSize, blockSize}, {100, 3*blockSize + 5}, {size - 10, 10}, {size - 10, 20}, {size - 1, 1}, {0, len(data) + 5}} {
			b, err := src.Slice(c.off, c.l)
			end := min(size, c.off+int64(c.l))
			if !bytes.Equal(b, data[c.off:end]) || (err == io.EOF) != (c.off+int64(c.l) > size) || (err != nil && err != io.EOF) {
				t.Errorf("Slice(%d, %d): %d bytes, %v", c.off, c.l, len(b), err)
			}
			kept = append(kept, [2]any{b, data[c.off:end]})
			b, err = src.EofSlice(c.off, c.l)
			lo := max(0, size-c.off-int64(c.l))
			if !bytes.Equal(b, data[lo:size-c.off]) || (err == io.EOF) != (c.off+int64(c.l) > size) || (err != nil && err != io.EOF) {
				t.Errorf("EofSlice(%d, %d): %d bytes, %v", c.off, c.l, len(b), err)
			}
		}
		if b, err := src.Slice(size, 1); b != nil || err != io.EOF {
			t.Errorf("Slice at the end: %v, %v", b, err)
		}
		// Read every block many times over to force evictions.
		for range 3 {
			for off := int64(0); off < size; off += blockSize {
				if _, err := src.Slice(off, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, k := range kept {
			if !bytes.Equal(k[0].([]byte), k[1].([]byte)) {
				t.Error("a slice handed out changed")
			}
		}
		if err := src.failure(); err != nil {
			t.Error(err)
		}
	}
}
