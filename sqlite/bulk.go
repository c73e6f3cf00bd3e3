package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// chunkSize is the most rows one multi-row INSERT carries.
const chunkSize = 64

// insertRows is sqlstore.Dialect.Insert. Rows of integers only (links,
// memberships) travel as one JSON array read by json_each: one statement
// and one prepared text whatever their number, in the order given. Other
// rows go as an INSERT of up to chunkSize rows of VALUES per statement, so
// that a full chunk's text is one cached prepared statement.
func insertRows(ctx context.Context, q sqlstore.Execer, table string, rows sqlstore.Rows, tail string) error {
	width := len(rows.Cols)
	if tail != "" {
		tail = " " + tail
	}
	if integers(rows) {
		arg, err := jsonRows(rows)
		if err != nil {
			return err
		}
		vals := make([]string, width)
		for j := range vals {
			vals[j] = "value ->> " + strconv.Itoa(j)
		}
		// WHERE true: an ON CONFLICT after a SELECT's FROM would read as
		// a join constraint
		_, err = q.Exec(ctx, `INSERT INTO `+table+` (`+rows.List()+`) SELECT `+strings.Join(vals, ", ")+
			` FROM json_each(?) WHERE true ORDER BY key`+tail, arg)
		return err
	}
	head := `INSERT INTO ` + table + ` (` + rows.List() + `) VALUES `
	for lo := 0; lo < rows.N; lo += chunkSize {
		hi := min(lo+chunkSize, rows.N)
		args := make([]any, (hi-lo)*width)
		for i := lo; i < hi; i++ {
			if err := rows.Values(i, args[(i-lo)*width:(i-lo+1)*width]); err != nil {
				return err
			}
		}
		if _, err := q.Exec(ctx, head+placeholders(hi-lo, width)+tail, args...); err != nil {
			return err
		}
	}
	return nil
}

// placeholders returns "(?,?,…),(…)" for rows rows of width columns.
func placeholders(rows, width int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", width), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}

// integers reports whether every column of rows is an integer.
func integers(rows sqlstore.Rows) bool {
	for _, c := range rows.Cols {
		if c.Type != sqlstore.Int64 && c.Type != sqlstore.NullInt64 && c.Type != sqlstore.Int32 {
			return false
		}
	}
	return true
}

// jsonRows encodes rows of integers as a JSON array of arrays, by hand:
// no reflection, one allocation grown by append.
func jsonRows(rows sqlstore.Rows) (string, error) {
	b := make([]byte, 0, 2+rows.N*len(rows.Cols)*12)
	b = append(b, '[')
	err := rows.Each(func(i int, v []any) error {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, x := range v {
			if j > 0 {
				b = append(b, ',')
			}
			if n, ok := x.(int64); ok {
				b = strconv.AppendInt(b, n, 10)
			} else {
				b = append(b, "null"...)
			}
		}
		b = append(b, ']')
		return nil
	})
	return string(append(b, ']')), err
}

// fromRows is sqlstore.Dialect.From: the rows as one JSON array of arrays,
// read by json_each, each value by its index (value ->> i). Rows of
// integers only are encoded by jsonRows.
func fromRows(rows sqlstore.Rows, first int) (string, []any, error) {
	var b strings.Builder
	b.WriteString("(SELECT ")
	for j, c := range rows.Cols {
		if c.Type == sqlstore.Bytes {
			return "", nil, fmt.Errorf("column %s: JSON cannot carry bytes", c.Name)
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString("value ->> " + strconv.Itoa(j) + " AS " + c.Name)
	}
	b.WriteString(" FROM json_each(?" + strconv.Itoa(first) + ")) AS v")
	if integers(rows) {
		arg, err := jsonRows(rows)
		return b.String(), []any{arg}, err
	}
	vals := make([][]any, rows.N)
	err := rows.Each(func(i int, v []any) error {
		vals[i] = append([]any(nil), v...)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	// text as it is: no escaping of <, > and & for HTML
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(vals); err != nil {
		return "", nil, fmt.Errorf("encode %d rows: %w", rows.N, err)
	}
	return b.String(), []any{buf.String()}, nil
}
