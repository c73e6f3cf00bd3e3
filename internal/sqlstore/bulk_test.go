package sqlstore

import (
	"strings"
	"testing"
	"time"
)

// TestRowsValues: a bulk write's rows are checked value by value against
// their columns' types, so that a mistake in a Row function is an error
// naming the row and column, never a panic in a driver.
func TestRowsValues(t *testing.T) {
	at := time.UnixMicro(42)
	good := []any{int64(1), nil, int64(7), "a", nil, []byte("x"), true}
	rows := Rows{
		Cols: []Col{{"a", Int64}, {"b", NullInt64}, {"c", Int32}, {"d", Text}, {"e", NullText}, {"f", Bytes}, {"g", Bool}},
		N:    2,
		Row: func(i int, v []any) {
			copy(v, good)
			if i == 1 {
				v[0], v[1], v[4] = NullZero(0), NullMicros(&at), "e"
			}
		},
	}
	if got := rows.List(); got != "a, b, c, d, e, f, g" {
		t.Errorf("names: %q", got)
	}
	v := make([]any, len(rows.Cols))
	if err := rows.Values(0, v); err != nil {
		t.Errorf("row 0: %v", err)
	}
	// row 1 puts NULL in a column that may not hold it
	if err := rows.Values(1, v); err == nil || !strings.Contains(err.Error(), "row 1, column a") {
		t.Errorf("row 1: %v", err)
	}
	if v[1] != int64(42) || v[4] != "e" {
		t.Errorf("row 1 values: %v", v)
	}
	var seen []int
	err := rows.Each(func(i int, _ []any) error { seen = append(seen, i); return nil })
	if err == nil || len(seen) != 1 {
		t.Errorf("each: %v after rows %v", err, seen)
	}
	for _, c := range []struct {
		t    Type
		v    any
		want bool
	}{
		{Int64, 1, false}, // an int, not an int64
		{Text, []byte("a"), false},
		{Bool, int64(1), false},
		{NullText, nil, true},
		{Bytes, nil, true},
		{Int32, int64(3), true},
	} {
		if got := c.t.holds(c.v); got != c.want {
			t.Errorf("%s holds %T: %v", c.t, c.v, got)
		}
	}
}
