package kit

import (
	"encoding/base64"
	"encoding/binary"
	"html"
	"math"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// Search cursor versions, the first byte of a token, so the format can
// change without misreading old tokens: version 1 (a score and a key)
// came before windows and still reads, as a position in the first window.
const (
	searchCursorV1      = 1
	searchCursorVersion = 2
)

// EncodeSearchCursor turns a keyset position into an opaque token: the
// version byte, the score's IEEE 754 bits, the key and the window, in
// base64url. The REST API and the interface hand out the same tokens.
func EncodeSearchCursor(c shelfmark.SearchCursor) string {
	var b [25]byte
	b[0] = searchCursorVersion
	binary.BigEndian.PutUint64(b[1:9], math.Float64bits(c.Score))
	binary.BigEndian.PutUint64(b[9:17], uint64(c.Key))
	binary.BigEndian.PutUint64(b[17:], uint64(c.Window))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// DecodeSearchCursor reads a token of EncodeSearchCursor (or of version
// 1); anything else is EINVALID.
func DecodeSearchCursor(s string) (*shelfmark.SearchCursor, error) {
	bad := shelfmark.Errorf(shelfmark.EINVALID, "cursor is not a cursor this server handed out: pass the `next` of the previous page unchanged.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !(len(b) == 17 && b[0] == searchCursorV1 || len(b) == 25 && b[0] == searchCursorVersion) {
		return nil, bad
	}
	c := &shelfmark.SearchCursor{
		Score: math.Float64frombits(binary.BigEndian.Uint64(b[1:9])),
		Key:   int64(binary.BigEndian.Uint64(b[9:17])),
	}
	if len(b) == 25 {
		c.Window = int64(binary.BigEndian.Uint64(b[17:]))
	}
	// a key of 0 is the beginning of a window, which has a top
	if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) || c.Key < 0 || c.Key == 0 && c.Window < 1 || c.Window < 0 {
		return nil, bad
	}
	return c, nil
}

// snippetMarks turns a snippet's match markers into <mark>.
var snippetMarks = strings.NewReplacer(shelfmark.SnippetStart, "<mark>", shelfmark.SnippetEnd, "</mark>")

// SnippetHTML is a search hit's snippet as HTML: its text escaped, its
// match markers turned into <mark>…</mark>.
func SnippetHTML(snippet string) string { return snippetMarks.Replace(html.EscapeString(snippet)) }

// HasID reports whether key is in the range of IDCodec.Encode (a
// document of no resource is not).
func HasID(key int64) bool { return key >= 1 && key <= shelfmark.MaxKey }
