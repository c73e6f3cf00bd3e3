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
