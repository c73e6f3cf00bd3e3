package iiif

import (
	"slices"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark/http/labels"
)

// numberLabel is a catalog message of one number ("Page %d") in every
// language of the catalogs, cut around its verb once, as JSON: a
// manifest writes each page's label from it without formatting the
// message in each language, a map and a sort of its keys a page, which
// took two fifths of making a 1,200-page book's canvases.
type numberLabel struct {
	key   string // the catalog message's key
	langs []numberLabelPart
}

// numberLabelPart is one language's message around its number: open is
// `"lang":["` and the text before the number, close the text after it
// and `"]`, both escaped as appendString escapes them.
type numberLabelPart struct {
	open, close []byte
}

// newNumberLabel cuts key's message in each language of catalogs around
// its number; it returns nil unless each is text with a single %d and no
// other verb (iiifLabels writes those).
func newNumberLabel(catalogs *labels.Catalogs, key string) *numberLabel {
	langs := slices.Clone(catalogs.Langs())
	slices.SortFunc(langs, compareLang) // langMap's order
	l := &numberLabel{key: key}
	for _, lang := range langs {
		msg := labels.Translate(catalogs.Messages(lang), key, 0)
		tmpl := catalogs.Messages(lang)[key]
		before, after, ok := strings.Cut(tmpl, "%d")
		if !ok || strings.Contains(before, "%") || strings.Contains(after, "%") || before+"0"+after != msg {
			return nil
		}
		open := appendString(nil, lang)
		open = append(open, ':', '[')
		open = appendString(open, before)
		open = open[:len(open)-1] // without the closing quote
		cl := appendString(nil, after)[1:]
		cl = append(cl, ']')
		l.langs = append(l.langs, numberLabelPart{open: open, close: cl})
	}
	return l
}

// appendJSON appends the language map of the message for n, as
// langMap.appendJSON writes the map iiifLabels makes.
func (l *numberLabel) appendJSON(b []byte, n int) []byte {
	b = append(b, '{')
	for i, p := range l.langs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p.open...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, p.close...)
	}
	return append(b, '}')
}
