package shelfmark

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on the metadata of one resource, checked by the engine on every
// write whatever the path (REST, batch, groups, ingest); docs/security.md
// ("Limits") gives the reason for each.
const (
	// MaxStatements caps the statements of one resource's metadata (and of
	// one list of statements to add).
	MaxStatements = 100_000
	// MaxLiteralBytes caps the value of one literal: well under the
	// 10,000,000-byte text node that libxml2, and so most OAI-PMH
	// harvesters, refuse by default.
	MaxLiteralBytes = 1 << 20
	// MaxIRIBytes caps an IRI: a predicate, an IRI object or a datatype.
	MaxIRIBytes = 4096
	// MaxLangTagBytes caps a language tag: the 35 characters RFC 5646
	// (section 4.4.1) asks every implementation to support.
	MaxLangTagBytes = 35
)

// validateStatements checks what both backends can store: valid UTF-8
// without NUL characters (PostgreSQL text cannot hold them), absolute
// predicates, and no empty IRIs; and, unless field is "remove" (a value
// stored before the limits were lowered can always be removed), the limits
// above.
func validateStatements(field string, stmts []Statement) error {
	limits := field != "remove"
	if limits && len(stmts) > MaxStatements {
		return &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %d statements; at most %d are accepted.", field, len(stmts), MaxStatements),
			Details: map[string]any{"limit": MaxStatements}}
	}
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
		if !limits {
			continue
		}
		tooLong := func(what string, n, limit int) error {
			err := bad(fmt.Sprintf("has %s of %d bytes; at most %d are accepted", what, n, limit)).(*Error)
			err.Details["predicate"], err.Details["limit"] = s.Predicate, limit
			return err
		}
		switch {
		case len(s.Predicate) > MaxIRIBytes:
			return tooLong("a predicate IRI", len(s.Predicate), MaxIRIBytes)
		case s.Object.Kind == IRI && len(s.Object.Value) > MaxIRIBytes:
			return tooLong("an IRI", len(s.Object.Value), MaxIRIBytes)
		case s.Object.Kind != IRI && len(s.Object.Value) > MaxLiteralBytes:
			return tooLong("a literal", len(s.Object.Value), MaxLiteralBytes)
		case len(s.Object.Datatype) > MaxIRIBytes:
			return tooLong("a datatype IRI", len(s.Object.Datatype), MaxIRIBytes)
		case len(s.Object.Lang) > MaxLangTagBytes:
			return tooLong("a language tag", len(s.Object.Lang), MaxLangTagBytes)
		}
	}
	return nil
}

// validText checks a free text that both backends must store (a message,
// a reply): valid UTF-8 without NUL characters.
func validText(field, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return Errorf(EINVALID, "%s: contains a NUL character, which cannot be stored.", field)
	}
	if !utf8.ValidString(s) {
		return Errorf(EINVALID, "%s: is not valid UTF-8.", field)
	}
	return nil
}
