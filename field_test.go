package shelfmark

import (
	"reflect"
	"testing"
)

func TestFieldsRoundTrip(t *testing.T) {
	stmts := []Statement{
		{NSDC + "title", NewLangLiteral("Atlas", "en")},
		{NSDC + "date", NewTypedLiteral("1899", "http://www.w3.org/2001/XMLSchema#gYear")},
		{NSDC + "title", NewLiteral("Rheinatlas ‘ü’")},
		{NSDC + "subject", NewIRI("http://id.loc.gov/x")},
		{NSDC + "title", NewLangLiteral("Atlas", "en")}, // repeated
		{NSDC + "title", NewLiteral("")},
	}
	fields := FieldsOf(stmts)
	if len(fields) != 3 || fields[0].Predicate != NSDC+"date" || len(fields[2].Objects) != 3 {
		t.Fatalf("fields %+v", fields)
	}
	for _, f := range fields {
		got, err := DecodeObjects(EncodeObjects(f.Objects))
		if err != nil || !reflect.DeepEqual(got, f.Objects) {
			t.Fatalf("round trip %v -> %v, %v", f.Objects, got, err)
		}
	}
	if got := StatementsOf(fields); len(got) != 5 {
		t.Fatalf("flattened %v", got)
	}
}

func FuzzDecodeObjects(f *testing.F) {
	f.Add(EncodeObjects([]Term{NewLiteral("x"), NewIRI("http://a")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		terms, err := DecodeObjects(b)
		if err != nil {
			return
		}
		again, err := DecodeObjects(EncodeObjects(terms))
		if err != nil || !reflect.DeepEqual(again, terms) {
			t.Fatalf("%q: decode(encode(%v)) = %v, %v", b, terms, again, err)
		}
	})
}

// TestFieldsOfLongField: a field of thousands of values, with repeats,
// keeps each value once, in order.
func TestFieldsOfLongField(t *testing.T) {
	var stmts []Statement
	for i := 0; i < 3000; i++ {
		stmts = append(stmts, Statement{NSDC + "subject", NewLiteral(string(rune('a' + i%2000)))})
	}
	f := FieldsOf(stmts)
	if len(f) != 1 || len(f[0].Objects) != 2000 || f[0].Objects[1999].Value != string(rune('a'+1999)) {
		t.Fatalf("%d fields, %d objects", len(f), len(f[0].Objects))
	}
}
