package http

// This file reads the words of a page's OCR with their boxes, for search
// inside a book (iiif_search.go): hOCR (as tesseract writes it: an
// element of class ocrx_word per word, its box in the title's
// "bbox x0 y0 x1 y1", inside elements of class ocr_line) and ALTO
// (String elements with CONTENT, HPOS, VPOS, WIDTH and HEIGHT in pixels,
// inside TextLine elements), and plain text (words without boxes). The
// reader is a small tolerant scanner, not an XML parser: hOCR may be
// HTML rather than XHTML, and a page of a 1,200-page book must cost well
// under a millisecond to read.
//
// Words are matched as the search index matches them: split into tokens
// at every character that is not a letter or a digit, lower-cased and
// without diacritics (SQLite's unicode61 tokenizer with
// remove_diacritics 2).

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ocrWord is one word of a page's OCR.
type ocrWord struct {
	// text is the word as OCR read it.
	text string
	// x0, y0, x1, y1 is its box (left, top, right, bottom) in the
	// pixels of the image OCR read, when boxed.
	x0, y0, x1, y1 int32
	boxed          bool
	// line numbers the word's line on the page (-1 when unknown).
	line int32
}

// ocrPage is what search reads of a page's OCR: its words in reading
// order and their tokens.
type ocrPage struct {
	// width and height are the size of the image OCR read (0 when the
	// OCR does not say).
	width, height int32
	words         []ocrWord
	// tokens are the words' tokens as matched (folded), in order;
	// tokenWord[i] is the index of the word tokens[i] comes from.
	tokens    []string
	tokenWord []int32
}

// maxOCRWords bounds the words read from one page.
const maxOCRWords = 200_000

// bytes estimates the memory a page holds, for the cache's budget.
func (p *ocrPage) bytes() int64 {
	n := int64(64 + len(p.words)*40 + len(p.tokens)*20)
	for i := range p.words {
		n += int64(len(p.words[i].text))
	}
	for _, t := range p.tokens {
		n += int64(len(t))
	}
	return n
}

// add appends a word and its tokens.
func (p *ocrPage) add(w ocrWord) {
	w.text = strings.TrimSpace(w.text)
	if w.text == "" || len(p.words) >= maxOCRWords {
		return
	}
	toks := searchTokens(w.text)
	if len(toks) == 0 {
		return
	}
	idx := int32(len(p.words))
	p.words = append(p.words, w)
	for _, t := range toks {
		p.tokens = append(p.tokens, t)
		p.tokenWord = append(p.tokenWord, idx)
	}
}

// foldText lower-cases s and removes its diacritics (combining marks
// after canonical decomposition).
func foldText(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return norm.NFC.String(b.String())
}

// searchTokens splits text into folded tokens: runs of letters and
// digits.
func searchTokens(text string) []string {
	return strings.FieldsFunc(foldText(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// parsePlainText reads the words of plain text (no boxes, no lines).
func parsePlainText(b []byte) *ocrPage {
	p := &ocrPage{}
	for _, w := range strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")) {
		p.add(ocrWord{text: w, line: -1})
	}
	return p
}

// parseOCR reads the words of hOCR or ALTO. What it cannot read it
// skips: a damaged file gives the words before the damage.
func parseOCR(b []byte) *ocrPage {
	p := &ocrPage{}
	type open struct {
		name string
		word bool
	}
	var (
		stack  []open
		inWord bool
		word   ocrWord
		text   []byte
		line   int32 = -1
		// ALTO's unit: boxes are kept only in pixels
		altoUnit  string
		inUnit    bool
		altoScale = true
	)
	for i := 0; i < len(b); {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 {
			break
		}
		if inWord {
			text = append(text, b[i:i+lt]...)
		}
		if inUnit {
			altoUnit += string(b[i : i+lt])
		}
		i += lt
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			end := bytes.Index(rest, []byte("-->"))
			if end < 0 {
				i = len(b)
			} else {
				i += end + 3
			}
			continue
		case bytes.HasPrefix(rest, []byte("<![CDATA[")):
			end := bytes.Index(rest, []byte("]]>"))
			if end < 0 {
				i = len(b)
				continue
			}
			if inWord {
				text = append(text, rest[9:end]...)
			}
			i += end + 3
			continue
		case bytes.HasPrefix(rest, []byte("<!")), bytes.HasPrefix(rest, []byte("<?")):
			end := bytes.IndexByte(rest, '>')
			if end < 0 {
				i = len(b)
			} else {
				i += end + 1
			}
			continue
		}
		end := tagEnd(rest)
		if end < 0 {
			break
		}
		tag := rest[1:end]
		i += end + 1
		if len(tag) > 0 && tag[0] == '/' {
			name := localName(strings.ToLower(strings.TrimSpace(string(tag[1:]))))
			if name == "measurementunit" {
				inUnit = false
				altoScale = strings.TrimSpace(altoUnit) == "pixel"
			}
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k].name != name {
					continue
				}
				for _, o := range stack[k:] {
					if o.word && inWord {
						word.text = html.UnescapeString(string(text))
						p.add(word)
						inWord = false
					}
				}
				stack = stack[:k]
				break
			}
			continue
		}
		self := len(tag) > 0 && tag[len(tag)-1] == '/'
		if self {
			tag = tag[:len(tag)-1]
		}
		name, attrs := parseTag(tag)
		isWord := false
		switch name {
		case "string": // ALTO
			if !inWord {
				w := ocrWord{text: attrs["content"], line: line}
				x, e1 := strconv.Atoi(attrs["hpos"])
				y, e2 := strconv.Atoi(attrs["vpos"])
				wd, e3 := strconv.Atoi(attrs["width"])
				ht, e4 := strconv.Atoi(attrs["height"])
				if e1 == nil && e2 == nil && e3 == nil && e4 == nil && altoScale {
					w.x0, w.y0, w.x1, w.y1, w.boxed = int32(x), int32(y), int32(x+wd), int32(y+ht), true
				}
				p.add(w)
			}
		case "textline":
			line++
		case "page":
			if wd, err := strconv.Atoi(attrs["width"]); err == nil && altoScale {
				if ht, err := strconv.Atoi(attrs["height"]); err == nil {
					p.width, p.height = int32(wd), int32(ht)
				}
			}
		case "measurementunit":
			inUnit, altoUnit = !self, ""
		}
		if class := attrs["class"]; class != "" {
			for _, c := range strings.Fields(class) {
				switch c {
				case "ocrx_word":
					if !inWord && !self {
						isWord, inWord, text = true, true, text[:0]
						word = ocrWord{line: line}
						if x0, y0, x1, y1, ok := hocrBBox(attrs["title"]); ok {
							word.x0, word.y0, word.x1, word.y1, word.boxed = x0, y0, x1, y1, true
						}
					}
				case "ocr_line", "ocr_caption", "ocr_header", "ocr_textfloat":
					line++
				case "ocr_page":
					if x0, y0, x1, y1, ok := hocrBBox(attrs["title"]); ok && x0 == 0 && y0 == 0 {
						p.width, p.height = x1, y1
					}
				}
			}
		}
		if !self && len(stack) < 256 {
			stack = append(stack, open{name: name, word: isWord})
		} else if isWord {
			inWord = false
		}
	}
	if inWord {
		word.text = html.UnescapeString(string(text))
		p.add(word)
	}
	return p
}

// tagEnd returns the index of the '>' that ends the tag at the start of
// b, skipping quoted attribute values; -1 when there is none.
func tagEnd(b []byte) int {
	var quote byte
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i
		}
	}
	return -1
}

// localName drops a namespace prefix.
func localName(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// parseTag reads a start tag's name and attributes (names lower-cased,
// values unescaped), without the angle brackets.
func parseTag(tag []byte) (string, map[string]string) {
	s := string(tag)
	n := strings.IndexFunc(s, unicode.IsSpace)
	if n < 0 {
		return localName(strings.ToLower(s)), nil
	}
	name := localName(strings.ToLower(s[:n]))
	attrs := map[string]string{}
	s = s[n:]
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			break
		}
		eq := strings.IndexFunc(s, func(r rune) bool { return r == '=' || unicode.IsSpace(r) })
		if eq < 0 {
			break
		}
		key := localName(strings.ToLower(s[:eq]))
		s = strings.TrimLeftFunc(s[eq:], unicode.IsSpace)
		if !strings.HasPrefix(s, "=") {
			continue // an attribute without a value
		}
		s = strings.TrimLeftFunc(s[1:], unicode.IsSpace)
		var val string
		if s != "" && (s[0] == '"' || s[0] == '\'') {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				break
			}
			val, s = s[1:1+end], s[2+end:]
		} else {
			end := strings.IndexFunc(s, unicode.IsSpace)
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		attrs[key] = html.UnescapeString(val)
	}
	return name, attrs
}

// hocrBBox reads the bbox property of an hOCR title.
func hocrBBox(title string) (x0, y0, x1, y1 int32, ok bool) {
	for _, prop := range strings.Split(title, ";") {
		f := strings.Fields(prop)
		if len(f) != 5 || f[0] != "bbox" {
			continue
		}
		var v [4]int32
		for i := range v {
			n, err := strconv.ParseInt(f[i+1], 10, 32)
			if err != nil || n < 0 {
				return 0, 0, 0, 0, false
			}
			v[i] = int32(n)
		}
		if v[2] < v[0] || v[3] < v[1] {
			return 0, 0, 0, 0, false
		}
		return v[0], v[1], v[2], v[3], true
	}
	return 0, 0, 0, 0, false
}
