package sqlite

import (
	"database/sql"
	"fmt"
	"strconv"
)

// rowScanner is the sqlstore.Scanner of every row the backend reads. It
// hands database/sql adapters in place of the destinations database/sql
// can only fill by reflection (an integer, a float, a nullable string), so
// a column costs a type switch: reading a book's 3,600 file rows of a
// dozen integers each spent a sixth of a manifest's time in reflection.
// Other destinations go to database/sql unchanged. One rowScanner serves
// every row of a query; its adapters are reused, so a row allocates
// nothing of its own.
type rowScanner struct {
	rows *sql.Rows
	dest []any
	conv []columnConv
}

// Scan implements sqlstore.Scanner.
func (s *rowScanner) Scan(dest ...any) error {
	if cap(s.conv) < len(dest) {
		s.conv = make([]columnConv, len(dest))
		s.dest = make([]any, len(dest))
	}
	s.conv, s.dest = s.conv[:len(dest)], s.dest[:len(dest)]
	for i, d := range dest {
		c := &s.conv[i]
		*c = columnConv{}
		switch p := d.(type) {
		case *int64:
			c.i64 = p
		case *int:
			c.i = p
		case *float64:
			c.f64 = p
		case **string:
			c.ps = p
		default:
			s.dest[i] = d
			continue
		}
		s.dest[i] = c
	}
	return s.rows.Scan(s.dest...)
}

// columnConv fills one destination of rowScanner from a column's value
// as database/sql would (an integer from an integer, an integral float or
// its decimal text,
// a float from a number or its text, a nullable string from NULL, text or
// a number), without reflection. Exactly one of its pointers is set.
type columnConv struct {
	i64 *int64
	i   *int
	f64 *float64
	ps  **string
}

// Scan implements sql.Scanner.
func (c *columnConv) Scan(src any) error {
	switch {
	case c.i64 != nil:
		v, err := scanInt(src)
		*c.i64 = v
		return err
	case c.i != nil:
		v, err := scanInt(src)
		if err == nil && int64(int(v)) != v {
			err = fmt.Errorf("converting %d to int: out of range", v)
		}
		*c.i = int(v)
		return err
	case c.f64 != nil:
		switch v := src.(type) {
		case float64:
			*c.f64 = v
			return nil
		case int64:
			*c.f64 = float64(v)
			return nil
		case string, []byte:
			f, err := strconv.ParseFloat(asText(v), 64)
			if err != nil {
				return fmt.Errorf("converting %q to float64: %w", asText(v), err)
			}
			*c.f64 = f
			return nil
		}
		return fmt.Errorf("converting %T to float64 is unsupported", src)
	default:
		switch v := src.(type) {
		case nil:
			*c.ps = nil
			return nil
		case string:
			*c.ps = &v
			return nil
		case []byte:
			s := string(v)
			*c.ps = &s
			return nil
		case int64:
			s := strconv.FormatInt(v, 10)
			*c.ps = &s
			return nil
		case float64:
			s := strconv.FormatFloat(v, 'g', -1, 64)
			*c.ps = &s
			return nil
		}
		return fmt.Errorf("converting %T to *string is unsupported", src)
	}
}

// scanInt is an integer column's value: an integer, an integral float, or
// an integer's decimal text. NULL and anything else is an error, as in
// database/sql.
func scanInt(src any) (int64, error) {
	switch v := src.(type) {
	case int64:
		return v, nil
	case string, []byte:
		n, err := strconv.ParseInt(asText(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("converting %q to an integer: %w", asText(v), err)
		}
		return n, nil
	case float64: // as database/sql: 2.0 is 2, 1.5 an error
		t := strconv.FormatFloat(v, 'g', -1, 64)
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("converting %s to an integer: %w", t, err)
		}
		return n, nil
	case nil:
		return 0, fmt.Errorf("converting NULL to an integer is unsupported")
	}
	return 0, fmt.Errorf("converting %T to an integer is unsupported", src)
}

// asText is a string or []byte column value as a string.
func asText(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}
