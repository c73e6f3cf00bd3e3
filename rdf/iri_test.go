package rdf

import (
	"strings"
	"testing"
)

// TestResolveIRI runs the examples of RFC 3986 §5.4.
func TestResolveIRI(t *testing.T) {
	base := splitIRIRef("http://a/b/c/d;p?q")
	for ref, want := range map[string]string{
		"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/",
		"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y",
		"#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s", "g?y#s": "http://a/b/c/g?y#s",
		";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x", "g;x?y#s": "http://a/b/c/g;x?y#s",
		"": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/", "..": "http://a/b/",
		"../": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/", "../../": "http://a/",
		"../../g": "http://a/g", "../../../g": "http://a/g", "../../../../g": "http://a/g",
		"/./g": "http://a/g", "/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g",
		"g..": "http://a/b/c/g..", "..g": "http://a/b/c/..g", "./../g": "http://a/b/g",
		"./g/.": "http://a/b/c/g/", "g/./h": "http://a/b/c/g/h", "g/../h": "http://a/b/c/h",
		"g;x=1/./y": "http://a/b/c/g;x=1/y", "g;x=1/../y": "http://a/b/c/y", "g?y/./x": "http://a/b/c/g?y/./x",
		"g?y/../x": "http://a/b/c/g?y/../x", "g#s/./x": "http://a/b/c/g#s/./x", "g#s/../x": "http://a/b/c/g#s/../x",
	} {
		if got := resolveIRI(base, ref); got != want {
			t.Errorf("resolve(%q) = %q, want %q", ref, got, want)
		}
	}
	if got := resolveIRI(splitIRIRef("http://a"), "g"); got != "http://a/g" {
		t.Errorf("empty base path: %q", got)
	}
	if got := resolveIRI(splitIRIRef("urn:isbn:123"), "#x"); got != "urn:isbn:123#x" {
		t.Errorf("urn base: %q", got)
	}
	if got := resolveIRI(splitIRIRef(""), "g"); got != "g" {
		t.Errorf("no base: %q", got)
	}
}

// TestIsBadIRIByte checks the bit sets against the list of characters.
func TestIsBadIRIByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c <= 0x20 || c == 0x7F || strings.IndexByte("<>\"{}|^`\\", byte(c)) >= 0
		if got := isBadIRIByte(byte(c)); got != want {
			t.Errorf("isBadIRIByte(%#x) = %v", c, got)
		}
	}
	for s, want := range map[string]rune{"http://ex/a": -1, "http://ex/é": -1, "http://ex/\u0085": 0x85, "http://ex/\u00a0": -1, "http://ex/a b": ' '} {
		if got := badIRIChar(s); got != want {
			t.Errorf("badIRIChar(%q) = %q, want %q", s, got, want)
		}
	}
}
