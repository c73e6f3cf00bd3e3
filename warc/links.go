package warc

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/shelfmark/shelfmark"
)

// ExtractLinks returns the links of an HTML page read from r (at most max
// bytes of it; max <= 0 is no cap): the href of every <a> and <area>,
// resolved against base, or against the document's first <base href>,
// in document order and with repeats. Links that do not resolve to an
// http or https URL (mailto:, javascript:, malformed) are skipped. The
// error is that of reading r; the links read until then are returned
// with it.
func ExtractLinks(r io.Reader, base string, max int64) ([]shelfmark.WebURL, error) {
	b, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("links: base %q: %w", trunc(base), err)
	}
	if max > 0 {
		r = io.LimitReader(r, max)
	}
	z := html.NewTokenizer(r)
	var (
		arena   []byte
		ends    []int
		baseRef string
		hasBase bool
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		// the tag name from the raw token: TagName allocates
		isBase := false
		switch tagName(z.Raw()) {
		case "a", "area":
		case "base":
			if hasBase {
				continue
			}
			isBase = true
		default:
			continue
		}
		for more := true; more; {
			var key, val []byte
			key, val, more = z.TagAttr()
			if string(key) != "href" {
				continue
			}
			if isBase {
				baseRef, hasBase = string(val), true
			} else {
				arena = append(arena, val...)
				ends = append(ends, len(arena))
			}
			break
		}
	}
	err = z.Err()
	if err == io.EOF {
		err = nil
	}
	if hasBase {
		if u, ok := resolveURL(b, baseRef); ok {
			b = u
		}
	}
	links := make([]shelfmark.WebURL, 0, len(ends))
	from := 0
	for _, end := range ends {
		if u, ok := Resolve(b, string(arena[from:end])); ok {
			links = append(links, u)
		}
		from = end
	}
	return links, err
}

// tagName returns the lowercase name of a start tag's raw bytes when it
// is one of a, area and base, else "".
func tagName(raw []byte) string {
	if len(raw) < 3 || raw[0] != '<' {
		return ""
	}
	i := 1
	for i < len(raw) && i < 6 && (raw[i]|0x20 >= 'a' && raw[i]|0x20 <= 'z') {
		i++
	}
	if i == len(raw) {
		return ""
	}
	switch c := raw[i]; c {
	case ' ', '\t', '\n', '\r', '\f', '/', '>':
	default:
		return ""
	}
	switch n := raw[1:i]; len(n) {
	case 1:
		if n[0]|0x20 == 'a' {
			return "a"
		}
	case 4:
		if n[0]|0x20 == 'a' && n[1]|0x20 == 'r' && n[2]|0x20 == 'e' && n[3]|0x20 == 'a' {
			return "area"
		}
		if n[0]|0x20 == 'b' && n[1]|0x20 == 'a' && n[2]|0x20 == 's' && n[3]|0x20 == 'e' {
			return "base"
		}
	}
	return ""
}

// Resolve resolves href against base as a browser does and returns the
// canonical form of the result; ok is false when href is malformed or
// does not resolve to an http or https URL.
func Resolve(base *url.URL, href string) (shelfmark.WebURL, bool) {
	u, ok := resolveURL(base, href)
	if !ok {
		return shelfmark.WebURL{}, false
	}
	w, err := Canonical(u.String())
	if err != nil {
		return shelfmark.WebURL{}, false
	}
	return w, true
}

// resolveURL resolves href against base; ok only for http(s) results.
func resolveURL(base *url.URL, href string) (*url.URL, bool) {
	h := fixPercent(cleanURL(href))
	if i := strings.IndexByte(h, ':'); i > 0 && validScheme(strings.ToLower(h[:i])) {
		if s := strings.ToLower(h[:i]); s != "http" && s != "https" {
			return nil, false
		}
	}
	u, err := url.Parse(h)
	if err != nil {
		return nil, false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, false
	}
	u.Fragment, u.RawFragment = "", ""
	return u, true
}

// fixPercent encodes a '%' that starts no escape as "%25".
func fixPercent(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
