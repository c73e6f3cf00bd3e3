package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// DefaultMaxText is the cap on extracted text when ExtractText is given
// maxBytes ≤ 0.
const DefaultMaxText = 1 << 20

// toolMaxXMLInput bounds how much of an XML document ExtractText reads
// (markup without text could otherwise keep it busy for long); the text
// of the part read is returned.
const toolMaxXMLInput = 256 << 20

// ExtractText returns the text of a PDF (pdftotext, UTF-8), an XML
// document (its character data, whitespace-collapsed, via encoding/xml
// tokens, bounded; XHTML too, HTML is not supported) or plain text (any
// other text/* type: valid UTF-8 only, invalid bytes replaced by U+FFFD, a
// byte-order mark dropped), capped at maxBytes (≤ 0: DefaultMaxText) and
// cut at a character boundary. mediaType empty means sniff the file.
// Unsupported or corrupt input → Permanent; a PDF without pdftotext → an
// error wrapping ErrToolMissing. A PDF without a text layer gives "".
func (t Tools) ExtractText(ctx context.Context, path, mediaType string, maxBytes int) (string, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxText
	}
	in, err := toolOpenInput(ctx, path, mediaType)
	if err != nil {
		return "", err
	}
	var s string
	switch mt := in.mediaType; {
	case mt == "application/pdf":
		if in.size == 0 {
			return "", Permanent(fmt.Errorf("worker: text of PDF %s: empty file", path))
		}
		if t.Pdftotext == "" {
			return "", fmt.Errorf("worker: text of PDF %s: pdftotext: %w", path, ErrToolMissing)
		}
		s, err = t.toolPDFText(ctx, in.path, maxBytes)
	case toolIsXML(mt):
		s, err = toolXMLText(in.path, mt == "application/xhtml+xml", maxBytes)
	case strings.HasPrefix(mt, "text/") && mt != "text/html":
		s, err = toolPlainText(in.path, maxBytes)
	default:
		err = Permanent(fmt.Errorf("unsupported media type %q", mt))
	}
	if err != nil {
		return "", fmt.Errorf("worker: text of %s: %w", path, err)
	}
	return s, nil
}

// toolPDFText runs pdftotext to standard output. Output beyond maxBytes
// stops the child early.
func (t Tools) toolPDFText(ctx context.Context, path string, maxBytes int) (string, error) {
	l := t.toolLimits()
	l.MaxOutput = int64(maxBytes)
	out, err := RunTool(ctx, l, nil, t.Pdftotext, "-enc", "UTF-8", "-nopgbrk", path, "-")
	if err != nil && !errors.Is(err, ErrOutputLimit) {
		return "", toolClassify(err)
	}
	s := strings.ToValidUTF8(string(toolCutUTF8(out, maxBytes)), "\uFFFD")
	return strings.TrimSpace(toolCutString(s, maxBytes)), nil
}

// toolPlainText reads up to maxBytes of a text file as UTF-8.
func toolPlainText(path string, maxBytes int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	// A few bytes more, so that a character cut by the limit is not
	// taken for an invalid one.
	b, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+utf8.UTFMax))
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	s := strings.ToValidUTF8(string(toolCutUTF8(b, maxBytes)), "\uFFFD")
	return toolCutString(s, maxBytes), nil
}

// toolXMLText returns the character data of an XML document,
// whitespace-collapsed, with the boundaries of elements other than inline
// ones as word breaks. Comments and processing instructions are skipped;
// in XHTML also scripts and styles, and HTML's named entities are known.
// Malformed XML is a Permanent error.
func toolXMLText(path string, xhtml bool, maxBytes int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: toolMaxXMLInput}
	d := xml.NewDecoder(bufio.NewReader(lr))
	d.CharsetReader = toolCharsetReader
	if xhtml {
		d.Entity = xml.HTMLEntity
	}
	var b strings.Builder
	space := false // a break is pending between words
	skip := 0      // depth inside <script> or <style>
	for b.Len() < maxBytes {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				break // the input bound cut the document
			}
			return "", Permanent(fmt.Errorf("malformed XML: %w", err))
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if xhtml && (tok.Name.Local == "script" || tok.Name.Local == "style") {
				skip++
			}
			if !toolInline(tok.Name.Local) {
				space = true
			}
		case xml.EndElement:
			if xhtml && skip > 0 && (tok.Name.Local == "script" || tok.Name.Local == "style") {
				skip--
			}
			if !toolInline(tok.Name.Local) {
				space = true
			}
		case xml.CharData:
			if skip > 0 || len(tok) == 0 {
				continue
			}
			if r, _ := utf8.DecodeRune(tok); unicode.IsSpace(r) {
				space = true
			}
			for _, w := range bytes.Fields(tok) {
				if space && b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.Write(w)
				space = true
			}
			if r, _ := utf8.DecodeLastRune(tok); !unicode.IsSpace(r) {
				space = false // the next text may continue this word
			}
		}
	}
	s := strings.ToValidUTF8(b.String(), "\uFFFD")
	return toolCutString(s, maxBytes), nil
}

// toolInline reports whether an element is one of the (X)HTML and
// patent-XML elements that mark up text within a word or line rather
// than separate it.
func toolInline(local string) bool {
	switch local {
	case "a", "abbr", "b", "bdi", "bdo", "cite", "code", "dfn", "em", "i", "kbd",
		"mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "u",
		"var", "smallcaps", "o":
		return true
	}
	return false
}

// toolCharsetReader decodes the single-byte encodings XML documents
// declare besides UTF-8: ISO-8859-1 and US-ASCII exactly, windows-1252 as
// ISO-8859-1 (they differ only in 0x80–0x9F).
func toolCharsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii", "windows-1252", "cp1252":
		return &toolLatin1Reader{r: bufio.NewReader(input)}, nil
	}
	return nil, Permanent(fmt.Errorf("unsupported XML encoding %q", charset))
}

// toolLatin1Reader converts ISO-8859-1 bytes to UTF-8.
type toolLatin1Reader struct {
	r   *bufio.Reader
	out []byte
}

func (l *toolLatin1Reader) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		l.out = utf8.AppendRune(l.out[:0], rune(c))
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// toolCutUTF8 returns b cut to at most n bytes without splitting a
// character at the end.
func toolCutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// toolCutString returns valid UTF-8 s cut to at most n bytes at a
// character boundary.
func toolCutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// MinTextLayerChars is how many letters and digits a PDF page's text
// layer must hold to count as one: a page with fewer (nothing, or only a
// page number or a stamp) is taken for a scan and OCRed.
const MinTextLayerChars = 16

// PDFPageTexts returns the text layer of a PDF page by page (pdftotext
// with page breaks; pages[i] is page i+1), at most maxBytes in all (≤ 0:
// DefaultMaxText). complete is false when the cap cut the text: the last
// page returned is then cut and later ones are missing. Errors as
// ExtractText's.
func (t Tools) PDFPageTexts(ctx context.Context, path string, maxBytes int) (pages []string, complete bool, err error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxText
	}
	in, err := toolOpenInput(ctx, path, "application/pdf")
	if err != nil {
		return nil, false, err
	}
	if in.size == 0 {
		return nil, false, Permanent(fmt.Errorf("worker: text of PDF %s: empty file", path))
	}
	if t.Pdftotext == "" {
		return nil, false, fmt.Errorf("worker: text of PDF %s: pdftotext: %w", path, ErrToolMissing)
	}
	l := t.toolLimits()
	l.MaxOutput = int64(maxBytes)
	out, err := RunTool(ctx, l, nil, t.Pdftotext, "-enc", "UTF-8", in.path, "-")
	complete = err == nil
	if err != nil && !errors.Is(err, ErrOutputLimit) {
		return nil, false, fmt.Errorf("worker: text of PDF %s: %w", path, toolClassify(err))
	}
	s := strings.ToValidUTF8(string(toolCutUTF8(out, maxBytes)), "\uFFFD")
	pages = strings.Split(s, "\f")
	if complete && len(pages) > 1 && pages[len(pages)-1] == "" {
		pages = pages[:len(pages)-1] // pdftotext ends every page with a break
	}
	for i, p := range pages {
		pages[i] = strings.TrimSpace(p)
	}
	return pages, complete, nil
}

// ScannedPages are the numbers (from 1) of the pages PDFPageTexts found
// without a text layer (fewer than MinTextLayerChars letters and
// digits). When the text was cut (!complete), the cut last page is not
// counted: it has text.
func ScannedPages(pages []string, complete bool) []int {
	if !complete && len(pages) > 0 {
		pages = pages[:len(pages)-1]
	}
	var scanned []int
	for i, p := range pages {
		n := 0
		for _, r := range p {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if n++; n >= MinTextLayerChars {
					break
				}
			}
		}
		if n < MinTextLayerChars {
			scanned = append(scanned, i+1)
		}
	}
	return scanned
}

// JoinPages joins the text of pages, blank ones left out, with blank
// lines between them, cut to at most maxBytes at a character boundary.
func JoinPages(pages []string, maxBytes int) string {
	var b strings.Builder
	for _, p := range pages {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
		if b.Len() >= maxBytes {
			break
		}
	}
	return toolCutString(b.String(), maxBytes)
}

// text extracts the text of a PDF, XML or plain text file for search, and
// keeps it as a derivative. A PDF with pages without a text layer (a
// scan) is handed on to the ocr queue, which OCRs those pages and keeps
// the text of the whole PDF; meanwhile its text layer, if any, is
// searchable at once.
func (p *Pipeline) text(ctx context.Context, job *shelfmark.Job) (*shelfmark.JobResult, error) {
	return p.withLocalFile(ctx, job, true, func(jf *jobFile, path string) (*shelfmark.JobResult, error) {
		if jf.mediaType() != "application/pdf" {
			text, err := p.Tools.ExtractText(ctx, path, jf.mediaType(), MaxTextBytes)
			if err != nil {
				return nil, fmt.Errorf("text of %s: %w", jf.file.Name, err)
			}
			return p.textResult(ctx, jf, text, nil)
		}
		pages, complete, err := p.Tools.PDFPageTexts(ctx, path, MaxTextBytes)
		if err != nil {
			return nil, fmt.Errorf("text of %s: %w", jf.file.Name, err)
		}
		text := JoinPages(pages, MaxTextBytes)
		if len(ScannedPages(pages, complete)) == 0 {
			return p.textResult(ctx, jf, text, nil)
		}
		return &shelfmark.JobResult{Docs: jf.searchDocs(text), Next: []string{shelfmark.QueueOCR}}, nil
	})
}

// searchDocs is the search document of the file's page holding text
// (none for blank text or a file of no work).
func (jf *jobFile) searchDocs(text string) []shelfmark.SearchDoc {
	if strings.TrimSpace(text) == "" || jf.work == 0 {
		return nil
	}
	format := ""
	if jf.file.Format.Known() {
		format = jf.file.Format.Name
	}
	return []shelfmark.SearchDoc{{Key: jf.fileset, Work: jf.work, Kind: shelfmark.KindFileSet, Format: format, Body: text}}
}
