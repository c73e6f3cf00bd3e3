package preserve

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// parseOwnNTriples reads N-Triples in the form rdf.AppendNTriples writes
// (metadata.nt): one statement a line, "<s> <p> <o> ." or
// "<s> <p> "literal"[@lang|^^<dt>] .", IRIs and literals escaped as it
// escapes them. It reports false on anything else, and the caller then
// parses the document with the general parser (rdf.Parse): this one only
// saves a rebuild that parser's cost on the documents Shelfmark wrote.
// Subjects are returned as their IRIs.
func parseOwnNTriples(data []byte) (subjects []string, stmts []shelfmark.Statement, ok bool) {
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, nil, false
		}
		line := data[:nl]
		data = data[nl+1:]
		s, rest, ok := cutIRI(line)
		if !ok || len(rest) == 0 || rest[0] != ' ' {
			return nil, nil, false
		}
		p, rest, ok := cutIRI(rest[1:])
		if !ok || len(rest) == 0 || rest[0] != ' ' {
			return nil, nil, false
		}
		rest = rest[1:]
		var o shelfmark.Term
		if len(rest) > 0 && rest[0] == '<' {
			v, r, ok := cutIRI(rest)
			if !ok {
				return nil, nil, false
			}
			o, rest = shelfmark.Term{Kind: shelfmark.IRI, Value: v}, r
		} else {
			v, r, ok := cutLiteral(rest)
			if !ok {
				return nil, nil, false
			}
			o, rest = shelfmark.Term{Kind: shelfmark.Literal, Value: v}, r
			switch {
			case len(rest) > 0 && rest[0] == '@':
				end := bytes.IndexByte(rest, ' ')
				if end < 2 {
					return nil, nil, false
				}
				o.Lang, rest = string(rest[1:end]), rest[end:]
			case len(rest) > 1 && rest[0] == '^' && rest[1] == '^':
				dt, r, ok := cutIRI(rest[2:])
				if !ok {
					return nil, nil, false
				}
				o.Datatype, rest = dt, r
			}
		}
		if string(rest) != " ." {
			return nil, nil, false
		}
		subjects = append(subjects, s)
		stmts = append(stmts, shelfmark.Statement{Predicate: p, Object: o})
	}
	return subjects, stmts, true
}

// cutIRI reads "<iri>" at the start of b, with \u00XX escapes.
func cutIRI(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '<' {
		return "", nil, false
	}
	end := bytes.IndexByte(b, '>')
	if end < 0 {
		return "", nil, false
	}
	raw := b[1:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		if !utf8.Valid(raw) || bytes.ContainsAny(raw, " <\"{}|^`") {
			return "", nil, false
		}
		return string(raw), b[end+1:], true
	}
	v, ok := unescape(raw, false)
	return v, b[end+1:], ok
}

// cutLiteral reads a double-quoted literal at the start of b.
func cutLiteral(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			v, ok := unescape(b[1:i], true)
			return v, b[i+1:], ok
		}
	}
	return "", nil, false
}

// unescape undoes the escapes of an IRI (\uXXXX, \UXXXXXXXX) or a
// literal (those and \t \b \n \r \f \" \' \\).
func unescape(raw []byte, literal bool) (string, bool) {
	if !utf8.Valid(raw) {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	var sb strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		i++
		switch e := raw[i]; {
		case e == 'u' || e == 'U':
			n := 4
			if e == 'U' {
				n = 8
			}
			if i+1+n > len(raw) {
				return "", false
			}
			v, err := strconv.ParseUint(string(raw[i+1:i+1+n]), 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", false
			}
			sb.WriteRune(rune(v))
			i += n
		case literal && e == 't':
			sb.WriteByte('\t')
		case literal && e == 'b':
			sb.WriteByte('\b')
		case literal && e == 'n':
			sb.WriteByte('\n')
		case literal && e == 'r':
			sb.WriteByte('\r')
		case literal && e == 'f':
			sb.WriteByte('\f')
		case literal && (e == '"' || e == '\'' || e == '\\'):
			sb.WriteByte(e)
		default:
			return "", false
		}
	}
	return sb.String(), true
}
