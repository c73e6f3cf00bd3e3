package worker

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/pdf"
)

// toolTestScanWords are the words of the scanned pages: page i of a scan
// carries words[i].
var toolTestScanWords = [][]string{
	strings.Fields("LIGHTHOUSE HARBOUR COMPASS"),
	strings.Fields("CATALOGUE SHELF FOLIO"),
}

// toolTestScannedPDF returns a PDF whose pages are only images (JPEGs of
// generated page images, 1000×1400 px at 150 dpi), one per list of
// words: a scan without a text layer.
func toolTestScannedPDF(t testing.TB, words ...[]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := pdf.NewWriter(&b, pdf.Options{DPI: 150})
	for i, ws := range words {
		img, err := png.Decode(bytes.NewReader(gen.PageImage(2, i, ws)))
		if err != nil {
			t.Fatal(err)
		}
		var j bytes.Buffer
		if err := jpeg.Encode(&j, img, &jpeg.Options{Quality: 85}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddJPEG(bytes.NewReader(j.Bytes()), int64(j.Len())); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// toolTestMixedPDF returns a PDF of a page with a text layer followed by
// the scanned pages of toolTestScanWords (joined with poppler's pdfunite).
func toolTestMixedPDF(t testing.TB, text string) []byte {
	t.Helper()
	pdfunite, err := exec.LookPath("pdfunite")
	if err != nil {
		t.Skip("pdfunite is not installed")
	}
	dir := t.TempDir()
	a, b, out := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(a, gen.PDF(3, 1, text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, toolTestScannedPDF(t, toolTestScanWords...), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(pdfunite, a, b, out).CombinedOutput(); err != nil {
		t.Fatalf("pdfunite: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// toolTestMissing returns the words of want that text lacks (compared as
// upper-case tokens, punctuation trimmed).
func toolTestMissing(text string, want []string) []string {
	read := map[string]bool{}
	for _, w := range strings.Fields(strings.ToUpper(text)) {
		read[strings.Trim(w, ".,;:-'\"")] = true
	}
	var missed []string
	for _, w := range want {
		if !read[w] {
			missed = append(missed, w)
		}
	}
	return missed
}

func TestScannedPages(t *testing.T) {
	for _, c := range []struct {
		pages    []string
		complete bool
		want     []int
	}{
		{[]string{"A page of text with more than sixteen letters.", "", "12", "Seite 3 — ein Stempel der Bibliothek"}, true, []int{2, 3}},
		{[]string{"", "- 4 -\n\n  ", "cut"}, false, []int{1, 2}},
		{[]string{"Plenty of letters on this page"}, true, nil},
	} {
		if got := ScannedPages(c.pages, c.complete); !slices.Equal(got, c.want) {
			t.Errorf("ScannedPages(%q, %v) = %v, want %v", c.pages, c.complete, got, c.want)
		}
	}
	if got := JoinPages([]string{"one", "", "two", "three"}, 8); got != "one\n\ntwo" {
		t.Errorf("JoinPages: %q", got)
	}
}

// TestOCRPDF: the pages of a PDF without a text layer are found, rendered
// and read into one hOCR and one ALTO document of those pages.
func TestOCRPDF(t *testing.T) {
	ctx := context.Background()
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Pdftotext, "pdftotext")
	toolTestNeed(t, tools.Pdftoppm, "pdftoppm")
	toolTestNeed(t, tools.Tesseract, "tesseract")
	p := toolTestFile(t, "mixed.pdf", toolTestMixedPDF(t, "The harbour master keeps a register of every vessel."))

	pages, complete, err := tools.PDFPageTexts(ctx, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !complete || len(pages) != 3 || !strings.Contains(pages[0], "harbour master") {
		t.Fatalf("pages %q (complete %v)", pages, complete)
	}
	scanned := ScannedPages(pages, complete)
	if !slices.Equal(scanned, []int{2, 3}) {
		t.Fatalf("scanned pages %v, want [2 3]", scanned)
	}

	start := time.Now()
	o, err := tools.OCRPDF(ctx, p, "Register 1820.pdf", scanned)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	t.Logf("OCR of 2 scanned PDF pages took %v", time.Since(start).Round(time.Millisecond))
	if !slices.Equal(o.Pages, []int{2, 3}) || len(o.Left) > 0 || len(o.Failed) > 0 {
		t.Fatalf("pages read %v, left %v, failed %v", o.Pages, o.Left, o.Failed)
	}
	for i, words := range toolTestScanWords {
		if m := toolTestMissing(o.Text[i], words); len(m) > 1 {
			t.Errorf("page %d: OCR missed %v in %q", i+2, m, o.Text[i])
		}
	}

	alto, err := os.ReadFile(o.ALTO)
	if err != nil {
		t.Fatal(err)
	}
	d := toolTestALTO(t, alto, 2)
	for i, pg := range d.Layout.Pages {
		// 480×672 pt rendered at 300 dpi
		if pg.Number != i+2 || pg.Width != 2000 || pg.Height != 2800 {
			t.Errorf("ALTO page %d: number %d, %d×%d px", i, pg.Number, pg.Width, pg.Height)
		}
	}
	if bytes.Contains(alto, []byte(p)) || bytes.Contains(alto, []byte(tools.TempDir)) || !bytes.Contains(alto, []byte("<fileName>Register 1820.pdf</fileName>")) {
		t.Error("the ALTO names a local path, or not the PDF")
	}

	hocr, err := os.ReadFile(o.HOCR)
	if err != nil {
		t.Fatal(err)
	}
	toolTestWellFormed(t, hocr)
	ids := regexp.MustCompile(`id='([^']+)'`).FindAllSubmatch(hocr, -1)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[string(id[1])] {
			t.Errorf("hOCR id %s repeated", id[1])
		}
		seen[string(id[1])] = true
	}
	for _, want := range []string{"id='page_2' title='bbox 0 0 2000 2800; ppageno 1; scan_res 300 300'", "id='page_3' title='bbox 0 0 2000 2800; ppageno 2;", "id='word_3_1'"} {
		if !bytes.Contains(hocr, []byte(want)) {
			t.Errorf("hOCR lacks %s", want)
		}
	}
	if strings.Count(string(hocr), "class='ocr_page'") != 2 || bytes.Contains(hocr, []byte(tools.TempDir)) {
		t.Errorf("hOCR: %.600s", hocr)
	}

	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tools.TempDir); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// toolTestWellFormed checks an XML document with encoding/xml.
func toolTestWellFormed(t *testing.T, doc []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("not well-formed: %v", err)
		}
	}
}

// TestOCRPDFTimeLeft: a job whose time is nearly up starts no page: it
// fails with a time-out (retried), not with a broken or empty result.
func TestOCRPDFTimeLeft(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Pdftoppm, "pdftoppm")
	toolTestNeed(t, tools.Tesseract, "tesseract")
	p := toolTestFile(t, "scan.pdf", toolTestScannedPDF(t, toolTestScanWords...))
	ctx, cancel := context.WithTimeout(context.Background(), ocrPageMargin/2)
	defer cancel()
	_, err := tools.OCRPDF(ctx, p, "", []int{1, 2})
	if !errors.Is(err, ErrTimeout) || IsPermanent(err) {
		t.Errorf("error %v, want a time-out", err)
	}
	if ents, _ := os.ReadDir(tools.TempDir); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
	if _, err := (Tools{Pdftoppm: tools.Pdftoppm}).OCRPDF(context.Background(), p, "", []int{1}); !errors.Is(err, ErrToolMissing) {
		t.Errorf("without tesseract: %v", err)
	}
}
