package marc

import "strings"

// LeaderLen is the length of a MARC leader.
const LeaderLen = 24

// Record is one MARC record.
type Record struct {
	// Leader is the 24-character record leader.
	Leader string
	// Fields holds the control and data fields in record order.
	Fields []Field
}

// Field is a control field (tags 001-009, Value set) or a data field
// (indicators and subfields set).
type Field struct {
	// Tag is the three-character field tag.
	Tag string
	// Value is the content of a control field.
	Value string
	// Ind1 and Ind2 are the indicators of a data field.
	Ind1, Ind2 byte
	// Subfields holds the subfields of a data field in order.
	Subfields []Subfield
}

// Subfield is one coded subfield of a data field.
type Subfield struct {
	// Code is the subfield code, e.g. 'a'.
	Code byte
	// Value is the subfield content.
	Value string
}

// IsControlTag reports whether tag names a control field: three digits
// lower than "010" (the rule pymarc and ruby-marc use).
func IsControlTag(tag string) bool {
	return len(tag) == 3 && tag < "010" && isDigit(tag[0]) && isDigit(tag[1]) && isDigit(tag[2])
}

// IsControl reports whether f is a control field.
func (f *Field) IsControl() bool { return IsControlTag(f.Tag) }

// Subfield returns the value of the first subfield with the given code and
// whether there was one.
func (f *Field) Subfield(code byte) (string, bool) {
	for _, s := range f.Subfields {
		if s.Code == code {
			return s.Value, true
		}
	}
	return "", false
}

// Values returns the values of all subfields whose code is in codes, in
// field order.
func (f *Field) Values(codes string) []string {
	var out []string
	for _, s := range f.Subfields {
		if strings.IndexByte(codes, s.Code) >= 0 {
			out = append(out, s.Value)
		}
	}
	return out
}

// Lookup returns pointers to the fields whose tag is one of tags, in record
// order. With no tags it returns every field.
func (r *Record) Lookup(tags ...string) []*Field {
	var out []*Field
	for i := range r.Fields {
		f := &r.Fields[i]
		if len(tags) == 0 {
			out = append(out, f)
			continue
		}
		for _, t := range tags {
			if f.Tag == t {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// First returns the first field with the given tag, or nil.
func (r *Record) First(tag string) *Field {
	for i := range r.Fields {
		if r.Fields[i].Tag == tag {
			return &r.Fields[i]
		}
	}
	return nil
}

// ControlNumber returns the value of field 001, or "".
func (r *Record) ControlNumber() string {
	if f := r.First("001"); f != nil && f.IsControl() {
		return f.Value
	}
	return ""
}

// Equal reports whether r and o have the same leader and fields.
func (r *Record) Equal(o *Record) bool {
	if r.Leader != o.Leader || len(r.Fields) != len(o.Fields) {
		return false
	}
	for i := range r.Fields {
		a, b := &r.Fields[i], &o.Fields[i]
		if a.Tag != b.Tag || a.Value != b.Value || a.Ind1 != b.Ind1 || a.Ind2 != b.Ind2 || len(a.Subfields) != len(b.Subfields) {
			return false
		}
		for j := range a.Subfields {
			if a.Subfields[j] != b.Subfields[j] {
				return false
			}
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// validTag reports whether tag is three ASCII letters or digits.
func validTag(tag string) bool {
	return len(tag) == 3 && isAlnum(tag[0]) && isAlnum(tag[1]) && isAlnum(tag[2])
}
