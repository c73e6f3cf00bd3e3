package rdf

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// JSONMetadata returns the plain JSON form of a resource's metadata, the
// API's default (application/json) body: an object whose keys are
// predicates, compacted to prefixed names where a prefix is known
// ("dcterms:title"), in order of first appearance; each value is a string
// for a plain literal, {"@value": ..., "@language": ...} for a tagged
// literal, {"@value": ..., "@type": ...} for a typed one, {"@id": ...} for an
// IRI, or an array of these when the predicate has several values.
// ParseJSONMetadata reads it back.
func JSONMetadata(stmts []shelfmark.Statement) json.RawMessage {
	dst := make([]byte, 0, 64*len(stmts)+2)
	dst = append(dst, '{')
	return appendJSONProperties(dst, stmts, false)
}

// ParseJSONMetadata reads the plain JSON form of metadata (see
// JSONMetadata) into statements, in document order. Keys are full IRIs or
// prefixed names with a known prefix (see Prefixes); values are strings,
// {"@value", "@language"}, {"@value", "@type"}, {"@id"} objects or arrays of
// these. The "@type" and "@id" values may also be prefixed names. Any other
// shape is EINVALID with a message that names the key.
func ParseJSONMetadata(raw []byte) ([]shelfmark.Statement, error) {
	// encoding/json would replace bytes that are not UTF-8, and lone
	// surrogate escapes, with U+FFFD.
	if err := CheckJSONText(JSON, raw); err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, jsonSyntaxError(JSON, raw, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, invalid(JSON, "metadata must be a JSON object whose keys are predicates")
	}
	var stmts []shelfmark.Statement
	for _, key := range topLevelKeys(raw, len(obj)) {
		value, ok := obj[key]
		if !ok {
			return nil, fmt.Errorf("rdf: metadata key %q was not decoded", key)
		}
		pred, err := metadataKey(key)
		if err != nil {
			return nil, err
		}
		if stmts, err = appendMetadataValues(stmts, key, pred, value, true); err != nil {
			return nil, err
		}
	}
	return stmts, nil
}

// topLevelKeys returns the keys of the JSON object raw, which must be
// valid JSON, in document order and without repeats (encoding/json keeps
// the last value of a repeated key). It saves decoding the document twice
// to learn the order of a map.
func topLevelKeys(raw []byte, n int) []string {
	keys := make([]string, 0, n)
	var seen map[string]bool // for objects too large to search keys
	if n > 32 {
		seen = make(map[string]bool, n)
	}
	depth, expectKey := 0, false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			depth++
			expectKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			j, escaped := i+1, false
			for ; raw[j] != '"'; j++ {
				if raw[j] == '\\' {
					j++
					escaped = true
				}
			}
			if depth == 1 && expectKey {
				var key string
				if escaped || !utf8.Valid(raw[i+1:j]) {
					// Decode as encoding/json does, escapes and U+FFFD
					// for invalid UTF-8 included.
					_ = json.Unmarshal(raw[i:j+1], &key)
				} else {
					key = string(raw[i+1 : j])
				}
				switch {
				case seen != nil && !seen[key]:
					seen[key] = true
					keys = append(keys, key)
				case seen == nil && !slices.Contains(keys, key):
					keys = append(keys, key)
				}
				expectKey = false
			}
			i = j
		}
	}
	return keys
}

// keyError returns EINVALID for a metadata key, naming it.
func keyError(key, format string, args ...any) error {
	return &shelfmark.Error{
		Code:    shelfmark.EINVALID,
		Message: fmt.Sprintf("Invalid metadata key %q: %s.", key, fmt.Sprintf(format, args...)),
		Details: map[string]any{"key": key},
	}
}

// metadataKey expands a key into a predicate IRI.
func metadataKey(key string) (string, error) {
	if strings.HasPrefix(key, "@") {
		return "", keyError(key, "keys starting with @ are JSON-LD keywords; send JSON-LD as application/ld+json")
	}
	iri, err := expandName(key)
	if err != nil {
		return "", keyError(key, "%s", err.Error())
	}
	return iri, nil
}

// expandName expands a prefixed name or checks a full IRI. Its errors are
// reasons for a message.
func expandName(s string) (string, error) {
	iri, ok := ExpandPrefixed(s)
	if !ok {
		i := strings.IndexByte(s, ':')
		if i <= 0 {
			return "", fmt.Errorf("it is neither a prefixed name (such as dcterms:title) nor a full IRI")
		}
		scheme := strings.ToLower(s[:i])
		if !strings.HasPrefix(s[i+1:], "//") && scheme != "urn" && scheme != "info" && scheme != "tag" && scheme != "mailto" {
			return "", fmt.Errorf("the prefix %q is not known; use a full IRI or one of the prefixes %s", s[:i], knownPrefixNames())
		}
		iri = s
	}
	if reason := checkIRI(iri); reason != "" {
		return "", fmt.Errorf("%s", reason)
	}
	return iri, nil
}

// knownPrefixNames lists the known prefixes for messages.
func knownPrefixNames() string {
	var b strings.Builder
	for i, p := range Prefixes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
	}
	return b.String()
}

// msgValueShape describes the accepted values, for messages.
const msgValueShape = `a value must be a string, {"@value": "...", "@language": "..."}, {"@value": "...", "@type": "..."}, {"@id": "..."} or an array of these`

// appendMetadataValues appends the statements of one key's value.
func appendMetadataValues(stmts []shelfmark.Statement, key, pred string, value any, allowArray bool) ([]shelfmark.Statement, error) {
	switch v := value.(type) {
	case string:
		return append(stmts, shelfmark.Statement{Predicate: pred, Object: shelfmark.NewLiteral(v)}), nil
	case map[string]any:
		term, err := metadataObject(key, v)
		if err != nil {
			return nil, err
		}
		return append(stmts, shelfmark.Statement{Predicate: pred, Object: term}), nil
	case []any:
		if !allowArray {
			return nil, keyError(key, "arrays cannot be nested; %s", msgValueShape)
		}
		for _, item := range v {
			var err error
			if stmts, err = appendMetadataValues(stmts, key, pred, item, false); err != nil {
				return nil, err
			}
		}
		return stmts, nil
	case nil:
		return nil, keyError(key, "%s", msgValueShape)
	}
	return nil, keyError(key, "%s; write numbers and booleans as strings or as {\"@value\": \"1999\", \"@type\": \"xsd:integer\"}", msgValueShape)
}

// metadataObject reads a {"@value"...} or {"@id"} value object.
func metadataObject(key string, obj map[string]any) (shelfmark.Term, error) {
	str := func(k string) (string, bool, error) {
		v, ok := obj[k]
		if !ok {
			return "", false, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return "", true, keyError(key, "%q must be a string", k)
		}
		return s, true, nil
	}
	for k := range obj {
		switch k {
		case "@value", "@language", "@type", "@id":
		default:
			return shelfmark.Term{}, keyError(key, "%q is not allowed in a value object; %s", k, msgValueShape)
		}
	}
	id, hasID, err := str("@id")
	if err != nil {
		return shelfmark.Term{}, err
	}
	if hasID {
		if len(obj) != 1 {
			return shelfmark.Term{}, keyError(key, `an {"@id": ...} object cannot have other members`)
		}
		iri, err := expandName(id)
		if err != nil {
			return shelfmark.Term{}, keyError(key, "the @id: %s", err.Error())
		}
		return shelfmark.NewIRI(iri), nil
	}
	value, hasValue, err := str("@value")
	if err != nil {
		return shelfmark.Term{}, err
	}
	if !hasValue {
		return shelfmark.Term{}, keyError(key, "%s", msgValueShape)
	}
	lang, hasLang, err := str("@language")
	if err != nil {
		return shelfmark.Term{}, err
	}
	typ, hasType, err := str("@type")
	if err != nil {
		return shelfmark.Term{}, err
	}
	if hasLang && hasType {
		return shelfmark.Term{}, keyError(key, "a value cannot have both @language and @type")
	}
	datatype := ""
	if hasType {
		if datatype, err = expandName(typ); err != nil {
			return shelfmark.Term{}, keyError(key, "the @type: %s", err.Error())
		}
	}
	if hasLang && lang == "" {
		return shelfmark.Term{}, keyError(key, "@language cannot be empty")
	}
	term, reason := newLiteral(value, lang, datatype)
	if reason != "" {
		return shelfmark.Term{}, keyError(key, "%s", reason)
	}
	return term, nil
}
