package kit

// This file decides where a browser may be sent back to after a form or a
// sign-in (?next=, back=): only to a path of this site.

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// MaxNextLen bounds a return path, in characters, so that the state
// cookie of a single sign-on stays within the 4096 bytes a browser keeps
// (at most 4 bytes a character).
const MaxNextLen = 512

// ReturnPath returns next as the address a browser is sent back to, and
// whether it is a path of this site. It is the one rule of every return
// address (the sign-in form and page, single sign-on, the back of the
// administration forms). A path of this site:
//
//   - is valid UTF-8 of at most MaxNextLen characters, without control
//     characters (browsers drop tabs and newlines, so "/\t/evil" would be
//     "//evil", another site);
//   - begins with one "/" that no second "/" or "\" follows (a browser
//     reads "\" as "/" in a path, and "//host" as another host), and
//     still does, without control characters, once its path is
//     percent-decoded, once or several times ("/%2F/evil", "/%5Cevil",
//     "/%09/evil", "/%252F/evil"), so that no decoding along the way can
//     make it another site's;
//   - has no scheme, host or user once parsed, and no malformed escape.
//
// Backslashes elsewhere in the path are turned into the slashes a
// browser would read; in the query and fragment they are escaped.
func ReturnPath(next string) (string, bool) {
	if next == "" || next[0] != '/' || !utf8.ValidString(next) || utf8.RuneCountInString(next) > MaxNextLen {
		return "", false
	}
	if hasControl(next) {
		return "", false
	}
	path, rest := next, ""
	if i := strings.IndexAny(next, "?#"); i >= 0 {
		path, rest = next[:i], next[i:]
	}
	path = strings.ReplaceAll(path, `\`, "/")
	rest = strings.ReplaceAll(rest, `\`, "%5C")
	for p, first := path, true; ; first = false {
		if !localStart(p) {
			return "", false
		}
		d, err := url.PathUnescape(p)
		if err != nil {
			if first {
				return "", false // a malformed escape
			}
			break // a literal "%" once decoded
		}
		if d == p {
			break
		}
		if hasControl(d) {
			return "", false
		}
		p = strings.ReplaceAll(d, `\`, "/")
	}
	next = path + rest
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	return next, true
}

// localStart reports whether a path begins with one "/" that is not
// followed by another.
func localStart(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//")
}

// hasControl reports whether s holds a control character (C0 or DEL).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// ReturnPathOr returns next when it is a path of this site (see
// ReturnPath), else def.
func ReturnPathOr(next, def string) string {
	if p, ok := ReturnPath(next); ok {
		return p
	}
	return def
}
