package rdf

import "strings"

// schemeLen returns the length of the scheme of s (ALPHA *(ALPHA / DIGIT /
// "+" / "-" / ".") followed by ':'), or 0 when s has no scheme and is
// therefore a relative reference.
func schemeLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return 0
		}
	}
	return 0
}

// isAbsoluteIRI reports whether s has a scheme.
func isAbsoluteIRI(s string) bool { return schemeLen(s) > 0 }

// The ASCII characters IRIs may not contain (space, controls, DEL and
// <>"{}|^`\), as bit sets over 0-63 and 64-127.
const (
	iriBadLow  uint64 = 1<<0x21 - 1 | 1<<'"' | 1<<'<' | 1<<'>'
	iriBadHigh uint64 = 1<<('\\'-64) | 1<<('^'-64) | 1<<('`'-64) | 1<<('{'-64) | 1<<('|'-64) | 1<<('}'-64) | 1<<(0x7F-64)
)

// isBadIRIByte reports whether the ASCII byte c may not appear in an IRI;
// bytes from 0x80 are parts of UTF-8 sequences and pass.
func isBadIRIByte(c byte) bool {
	if c < 64 {
		return iriBadLow>>c&1 != 0
	}
	return c < 128 && iriBadHigh>>(c-64)&1 != 0
}

// badIRIChar returns the first character of s that an IRI may not contain
// (space, the controls U+0000-U+001F and U+007F-U+009F, and <>"{}|^`\,
// after RFC 3987 and the IRIREF rule of Turtle and N-Triples), or -1.
func badIRIChar(s string) rune {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isBadIRIByte(c) {
			return rune(c)
		}
		if c == 0xC2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9F {
			return rune(s[i+1]) // U+0080-U+009F are C2 80 to C2 9F in UTF-8
		}
	}
	return -1
}

// iriRef holds the components of an IRI reference (RFC 3986 §3); the
// fragment is kept with its '#'.
type iriRef struct {
	scheme    string // without ':'
	authority string // without "//"
	path      string
	query     string // without '?'
	fragment  string // with '#', or ""
	hasAuth   bool
	hasQuery  bool
}

// splitIRIRef splits s into its components.
func splitIRIRef(s string) iriRef {
	var r iriRef
	if n := schemeLen(s); n > 0 {
		r.scheme, s = s[:n], s[n+1:]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		r.fragment, s = s[i:], s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		r.query, r.hasQuery, s = s[i+1:], true, s[:i]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		r.authority, r.hasAuth, s = s[:i], true, s[i:]
	}
	r.path = s
	return r
}

// String recomposes the reference (RFC 3986 §5.3).
func (r iriRef) String() string {
	var b strings.Builder
	b.Grow(len(r.scheme) + len(r.authority) + len(r.path) + len(r.query) + len(r.fragment) + 5)
	if r.scheme != "" {
		b.WriteString(r.scheme)
		b.WriteByte(':')
	}
	if r.hasAuth {
		b.WriteString("//")
		b.WriteString(r.authority)
	}
	b.WriteString(r.path)
	if r.hasQuery {
		b.WriteByte('?')
		b.WriteString(r.query)
	}
	b.WriteString(r.fragment)
	return b.String()
}

// resolveIRI resolves ref against base (RFC 3986 §5.2.2). An absolute ref
// is returned unchanged, so stored IRIs keep the exact spelling the client
// gave. base must be absolute; resolveIRI returns ref unchanged otherwise,
// and the caller's absoluteness check reports it.
func resolveIRI(base iriRef, ref string) string {
	if isAbsoluteIRI(ref) || base.scheme == "" {
		return ref
	}
	r := splitIRIRef(ref)
	t := iriRef{scheme: base.scheme, fragment: r.fragment}
	switch {
	case r.hasAuth:
		t.authority, t.hasAuth = r.authority, true
		t.path = removeDotSegments(r.path)
		t.query, t.hasQuery = r.query, r.hasQuery
	case r.path == "":
		t.authority, t.hasAuth = base.authority, base.hasAuth
		t.path = base.path
		if r.hasQuery {
			t.query, t.hasQuery = r.query, true
		} else {
			t.query, t.hasQuery = base.query, base.hasQuery
		}
	default:
		t.authority, t.hasAuth = base.authority, base.hasAuth
		if strings.HasPrefix(r.path, "/") {
			t.path = removeDotSegments(r.path)
		} else {
			t.path = removeDotSegments(mergePaths(base, r.path))
		}
		t.query, t.hasQuery = r.query, r.hasQuery
	}
	return t.String()
}

// mergePaths merges a relative path with the base's (RFC 3986 §5.2.3).
func mergePaths(base iriRef, path string) string {
	if base.hasAuth && base.path == "" {
		return "/" + path
	}
	return base.path[:strings.LastIndexByte(base.path, '/')+1] + path
}

// removeDotSegments removes "." and ".." segments (RFC 3986 §5.2.4).
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	out := make([]byte, 0, len(in))
	for len(in) > 0 {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			out = out[:lastSlash(out)]
		case in == "/..":
			in = "/"
			out = out[:lastSlash(out)]
		case in == "." || in == "..":
			in = ""
		default:
			i := 0
			if in[0] == '/' {
				i = 1
			}
			j := strings.IndexByte(in[i:], '/')
			if j < 0 {
				j = len(in)
			} else {
				j += i
			}
			out = append(out, in[:j]...)
			in = in[j:]
		}
	}
	return string(out)
}

// lastSlash returns the index of the last '/' in b, or 0.
func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return 0
}
