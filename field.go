package shelfmark

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
)

// Field is every object of one predicate of a resource, in the order they
// were given. Backends store metadata one row per field (rule R3: editing a
// field touches that field's row), so a record of 54 statements over 16
// predicates is 16 rows, not 54.
type Field struct {
	Predicate string
	Objects   []Term
}

// FieldsOf groups statements into fields, sorted by predicate, keeping the
// order of each predicate's objects and dropping repeated ones. Repeats are
// found by comparing within a field (fields are short), not by hashing
// every statement: this runs on every write.
func FieldsOf(stmts []Statement) []Field {
	var out []Field
	idx := make(map[string]int, 16)
	var sets map[int]map[Term]struct{} // for fields longer than linearLimit
	const linearLimit = 32
	for _, s := range stmts {
		i, ok := idx[s.Predicate]
		if !ok {
			i = len(out)
			idx[s.Predicate] = i
			out = append(out, Field{Predicate: s.Predicate, Objects: make([]Term, 0, 1)})
		}
		objs := out[i].Objects
		if set, big := sets[i]; big {
			if _, dup := set[s.Object]; dup {
				continue
			}
			set[s.Object] = struct{}{}
		} else if slices.Contains(objs, s.Object) {
			continue
		} else if len(objs) == linearLimit {
			if sets == nil {
				sets = map[int]map[Term]struct{}{}
			}
			set := make(map[Term]struct{}, 2*linearLimit)
			for _, o := range objs {
				set[o] = struct{}{}
			}
			set[s.Object] = struct{}{}
			sets[i] = set
		}
		out[i].Objects = append(objs, s.Object)
	}
	slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Predicate, b.Predicate) })
	return out
}

// StatementsOf flattens fields back into statements.
func StatementsOf(fields []Field) []Statement {
	n := 0
	for _, f := range fields {
		n += len(f.Objects)
	}
	out := make([]Statement, 0, n)
	for _, f := range fields {
		for _, o := range f.Objects {
			out = append(out, Statement{Predicate: f.Predicate, Object: o})
		}
	}
	return out
}

// EncodeObjects packs terms into the compact binary form backends store:
// per term a kind byte, then length-prefixed value, language and datatype.
func EncodeObjects(terms []Term) []byte {
	n := 0
	for _, t := range terms {
		n += 1 + 3*binary.MaxVarintLen32 + len(t.Value) + len(t.Lang) + len(t.Datatype)
	}
	b := make([]byte, 0, n)
	for _, t := range terms {
		b = append(b, byte(t.Kind))
		b = binary.AppendUvarint(b, uint64(len(t.Value)))
		b = append(b, t.Value...)
		if t.Kind == Literal {
			b = binary.AppendUvarint(b, uint64(len(t.Lang)))
			b = append(b, t.Lang...)
			b = binary.AppendUvarint(b, uint64(len(t.Datatype)))
			b = append(b, t.Datatype...)
		}
	}
	return b
}

var errBadObjects = errors.New("shelfmark: corrupt encoded objects")

// DecodeObjects unpacks what EncodeObjects packed.
func DecodeObjects(b []byte) ([]Term, error) {
	var out []Term
	str := func() (string, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", errBadObjects
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, nil
	}
	for len(b) > 0 {
		t := Term{Kind: TermKind(b[0])}
		b = b[1:]
		var err error
		if t.Value, err = str(); err != nil {
			return nil, err
		}
		switch t.Kind {
		case IRI:
		case Literal:
			if t.Lang, err = str(); err != nil {
				return nil, err
			}
			if t.Datatype, err = str(); err != nil {
				return nil, err
			}
		default:
			return nil, errBadObjects
		}
		out = append(out, t)
	}
	return out, nil
}
