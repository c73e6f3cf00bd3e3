package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// chunkSize is the most rows one multi-row INSERT carries.
const chunkSize = 64

// insertRows is sqlstore.Dialect.Insert: an INSERT of up to chunkSize rows
// of VALUES per statement, so that a full chunk's text is one cached
// prepared statement.
func insertRows(ctx context.Context, q sqlstore.Execer, table string, rows sqlstore.Rows, tail string) error {
	width := len(rows.Cols)
	head := `INSERT INTO ` + table + ` (` + rows.Names() + `) VALUES `
	if tail != "" {
		tail = " " + tail
	}
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

// chunked calls fn for consecutive ranges of at most chunkSize of n items.
func chunked(n int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += chunkSize {
		if err := fn(lo, min(lo+chunkSize, n)); err != nil {
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

// fromRows is sqlstore.Dialect.From: the rows as one JSON array of arrays,
// read by json_each, each value by its index (value ->> i).
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
	vals := make([][]any, rows.N)
	for i := range vals {
		vals[i] = make([]any, len(rows.Cols))
		if err := rows.Values(i, vals[i]); err != nil {
			return "", nil, err
		}
	}
	arg, err := json.Marshal(vals)
	if err != nil {
		return "", nil, fmt.Errorf("encode %d rows: %w", rows.N, err)
	}
	return b.String(), []any{string(arg)}, nil
}
