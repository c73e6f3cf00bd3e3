package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark"
)

// TestPlannedOnce: a cached statement is compiled once, whatever values
// are bound to it later. SQLite otherwise compiles a statement again on
// every bind of a value its plan looked at: a bound LIMIT (which it reads
// as a constant), a value a partial index's condition is compared with;
// the search statement was then compiled on every search, about a
// millisecond of each. The connections' query planner stability guarantee
// (rank.c) turns that off; SQLite's authorizer, called for every table,
// column and function a compilation reads, counts the compilations after
// the first execution.
func TestPlannedOnce(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "once.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	docs := []shelfmark.SearchDoc{{Key: 1, Work: 1, Kind: shelfmark.KindWork, Title: "kelp a"}, {Key: 2, Work: 2, Kind: shelfmark.KindWork, Title: "kelp b"}}
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	search := func(n int) (string, []any) {
		q := shelfmark.SearchQuery{Text: "kelp", Now: now, Facets: true, Group: true}
		return dialect.SearchSQL(&q, ftsMatch{expr: `"kelp"`, mark: `"kelp"`}, 0, nil, n, true)
	}
	query, at21 := search(21)
	_, at11 := search(11)
	_, at1 := search(1)
	conn, err := db.read.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c := dc.(*sqlite3.SQLiteConn)
		compiled := 0
		c.RegisterAuthorizer(func(int, string, string, string) int { compiled++; return sqlite3.SQLITE_OK })
		defer c.RegisterAuthorizer(nil)
		for _, s := range []struct {
			name  string
			query string
			args  [][]any
		}{
			{"children", dialect.Resources.Children, [][]any{{int64(1), int64(0), int64(10)}, {int64(2), int64(5), int64(1000)}, {int64(1), int64(0), int64(1)}}},
			{"search", query, [][]any{at21, at11, at1, at21}},
		} {
			st, err := c.Prepare(s.query)
			if err != nil {
				return err
			}
			if compiled == 0 {
				t.Fatalf("%s: the authorizer counted no compilation", s.name)
			}
			for i, args := range s.args {
				before := compiled
				if err := drain(ctx, st.(driver.StmtQueryContext), args); err != nil {
					return err
				}
				// the first execution may compile FTS5's own statements
				// on its shadow tables, once a connection
				if i > 0 && compiled != before {
					t.Errorf("%s: compiled again at execution %d, with %v bound", s.name, i+1, args)
				}
			}
			st.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// drain runs st with args and reads every row.
func drain(ctx context.Context, st driver.StmtQueryContext, args []any) error {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	rows, err := st.QueryContext(ctx, named)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
