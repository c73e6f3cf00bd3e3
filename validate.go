package shelfmark

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// validateStatements checks what both backends can store: valid UTF-8
// without NUL characters (PostgreSQL text cannot hold them), absolute
// predicates, and no empty IRIs.
func validateStatements(field string, stmts []Statement) error {
	for i, s := range stmts {
		bad := func(what string) error {
			return &Error{Code: EINVALID, Message: fmt.Sprintf("%s: statement %d (%s) %s.", field, i+1, truncate(s.Predicate, 80), what),
				Details: map[string]any{"statement": i + 1}}
		}
		switch {
		case s.Predicate == "" || !strings.Contains(s.Predicate, ":"):
			return bad("has no absolute predicate IRI")
		case s.Object.Kind == IRI && s.Object.Value == "":
			return bad("has an empty IRI")
		}
		for _, v := range []string{s.Predicate, s.Object.Value, s.Object.Lang, s.Object.Datatype} {
			if strings.IndexByte(v, 0) >= 0 {
				return bad("contains a NUL character, which cannot be stored")
			}
			if !utf8.ValidString(v) {
				return bad("is not valid UTF-8")
			}
		}
	}
	return nil
}
