package gen

import (
	"bytes"
	"fmt"
	"strings"
)

// PDF page layout (US Letter, points).
const (
	pdfFontSize   = 11
	pdfLeading    = 14
	pdfLineChars  = 90
	pdfPageLines  = 48
	pdfTop, pdfLM = 740, 72
)

// PDF returns a PDF 1.4 document whose pages carry text as a real text
// layer (Helvetica, WinAnsi), wrapped at about 90 characters a line and
// 48 lines a page; short texts give one page. The cross-reference table
// holds the exact byte offset of every object, so text extractors such as
// pdftotext read it back. Characters outside Latin-1 are written as '?'.
func PDF(seed uint64, i int, text string) []byte {
	r := rng(seed, i, saltPDF)
	lines := wrap(text, pdfLineChars)
	var pages [][]string
	for len(lines) > pdfPageLines {
		pages = append(pages, lines[:pdfPageLines])
		lines = lines[pdfPageLines:]
	}
	pages = append(pages, lines)

	// Objects: 1 catalog, 2 page tree, 3 font, 4 info, then a page and
	// its content stream for each page.
	n := 4 + 2*len(pages)
	var b bytes.Buffer
	offsets := make([]int, n+1)
	obj := func(num int, body string) {
		offsets[num] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", num, body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, len(pages))
	for k := range pages {
		kids[k] = fmt.Sprintf("%d 0 R", 5+2*k)
	}
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	date := fmt.Sprintf("D:%04d%02d%02d%02d%02d%02dZ", 1990+r.IntN(35), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60))
	obj(4, fmt.Sprintf("<< /Title (Generated document %d) /Producer (shelfmark-bench gen) /CreationDate (%s) >>", i, date))
	for k, pl := range pages {
		var c bytes.Buffer
		fmt.Fprintf(&c, "BT\n/F1 %d Tf\n%d TL\n%d %d Td\n", pdfFontSize, pdfLeading, pdfLM, pdfTop)
		for j, l := range pl {
			if j > 0 {
				c.WriteString("T* ")
			}
			c.WriteString(pdfString(l) + " Tj\n")
		}
		c.WriteString("ET")
		obj(5+2*k, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 6+2*k))
		obj(6+2*k, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", c.Len(), c.Bytes()))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", n+1)
	for _, off := range offsets[1:] {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	id := fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R /ID [<%s> <%s>] >>\nstartxref\n%d\n%%%%EOF\n", n+1, id, id, xref)
	return b.Bytes()
}

// wrap breaks text into lines of at most width characters at spaces,
// keeping the text's own line breaks.
func wrap(text string, width int) []string {
	var out []string
	for para := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			for len([]rune(w)) > width {
				rw := []rune(w)
				if line != "" {
					out = append(out, line)
					line = ""
				}
				out = append(out, string(rw[:width]))
				w = string(rw[width:])
			}
			switch {
			case line == "":
				line = w
			case len([]rune(line))+1+len([]rune(w)) <= width:
				line += " " + w
			default:
				out = append(out, line)
				line = w
			}
		}
		out = append(out, line)
	}
	return out
}

// pdfString returns s as a PDF literal string in WinAnsi (Latin-1 subset)
// with the delimiters escaped.
func pdfString(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, ch := range s {
		switch {
		case ch == '(' || ch == ')' || ch == '\\':
			b.WriteByte('\\')
			b.WriteRune(ch)
		case ch >= 0x20 && ch < 0x7f:
			b.WriteRune(ch)
		case ch >= 0xa0 && ch <= 0xff:
			fmt.Fprintf(&b, "\\%03o", ch)
		default:
			b.WriteByte('?')
		}
	}
	b.WriteByte(')')
	return b.String()
}
