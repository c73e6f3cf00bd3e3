package rdf

import (
	"errors"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestJSONMustBeUTF8 checks that the JSON readers refuse a byte that is not
// UTF-8, as the Turtle and N-Triples readers do, rather than storing the
// U+FFFD encoding/json puts in its place.
func TestJSONMustBeUTF8(t *testing.T) {
	doc := "{\n  \"http://purl.org/dc/terms/title\": \"bad \xff byte\"\n}"
	_, err1 := ParseJSONMetadata([]byte(doc))
	_, err2 := Parse(strings.NewReader(doc), JSONLD, "http://example.org/r")
	for _, err := range []error{err1, err2} {
		var se *shelfmark.Error
		if !errors.As(err, &se) || se.Code != shelfmark.EINVALID || !strings.Contains(se.Message, "UTF-8") ||
			se.Details["line"] != 2 || se.Details["column"] != 42 {
			t.Errorf("error %v (%+v), want EINVALID at line 2, column 42 saying UTF-8", err, se)
		}
	}
}

// TestJSONLoneSurrogates checks that the JSON readers refuse a \u escape of
// half a surrogate pair, which encoding/json would decode as U+FFFD, and
// read a whole pair and an escaped backslash as they should.
func TestJSONLoneSurrogates(t *testing.T) {
	for _, bad := range []string{`\ud800`, `x\udfff`, `\ud800\u0041`, `\ud800\ud800`, `\\\ud800`} {
		doc := `{"http://purl.org/dc/terms/title": "` + bad + `"}`
		_, err1 := ParseJSONMetadata([]byte(doc))
		_, err2 := Parse(strings.NewReader(`{"@id": "", `+doc[1:]), JSONLD, "http://example.org/r")
		for _, err := range []error{err1, err2} {
			var se *shelfmark.Error
			if !errors.As(err, &se) || se.Code != shelfmark.EINVALID || !strings.Contains(se.Message, "surrogate") || se.Details["line"] != 1 {
				t.Errorf("%s: %v", bad, err)
			}
		}
	}
	got, err := ParseJSONMetadata([]byte(`{"http://purl.org/dc/terms/title": "\\ud800 \ud83d\ude00 \u00e9"}`))
	if err != nil || len(got) != 1 || got[0].Object.Value != `\ud800 😀 é` {
		t.Errorf("got %v, %v", got, err)
	}
	for _, c := range []struct {
		src  string
		want int
	}{{`"\ud800"`, 1}, {`"\\ud800"`, -1}, {`"\\\ud800"`, 3}, {`"\ud83d\ude00"`, -1}, {`"\u12"`, -1}, {`"\`, -1}} {
		if got := LoneSurrogate([]byte(c.src)); got != c.want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", c.src, got, c.want)
		}
	}
}
