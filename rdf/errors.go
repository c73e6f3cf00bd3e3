package rdf

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// msgBlankNode is the message for a blank node in any syntax: the
// repository stores only IRIs and literals.
const msgBlankNode = "blank nodes are not supported; give the node an IRI"

// formatName returns the human name of a media type for messages.
func formatName(mediaType string) string {
	switch mediaType {
	case Turtle:
		return "Turtle"
	case NTriples:
		return "N-Triples"
	case JSONLD:
		return "JSON-LD"
	case JSON:
		return "JSON"
	}
	return mediaType
}

// positionError returns an EINVALID error for a fault at a known line and
// column of a document in the given media type.
func positionError(mediaType string, line, col int, format string, args ...any) *shelfmark.Error {
	return &shelfmark.Error{
		Code:    shelfmark.EINVALID,
		Message: fmt.Sprintf("Invalid %s at line %d, column %d: %s.", formatName(mediaType), line, col, fmt.Sprintf(format, args...)),
		Details: map[string]any{"line": line, "column": col},
	}
}

// lineError returns an EINVALID error for a fault on a known line whose
// column is not known.
func lineError(mediaType string, line int, format string, args ...any) *shelfmark.Error {
	return &shelfmark.Error{
		Code:    shelfmark.EINVALID,
		Message: fmt.Sprintf("Invalid %s at line %d: %s.", formatName(mediaType), line, fmt.Sprintf(format, args...)),
		Details: map[string]any{"line": line},
	}
}

// invalid returns an EINVALID error for a fault without a position.
func invalid(mediaType string, format string, args ...any) *shelfmark.Error {
	return &shelfmark.Error{
		Code:    shelfmark.EINVALID,
		Message: fmt.Sprintf("Invalid %s: %s.", formatName(mediaType), fmt.Sprintf(format, args...)),
	}
}

// position returns the 1-based line and column (in characters) of byte
// offset off in src. It is only called on errors, so it rescans src.
func position(src []byte, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + bytes.Count(src[:off], []byte{'\n'})
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, utf8.RuneCount(src[start:off]) + 1
}

// checkUTF8 returns an error positioned at the first byte of src that is not
// valid UTF-8.
func checkUTF8(mediaType string, src []byte) error {
	if utf8.Valid(src) {
		return nil
	}
	off := 0
	for off < len(src) {
		r, n := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line, col := position(src, off)
	return positionError(mediaType, line, col, "the document is not valid UTF-8")
}
