package rdf

import "testing"

// TestPrefixTable keeps the switches in step with Prefixes and checks the
// helpers.
func TestPrefixTable(t *testing.T) {
	ps := Prefixes()
	if len(ps) != 16 {
		t.Errorf("%d prefixes", len(ps))
	}
	for _, p := range ps {
		if namespaceOf(p.Name) != p.Namespace || prefixOf(p.Namespace) != p.Name {
			t.Errorf("switches disagree with the table on %v", p)
		}
		if got, ok := ExpandPrefixed(p.Name + ":x"); !ok || got != p.Namespace+"x" {
			t.Errorf("ExpandPrefixed(%s:x) = %q, %v", p.Name, got, ok)
		}
		if got := Compact(p.Namespace + "x"); got != p.Name+":x" {
			t.Errorf("Compact(%sx) = %q", p.Namespace, got)
		}
	}
	ps[0].Name = "changed"
	if Prefixes()[0].Name == "changed" {
		t.Error("Prefixes shares its slice")
	}
	for in, want := range map[string]string{
		"http://purl.org/dc/terms/title":       "dcterms:title",
		"http://purl.org/dc/terms/":            "dcterms:",
		"http://purl.org/dc/terms/a.b":         "dcterms:a.b",
		"http://purl.org/dc/terms/a.":          "http://purl.org/dc/terms/a.",
		"http://purl.org/dc/terms/-a":          "http://purl.org/dc/terms/-a",
		"http://purl.org/dc/terms/x/y":         "http://purl.org/dc/terms/x/y",
		"http://purl.org/dc/terms/has%20space": "http://purl.org/dc/terms/has%20space",
		"http://example.org/title":             "http://example.org/title",
		"urn:isbn:1":                           "urn:isbn:1",
	} {
		if got := Compact(in); got != want {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want)
		}
	}
	for _, s := range []string{"title", "foo:bar", "http://example.org/x"} {
		if got, ok := ExpandPrefixed(s); ok {
			t.Errorf("ExpandPrefixed(%q) = %q, true", s, got)
		}
	}
}
