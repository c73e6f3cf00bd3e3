package iiif

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// tesseractHOCR is hOCR as tesseract 5.3 writes it (trimmed), with an
// entity, a word in nested markup and a word of punctuation only.
const tesseractHOCR = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title></title>
  <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
  <meta name='ocr-system' content='tesseract 5.3.0' />
 </head>
 <body>
  <div class='ocr_page' id='page_1' title='image "in>put.png"; bbox 0 0 1955 500; ppageno 0; scan_res 300 300'>
   <div class='ocr_carea' id='block_1_1' title="bbox 1 0 1955 50">
    <p class='ocr_par' id='par_1_1' lang='eng' title="bbox 1 0 1955 50">
     <span class='ocr_line' id='line_1_1' title="bbox 1 0 1955 50; baseline 0 -10; x_size 48; x_descenders 10; x_ascenders 11">
      <span class='ocrx_word' id='word_1_1' title='bbox 1 2 92 40; x_wconf 96'>The</span>
      <span class='ocrx_word' id='word_1_2' title='bbox 114 2 244 50; x_wconf 94'>quick</span>
      <span class='ocrx_word' id='word_1_3' title='bbox 266 2 411 40; x_wconf 96'>Caf&#233;&amp;Co.</span>
     </span>
     <span class='ocr_line' id='line_1_2' title="bbox 1 60 1955 110">
      <span class='ocrx_word' id='word_1_4' title='bbox 1 62 92 100; x_wconf 96'><strong>na&#xEF;ve</strong></span>
      <span class='ocrx_word' id='word_1_5' title='bbox 100 62 120 100; x_wconf 96'>—</span>
      <span class='ocrx_word' id='word_1_6' title='bbox 130 62 300 100; x_wconf 96'>well-known</span>
     </span>
    </p>
   </div>
  </div>
 </body>
</html>
`

// altoPage is ALTO as tesseract writes it (trimmed).
const altoPage = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#">
 <Description><MeasurementUnit>pixel</MeasurementUnit></Description>
 <Layout><Page WIDTH="1000" HEIGHT="1500" PHYSICAL_IMG_NR="0" ID="page_0">
  <PrintSpace><TextBlock ID="block_0">
   <TextLine ID="line_0"><String ID="string_0" HPOS="10" VPOS="20" WIDTH="30" HEIGHT="40" CONTENT="Hello"/><SP/><String ID="string_1" HPOS="50" VPOS="20" WIDTH="60" HEIGHT="40" CONTENT="W&#246;rld"/></TextLine>
   <TextLine ID="line_1"><String ID="string_2" HPOS="10" VPOS="80" WIDTH="30" HEIGHT="40" CONTENT="again"/></TextLine>
  </TextBlock></PrintSpace>
 </Page></Layout>
</alto>`

func describeOCR(p *ocrPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%dx%d", p.width, p.height)
	for _, w := range p.words {
		fmt.Fprintf(&b, "|%s@%d", w.text, w.line)
		if w.boxed {
			fmt.Fprintf(&b, "[%d %d %d %d]", w.x0, w.y0, w.x1, w.y1)
		}
	}
	return b.String() + "|" + strings.Join(p.tokens, " ")
}

// TestParseOCR reads words, boxes, lines and page sizes of hOCR and ALTO,
// and tokens as the search index makes them (folded, stemmed: naive is
// naiv, one is on).
func TestParseOCR(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"hOCR", tesseractHOCR, "1955x500|The@0[1 2 92 40]|quick@0[114 2 244 50]|Café&Co.@0[266 2 411 40]|naïve@1[1 62 92 100]|well-known@1[130 62 300 100]" +
			"|the quick cafe co naiv well known"},
		{"ALTO", altoPage, "1000x1500|Hello@0[10 20 40 60]|Wörld@0[50 20 110 60]|again@1[10 80 40 120]|hello world again"},
		{"ALTO in tenths of millimetres", strings.Replace(altoPage, ">pixel<", ">mm10<", 1), "0x0|Hello@0|Wörld@0|again@1|hello world again"},
		{"HTML hOCR", `<html><head><meta charset=utf-8><title>x</title></head><body><div class=ocr_page title="bbox 0 0 10 10"><span class="ocr_line"><span class="ocrx_word" title="bbox 1 1 2 2">A</span> <span class="ocrx_word x" title=bbox>B</span></span></div>`,
			"10x10|A@0[1 1 2 2]|B@0|a b"},
		{"several pages", `<div class='ocr_page' title='bbox 0 0 10 10'><span class='ocrx_word' title='bbox 1 1 2 2'>One</span></div>` +
			`<div class='ocr_page' title='bbox 0 0 20 20'><span class='ocrx_word' title='bbox 1 1 2 2'>Two</span></div>`, "0x0|One@-1|Two@-1|on two"},
		{"empty", "", "0x0|"},
		{"not markup", "just some words", "0x0|"},
	} {
		if got := describeOCR(parseOCR([]byte(c.in), "")); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	if got := describeOCR(parsePlainText([]byte("Ein  Straße\nÉté\xff"), "")); got != "0x0|Ein@-1|Straße@-1|Été\uFFFD@-1|ein straße et" {
		t.Errorf("plain text: %s", got)
	}
	// every prefix of a file (a truncated or damaged one) reads without
	// failing, and gives at most the whole file's words
	for _, in := range []string{tesseractHOCR, altoPage} {
		all := len(parseOCR([]byte(in), "").words)
		for i := range len(in) {
			if n := len(parseOCR([]byte(in[:i]), "").words); n > all {
				t.Fatalf("a prefix of %d bytes gave %d words, the whole %d", i, n, all)
			}
		}
	}
}

// TestMatchPage: all terms must occur (or one of those joined by OR),
// and none left out (-word); phrases are consecutive tokens; a trailing *
// is a prefix; hits come in reading order; a word without a letter or
// digit (a dash) is no word.
func TestMatchPage(t *testing.T) {
	p := parseOCR([]byte(tesseractHOCR), "")
	for _, c := range []struct {
		q    string
		want string
	}{
		{"quick", "[{1 1}]"},
		{"QUICK the", "[{0 0} {1 1}]"},
		{"quick absent", "[]"},
		{`"the quick"`, "[{0 1}]"},
		{`"quick the"`, "[]"},
		{"cafe", "[{2 2}]"},
		{"café", "[{2 2}]"},
		{"co", "[{2 2}]"},
		{"naive", "[{3 3}]"},
		{"knowx*", "[]"},
		{"kno*", "[{4 4}]"},
		{`"co naive"`, "[{2 3}]"},
		{"well-known", "[{4 4}]"},
		{`"the qu"*`, "[{0 1}]"},
		{`"the qu*"`, "[]"},
		// a term left out, alternatives
		{"quick -absent", "[{1 1}]"},
		{"quick -naive", "[]"},
		{`quick -"the quick"`, "[]"},
		{"absent OR quick", "[{1 1}]"},
		{"absent OR other", "[]"},
		{"the absent OR quick", "[{0 0} {1 1}]"},
		{"absent OR other quick", "[]"},
		{"quick OR the cafe", "[{0 0} {1 1} {2 2}]"},
		{"quick OR the -cafe", "[]"},
		{"-absent quick", "[{1 1}]"},
		// words match by their stems, as in the index
		{"naivety", "[]"},
		{"naive", "[{3 3}]"},
		{"naives", "[{3 3}]"},
		{"quickly", "[]"},
		{"quicks", "[{1 1}]"},
		{"naiv*", "[{3 3}]"},
		{"naive*", "[{3 3}]"},
		{"quicks*", "[{1 1}]"}, // as typed, or its stem quick
		{`"the quicks"*`, "[{0 1}]"},
		{`"the quick"*`, "[{0 1}]"},
		{`"the quicker"*`, "[]"},
		{"wel*", "[{4 4}]"},
	} {
		terms, err := parseBookQuery(c.q, "")
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		got := dedupSpans(matchPage(p, terms))
		if s := fmt.Sprint(got); s != c.want && !(c.want == "[]" && len(got) == 0) {
			t.Errorf("%q: %s, want %s", c.q, s, c.want)
		}
	}
	// a page has no record: a field term is refused, saying so
	for _, q := range []string{"creator:melville", "quick date:1851", "-title:x quick"} {
		if _, err := parseBookQuery(q, ""); shelfmark.ErrorCode(err) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(err), "words and phrases only") {
			t.Errorf("%q: %v", q, err)
		}
	}
}

// FuzzParseOCR: any bytes read as OCR give a page whose tokens all point
// at its words, whose words are not empty and whose boxes are ordered;
// never a panic.
func FuzzParseOCR(f *testing.F) {
	f.Add([]byte(tesseractHOCR))
	f.Add([]byte(altoPage))
	f.Add([]byte(`<span class="ocrx_word" title="bbox 9 9 1 1">x</span><String CONTENT="&#xffff;" HPOS="-1" VPOS="1e9" WIDTH="" HEIGHT="2"/>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := parseOCR(b, "")
		if len(p.tokens) != len(p.tokenWord) || len(p.words) > maxOCRWords {
			t.Fatalf("%d tokens, %d token words, %d words", len(p.tokens), len(p.tokenWord), len(p.words))
		}
		for i, w := range p.tokenWord {
			if w < 0 || int(w) >= len(p.words) || p.tokens[i] == "" {
				t.Fatalf("token %d (%q) points at word %d of %d", i, p.tokens[i], w, len(p.words))
			}
		}
		for _, w := range p.words {
			if strings.TrimSpace(w.text) == "" || (w.boxed && (w.x1 < w.x0 || w.y1 < w.y0)) {
				t.Fatalf("word %+v", w)
			}
		}
	})
}
