package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shelfmark/shelfmark"
)

// liveRows waits until PostgreSQL's counters show at least n live rows in
// the schema's table (a backend reports its counts some seconds after its
// commit at the latest).
func liveRows(t *testing.T, schema, table string, n int64) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		var live int64
		if err := adminPool(t).QueryRow(ctx, `SELECT n_live_tup FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2`,
			schema, table).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s.%s: %d live rows counted after a minute, want %d", schema, table, live, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// executeBuffers runs the statement prepared as name on conn under EXPLAIN
// (ANALYZE, BUFFERS) with the plan the connection would use (the cached
// generic one, once chosen) and returns the buffers it touched.
func executeBuffers(t *testing.T, conn *pgxpool.Conn, name, arg string) int64 {
	t.Helper()
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := conn.QueryRow(context.Background(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "+name+"('"+arg+"')").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	hit, _ := plan[0].Plan["Shared Hit Blocks"].(float64)
	read, _ := plan[0].Plan["Shared Read Blocks"].(float64)
	return int64(hit + read)
}

// TestAnalyzeGrownReplansCachedStatements: a statement prepared while
// resources held a few rows keeps a plan that reads every row of
// resources once the table has grown (PostgreSQL plans a prepared
// statement once for all values after five runs); analyzeGrown finds the
// tables that doubled since their statistics were gathered, analyses them,
// and the same prepared statement is planned again for the table's size.
// A table that has not doubled again is left alone, and a second process
// finds the work taken while one holds it.
func TestAnalyzeGrownReplansCachedStatements(t *testing.T) {
	db, schema := openTest(t, Options{})
	db.stats.stop() // the test runs the analyses itself
	ctx := context.Background()
	// nor may autovacuum analyse them on its round, which may come while
	// the test waits for the counters
	for _, table := range []string{"resources", "memberships"} {
		if _, err := adminPool(t).Exec(ctx, "ALTER TABLE "+schema+"."+table+" SET (autovacuum_enabled = false)"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := db.analyzeGrown(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a new schema: analysed %v, %v; want nothing", got, err)
	}

	// resources 1..10, collection 1 among them; the statement is run six
	// times while they are all there is
	var rows []*shelfmark.ResourceRow
	for k := int64(1); k <= 10; k++ {
		rows = append(rows, row(k, 0, 0))
	}
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, rows) })
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer conn.Exec(ctx, "DEALLOCATE member_of_many")
	if _, err := conn.Exec(ctx, "PREPARE member_of_many(bigint[]) AS "+dialect.MemberOfMany); err != nil {
		t.Fatal(err)
	}
	const keys = "{2001,2002,2003,2004,2005,2006,2007,2008,2009,2010,2011,2012,2013,2014,2015,2016,2017,2018,2019,2020}"
	for range 6 {
		if _, err := conn.Exec(ctx, "EXECUTE member_of_many('"+keys+"')"); err != nil {
			t.Fatal(err)
		}
	}

	// then 5,000 works, 400 of them members of collection 1
	const n = 5000
	rows = rows[:0]
	var ms []shelfmark.Membership
	for k := int64(11); k <= n; k++ {
		rows = append(rows, row(k, 0, 0))
		if k > 2000 && k <= 2400 {
			ms = append(ms, shelfmark.Membership{Collection: 1, Member: k})
		}
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(tx.InsertResources(ctx, rows), tx.InsertMemberships(ctx, ms))
	})
	liveRows(t, schema, "resources", n)
	liveRows(t, schema, "memberships", int64(len(ms)))
	before := executeBuffers(t, conn, "member_of_many", keys)

	// another process holding the work: nothing is done here
	other, err := adminPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", statsLockClass, schema); err != nil {
		t.Fatal(err)
	}
	if got, err := db.analyzeGrown(ctx); err != nil || len(got) != 0 {
		t.Errorf("while another process holds the lock: analysed %v, %v; want nothing", got, err)
	}
	if err := other.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := db.analyzeGrown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memberships", "resources"} {
		if !slices.Contains(got, want) {
			t.Errorf("analysed %v; want %s among them", got, want)
		}
	}
	after := executeBuffers(t, conn, "member_of_many", keys)
	t.Logf("the collections of 20 works among %d: %d buffers with the plan made at 10 rows, %d once analysed", n, before, after)
	// twenty index probes into memberships and as many into resources'
	// primary key, a few buffers each; the plan of 10 rows probes
	// memberships once per row of resources
	if after > 200 {
		t.Errorf("after the analysis the statement touches %d buffers for 20 works: it still grows with the table", after)
	}
	if before < 4*after {
		t.Errorf("before the analysis the statement touched %d buffers, after it %d: the test did not catch the plan of the empty table", before, after)
	}

	// not doubled since: nothing to do
	if got, err := db.analyzeGrown(ctx); err != nil || len(got) != 0 {
		t.Errorf("no table doubled: analysed %v, %v; want nothing", got, err)
	}
}
