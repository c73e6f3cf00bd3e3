package shelfmark

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the description of a file, checked by the engine whatever the
// path (upload, groups, ingest, derivatives); docs/security.md ("Limits")
// gives the reasons.
const (
	// MaxFileNameBytes caps a file's name: 255 bytes of UTF-8, what most
	// file systems allow for one path element, so that a name can be
	// written to disk as it is (an export, a download).
	MaxFileNameBytes = 255
	// MaxMediaTypeBytes caps a file's media type (RFC 6838 allows 127
	// characters each for type and subtype; parameters fit in the rest).
	MaxMediaTypeBytes = 255
	// MaxUseBytes caps a file's use ("original", "thumbnail", …).
	MaxUseBytes = 64
)

// BaseFileName returns the last element of a name that may carry a path,
// taking both / and \ as separators (clients send Windows paths too):
// "../../x" gives "x" and `C:\scans\p1.tif` gives "p1.tif". It returns ""
// when no element is left ("", "/", ".", "..").
func BaseFileName(name string) string {
	name = strings.TrimRight(name, `/\`)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "." || name == ".." {
		return ""
	}
	return name
}

// CleanFileName normalises a file name a client sent: BaseFileName, then
// CheckFileName. It returns "" (and no error) when nothing is left of the
// name, so that the caller can choose a default.
func CleanFileName(name string) (string, error) {
	name = BaseFileName(name)
	if name == "" {
		return "", nil
	}
	return name, CheckFileName(name)
}

// CheckFileName returns nil when name can be stored as a file's name, and
// an EINVALID error naming the fault otherwise: it must be one path
// element (no / or \, not . or ..), valid UTF-8 of at most
// MaxFileNameBytes bytes, without control characters (NUL, line breaks,
// tabs, DEL, C1) or the bidirectional overrides that disguise an
// extension ("txt.exe" shown as "exe.txt").
func CheckFileName(name string) error {
	bad := func(format string, args ...any) error {
		return &Error{Code: EINVALID, Message: fmt.Sprintf("file: the name %.60q ", name) + fmt.Sprintf(format, args...) + ".",
			Details: map[string]any{"limit": MaxFileNameBytes}}
	}
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > MaxFileNameBytes:
		return bad("is %d bytes long; at most %d bytes of UTF-8 are accepted", len(name), MaxFileNameBytes)
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`):
		return bad("is a path; send the last element alone")
	}
	if r, ok := forbiddenRune(name); ok {
		return bad("contains the character U+%04X, which names may not hold", r)
	}
	return nil
}

// forbiddenRune finds the first control character or bidirectional
// formatting character of s.
func forbiddenRune(s string) (rune, bool) {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return r, true
		}
	}
	return 0, false
}

// CheckFile returns the error the engine would give for the description
// of a file (name, media type and use), so that an adapter can refuse it
// before it stores the file's bytes.
func CheckFile(f *File) error { return validateFile(f) }

// validateFile checks the description of a file the engine is asked to
// store: its name (CheckFileName), and a media type and use of bounded
// length, valid UTF-8 and without control characters.
func validateFile(f *File) error {
	if f == nil {
		return nil
	}
	if err := CheckFileName(f.Name); err != nil {
		return err
	}
	for _, v := range []struct {
		field, value string
		limit        int
	}{{"media type", f.MediaType, MaxMediaTypeBytes}, {"use", f.Use, MaxUseBytes}} {
		bad := func(what string) error {
			return &Error{Code: EINVALID, Message: fmt.Sprintf("file: the %s %.60q %s.", v.field, v.value, what), Details: map[string]any{"limit": v.limit}}
		}
		if len(v.value) > v.limit {
			return bad(fmt.Sprintf("is %d bytes long; at most %d are accepted", len(v.value), v.limit))
		}
		if !utf8.ValidString(v.value) {
			return bad("is not valid UTF-8")
		}
		if r, ok := forbiddenRune(v.value); ok {
			return bad(fmt.Sprintf("contains the character U+%04X", r))
		}
	}
	return nil
}

// SafeFileName makes a name CheckFileName accepts out of any name, leaving
// room bytes to spare for a suffix (derivatives append ".thumbnail.jpg" to
// their original's name): the last path element, with invalid UTF-8,
// control and bidirectional formatting characters replaced by "_", cut at
// a character boundary; "file" when nothing is left.
func SafeFileName(name string, room int) string {
	name = BaseFileName(strings.ToValidUTF8(name, "_"))
	limit := max(MaxFileNameBytes-room, 1)
	var b strings.Builder
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > limit {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "file"
	}
	return b.String()
}
