package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// TestRowScannerAsDatabaseSQL: for every kind of value SQLite returns and
// every destination rowScanner converts itself, it fills the destination
// exactly as database/sql does, and fails where database/sql fails; and
// one scanner reads row after row of different columns.
func TestRowScannerAsDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "scan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	values := []string{"0", "-5", "1099511627776", "9223372036854775807", "'12'", "' 12'", "'1.5'", "1.5", "2.0", "1e300",
		"NULL", "'abc'", "''", "x'3132'", "x''", "CAST('7' AS BLOB)"}
	dests := map[string]func() (any, func() string){
		"int64": func() (any, func() string) {
			var v int64
			return &v, func() string { return fmt.Sprint(v) }
		},
		"int": func() (any, func() string) {
			var v int
			return &v, func() string { return fmt.Sprint(v) }
		},
		"float64": func() (any, func() string) {
			var v float64
			return &v, func() string { return fmt.Sprint(v) }
		},
		"*string": func() (any, func() string) {
			var v *string
			return &v, func() string {
				if v == nil {
					return "nil"
				}
				return fmt.Sprintf("%q", *v)
			}
		},
	}
	for _, value := range values {
		for name, dest := range dests {
			// database/sql, directly
			want, wantShow := dest()
			wantErr := db.read.QueryRowContext(ctx, "SELECT "+value).Scan(want)
			// rowScanner, after a row of another shape
			got, gotShow := dest()
			rows, err := db.read.QueryContext(ctx, "SELECT 1, 'x' UNION ALL SELECT "+value+", 'y'")
			if err != nil {
				t.Fatal(err)
			}
			rs := &rowScanner{rows: rows}
			var first int64
			var s string
			rows.Next()
			if err := rs.Scan(&first, &s); err != nil || first != 1 || s != "x" {
				t.Fatalf("the first row: %d %q %v", first, s, err)
			}
			rows.Next()
			gotErr := rs.Scan(got, &s)
			rows.Close()
			if (gotErr != nil) != (wantErr != nil) {
				t.Errorf("%s into %s: error %v, database/sql's %v", value, name, gotErr, wantErr)
				continue
			}
			if wantErr == nil && gotShow() != wantShow() {
				t.Errorf("%s into %s: %s, database/sql's %s", value, name, gotShow(), wantShow())
			}
		}
	}
}
