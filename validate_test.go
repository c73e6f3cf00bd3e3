package shelfmark

import (
	"strings"
	"testing"
)

// TestValidateStatementLimits checks the engine's own limits on values,
// which every path (REST, batch, groups, ingest) passes through.
func TestValidateStatementLimits(t *testing.T) {
	ok := []Statement{
		{NSDC + "title", NewLiteral(strings.Repeat("a", MaxLiteralBytes))},
		{NSDC + "subject", NewIRI("http://x/" + strings.Repeat("i", MaxIRIBytes-9))},
		{NSDC + "title", NewLangLiteral("t", "en-"+strings.Repeat("x", MaxLangTagBytes-3))},
	}
	if err := validateStatements("metadata", ok); err != nil {
		t.Fatalf("values at the limits: %v", err)
	}
	for name, s := range map[string]Statement{
		"literal":   {NSDC + "title", NewLiteral(strings.Repeat("a", MaxLiteralBytes+1))},
		"iri":       {NSDC + "subject", NewIRI("http://x/" + strings.Repeat("i", MaxIRIBytes))},
		"predicate": {"http://x/" + strings.Repeat("p", MaxIRIBytes), NewLiteral("v")},
		"datatype":  {NSDC + "date", NewTypedLiteral("1", "http://x/"+strings.Repeat("d", MaxIRIBytes))},
		"language":  {NSDC + "title", NewLangLiteral("t", "en-"+strings.Repeat("x", MaxLangTagBytes))},
	} {
		err := validateStatements("metadata", []Statement{ok[0], s})
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "statement 2") {
			t.Errorf("%s: %v", name, err)
		}
		if err := validateStatements("remove", []Statement{s}); err != nil {
			t.Errorf("%s: removing a value over the limit: %v", name, err)
		}
	}
	many := make([]Statement, MaxStatements+1)
	for i := range many {
		many[i] = Statement{NSDC + "title", NewLiteral("x")}
	}
	if err := validateStatements("metadata", many); ErrorCode(err) != EINVALID {
		t.Errorf("%d statements: %v", len(many), err)
	}
}
