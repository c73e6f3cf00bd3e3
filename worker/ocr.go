package worker

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// OCRLanguage is the tesseract language OCR reads.
const OCRLanguage = "eng"

// OCR formats tesseract writes, and how a derivative names them.
const (
	// ALTOMediaType is the media type an ALTO derivative is stored with:
	// ALTO has no registered type of its own.
	ALTOMediaType = "application/xml"
	// ALTONamespace is the namespace of the ALTO tesseract writes
	// (version 3.0).
	ALTONamespace = "http://www.loc.gov/standards/alto/ns-v3#"
	// HOCRMediaType is the media type an hOCR derivative is stored with.
	HOCRMediaType = "application/xhtml+xml"
)

// PageOCR is what one run of tesseract read on a page image: word boxes
// as hOCR and as ALTO (both in the image's pixel coordinates) and the
// plain text.
type PageOCR struct {
	HOCR []byte
	ALTO []byte
	Text string // valid UTF-8, page breaks as newlines, trimmed
}

// OCR runs tesseract on a page image once and returns the hOCR and the
// text; OCRPage also returns the ALTO.
func (t Tools) OCR(ctx context.Context, path string) (hocr []byte, text string, err error) {
	o, err := t.OCRPage(ctx, path)
	if err != nil {
		return nil, "", err
	}
	return o.HOCR, o.Text, nil
}

// OCRPage runs tesseract on a page image once, producing hOCR, ALTO
// (3.0) and plain text (`tesseract in outbase -l eng hocr alto txt`, in a
// temporary directory removed afterwards), with OMP_THREAD_LIMIT=1
// (tesseract's OpenMP threads cost about five times the CPU for no gain
// here) and at idle CPU priority whatever Tools.Limits.Idle says (at
// Tools.OCRNice when that is set). The
// text is valid UTF-8 with page breaks as newlines and surrounding space
// trimmed. An empty or unreadable image → Permanent error; no tesseract →
// an error wrapping ErrToolMissing.
func (t Tools) OCRPage(ctx context.Context, path string) (*PageOCR, error) {
	in, err := toolOpenInput(ctx, path, "image/*") // tesseract sniffs the format itself
	if err != nil {
		return nil, err
	}
	if in.size == 0 {
		return nil, Permanent(fmt.Errorf("worker: OCR of %s: empty file", path))
	}
	switch format, err := toolImageFormat(in.path); {
	case err != nil:
		return nil, err
	case format == "" || format == "heif":
		return nil, Permanent(fmt.Errorf("worker: OCR of %s: not a recognised image format", path))
	default:
		if err := t.checkPixels(in.path, format); err != nil {
			return nil, fmt.Errorf("worker: OCR of %s: %w", path, err)
		}
	}
	if t.Tesseract == "" {
		return nil, fmt.Errorf("worker: OCR of %s: tesseract: %w", path, ErrToolMissing)
	}
	dir, err := t.toolMkdirTemp("shelfmark-ocr-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "page")
	l := t.ocrLimits()
	if _, err := RunTool(ctx, l, []string{"OMP_THREAD_LIMIT=1"}, t.Tesseract,
		in.path, base, "-l", OCRLanguage, "hocr", "alto", "txt"); err != nil {
		return nil, fmt.Errorf("worker: OCR of %s: %w", path, toolClassify(err))
	}
	o := &PageOCR{}
	if o.HOCR, err = toolReadOutput(base+".hocr", l); err != nil {
		return nil, fmt.Errorf("worker: OCR of %s: hOCR: %w", path, err)
	}
	if o.ALTO, err = toolReadOutput(base+".xml", l); err != nil {
		return nil, fmt.Errorf("worker: OCR of %s: ALTO: %w", path, err)
	}
	txt, err := toolReadOutput(base+".txt", l)
	if err != nil {
		return nil, fmt.Errorf("worker: OCR of %s: text: %w", path, err)
	}
	// the documents name the image; not where it is kept
	o.HOCR = bytes.ReplaceAll(o.HOCR, []byte(in.path), []byte(filepath.Base(in.path)))
	o.ALTO = bytes.ReplaceAll(o.ALTO, []byte(in.path), []byte(filepath.Base(in.path)))
	text := strings.ToValidUTF8(string(txt), "\uFFFD")
	o.Text = strings.TrimSpace(strings.ReplaceAll(text, "\f", "\n"))
	return o, nil
}

// OCR of scanned PDFs.
const (
	// MaxOCRPages caps how many pages of one PDF an ocr job reads.
	MaxOCRPages = 2000
	// OCRResolution is the resolution (dpi) at which a PDF page is
	// rendered for OCR, lowered for pages that would exceed MaxPixels
	// (or MaxImageBytes).
	OCRResolution = 300
	// ocrPageMargin is the time an ocr job keeps in hand, beyond twice
	// its slowest page so far, when it decides whether to start a page.
	ocrPageMargin = 5 * time.Second
)

// PDFOCR is the OCR of the scanned pages of a PDF: one hOCR and one ALTO
// document with a page for each page read (in the coordinates of the page
// rendered at its resolution, usually OCRResolution), and the text of
// each. Its files are in a temporary directory Close removes.
type PDFOCR struct {
	dir  string
	HOCR string // path of the hOCR document
	ALTO string // path of the ALTO document
	// Pages are the numbers (from 1) of the pages read, in order, and
	// Text their text.
	Pages []int
	Text  []string
	// Left are the pages not read because the job's time would have run
	// out first.
	Left []int
	// Failed are pages that could not be rendered or read (corrupt).
	Failed []int
}

// Close removes the documents.
func (o *PDFOCR) Close() error { return os.RemoveAll(o.dir) }

// OCRPDF renders each of the given pages of a PDF (pdftoppm, grey, at
// OCRResolution or less) and reads it with OCRPage, one page at a time at
// idle priority, collecting the hOCR and ALTO of every page into one
// document each. Before each page it checks the time left before ctx's
// deadline: when that is less than twice the slowest page so far and a
// margin, it stops and lists the remaining pages in Left, so a long scan
// ends within its job's time limit with what it read. A page that cannot
// be rendered or read is listed in Failed; if every page failed, the
// first failure is returned. No pdftoppm or tesseract → an error wrapping
// ErrToolMissing. name is the PDF's name, which the documents give as
// their source (empty: the base name of path).
func (t Tools) OCRPDF(ctx context.Context, path, name string, pages []int) (*PDFOCR, error) {
	in, err := toolOpenInput(ctx, path, "application/pdf")
	if err != nil {
		return nil, err
	}
	switch {
	case t.Pdftoppm == "":
		return nil, fmt.Errorf("worker: OCR of PDF %s: pdftoppm: %w", path, ErrToolMissing)
	case t.Tesseract == "":
		return nil, fmt.Errorf("worker: OCR of PDF %s: tesseract: %w", path, ErrToolMissing)
	}
	dir, err := t.toolMkdirTemp("shelfmark-ocrpdf-*")
	if err != nil {
		return nil, err
	}
	o := &PDFOCR{dir: dir, HOCR: filepath.Join(dir, "doc.hocr"), ALTO: filepath.Join(dir, "doc.alto.xml")}
	if name == "" {
		name = filepath.Base(in.path)
	}
	m, err := newOCRMerger(o.HOCR, o.ALTO, name)
	if err != nil {
		o.Close()
		return nil, err
	}
	sizes := t.pdfPageSizes(ctx, in.path, pages)
	deadline, bounded := ctx.Deadline()
	var slowest time.Duration
	var firstErr error
	for i, n := range pages {
		if bounded && time.Until(deadline) < 2*slowest+ocrPageMargin {
			o.Left = append(o.Left, pages[i:]...)
			break
		}
		start := time.Now()
		page, err := t.ocrPDFPage(ctx, in.path, dir, n, sizes[n])
		if err != nil && !IsPermanent(err) {
			m.close()
			o.Close()
			return nil, err
		}
		slowest = max(slowest, time.Since(start))
		if err != nil {
			o.Failed = append(o.Failed, n)
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if err := m.add(n, page); err != nil {
			m.close()
			o.Close()
			return nil, err
		}
		o.Pages = append(o.Pages, n)
		o.Text = append(o.Text, page.Text)
	}
	if err := m.finish(); err != nil {
		o.Close()
		return nil, err
	}
	if len(o.Pages) == 0 && len(o.Left) == 0 && firstErr != nil {
		o.Close()
		return nil, firstErr
	}
	if len(o.Pages) == 0 && len(o.Left) > 0 {
		o.Close()
		return nil, fmt.Errorf("worker: OCR of PDF %s: no time left for a page: %w", path, ErrTimeout)
	}
	return o, nil
}

// ocrPDFPage renders page n of a PDF (size in points, zero when
// unknown) and reads it.
func (t Tools) ocrPDFPage(ctx context.Context, path, dir string, n int, size [2]float64) (*PageOCR, error) {
	dpi := float64(OCRResolution)
	if size[0] > 0 && size[1] > 0 {
		// at most MaxPixels pixels, and within MaxImageBytes at a byte
		// a pixel (the page is rendered grey)
		limit := float64(min(t.maxPixels(), t.maxImageBytes()))
		dpi = min(dpi, math.Floor(72*math.Sqrt(limit/(size[0]*size[1]))))
	}
	dpi = max(dpi, 1)
	base := filepath.Join(dir, "page")
	defer os.Remove(base + ".png")
	l := t.ocrLimits()
	page := strconv.Itoa(n)
	if _, err := RunTool(ctx, l, nil, t.Pdftoppm, "-f", page, "-l", page, "-singlefile", "-gray", "-png",
		"-r", strconv.Itoa(int(dpi)), path, base); err != nil {
		return nil, fmt.Errorf("worker: rendering page %d of %s: %w", n, path, toolClassify(err))
	}
	if _, err := os.Stat(base + ".png"); err != nil {
		return nil, Permanent(fmt.Errorf("worker: pdftoppm rendered no page %d of %s", n, path))
	}
	return t.OCRPage(ctx, base+".png")
}

// pdfPageSizes returns the size in points of the given pages, as poppler's
// pdfinfo (beside pdftoppm) reports them; none when it is absent or fails
// (the pages are then rendered at OCRResolution, within MaxPixels or
// refused).
func (t Tools) pdfPageSizes(ctx context.Context, path string, pages []int) map[int][2]float64 {
	sizes := map[int][2]float64{}
	pdfinfo := filepath.Join(filepath.Dir(t.Pdftoppm), "pdfinfo")
	if len(pages) == 0 {
		return sizes
	}
	if _, err := os.Stat(pdfinfo); err != nil {
		return sizes
	}
	out, err := RunTool(ctx, t.toolLimits(), nil, pdfinfo, "-f", strconv.Itoa(slices.Min(pages)), "-l", strconv.Itoa(slices.Max(pages)), path)
	if err != nil {
		return sizes
	}
	for _, m := range pdfinfoSize.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		w, _ := strconv.ParseFloat(string(m[2]), 64)
		h, _ := strconv.ParseFloat(string(m[3]), 64)
		sizes[n] = [2]float64{w, h}
	}
	return sizes
}

var pdfinfoSize = regexp.MustCompile(`(?m)^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+) pts`)

// ocrMerger collects tesseract's one-page hOCR and ALTO documents into one
// document each: the first page's head, then each page's body (hOCR) or
// Page element (ALTO), with its ids made unique and its page number set.
type ocrMerger struct {
	hocr, alto *os.File
	hw, aw     *bufio.Writer
	name       string // the source named in the documents
	pages      int
}

func newOCRMerger(hocrPath, altoPath, name string) (*ocrMerger, error) {
	h, err := os.Create(hocrPath)
	if err != nil {
		return nil, fmt.Errorf("worker: OCR output: %w", err)
	}
	a, err := os.Create(altoPath)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("worker: OCR output: %w", err)
	}
	return &ocrMerger{hocr: h, alto: a, hw: bufio.NewWriter(h), aw: bufio.NewWriter(a), name: name}, nil
}

var (
	hocrID      = regexp.MustCompile(`id='([a-z]+)_1((?:_\d+)?)'`)
	hocrImage   = regexp.MustCompile(`image "[^"]*"; `)
	hocrPageNo  = regexp.MustCompile(`ppageno \d+`)
	altoID      = regexp.MustCompile(`\bID="`)
	altoImgNr   = regexp.MustCompile(`PHYSICAL_IMG_NR="\d+"`)
	altoSrcName = regexp.MustCompile(`<fileName>[^<]*</fileName>`)
)

// add appends page n.
func (m *ocrMerger) add(n int, p *PageOCR) error {
	h := string(p.HOCR)
	hb, he := strings.Index(h, "<body>"), strings.LastIndex(h, "</body>")
	a := string(p.ALTO)
	ab, ae := strings.Index(a, "<Layout>"), strings.LastIndex(a, "</Layout>")
	if hb < 0 || he < hb || ab < 0 || ae < ab {
		return Permanent(fmt.Errorf("worker: OCR of page %d: tesseract wrote no hOCR body or ALTO layout", n))
	}
	hb += len("<body>")
	ab += len("<Layout>")
	if m.pages == 0 {
		m.hw.WriteString(h[:hb])
		m.aw.WriteString(altoSrcName.ReplaceAllLiteralString(a[:ab], "<fileName>"+xmlText(m.name)+"</fileName>"))
	}
	m.pages++
	body := hocrID.ReplaceAllString(h[hb:he], "id='${1}_"+strconv.Itoa(n)+"${2}'")
	body = hocrImage.ReplaceAllLiteralString(body, "")
	body = hocrPageNo.ReplaceAllLiteralString(body, "ppageno "+strconv.Itoa(n-1))
	m.hw.WriteString(body)
	layout := altoID.ReplaceAllLiteralString(a[ab:ae], `ID="p`+strconv.Itoa(n)+"_")
	layout = altoImgNr.ReplaceAllLiteralString(layout, `PHYSICAL_IMG_NR="`+strconv.Itoa(n)+`"`)
	_, err := m.aw.WriteString(layout)
	return err
}

// finish ends both documents (an empty body or layout when no page was
// added).
func (m *ocrMerger) finish() error {
	defer m.close()
	if m.pages == 0 {
		m.hw.WriteString(emptyHOCR)
		m.aw.WriteString(strings.Replace(emptyALTO, "NAME", xmlText(m.name), 1))
	} else {
		m.hw.WriteString("</body>\n</html>\n")
		m.aw.WriteString("</Layout>\n</alto>\n")
	}
	if err := m.hw.Flush(); err != nil {
		return fmt.Errorf("worker: OCR output: %w", err)
	}
	if err := m.aw.Flush(); err != nil {
		return fmt.Errorf("worker: OCR output: %w", err)
	}
	if err := m.hocr.Sync(); err != nil {
		return fmt.Errorf("worker: OCR output: %w", err)
	}
	return nil
}

func (m *ocrMerger) close() {
	m.hocr.Close()
	m.alto.Close()
}

const emptyHOCR = `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title></title></head><body></body></html>
`

const emptyALTO = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="` + ALTONamespace + `"><Description><MeasurementUnit>pixel</MeasurementUnit><sourceImageInformation><fileName>NAME</fileName></sourceImageInformation></Description><Layout></Layout></alto>
`

// xmlText escapes s for XML character data.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// ocr reads a page image (hOCR, ALTO and text) or the scanned pages of a
// PDF, keeps the word boxes as derivatives and the text for search.
func (p *Pipeline) ocr(ctx context.Context, job *shelfmark.Job) (*shelfmark.JobResult, error) {
	return p.withLocalFile(ctx, job, true, func(jf *jobFile, path string) (*shelfmark.JobResult, error) {
		if jf.mediaType() == "application/pdf" {
			return p.ocrPDF(ctx, jf, path)
		}
		o, err := p.Tools.OCRPage(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("OCR of %s: %w", jf.file.Name, err)
		}
		hocr, err := p.store(ctx, o.HOCR, baseName(jf.file)+".hocr", HOCRMediaType, shelfmark.UseOCR)
		if err != nil {
			return nil, err
		}
		alto, err := p.store(ctx, o.ALTO, baseName(jf.file)+".alto.xml", ALTOMediaType, shelfmark.UseALTO)
		if err != nil {
			return nil, err
		}
		res, err := p.textResult(ctx, jf, o.Text, hocr)
		if err != nil {
			return nil, err
		}
		res.Derivatives = append(res.Derivatives, alto)
		return res, nil
	})
}

// ocrPDF OCRs the pages of a PDF without a text layer (at most
// MaxOCRPages, as many as the job's time allows) and keeps one hOCR and
// one ALTO document of them, and the text of the whole PDF (its text
// layer where it has one, OCR elsewhere) as a derivative and for search.
func (p *Pipeline) ocrPDF(ctx context.Context, jf *jobFile, path string) (*shelfmark.JobResult, error) {
	pages, complete, err := p.Tools.PDFPageTexts(ctx, path, MaxTextBytes)
	if err != nil {
		return nil, fmt.Errorf("text of %s: %w", jf.file.Name, err)
	}
	scanned := ScannedPages(pages, complete)
	if len(scanned) > MaxOCRPages {
		scanned = scanned[:MaxOCRPages]
	}
	if len(scanned) == 0 {
		return p.textResult(ctx, jf, JoinPages(pages, MaxTextBytes), nil)
	}
	o, err := p.Tools.OCRPDF(ctx, path, jf.file.Name, scanned)
	if err != nil {
		return nil, fmt.Errorf("OCR of %s: %w", jf.file.Name, err)
	}
	defer o.Close()
	for i, n := range o.Pages {
		pages[n-1] = o.Text[i]
	}
	res, err := p.textResult(ctx, jf, JoinPages(pages, MaxTextBytes), nil)
	if err != nil {
		return nil, err
	}
	for _, d := range []struct{ path, name, mediaType, use string }{
		{o.HOCR, baseName(jf.file) + ".hocr", HOCRMediaType, shelfmark.UseOCR},
		{o.ALTO, baseName(jf.file) + ".alto.xml", ALTOMediaType, shelfmark.UseALTO},
	} {
		f, err := p.storeFile(ctx, d.path, d.name, d.mediaType, d.use)
		if err != nil {
			return nil, err
		}
		res.Derivatives = append(res.Derivatives, f)
	}
	return res, nil
}
