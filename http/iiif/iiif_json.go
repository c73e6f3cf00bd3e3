package iiif

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// A manifest of a 1,200-page book is 1,200 canvases of about twenty
// strings each. encoding/json writes them by reflection and then checks
// again the bytes each MarshalJSON returns, which cost a fifth of building
// the manifest; the canvases write themselves here instead, byte for byte
// as encoding/json would (its escaping, its omitempty, its nulls), each as
// soon as it is made (canvasList), and marshalManifest puts them after the
// rest of the document.

// canvasList is a manifest's canvases written as they are made, their
// JSON comma-separated in segments of about canvasSegment bytes. A
// canvas, and the rows it was made from, are garbage once added, so the
// collector does not trace a whole book's worth of them again and again
// while the rest of it is read; the segments hold no pointers, and since
// none is ever copied to grow, a book's canvases are written twice (here
// and into the document), not the four times a doubling buffer can take.
type canvasList struct {
	segs [][]byte
	size int // bytes in segs
	n    int
	// bufs, when set, gives the segments and takes them back (release)
	bufs *manifestBuffers
}

// canvasSegment is the size of a segment of a canvasList: a few hundred
// canvases.
const canvasSegment = 256 << 10

// add appends c's JSON (appendJSON).
func (l *canvasList) add(c *iiifCanvasDoc) error {
	last := len(l.segs) - 1
	if last < 0 || cap(l.segs[last])-len(l.segs[last]) < canvasSegment/16 {
		l.segs = append(l.segs, l.bufs.segment())
		last++
	}
	seg := l.segs[last]
	before := len(seg)
	if l.n > 0 {
		seg = append(seg, ',')
	}
	seg, err := c.appendJSON(seg)
	if err != nil {
		return err
	}
	l.segs[last] = seg
	l.size += len(seg) - before
	l.n++
	return nil
}

// MarshalJSON implements json.Marshaler: the JSON array of the canvases.
func (l *canvasList) MarshalJSON() ([]byte, error) {
	return l.appendJSON(make([]byte, 0, l.size+2)), nil
}

// appendJSON appends the JSON array of the canvases.
func (l *canvasList) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for _, seg := range l.segs {
		b = append(b, seg...)
	}
	return append(b, ']')
}

// release gives the list's segments back to its buffers; the list is
// empty after it.
func (l *canvasList) release() {
	for _, seg := range l.segs {
		l.bufs.put(&l.bufs.segments, seg, canvasSegment)
	}
	*l = canvasList{bufs: l.bufs}
}

// manifestBuffers keeps the byte buffers of the manifests built one after
// another, for the next: a canvasList's segments and the document's bytes
// (about 1 MB for a book of 1,200 pages). A build otherwise allocates a
// book's JSON three times over, noscan memory the collector does not
// trace but that brings its next cycle nearer, a cycle every few builds
// while the rows of a book are live. The zero value is ready; a nil one
// allocates every buffer and keeps none.
type manifestBuffers struct {
	segments, bodies sync.Pool // of *[]byte
}

// maxKeptBody is the largest document buffer manifestBuffers keeps: a
// book of some 15,000 pages; a larger one is left to the collector.
const maxKeptBody = 16 << 20

// segment returns an empty segment of canvasSegment bytes' capacity.
func (m *manifestBuffers) segment() []byte {
	if m != nil {
		if b, ok := m.segments.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, canvasSegment)
}

// body returns an empty buffer for a document.
func (m *manifestBuffers) body() []byte {
	if m != nil {
		if b, ok := m.bodies.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return nil
}

// putBody keeps b, a document's bytes nothing refers to any more, for
// the next build.
func (m *manifestBuffers) putBody(b []byte) {
	if m != nil {
		m.put(&m.bodies, b, maxKeptBody)
	}
}

// put keeps b in pool unless it is larger than most bytes.
func (m *manifestBuffers) put(pool *sync.Pool, b []byte, most int) {
	if m == nil || cap(b) == 0 || cap(b) > most {
		return
	}
	b = b[:0]
	pool.Put(&b)
}

// marshalManifest encodes a document whose "items" are a canvasList: the
// other members as encoding/json encodes a map (by key), then the items.
// The result is what json.Marshal gives for the same document, in one
// copy of the canvases rather than encoding/json's second look at them.
// It is appended to dst[:0] (a buffer of manifestBuffers, or nil).
func marshalManifest(doc map[string]any, dst []byte) ([]byte, error) {
	canvases, ok := doc["items"].(*canvasList)
	if !ok || canvases == nil {
		return json.Marshal(doc)
	}
	rest := make(map[string]any, len(doc)-1)
	for k, v := range doc {
		if k != "items" {
			rest[k] = v
		}
	}
	head, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	b := slices.Grow(dst[:0], len(head)+len(`,"items":[]}`)+canvases.size)
	b = append(b, head[:len(head)-1]...) // without its }
	if len(rest) > 0 {
		b = append(b, ',')
	}
	b = append(b, `"items":`...)
	b = canvases.appendJSON(b)
	return append(b, '}'), nil
}

// MarshalJSON implements json.Marshaler with appendJSON.
func (c *iiifCanvasDoc) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

// appendJSON appends the canvas as encoding/json encodes its struct.
func (c *iiifCanvasDoc) appendJSON(b []byte) ([]byte, error) {
	b = appendMember(b, '{', "id", c.ID)
	b = appendMember(b, ',', "type", c.Type)
	b = append(b, `,"label":`...)
	switch {
	case c.numLabel != nil:
		b = c.numLabel.appendJSON(b, c.num)
	case c.title != "":
		// as langMap.appendJSON writes {titleLang: [title]}
		b = append(appendString(append(b, '{'), c.titleLang), ':', '[')
		b = append(appendString(b, c.title), ']', '}')
	default:
		b = c.Label.appendJSON(b)
	}
	b = appendInt(b, "width", c.Width)
	b = appendInt(b, "height", c.Height)
	b = append(b, `,"items":`...)
	b = appendList(b, c.Items, func(b []byte, p iiifAnnoPage) []byte {
		b = appendMember(b, '{', "id", p.ID)
		b = appendMember(b, ',', "type", p.Type)
		b = append(b, `,"items":`...)
		b = appendList(b, p.Items, func(b []byte, a iiifAnno) []byte {
			b = appendMember(b, '{', "id", a.ID)
			b = appendMember(b, ',', "type", a.Type)
			b = appendMember(b, ',', "motivation", a.Motivation)
			b = append(b, `,"body":`...)
			b = a.Body.appendJSON(b)
			b = appendMember(b, ',', "target", a.Target)
			return append(b, '}')
		})
		return append(b, '}')
	})
	if len(c.Thumbnail) > 0 {
		b = append(b, `,"thumbnail":`...)
		b = appendList(b, c.Thumbnail, func(b []byte, t iiifContent) []byte { return t.appendJSON(b) })
	}
	if len(c.SeeAlso) > 0 {
		b = append(b, `,"seeAlso":`...)
		b = appendList(b, c.SeeAlso, func(b []byte, a iiifSeeAlso) []byte { return a.appendJSON(b) })
	}
	return append(b, '}'), nil
}

// appendJSON appends the content resource as encoding/json encodes it.
func (t *iiifContent) appendJSON(b []byte) []byte {
	b = appendMember(b, '{', "id", t.ID)
	b = appendMember(b, ',', "type", t.Type)
	b = appendMember(b, ',', "format", t.Format)
	b = appendInt(b, "width", t.Width)
	b = appendInt(b, "height", t.Height)
	if len(t.Service) > 0 {
		b = append(b, `,"service":`...)
		b = appendList(b, t.Service, func(b []byte, s iiifService) []byte {
			b = appendMember(b, '{', "id", s.ID)
			b = appendMember(b, ',', "type", s.Type)
			b = appendMember(b, ',', "profile", s.Profile)
			return append(b, '}')
		})
	}
	return append(b, '}')
}

// appendJSON appends the language map in langMap's order (MarshalJSON);
// an empty or nil one is {}.
func (m langMap) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range m.keys() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendList(b, m[k], appendString)
	}
	return append(b, '}')
}

// appendList appends a JSON array of list, each element by each; a nil
// list is null, as encoding/json writes it.
func appendList[T any](b []byte, list []T, each func([]byte, T) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, v)
	}
	return append(b, ']')
}

// appendMember appends sep, then "name":value.
func appendMember(b []byte, sep byte, name, value string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendInt appends ,"name":n unless n is 0 (omitempty).
func appendInt(b []byte, name string, n int) []byte {
	if n == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(n), 10)
}

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML's <, > and & too). Printable ASCII, which URLs and
// most labels are, is copied as it is; anything else goes to
// encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// keys are the map's languages in the order MarshalJSON writes them.
func (m langMap) keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareLang)
	return keys
}
