package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// toolTestText is a text of about 130 lines (three PDF pages) with a
// Latin-1 character.
func toolTestText() string {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Shelfmark %d records the catalogue volume of the archive café. ", i)
	}
	return b.String()
}

func TestExtractTextPDF(t *testing.T) {
	ctx := context.Background()
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Pdftotext, "pdftotext")
	text := toolTestText()
	p := toolTestFile(t, "doc.pdf", gen.PDF(1, 1, text))

	got, err := tools.ExtractText(ctx, p, "application/pdf", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(strings.Fields(text), " "); strings.Join(strings.Fields(got), " ") != want {
		t.Errorf("text differs from the generated text (modulo white space):\ngot  %.200q…\nwant %.200q…", got, want)
	}

	// A cap cuts the text at a character boundary.
	for _, n := range []int{1, 50, 75, 1000} {
		got, err := tools.ExtractText(ctx, p, "", n)
		if err != nil {
			t.Fatalf("cap %d: %v", n, err)
		}
		if len(got) > n || !utf8.ValidString(got) || !strings.HasPrefix(text, strings.Fields(got)[0]) {
			t.Errorf("cap %d: %d bytes %q", n, len(got), got)
		}
	}
}

func TestExtractTextPDFBad(t *testing.T) {
	ctx := context.Background()
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Pdftotext, "pdftotext")
	pdf := gen.PDF(1, 2, toolTestText())
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty.pdf", nil},
		{"truncated.pdf", pdf[:len(pdf)/2]},
		{"header-only.pdf", pdf[:20]},
		{"not-a.pdf", []byte("this is no PDF")},
	} {
		_, err := tools.ExtractText(ctx, toolTestFile(t, c.name, c.data), "application/pdf", 0)
		if !IsPermanent(err) {
			t.Errorf("%s: error %v, want a permanent one", c.name, err)
		}
	}
	_, err := Tools{}.ExtractText(ctx, toolTestFile(t, "doc.pdf", pdf), "application/pdf", 0)
	if !errors.Is(err, ErrToolMissing) {
		t.Errorf("without pdftotext: error %v, want ErrToolMissing", err)
	}
}

func TestExtractTextXML(t *testing.T) {
	ctx := context.Background()
	var tools Tools // no external program needed
	doc := gen.PatentXML(1, 7)
	p := toolTestFile(t, "patent.xml", doc)
	for _, mt := range []string{"application/xml", "text/xml; charset=utf-8", ""} {
		got, err := tools.ExtractText(ctx, p, mt, 0)
		if err != nil {
			t.Fatalf("%q: %v", mt, err)
		}
		for _, want := range []string{"Apparatus for the storage of shelfmarks, variant 7", "Technical field", "EP 0000007 A1"} {
			if !strings.Contains(got, want) {
				t.Errorf("%q: text lacks %q: %.300q", mt, want, got)
			}
		}
		if strings.ContainsAny(got, "<>\n\t") || strings.Contains(got, "  ") || got != strings.TrimSpace(got) {
			t.Errorf("%q: markup or uncollapsed white space: %.300q", mt, got)
		}
	}

	got, err := tools.ExtractText(ctx, p, "application/xml", 100)
	if err != nil || len(got) > 100 || !strings.HasPrefix(got, "EP") {
		t.Errorf("capped at 100: %q, %v", got, err)
	}

	for _, c := range []struct{ name, mt, doc, want string }{
		{"inline.xml", "text/xml", `<p>Shelf<b>mark</b>s <i>and</i>  <sup>2</sup></p><p>next</p><!-- no --><?pi no?>`, "Shelfmarks and 2 next"},
		{"latin1.xml", "application/xml", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><t>caf\xe9 <![CDATA[a<b]]> &amp; z</t>", "café a<b & z"},
		{"page.xhtml", "application/xhtml+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title><style>p{}</style><script>if (a &lt; b) x()</script></head><body><p>One&nbsp;two<br/>three</p></body></html>`, "T One two three"},
		{"tei.xml", "application/tei+xml", `<TEI><text><body><p>A</p></body></text></TEI>`, "A"},
	} {
		got, err := tools.ExtractText(ctx, toolTestFile(t, c.name, []byte(c.doc)), c.mt, 0)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}

	for _, c := range []struct{ name, doc string }{
		{"unclosed.xml", `<a><b>text</a>`},
		{"utf16.xml", `<?xml version="1.0" encoding="KOI8-R"?><a/>`},
		{"truncated.xml", string(doc[:len(doc)/2])},
	} {
		_, err := tools.ExtractText(ctx, toolTestFile(t, c.name, []byte(c.doc)), "application/xml", 0)
		if !IsPermanent(err) {
			t.Errorf("%s: error %v, want a permanent one", c.name, err)
		}
	}
	if got, err := tools.ExtractText(ctx, toolTestFile(t, "empty.xml", nil), "application/xml", 0); err != nil || got != "" {
		t.Errorf("empty XML: %q, %v", got, err)
	}
}

func TestExtractTextPlain(t *testing.T) {
	ctx := context.Background()
	var tools Tools
	for _, c := range []struct {
		name, mt, data string
		max            int
		want           string
	}{
		{"a.txt", "text/plain", "plain text\nline two\n", 0, "plain text\nline two\n"},
		{"bad.txt", "text/plain; charset=utf-8", "a\xffb\xc3", 0, "a\uFFFDb\uFFFD"},
		{"bom.txt", "text/plain", "\xef\xbb\xbfwith BOM", 0, "with BOM"},
		{"cap.txt", "text/plain", "ééé", 3, "é"},
		{"cap2.txt", "text/csv", "abcdef", 4, "abcd"},
		{"cut.txt", "text/plain", "ab\xe2\x82\xac", 4, "ab"},
		{"empty.txt", "text/plain", "", 0, ""},
		{"sniffed.txt", "", "sniffed plain text", 0, "sniffed plain text"},
	} {
		got, err := tools.ExtractText(ctx, toolTestFile(t, c.name, []byte(c.data)), c.mt, c.max)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	for _, mt := range []string{"image/jpeg", "text/html"} {
		_, err := tools.ExtractText(ctx, toolTestFile(t, "x.jpg", gen.JPEG(1, 1, 64, 64)), mt, 0)
		if !IsPermanent(err) {
			t.Errorf("%s: error %v, want a permanent one", mt, err)
		}
	}
}
