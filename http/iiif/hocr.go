package iiif

// This file reads the words of a page's OCR with their boxes, for search
// inside a book (iiif_search.go): hOCR (as tesseract writes it: an
// element of class ocrx_word per word, its box in the title's
// "bbox x0 y0 x1 y1", inside elements of class ocr_line) and ALTO
// (String elements with CONTENT, HPOS, VPOS, WIDTH and HEIGHT in pixels,
// inside TextLine elements), and plain text (words without boxes). A
// document of several pages (the OCR of a scanned PDF) gives its words
// without boxes, since its pages share one canvas. The
// reader is a small tolerant scanner, not an XML parser: hOCR may be
// HTML rather than XHTML, and a page of a 1,200-page book must cost well
// under a millisecond to read.
//
// Words are matched as the search index matches them: split into tokens
// at every character that is not a letter or a digit, lower-cased and
// without diacritics (SQLite's unicode61 tokenizer with
// remove_diacritics 2), each folded to its stem in the language of the
// book (its work's dcterms:language: shelfmark.SearchStemLang, the
// Snowball stemmer SQLite's tokenizer shelfmark runs, or Porter's
// English one, FTS5's porter tokenizer, for English and every other
// language). The query is stemmed in the book's language too.

import (
	"bytes"
	"html"
	"strings"
	"unicode"

	"github.com/shelfmark/shelfmark"
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
	// lang is the language the tokens are stemmed in
	// (shelfmark.SearchLang).
	lang string
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
	idx := int32(len(p.words))
	if f := shelfmark.SearchFold(w.text); wordOnly(f) { // most words are one token
		p.tokens = append(p.tokens, shelfmark.SearchStemLang(f, p.lang))
		p.tokenWord = append(p.tokenWord, idx)
	} else {
		toks := strings.FieldsFunc(f, notWordRune)
		if len(toks) == 0 {
			return
		}
		for _, t := range toks {
			p.tokens = append(p.tokens, shelfmark.SearchStemLang(t, p.lang))
			p.tokenWord = append(p.tokenWord, idx)
		}
	}
	p.words = append(p.words, w)
}

// notWordRune reports whether r separates tokens.
func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// wordOnly reports whether s is one token: not empty, only letters and
// digits.
func wordOnly(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if notWordRune(r) {
			return false
		}
	}
	return true
}

// foldTokens splits text into tokens, runs of letters and digits, folded
// as the index folds them (shelfmark.SearchFold) but not stemmed.
func foldTokens(text string) []string {
	return strings.FieldsFunc(shelfmark.SearchFold(text), notWordRune)
}

// searchTokens splits text into folded tokens, runs of letters and
// digits, each folded to its stem in the language lang as the index
// folds it (shelfmark.SearchStemLang).
func searchTokens(text, lang string) []string {
	toks := foldTokens(text)
	for i, t := range toks {
		toks[i] = shelfmark.SearchStemLang(t, lang)
	}
	return toks
}

// parsePlainText reads the words of plain text (no boxes, no lines),
// their tokens stemmed in the language lang.
func parsePlainText(b []byte, lang string) *ocrPage {
	p := &ocrPage{lang: lang}
	for _, w := range strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")) {
		p.add(ocrWord{text: w, line: -1})
	}
	return p
}

// parseOCR reads the words of hOCR or ALTO. What it cannot read it
// skips: a damaged file gives the words before the damage. The tokens
// are stemmed in the language lang.
func parseOCR(b []byte, lang string) *ocrPage {
	p := &ocrPage{lang: lang}
	if n := bytes.Count(b, []byte("ocrx_word")) + bytes.Count(b, []byte("<String")); n > 0 {
		n = min(n, maxOCRWords)
		p.words, p.tokens, p.tokenWord = make([]ocrWord, 0, n), make([]string, 0, n), make([]int32, 0, n)
	}
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
		// pages counts the pages described: the boxes of a document of
		// several (a PDF's) are in as many coordinate spaces, which one
		// canvas cannot show, so they are dropped
		pages int
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
			name := tagName(bytes.TrimSpace(tag[1:]))
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
						word.text = attrText(text)
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
				w := ocrWord{text: attrText(attrs.content), line: line}
				x, ok1 := atoi(attrs.hpos)
				y, ok2 := atoi(attrs.vpos)
				wd, ok3 := atoi(attrs.width)
				ht, ok4 := atoi(attrs.height)
				if ok1 && ok2 && ok3 && ok4 && altoScale {
					w.x0, w.y0, w.x1, w.y1, w.boxed = x, y, x+wd, y+ht, true
				}
				p.add(w)
			}
		case "textline":
			line++
		case "page":
			pages++
			wd, ok1 := atoi(attrs.width)
			ht, ok2 := atoi(attrs.height)
			if ok1 && ok2 && altoScale {
				p.width, p.height = wd, ht
			}
		case "measurementunit":
			inUnit, altoUnit = !self, ""
		}
		if len(attrs.class) > 0 {
			for _, c := range strings.Fields(string(attrs.class)) {
				switch c {
				case "ocrx_word":
					if !inWord && !self {
						isWord, inWord, text = true, true, text[:0]
						word = ocrWord{line: line}
						if x0, y0, x1, y1, ok := hocrBBox(attrs.title); ok {
							word.x0, word.y0, word.x1, word.y1, word.boxed = x0, y0, x1, y1, true
						}
					}
				case "ocr_line", "ocr_caption", "ocr_header", "ocr_textfloat":
					line++
				case "ocr_page":
					pages++
					if x0, y0, x1, y1, ok := hocrBBox(attrs.title); ok && x0 == 0 && y0 == 0 {
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
		word.text = attrText(text)
		p.add(word)
	}
	if pages > 1 {
		p.width, p.height = 0, 0
		for i := range p.words {
			p.words[i].boxed = false
		}
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

// tagAttrs are the attributes a tag may carry that the reader uses, as
// written (entities not yet replaced).
type tagAttrs struct {
	class, title, content, hpos, vpos, width, height []byte
}

// tagName is an element's name, lower-cased, without a namespace prefix.
func tagName(b []byte) string {
	if i := bytes.LastIndexByte(b, ':'); i >= 0 {
		b = b[i+1:]
	}
	switch string(b) { // the common names, without allocating
	case "span":
		return "span"
	case "div":
		return "div"
	case "p":
		return "p"
	case "String":
		return "string"
	case "SP":
		return "sp"
	case "TextLine":
		return "textline"
	case "strong", "em", "b", "i":
		return string(b)
	}
	return strings.ToLower(string(b))
}

// parseTag reads a start tag's name and the attributes the reader uses,
// without the angle brackets.
func parseTag(tag []byte) (string, tagAttrs) {
	var a tagAttrs
	n := bytes.IndexAny(tag, " \t\r\n")
	if n < 0 {
		return tagName(tag), a
	}
	name := tagName(tag[:n])
	s := tag[n:]
	for {
		s = bytes.TrimLeft(s, " \t\r\n")
		if len(s) == 0 {
			break
		}
		eq := bytes.IndexAny(s, "= \t\r\n")
		if eq < 0 {
			break
		}
		key := s[:eq]
		if i := bytes.LastIndexByte(key, ':'); i >= 0 {
			key = key[i+1:]
		}
		s = bytes.TrimLeft(s[eq:], " \t\r\n")
		if len(s) == 0 || s[0] != '=' {
			continue // an attribute without a value
		}
		s = bytes.TrimLeft(s[1:], " \t\r\n")
		var val []byte
		if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
			end := bytes.IndexByte(s[1:], s[0])
			if end < 0 {
				break
			}
			val, s = s[1:1+end], s[2+end:]
		} else {
			end := bytes.IndexAny(s, " \t\r\n")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		switch {
		case bytes.EqualFold(key, []byte("class")):
			a.class = val
		case bytes.EqualFold(key, []byte("title")):
			a.title = val
		case bytes.EqualFold(key, []byte("content")):
			a.content = val
		case bytes.EqualFold(key, []byte("hpos")):
			a.hpos = val
		case bytes.EqualFold(key, []byte("vpos")):
			a.vpos = val
		case bytes.EqualFold(key, []byte("width")):
			a.width = val
		case bytes.EqualFold(key, []byte("height")):
			a.height = val
		}
	}
	return name, a
}

// attrText is an attribute's value with its entities replaced.
func attrText(b []byte) string {
	if bytes.IndexByte(b, '&') < 0 {
		return string(b)
	}
	return html.UnescapeString(string(b))
}

// atoi reads a decimal number of at most nine digits (ALTO's may have
// a fraction, which is dropped).
func atoi(b []byte) (int32, bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	var n int32
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return n, true
}

// hocrBBox reads the bbox property of an hOCR title ("bbox x0 y0 x1 y1",
// one of the properties separated by semicolons).
func hocrBBox(title []byte) (x0, y0, x1, y1 int32, ok bool) {
	for len(title) > 0 {
		prop := title
		if i := bytes.IndexByte(title, ';'); i >= 0 {
			prop, title = title[:i], title[i+1:]
		} else {
			title = nil
		}
		prop = bytes.TrimSpace(prop)
		if !bytes.HasPrefix(prop, []byte("bbox ")) {
			continue
		}
		var v [4]int32
		rest := prop[5:]
		for i := range v {
			rest = bytes.TrimLeft(rest, " ")
			end := bytes.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			n, good := atoi(rest[:end])
			if !good || bytes.IndexByte(rest[:end], '.') >= 0 {
				return 0, 0, 0, 0, false
			}
			v[i], rest = n, rest[end:]
		}
		if len(bytes.TrimSpace(rest)) > 0 || v[2] < v[0] || v[3] < v[1] {
			return 0, 0, 0, 0, false
		}
		return v[0], v[1], v[2], v[3], true
	}
	return 0, 0, 0, 0, false
}
