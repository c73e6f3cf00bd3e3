package worker

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// toolTestOCRWords are the words drawn on the OCR test page. They avoid
// the letters N, V, K and D, which tesseract often misreads in the
// generator's 5×7 bitmap font (as H, W, E and O).
var toolTestOCRWords = strings.Fields(`APPARATUS METHOD SHELF STORAGE LAYER
CARRIER FRAME CIRCUIT PROCESSOR MEMORY SURFACE RECORD CATALOGUE PAGE LEAF
FOLIO LIBRARY OPTICAL PAPER PRESS PLATE ROLLER SHAFT`)

func TestOCR(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Tesseract, "tesseract")
	p := toolTestFile(t, "page.png", gen.PageImage(1, 1, toolTestOCRWords))
	start := time.Now()
	o, err := tools.OCRPage(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	hocr, text := o.HOCR, o.Text
	t.Logf("OCR of a %d×%d page took %v", gen.PageWidth, gen.PageHeight, time.Since(start).Round(time.Millisecond))

	// The rule: words compare case-insensitively as whole tokens (after
	// trimming punctuation); at least 90% of the page's words must be
	// read, so that one misread word does not fail the test.
	read := map[string]bool{}
	for _, w := range strings.Fields(strings.ToUpper(text)) {
		read[strings.Trim(w, ".,;:-'\"")] = true
	}
	var missed []string
	for _, w := range toolTestOCRWords {
		if !read[strings.ToUpper(w)] {
			missed = append(missed, w)
		}
	}
	if found := len(toolTestOCRWords) - len(missed); found*10 < len(toolTestOCRWords)*9 {
		t.Errorf("OCR read %d of %d words; missed %v in %q", found, len(toolTestOCRWords), missed, text)
	} else if len(missed) > 0 {
		t.Logf("OCR missed %v", missed)
	}

	if !bytes.Contains(hocr, []byte("ocr_page")) || !bytes.Contains(hocr, []byte("ocrx_word")) ||
		!bytes.Contains(bytes.ToUpper(hocr), []byte("CATALOGUE")) {
		t.Errorf("not an hOCR document with words: %.300q", hocr)
	}
	if bytes.Contains(hocr, []byte(p)) || bytes.Contains(o.ALTO, []byte(p)) {
		t.Errorf("the hOCR or ALTO names where the image is kept (%s)", p)
	}
	alto := toolTestALTO(t, o.ALTO, 1)
	if pg := alto.Layout.Pages[0]; pg.Width != gen.PageWidth || pg.Height != gen.PageHeight {
		t.Errorf("ALTO page %d×%d, want the image's %d×%d", pg.Width, pg.Height, gen.PageWidth, gen.PageHeight)
	}
	if !strings.Contains(strings.ToUpper(strings.Join(alto.words(), " ")), "CATALOGUE") {
		t.Errorf("ALTO words %v lack CATALOGUE", alto.words())
	}
	if strings.Contains(text, "\f") || text != strings.TrimSpace(text) {
		t.Errorf("text not cleaned: %q", text)
	}

	// The temporary directory is removed.
	ents, err := os.ReadDir(tools.TempDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("temporary files left in %s: %v", tools.TempDir, ents)
	}
}

func TestOCRBadInput(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Tesseract, "tesseract")
	ctx := context.Background()
	page := gen.PageImage(1, 2, []string{"WORD"})
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty.png", nil},
		{"garbage.png", []byte("not an image, only some text")},
		{"truncated.png", page[:40]},
		// tesseract would read a text file as a list of image paths.
		{"list.png", []byte("/etc/passwd\n")},
	} {
		_, _, err := tools.OCR(ctx, toolTestFile(t, c.name, c.data))
		if !IsPermanent(err) {
			t.Errorf("%s: error %v, want a permanent one", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	_, _, err := Tools{}.OCR(ctx, toolTestFile(t, "page.png", page))
	if !errors.Is(err, ErrToolMissing) {
		t.Errorf("without tesseract: error %v, want ErrToolMissing", err)
	}
}

func TestOCRCancel(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Tesseract, "tesseract")
	p := toolTestFile(t, "page.png", gen.PageImage(1, 3, toolTestOCRWords))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := tools.OCR(ctx, p)
	if !errors.Is(err, ErrTimeout) || IsPermanent(err) {
		t.Errorf("error %v, want ErrTimeout, not permanent", err)
	}
}

// TestOCRChild runs a stand-in for tesseract that reports its arguments,
// environment and scheduling as its "OCR" output.
func TestOCRChild(t *testing.T) {
	// RunTool lowers the child's priority right after starting it, so
	// the stand-in waits (up to 10 s) to see that before reporting.
	fake := toolTestScript(t, `[ "$3 $4 $5 $6 $7" = "-l eng hocr alto txt" ] || { echo "bad args: $*" >&2; exit 1; }
in=$1 out=$2 i=0
while [ $i -lt 1000 ]; do
	stat=$(cat /proc/$$/stat)
	set -- ${stat##*) }
	[ "${17}" = 19 ] && [ "${39}" = 5 ] && break
	sleep 0.01; i=$((i+1))
done
echo "<html><body class='ocr_page'>$in</body></html>" > "$out.hocr"
echo "<alto><Layout>$in</Layout></alto>" > "$out.xml"
printf 'OMP=%s\n%s\f' "$OMP_THREAD_LIMIT" "$stat" > "$out.txt"`)
	tools := Tools{Tesseract: fake, TempDir: t.TempDir(), Limits: Limits{Timeout: time.Minute}}
	p := toolTestFile(t, "page.png", gen.PageImage(1, 4, []string{"WORD"}))
	o, err := tools.OCRPage(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	text := o.Text
	// the documents name the image, not where it is kept
	if !bytes.Contains(o.HOCR, []byte(">page.png<")) || !bytes.Contains(o.ALTO, []byte(">page.png<")) {
		t.Errorf("hOCR %q or ALTO %q does not name the input by its name alone", o.HOCR, o.ALTO)
	}
	omp, stat, _ := strings.Cut(text, "\n")
	if omp != "OMP=1" {
		t.Errorf("child environment has %s, want OMP_THREAD_LIMIT=1", omp)
	}
	st := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(st) < 39 || st[19-3] != "19" || st[41-3] != "5" {
		t.Errorf("child not at nice 19 and SCHED_IDLE: /proc/self/stat %q", stat)
	}
	if ents, _ := os.ReadDir(tools.TempDir); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// BenchmarkOCR reads one generated page image (hOCR and text).
func BenchmarkOCR(b *testing.B) {
	tools := toolTestTools(b)
	toolTestNeed(b, tools.Tesseract, "tesseract")
	p := toolTestFile(b, "page.png", gen.PageImage(1, 1, toolTestOCRWords))
	cpu := toolTestCPU()
	for b.Loop() {
		if _, _, err := tools.OCR(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(toolTestCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
