package rdf

import "testing"

// TestNegotiate covers q-values, wildcards, specificity and refusal.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		accept, want string
		ok           bool
	}{
		{"", JSON, true},
		{"*/*", JSON, true},
		{"text/turtle", Turtle, true},
		{"Text/Turtle; charset=utf-8", Turtle, true},
		{"application/n-triples", NTriples, true},
		{"application/ld+json", JSONLD, true},
		{"application/json", JSON, true},
		{"text/*", Turtle, true},
		{"application/*", JSON, true},
		{"text/turtle;q=0.5, application/ld+json;q=0.9", JSONLD, true},
		{"text/turtle, */*;q=0.1", Turtle, true},
		{"*/*;q=0.1, text/turtle;q=0.1", Turtle, true},
		{"application/json;q=0, */*", JSONLD, true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", JSON, true},
		{"application/n-triples;q=1.0, text/turtle;q=0.99", NTriples, true},
		{"text/html", "", false},
		{"text/turtle;q=0", "", false},
		{"text/turtle;q=abc, application/n-triples", NTriples, true},
		{"garbage", "", false},
	} {
		got, ok := Negotiate(tc.accept)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Negotiate(%q) = %q, %v; want %q, %v", tc.accept, got, ok, tc.want, tc.ok)
		}
	}
}

// TestReadableTypes returns a fresh slice.
func TestReadableTypes(t *testing.T) {
	a := ReadableTypes()
	a[0] = "changed"
	if b := ReadableTypes(); b[0] != JSON || len(b) != 4 {
		t.Errorf("ReadableTypes() = %v", b)
	}
}
