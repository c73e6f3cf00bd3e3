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
