package iiif

// This file serves search inside a book: IIIF Content Search 1.0
// (https://iiif.io/api/search/1.0/, what Mirador speaks) at
// /iiif/{work}/search/1 and 2.0 (https://iiif.io/api/search/2.0/) at
// /iiif/{work}/search/2, both listed as services of the work's manifest.
//
// A search reads the work's pages (file sets) the caller may read, in
// the work's order, a read of children and one of their files per
// ChildPage pages, and the OCR of each page (the derivative of use
// ocr, hOCR, else of use alto, ALTO: words with boxes; else the page's
// extracted text, of use text, whose words have no box). The index is
// not used: it holds only the text of public pages, and a private work
// must be searchable by whoever may read it. The words of each OCR file are kept in a
// per-process cache (ocrCache) keyed by the file's SHA-256, since stored
// bytes never change, so a second search of a book reads no file.
//
// The query is what the search page takes (ParseSearchText, with its
// limits on bytes, terms and words: shelfmark.MaxSearchQueryBytes and the
// rest): words, all of which must occur on a page for the page to match,
// "phrases" whose words must follow each other, prefixes with a trailing
// *, words and phrases left out (-word: a page with one does not match)
// and alternatives (OR: one of them must occur). Words match as the index
// matches them (hocr.go). Every occurrence of every term on a matching
// page is a hit; a hit is one
// annotation per line it covers (a word, or a phrase's words on one line),
// whose target is the canvas with #xywh= the words' box in the canvas's
// pixels (the OCR's pixels scaled to the canvas when the OCR read an image
// of another size), or the whole canvas for words without a box. A
// response holds at most SearchPage hits; later ones are on the next
// page (?page=).

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shelfmark/shelfmark"
)

const (
	// SearchPage is how many hits one response holds.
	SearchPage = 200
	// iiifSearchMaxPage is the highest ?page= accepted.
	iiifSearchMaxPage = 100_000
	// iiifSearchContext is how many characters of a page's text a hit
	// shows before and after its words (about).
	iiifSearchContext = 40
	// maxOCRBytes bounds what is read of one page's OCR or text.
	maxOCRBytes = 32 << 20
	// ocrCacheBytes is the default budget of the word box cache.
	ocrCacheBytes = 64 << 20

	// Search1Context and Search2Context are the JSON-LD contexts of
	// Content Search 1.0 and 2.0.
	Search1Context = "http://iiif.io/api/search/1/context.json"
	Search2Context = "http://iiif.io/api/search/2/context.json"
	// Search1Profile names a Content Search 1.0 service; viewers such as
	// Mirador find the service of a manifest by it.
	Search1Profile = "http://iiif.io/api/search/1/search"
	// Search2Profile names a Content Search 2.0 service.
	Search2Profile = "http://iiif.io/api/search/2/search"
	// presentation2Context is the context of Content Search 1.0
	// responses (with Search1Context).
	presentation2Context = "http://iiif.io/api/presentation/2/context.json"
)

// iiifSearch1 handles GET /iiif/{id}/search/1 (Content Search 1.0).
func (s *Handler) iiifSearch1(w http.ResponseWriter, r *http.Request) error {
	return s.iiifSearch(w, r, 1)
}

// iiifSearch2 handles GET /iiif/{id}/search/2 (Content Search 2.0).
func (s *Handler) iiifSearch2(w http.ResponseWriter, r *http.Request) error {
	return s.iiifSearch(w, r, 2)
}

// iiifSearchServices are the search services of a work's manifest: 2.0
// and 1.0 (with the profile Mirador looks for).
func iiifSearchServices(base string, work shelfmark.ID) []map[string]any {
	u := base + "/iiif/" + string(work) + "/search/"
	return []map[string]any{
		{"id": u + "2", "type": "SearchService2", "profile": Search2Profile},
		{"id": u + "1", "type": "SearchService1", "profile": Search1Profile},
	}
}

// bookTerm is one term of a search inside a book: its folded tokens,
// which must follow each other, the last a prefix when prefix is set.
type bookTerm struct {
	tokens []string
	prefix bool
	// not and alt are the term's shelfmark.SearchTerm.Not and Alt: left
	// out, or an alternative to the term before it.
	not, alt bool
	// stem is, for a prefix, the stem its last token also matches as a
	// prefix (shelfmark.SearchPrefixStem); that token is not stemmed.
	stem string
}

// parseBookQuery reads q as the search page does, its words stemmed in
// the book's language lang (shelfmark.SearchLang).
func parseBookQuery(q, lang string) ([]bookTerm, error) {
	terms, err := shelfmark.ParseSearchText(q)
	if err != nil {
		return nil, err
	}
	out := make([]bookTerm, 0, len(terms))
	for _, t := range terms {
		if t.Field != "" { // a page has no record
			return nil, shelfmark.Errorf(shelfmark.EINVALID,
				"%s: searches the records of works, not the text of a book's pages: search inside a book for words and phrases only.", t.Field)
		}
		if toks := searchTokens(t.Text, lang); len(toks) > 0 {
			bt := bookTerm{tokens: toks, prefix: t.Prefix, not: t.Not, alt: t.Alt}
			if t.Prefix { // a prefix is the beginning of a word: as typed, or its stem
				words := foldTokens(t.Text)
				bt.tokens[len(toks)-1] = words[len(words)-1]
				bt.stem = shelfmark.SearchPrefixStem(words[len(words)-1])
			}
			out = append(out, bt)
		}
	}
	if len(out) == 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The search text has no words: give at least one word (letters or digits).")
	}
	return out, nil
}

// span is an occurrence of a term on a page: its first and last word.
type span struct{ first, last int32 }

// matchPage returns the occurrences of the terms on a page, in reading
// order (each once), or none when the page does not match: as the index
// matches (shelfmark.SearchGroups), every term must occur, or one of
// terms joined by OR, and no term left out may.
func matchPage(p *ocrPage, terms []bookTerm) []span {
	var out []span
	groupFound := true // the current group of alternatives
	for i, t := range terms {
		if i > 0 && !t.alt && !t.not && !groupFound {
			return nil // the group before this one found nothing
		}
		if !t.alt && !t.not {
			groupFound = false
		}
		spans := occurrences(p, t)
		switch {
		case t.not && len(spans) > 0:
			return nil
		case t.not:
		default:
			groupFound = groupFound || len(spans) > 0
			out = append(out, spans...)
		}
	}
	if !groupFound || len(out) == 0 {
		return nil
	}
	if len(terms) > 1 {
		sortSpans(out)
	}
	return out
}

// occurrences returns where term t occurs on a page.
func occurrences(p *ocrPage, t bookTerm) []span {
	var out []span
	n := len(t.tokens)
	for i := 0; i+n <= len(p.tokens); i++ {
		ok := true
		for j, tok := range t.tokens {
			got := p.tokens[i+j]
			if j == n-1 && t.prefix {
				ok = strings.HasPrefix(got, tok) || t.stem != "" && strings.HasPrefix(got, t.stem)
			} else {
				ok = got == tok
			}
			if !ok {
				break
			}
		}
		if ok {
			out = append(out, span{p.tokenWord[i], p.tokenWord[i+n-1]})
		}
	}
	return out
}

// sortSpans orders spans by first word, then last.
func sortSpans(s []span) {
	slices.SortFunc(s, func(a, b span) int {
		if c := cmp.Compare(a.first, b.first); c != 0 {
			return c
		}
		return cmp.Compare(a.last, b.last)
	})
}

// dedupSpans drops repeated spans of a sorted list.
func dedupSpans(s []span) []span {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// bookHit is one hit of a response.
type bookHit struct {
	canvas string
	page   *ocrPage
	span
	// sx, sy scale the OCR's pixels to the canvas's; cw, ch is the
	// canvas size (0 when unknown)
	sx, sy float64
	cw, ch int32
}

// bookResult is one page of the hits of a search inside a book.
type bookResult struct {
	hits []bookHit
	// total counts every hit, annotations every annotation (a hit has one
	// per line it covers), startIndex the annotations before the page
	total, annotations, startIndex int
}

// run is the words of a hit on one line: one annotation.
type run struct {
	first, last int32
}

// lines counts the lines a hit covers: its annotations.
func (h *bookHit) lines() int {
	n := 1
	for k := h.first + 1; k <= h.last; k++ {
		if h.page.words[k].line != h.page.words[k-1].line {
			n++
		}
	}
	return n
}

// runs splits a hit's words by line.
func (h *bookHit) runs() []run {
	var out []run
	cur := run{h.first, h.first}
	for k := h.first + 1; k <= h.last; k++ {
		if h.page.words[k].line != h.page.words[k-1].line {
			out = append(out, cur)
			cur = run{k, k}
			continue
		}
		cur.last = k
	}
	return append(out, cur)
}

// text is the words first..last joined by spaces.
func (p *ocrPage) text(first, last int32) string {
	var b strings.Builder
	for k := first; k <= last; k++ {
		if k > first {
			b.WriteByte(' ')
		}
		b.WriteString(p.words[k].text)
	}
	return b.String()
}

// before and after are the page's text around a hit.
func (p *ocrPage) before(first int32) string {
	k := first
	n := 0
	for k > 0 && n < iiifSearchContext {
		k--
		n += len(p.words[k].text) + 1
	}
	if k == first {
		return ""
	}
	return p.text(k, first-1) + " "
}

func (p *ocrPage) after(last int32) string {
	k := last
	n := 0
	for int(k)+1 < len(p.words) && n < iiifSearchContext {
		k++
		n += len(p.words[k].text) + 1
	}
	if k == last {
		return ""
	}
	return " " + p.text(last+1, k)
}

// target is the canvas region of a run: the union of its words' boxes in
// the canvas's pixels, or the whole canvas when none has a box.
func (h *bookHit) target(r run) string {
	var x0, y0, x1, y1 int32
	boxed := false
	for k := r.first; k <= r.last; k++ {
		w := &h.page.words[k]
		if !w.boxed {
			continue
		}
		if !boxed {
			x0, y0, x1, y1, boxed = w.x0, w.y0, w.x1, w.y1, true
			continue
		}
		x0, y0, x1, y1 = min(x0, w.x0), min(y0, w.y0), max(x1, w.x1), max(y1, w.y1)
	}
	if !boxed {
		return h.canvas
	}
	scale := func(v int32, f float64, limit int32) int {
		n := int(math.Round(float64(v) * f))
		if limit > 0 && n > int(limit) {
			n = int(limit)
		}
		return n
	}
	l, t := scale(x0, h.sx, h.cw), scale(y0, h.sy, h.ch)
	r2, b := scale(x1, h.sx, h.cw), scale(y1, h.sy, h.ch)
	return fmt.Sprintf("%s#xywh=%d,%d,%d,%d", h.canvas, l, t, max(r2-l, 1), max(b-t, 1))
}

// annoID is the id of a run's annotation.
func (h *bookHit) annoID(r run) string {
	return fmt.Sprintf("%s/words/%d-%d", h.canvas, r.first, r.last)
}

// searchBook finds the hits of terms in a work's pages, as the caller
// may read them, and keeps those from the from-th (0-based) on, at most
// limit of them; the pages' words are stemmed in the work's language
// lang, as terms are.
func (s *Handler) searchBook(ctx context.Context, base string, work shelfmark.ID, lang string, terms []bookTerm, from, limit int) (*bookResult, error) {
	res := &bookResult{}
	canvasBase := base + "/iiif/" + string(work) + "/canvas/"
	err := s.eachChild(ctx, work, false, func(it *shelfmark.Resource, _ int, files []*shelfmark.Resource) error {
		if it.Kind != shelfmark.KindFileSet {
			return nil
		}
		fs := it.ID
		var ocr, alto, text, original *shelfmark.Resource
		for _, f := range files {
			if f.File == nil {
				continue
			}
			switch f.File.Use {
			case shelfmark.UseOCR:
				if ocr == nil && f.File.Managed() {
					ocr = f
				}
			case shelfmark.UseALTO:
				if alto == nil && f.File.Managed() {
					alto = f
				}
			case shelfmark.UseText:
				if text == nil && f.File.Managed() {
					text = f
				}
			case shelfmark.UseOriginal, "":
				if original == nil {
					original = f
				}
			}
		}
		src := ocr
		if src == nil {
			src = alto
		}
		if src == nil {
			src = text
		}
		if src == nil {
			return nil
		}
		p, err := s.ocrWords.page(ctx, s.deps.Blobs, src.File, src != text, lang)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.deps.Logger.Warn("search inside a book: a page's OCR cannot be read", "work", work, "page", fs, "file", src.ID, "err", err)
			return nil
		}
		spans := dedupSpans(matchPage(p, terms))
		if len(spans) == 0 {
			return nil
		}
		h := bookHit{canvas: canvasBase + string(fs), page: p, sx: 1, sy: 1}
		if original != nil && original.File.Format != nil && original.File.Format.Width > 0 && original.File.Format.Height > 0 {
			h.cw, h.ch = int32(original.File.Format.Width), int32(original.File.Format.Height)
			if p.width > 0 && p.height > 0 && (p.width != h.cw || p.height != h.ch) {
				h.sx, h.sy = float64(h.cw)/float64(p.width), float64(h.ch)/float64(p.height)
			}
		}
		for _, sp := range spans {
			h.span = sp
			n := h.lines()
			if res.total < from {
				res.startIndex += n
			} else if len(res.hits) < limit {
				res.hits = append(res.hits, h)
			}
			res.total++
			res.annotations += n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// iiifSearch handles GET /iiif/{id}/search/1 and /search/2: the hits of
// ?q= in a work's pages, as Content Search 1.0 or 2.0.
func (s *Handler) iiifSearch(w http.ResponseWriter, r *http.Request, version int) error {
	res, err := s.iiifReadable(r)
	if err != nil {
		return err
	}
	switch res.Kind {
	case shelfmark.KindWork:
	case shelfmark.KindCollection:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a collection; search inside a book searches a work's pages: /iiif/{work}/search/%d.", res.ID, version)
	case shelfmark.KindFileSet:
		if res.Parent != "" {
			return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a page (file set); search its book: /iiif/%s/search/%d.", res.ID, res.Parent, version)
		}
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a file set of no work, which has no search.", res.ID)
	default:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work; only works have a search inside.", res.ID, res.Kind)
	}
	query := r.URL.Query()
	if len(query["q"]) > 1 {
		return shelfmark.Errorf(shelfmark.EINVALID, "Give q once.")
	}
	q := strings.TrimSpace(query.Get("q"))
	switch {
	case q == "":
		return shelfmark.Errorf(shelfmark.EINVALID, "Give the words to search for as q (/iiif/%s/search/%d?q=word).", res.ID, version)
	}
	lang := shelfmark.SearchLangOf(res.Metadata) // the book's language
	terms, err := parseBookQuery(q, lang)
	if err != nil {
		return err
	}
	pageNo := 1
	if p := query.Get("page"); p != "" || len(query["page"]) > 0 {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > iiifSearchMaxPage || len(query["page"]) > 1 {
			return shelfmark.Errorf(shelfmark.EINVALID, "page must be a number from 1 to %d, given once; it was %.40q.", iiifSearchMaxPage, p)
		}
		pageNo = n
	}
	// every hit is an annotation of motivation painting (sc:painting in
	// 1.0): another motivation matches none
	motivation := query.Get("motivation")
	painting := motivation == ""
	for _, m := range strings.Fields(motivation) {
		if m == "painting" || m == "sc:painting" {
			painting = true
		}
	}
	var ignored []string
	for _, p := range []string{"date", "user"} {
		if query.Get(p) != "" {
			ignored = append(ignored, p)
		}
	}
	base := s.deps.Base(r)
	found := &bookResult{}
	if painting {
		if found, err = s.searchBook(r.Context(), base, res.ID, lang, terms, (pageNo-1)*SearchPage, SearchPage); err != nil {
			return err
		}
	}
	self := func(n int) string {
		u := fmt.Sprintf("%s/iiif/%s/search/%d?q=%s", base, res.ID, version, url.QueryEscape(q))
		if motivation != "" {
			u += "&motivation=" + url.QueryEscape(motivation)
		}
		if n > 1 {
			u += "&page=" + strconv.Itoa(n)
		}
		return u
	}
	pages := max(1, (found.total+SearchPage-1)/SearchPage)
	var doc map[string]any
	if version == 1 {
		doc = searchDoc1(found, self, pageNo, pages, ignored)
	} else {
		doc = searchDoc2(found, self, pageNo, pages, ignored)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/ld+json")
	if version == 2 {
		h.Set("Content-Type", `application/ld+json;profile="`+Search2Context+`"`)
	}
	shareHeaders(h, shelfmark.CallerFrom(r.Context()), res, s.deps.Now())
	_, err = w.Write(b)
	return err
}

// searchDoc1 is a Content Search 1.0 response: an AnnotationList of the
// hits' annotations (sc:painting, their text on the canvas region) and
// the hits (search:Hit, with the text before and after), in a Layer
// that counts them all.
func searchDoc1(found *bookResult, self func(int) string, pageNo, pages int, ignored []string) map[string]any {
	resources := []map[string]any{}
	hits := []map[string]any{}
	for i := range found.hits {
		h := &found.hits[i]
		var ids []string
		for _, rn := range h.runs() {
			id := h.annoID(rn)
			ids = append(ids, id)
			resources = append(resources, map[string]any{
				"@id": id, "@type": "oa:Annotation", "motivation": "sc:painting",
				"resource": map[string]any{"@type": "cnt:ContentAsText", "chars": h.page.text(rn.first, rn.last)},
				"on":       h.target(rn),
			})
		}
		hits = append(hits, map[string]any{
			"@type": "search:Hit", "annotations": ids,
			"match": h.page.text(h.first, h.last), "before": h.page.before(h.first), "after": h.page.after(h.last),
		})
	}
	within := map[string]any{"@type": "sc:Layer", "total": found.annotations}
	if pages > 1 {
		within["first"], within["last"] = self(1), self(pages)
	}
	if len(ignored) > 0 {
		within["ignored"] = ignored
	}
	doc := map[string]any{
		"@context":   []string{presentation2Context, Search1Context},
		"@id":        self(pageNo),
		"@type":      "sc:AnnotationList",
		"within":     within,
		"startIndex": found.startIndex,
		"resources":  resources,
		"hits":       hits,
	}
	if pageNo < pages {
		doc["next"] = self(pageNo + 1)
	}
	if pageNo > 1 {
		doc["prev"] = self(min(pageNo-1, pages))
	}
	return doc
}

// searchDoc2 is a Content Search 2.0 response: an AnnotationPage of the
// hits' annotations (painting, their text on the canvas region) and, in
// annotations, one contextualizing annotation per hit whose
// TextQuoteSelector gives the text before and after; paged within an
// AnnotationCollection that counts them all.
func searchDoc2(found *bookResult, self func(int) string, pageNo, pages int, ignored []string) map[string]any {
	items := []map[string]any{}
	matches := []map[string]any{}
	for i := range found.hits {
		h := &found.hits[i]
		rns := h.runs()
		var targets []map[string]any
		for k, rn := range rns {
			id := h.annoID(rn)
			items = append(items, map[string]any{
				"id": id, "type": "Annotation", "motivation": "painting",
				"body":   map[string]any{"type": "TextualBody", "value": h.page.text(rn.first, rn.last), "format": "text/plain"},
				"target": h.target(rn),
			})
			sel := map[string]any{"type": "TextQuoteSelector", "exact": h.page.text(rn.first, rn.last)}
			if k == 0 {
				if b := h.page.before(h.first); b != "" {
					sel["prefix"] = b
				}
			}
			if k == len(rns)-1 {
				if a := h.page.after(h.last); a != "" {
					sel["suffix"] = a
				}
			}
			targets = append(targets, map[string]any{"type": "SpecificResource", "source": id, "selector": []any{sel}})
		}
		var target any = targets[0]
		if len(targets) > 1 {
			target = targets
		}
		matches = append(matches, map[string]any{
			"id":   fmt.Sprintf("%s/words/%d-%d/match", h.canvas, h.first, h.last),
			"type": "Annotation", "motivation": "contextualizing", "target": target,
		})
	}
	collection := map[string]any{
		"id": self(1), "type": "AnnotationCollection", "total": found.annotations,
		"first": map[string]any{"id": self(1), "type": "AnnotationPage"},
		"last":  map[string]any{"id": self(pages), "type": "AnnotationPage"},
	}
	doc := map[string]any{
		"@context":   Search2Context,
		"id":         self(pageNo),
		"type":       "AnnotationPage",
		"partOf":     collection,
		"startIndex": found.startIndex,
		"items":      items,
	}
	if len(matches) > 0 {
		doc["annotations"] = []map[string]any{{"type": "AnnotationPage", "items": matches}}
	}
	if pageNo < pages {
		doc["next"] = map[string]any{"id": self(pageNo + 1), "type": "AnnotationPage"}
	}
	if pageNo > 1 {
		doc["prev"] = map[string]any{"id": self(min(pageNo-1, pages)), "type": "AnnotationPage"}
	}
	if len(ignored) > 0 {
		doc["ignored"] = ignored
	}
	return doc
}

// ocrCache keeps the words of OCR files, by SHA-256 (stored bytes never
// change), least recently used first out, within a budget of bytes. Its
// zero value is ready to use.
type ocrCache struct {
	mu      sync.Mutex
	budget  int64 // ocrCacheBytes when 0
	used    int64
	entries map[string]*list.Element
	order   list.List // of *ocrEntry, most recently used first
	// reads counts the files read (misses), for tests and the report
	reads int64
}

type ocrEntry struct {
	key  string
	page *ocrPage
	size int64
}

// page returns the words of an OCR file (boxed: hOCR or ALTO) or of a
// text file, their tokens stemmed in the language lang, from the cache
// (by file and language) or read from the blob store.
func (c *ocrCache) page(ctx context.Context, blobs shelfmark.BlobStore, f *shelfmark.File, boxed bool, lang string) (*ocrPage, error) {
	key := f.SHA256
	if !boxed {
		key = "text " + key
	}
	if lang != "" {
		key = lang + " " + key
	}
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		p := e.Value.(*ocrEntry).page
		c.mu.Unlock()
		return p, nil
	}
	c.reads++
	c.mu.Unlock()
	if blobs == nil {
		return nil, errors.New("no blob store")
	}
	rc, err := blobs.Open(ctx, f.SHA256)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxOCRBytes))
	rc.Close()
	if err != nil {
		return nil, err
	}
	var p *ocrPage
	if boxed {
		p = parseOCR(b, lang)
	} else {
		p = parsePlainText(b, lang)
	}
	c.put(key, p)
	return p, nil
}

// put keeps a page, dropping the least recently used beyond the budget.
func (c *ocrCache) put(key string, p *ocrPage) {
	size := p.bytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	budget := c.budget
	if budget == 0 {
		budget = ocrCacheBytes
	}
	if size > budget/4 {
		return // a page that would crowd out many others is not kept
	}
	if c.entries == nil {
		c.entries = map[string]*list.Element{}
	}
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(&ocrEntry{key: key, page: p, size: size})
	c.used += size
	for c.used > budget {
		e := c.order.Back()
		old := e.Value.(*ocrEntry)
		c.order.Remove(e)
		delete(c.entries, old.key)
		c.used -= old.size
	}
}

// fileReads returns how many files the cache has read.
func (c *ocrCache) fileReads() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// forget empties the cache.
func (c *ocrCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.used = nil, 0
	c.order.Init()
}
