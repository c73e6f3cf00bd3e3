package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A bulk write sends many rows in few statements. The method that writes
// them is written once, here, over Rows; the dialect decides how the rows
// travel (Dialect.Insert, Dialect.From): SQLite as multi-row VALUES or one
// JSON array read by json_each, PostgreSQL as one array per column read by
// unnest, or COPY.

// Type is the type of a column of a bulk write: the Go value a row gives
// for it, and the PostgreSQL array it travels in.
type Type uint8

const (
	// Int64 is an int64 (bigint).
	Int64 Type = iota
	// NullInt64 is an int64, or nil for NULL (bigint).
	NullInt64
	// Int32 is an int64 that fits an integer column (integer).
	Int32
	// Text is a string (text).
	Text
	// NullText is a string, or nil for NULL (text).
	NullText
	// Bytes is a []byte, nil for NULL (bytea). SQLite's Dialect.From
	// cannot carry it (JSON has no bytes).
	Bytes
	// Bool is a bool (boolean).
	Bool
)

// Col is a column of a bulk write: its name and its type.
type Col struct {
	Name string
	Type Type
}

// Rows are the rows of one bulk write.
type Rows struct {
	// Cols are the columns, in the order Row gives their values.
	Cols []Col
	// N is the number of rows.
	N int
	// Row writes the values of row i into dst, which has one element per
	// column. It is called once per row, in order, and dst is reused:
	// Row must not keep it.
	Row func(i int, dst []any)
}

// Names are the names of the columns, in order.
func (r Rows) Names() []string {
	names := make([]string, len(r.Cols))
	for i, c := range r.Cols {
		names[i] = c.Name
	}
	return names
}

// List is the names of the columns as a list: "a, b, c".
func (r Rows) List() string {
	return strings.Join(r.Names(), ", ")
}

// Values calls Row for row i into dst and reports the first value whose
// Go type is not its column's: how a dialect reads each row, so that a
// mistake in a Row function is an error, never a panic.
func (r Rows) Values(i int, dst []any) error {
	r.Row(i, dst)
	for j, c := range r.Cols {
		if !c.Type.holds(dst[j]) {
			return fmt.Errorf("row %d, column %s: a %T is not a %s", i, c.Name, dst[j], c.Type)
		}
	}
	return nil
}

// Each calls fn with the values of every row in order (through Values,
// into one reused slice), stopping at the first error.
func (r Rows) Each(fn func(i int, v []any) error) error {
	dst := make([]any, len(r.Cols))
	for i := range r.N {
		if err := r.Values(i, dst); err != nil {
			return err
		}
		if err := fn(i, dst); err != nil {
			return err
		}
	}
	return nil
}

// holds reports whether v is a value of t.
func (t Type) holds(v any) bool {
	switch v.(type) {
	case int64:
		return t == Int64 || t == NullInt64 || t == Int32
	case string:
		return t == Text || t == NullText
	case []byte:
		return t == Bytes
	case bool:
		return t == Bool
	case nil:
		return t == NullInt64 || t == NullText || t == Bytes
	}
	return false
}

// String is the PostgreSQL type of t's column.
func (t Type) String() string {
	switch t {
	case Int64, NullInt64:
		return "bigint"
	case Int32:
		return "integer"
	case Text, NullText:
		return "text"
	case Bytes:
		return "bytea"
	case Bool:
		return "boolean"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// NullMicros is t as stored (Unix microseconds), or nil for NULL: a
// NullInt64 value.
func NullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// NullZero is v, or nil for NULL when it is 0 (a parent, a position or a
// source that is not there): a NullInt64 value.
func NullZero(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// insert writes rows into table through the dialect. An error says what
// was being done: doing is a format with one %d, the number of rows
// ("insert %d resources").
func (w *WriteTx) insert(ctx context.Context, doing, table string, rows Rows, tail string) error {
	if rows.N == 0 {
		return nil
	}
	if err := w.d.Insert(ctx, w.q, table, rows, tail); err != nil {
		return fmt.Errorf("%s"+doing+": %w", w.d.Prefix, rows.N, err)
	}
	return nil
}

// execFrom runs stmt(v), where v is rows bound by the dialect as one table
// expression after the statement's other arguments args, and returns the
// rows it affected.
func (w *WriteTx) execFrom(ctx context.Context, rows Rows, stmt func(v string) string, args ...any) (int64, error) {
	from, vals, err := w.d.From(rows, len(args)+1)
	if err != nil {
		return 0, err
	}
	return w.q.Exec(ctx, stmt(from), append(args, vals...)...)
}
