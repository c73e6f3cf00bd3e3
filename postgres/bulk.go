package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// insertRows is sqlstore.Dialect.Insert: one statement whatever the number
// of rows. Many rows go by COPY: straight into the table when they must be
// new (tail is ""); inside a savepoint when they may exist already, the
// COPY undone on a collision and the rows then sent as below. Other rows
// go as one INSERT over unnest arrays, one array per column, with tail.
func insertRows(ctx context.Context, q sqlstore.Execer, table string, rows sqlstore.Rows, tail string) error {
	t, ok := q.(*writeTx)
	if !ok {
		return fmt.Errorf("insert into %s: %T is not a PostgreSQL write transaction", table, q)
	}
	names := rows.Names()
	dst := make([]any, len(rows.Cols))
	row := func(i int) ([]any, error) { return dst, rows.Values(i, dst) }
	switch {
	case tail == "" && t.r.useCopy(rows.N):
		_, err := t.r.copyFrom(ctx, table, names, rows.N, row)
		return err
	case tail != "" && t.copyInSavepoint(rows.N):
		conflict, err := t.r.copyNew(ctx, table, names, rows.N, row)
		if err != nil || !conflict {
			return err
		}
	}
	from, args, err := unnest(rows, 1)
	if err != nil {
		return err
	}
	if tail != "" {
		tail = "\n" + tail
	}
	_, err = t.r.exec(ctx, `INSERT INTO `+table+` (`+rows.List()+`) SELECT * FROM `+from+tail, args...)
	return err
}

// fromRows is sqlstore.Dialect.From: unnest over one array per column.
func fromRows(rows sqlstore.Rows, first int) (string, []any, error) {
	from, args, err := unnest(rows, first)
	if err != nil {
		return "", nil, err
	}
	return from + " AS v(" + rows.List() + ")", args, nil
}

// unnest returns "unnest($first::type[], …)" and one array per column of
// rows, of the column's type; a nil of a NullInt64 or NullText column is a
// NULL element.
func unnest(rows sqlstore.Rows, first int) (string, []any, error) {
	n := rows.N
	cols := make([]any, len(rows.Cols))
	var b strings.Builder
	b.WriteString("unnest(")
	for j, c := range rows.Cols {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+j) + "::" + c.Type.String() + "[]")
		switch c.Type {
		case sqlstore.Int64:
			cols[j] = make([]int64, n)
		case sqlstore.NullInt64:
			cols[j] = make([]*int64, n)
		case sqlstore.Int32:
			cols[j] = make([]int32, n)
		case sqlstore.Text:
			cols[j] = make([]string, n)
		case sqlstore.NullText:
			cols[j] = make([]*string, n)
		case sqlstore.Bytes:
			cols[j] = make([][]byte, n)
		case sqlstore.Bool:
			cols[j] = make([]bool, n)
		}
	}
	b.WriteString(")")
	err := rows.Each(func(i int, v []any) error {
		for j, x := range v {
			// Values checked each value's type against its column's
			switch a := cols[j].(type) {
			case []int64:
				a[i] = x.(int64)
			case []*int64:
				if x != nil {
					n := x.(int64)
					a[i] = &n
				}
			case []int32:
				a[i] = int32(x.(int64))
			case []string:
				a[i] = x.(string)
			case []*string:
				if x != nil {
					s := x.(string)
					a[i] = &s
				}
			case [][]byte:
				if x != nil {
					a[i] = x.([]byte)
				}
			case []bool:
				a[i] = x.(bool)
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return b.String(), cols, nil
}
