package postgres

// Tests run against a real PostgreSQL server named by
// SHELFMARK_TEST_DATABASE_URL (scripts/postgres.sh start; export
// SHELFMARK_TEST_DATABASE_URL=$(scripts/postgres.sh url)). Each test gets a
// schema of its own, named on the connection's search_path, and drops it
// when it ends.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/storagetest"
)

const dsnEnv = "SHELFMARK_TEST_DATABASE_URL"

var (
	adminOnce sync.Once
	admin     *pgxpool.Pool
	adminErr  error
	schemaSeq atomic.Int64
)

// adminPool connects to the test database for setting up and inspecting
// schemas (outside the code under test).
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("%s is not set: run scripts/postgres.sh start and export %s=$(scripts/postgres.sh url)", dsnEnv, dsnEnv)
	}
	adminOnce.Do(func() {
		admin, adminErr = pgxpool.New(context.Background(), dsn)
		if adminErr == nil {
			adminErr = admin.Ping(context.Background())
		}
	})
	if adminErr != nil {
		t.Fatalf("connect to %s: %v", dsnEnv, adminErr)
	}
	return admin
}

// withSearchPath returns dsn with the schema as its search_path.
func withSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " search_path=" + schema
}

// testSchema creates an empty schema for one test, dropped at its end, and
// returns a DSN whose search_path is that schema.
func testSchema(t testing.TB) (dsn, schema string) {
	t.Helper()
	pool := adminPool(t)
	schema = fmt.Sprintf("t%d_%d_%d", os.Getpid(), schemaSeq.Add(1), rand.IntN(1e6))
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(os.Getenv(dsnEnv), schema), schema
}

// openTest opens a DB on a fresh schema; it is closed when the test ends.
func openTest(t testing.TB, opts Options) (*DB, string) {
	t.Helper()
	dsn, schema := testSchema(t)
	db, err := Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, schema
}

// TestSessionDefaults: the pool's sessions run with jit off (a search
// whose estimate grows with the table would otherwise be compiled on every
// call), unless the connection string sets jit itself.
func TestSessionDefaults(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	var jit string
	if err := db.pool.QueryRow(ctx, "SHOW jit").Scan(&jit); err != nil || jit != "off" {
		t.Errorf("jit %q (%v), want off", jit, err)
	}
	dsn, _ := testSchema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("jit", "on")
	u.RawQuery = q.Encode()
	own, err := Open(ctx, u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.pool.QueryRow(ctx, "SHOW jit").Scan(&jit); err != nil || jit != "on" {
		t.Errorf("with jit=on in the connection string: jit %q (%v), want on", jit, err)
	}
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage {
		dsn, _ := testSchema(t)
		db, err := Open(context.Background(), dsn, Options{Tracer: tracer})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

// tracer records statements.
type tracer struct {
	mu    sync.Mutex
	calls []string
	rows  []int64
}

func (tr *tracer) trace(q string, rows int64) {
	tr.mu.Lock()
	tr.calls = append(tr.calls, q)
	tr.rows = append(tr.rows, rows)
	tr.mu.Unlock()
}

func (tr *tracer) reset() {
	tr.mu.Lock()
	tr.calls, tr.rows = nil, nil
	tr.mu.Unlock()
}

func (tr *tracer) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.calls)
}

func update(t testing.TB, db *DB, fn func(tx shelfmark.WriteTx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func view(t testing.TB, db *DB, fn func(tx shelfmark.ReadTx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 123456000, time.UTC)

func row(key, parent, position int64) *shelfmark.ResourceRow {
	return &shelfmark.ResourceRow{Key: key, Kind: shelfmark.KindWork, Visibility: shelfmark.Public,
		Parent: parent, Position: position, Version: 1, Seq: 1, Created: t0, Modified: t0,
		Effective: shelfmark.Access{Visibility: shelfmark.Public}}
}

// stopTickers stops db's own upkeep (the horizon's advance, the analysis
// of grown tables), which borrows a pooled connection now and then, for a
// test that counts the connections in use.
func stopTickers(db *DB) {
	db.horizon.stop()
	db.stats.stop()
}

func TestBackendAndStats(t *testing.T) {
	db, _ := openTest(t, Options{MaxConns: 5})
	stopTickers(db)
	if db.Backend() != "postgres" {
		t.Fatal(db.Backend())
	}
	if s := db.Stats(); s.MaxOpen != 5 || s.InUse != 0 {
		t.Fatalf("stats %+v", s)
	}
	view(t, db, func(shelfmark.ReadTx) error {
		if s := db.Stats(); s.InUse != 1 {
			t.Errorf("in use during View: %+v", s)
		}
		return nil
	})
	db2, _ := openTest(t, Options{})
	if got, want := db2.Stats().MaxOpen, DefaultMaxConns(); got != want || want < 8 {
		t.Fatalf("default MaxOpen %d, want %d (>= 8)", got, want)
	}
}

func TestResourceRoundTrip(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	embargo := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.FixedZone("x", 3600))
	deleted := t0.Add(time.Hour)
	lease := embargo.Add(time.Hour)
	full := &shelfmark.ResourceRow{Key: 7, Kind: shelfmark.KindFileSet, Visibility: shelfmark.Authenticated,
		Embargo: &embargo, Parent: 3, Position: 2, Version: 4, Seq: 9, Created: t0, Modified: t0.Add(time.Second), Deleted: &deleted,
		Source: 5, Effective: shelfmark.Access{Visibility: shelfmark.Private, Embargo: &embargo, Lease: &lease}}
	bare := &shelfmark.ResourceRow{Key: 3, Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Version: 1, Seq: 1, Created: t0, Modified: t0}
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, []*shelfmark.ResourceRow{full, bare}) })
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, err := tx.Resource(ctx, 7)
		if err != nil {
			return err
		}
		if got.Embargo == nil || !got.Embargo.Equal(embargo) || got.Embargo.Location() != time.UTC {
			t.Errorf("embargo %v", got.Embargo)
		}
		if got.Deleted == nil || !got.Deleted.Equal(deleted) {
			t.Errorf("deleted %v", got.Deleted)
		}
		if !got.Effective.Equal(full.Effective) {
			t.Errorf("effective access %+v, want %+v", got.Effective, full.Effective)
		}
		g, w := *got, *full
		g.Embargo, g.Deleted, w.Embargo, w.Deleted = nil, nil, nil, nil
		g.Effective, w.Effective = shelfmark.Access{}, shelfmark.Access{}
		if g != w {
			t.Errorf("got %+v\nwant %+v", g, w)
		}
		got, err = tx.Resource(ctx, 3)
		if err != nil {
			return err
		}
		if got.Parent != 0 || got.Position != 0 || got.Embargo != nil || got.Deleted != nil || got.Kind != shelfmark.KindWork {
			t.Errorf("bare row %+v", got)
		}
		if missing, err := tx.Resource(ctx, 99); missing != nil || err != nil {
			t.Errorf("missing: %v, %v", missing, err)
		}
		rows, err := tx.Resources(ctx, []int64{99, 7, 3})
		if err != nil {
			return err
		}
		if len(rows) != 2 {
			t.Errorf("Resources: %d rows", len(rows))
		}
		if f, err := tx.File(ctx, 7); f != nil || err != nil {
			t.Errorf("File of a non-file: %v, %v", f, err)
		}
		return nil
	})
	// UpdateResource writes the mutable fields only.
	upd := *full
	upd.Visibility, upd.Embargo, upd.Deleted, upd.Version, upd.Seq = shelfmark.Private, nil, nil, 5, 10
	upd.Modified = t0.Add(2 * time.Second)
	upd.Kind, upd.Parent, upd.Position, upd.Created = shelfmark.KindFile, 0, 0, t0.Add(time.Hour)
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.UpdateResource(ctx, &upd) })
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, _ := tx.Resource(ctx, 7)
		if got.Visibility != shelfmark.Private || got.Embargo != nil || got.Deleted != nil || got.Version != 5 || got.Seq != 10 ||
			!got.Modified.Equal(upd.Modified) || got.Kind != shelfmark.KindFileSet || got.Parent != 3 || got.Position != 2 || !got.Created.Equal(t0) {
			t.Errorf("after update %+v", got)
		}
		return nil
	})
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.UpdateResource(ctx, row(1234, 0, 0)) })
	if shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("update of a missing row: %v", err)
	}
}

// TestFields: PutFields upserts and deletes in at most two statements,
// Fields reads them back sorted by predicate, filtered when asked.
func TestFields(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	dc := shelfmark.NSDC
	title := shelfmark.Field{Predicate: dc + "title", Objects: []shelfmark.Term{
		shelfmark.NewLiteral("B"), shelfmark.NewLangLiteral("A", "de"), shelfmark.NewLiteral("‘unicode’ \"quoted\"\nline\tß😀")}}
	subject := shelfmark.Field{Predicate: dc + "subject", Objects: []shelfmark.Term{shelfmark.NewIRI("http://example.org/s")}}
	date := shelfmark.Field{Predicate: dc + "date", Objects: []shelfmark.Term{shelfmark.NewTypedLiteral("1923", "http://www.w3.org/2001/XMLSchema#gYear")}}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{1, 1, 1, 2}, []shelfmark.Field{title, subject, date, title})
	})
	if tr.count() != 1 {
		t.Fatalf("one PutFields call ran %d statements: %v", tr.count(), tr.calls)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, err := tx.Fields(ctx, 1)
		if err != nil {
			return err
		}
		if want := []shelfmark.Field{date, subject, title}; !reflect.DeepEqual(got, want) {
			t.Errorf("fields\n got %v\nwant %v", got, want)
		}
		got, err = tx.Fields(ctx, 1, dc+"title", dc+"date", dc+"absent")
		if err != nil {
			return err
		}
		if want := []shelfmark.Field{date, title}; !reflect.DeepEqual(got, want) {
			t.Errorf("filtered\n got %v\nwant %v", got, want)
		}
		if got, _ := tx.Fields(ctx, 3); len(got) != 0 {
			t.Errorf("fields of nothing: %v", got)
		}
		return nil
	})
	// replace one field and delete another in one call: two statements
	newTitle := shelfmark.Field{Predicate: dc + "title", Objects: []shelfmark.Term{shelfmark.NewLiteral("C")}}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{1, 1}, []shelfmark.Field{newTitle, {Predicate: dc + "subject"}})
	})
	if tr.count() != 2 || tr.rows[0] != 1 || tr.rows[1] != 1 {
		t.Fatalf("replace+delete ran %v rows %v", tr.calls, tr.rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, _ := tx.Fields(ctx, 1)
		if want := []shelfmark.Field{date, newTitle}; !reflect.DeepEqual(got, want) {
			t.Errorf("after replace\n got %v\nwant %v", got, want)
		}
		if got, _ := tx.Fields(ctx, 2); !reflect.DeepEqual(got, []shelfmark.Field{title}) {
			t.Errorf("another resource's fields changed: %v", got)
		}
		return nil
	})
}

// TestEmptyInputSendsNothing: no statement at all for empty slices.
func TestEmptyInputSendsNothing(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(
			tx.InsertResources(ctx, nil),
			tx.PutFields(ctx, nil, nil),
			tx.InsertMemberships(ctx, nil),
			tx.DeleteMemberships(ctx, []shelfmark.Membership{}),
			tx.InsertFiles(ctx, nil, nil),
			func() error { _, err := tx.Resources(ctx, nil); return err }(),
			func() error { _, err := tx.Members(ctx, 1, 0, 0); return err }(),
		)
	})
	if tr.count() != 0 {
		t.Fatalf("empty input ran %v", tr.calls)
	}
}

func TestMemberships(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	// collections 10, 11, 12 (12 deleted); works 1..5
	var rows []*shelfmark.ResourceRow
	for k := int64(1); k <= 5; k++ {
		rows = append(rows, row(k, 0, 0))
	}
	for k := int64(10); k <= 12; k++ {
		r := row(k, 0, 0)
		r.Kind = shelfmark.KindCollection
		rows = append(rows, r)
	}
	d := t0
	rows[len(rows)-1].Deleted = &d
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, rows) })
	var ms []shelfmark.Membership
	for k := int64(5); k >= 1; k-- {
		ms = append(ms, shelfmark.Membership{Collection: 10, Member: k})
	}
	ms = append(ms, shelfmark.Membership{Collection: 12, Member: 1}, shelfmark.Membership{Collection: 11, Member: 1}, shelfmark.Membership{Collection: 11, Member: 1})
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertMemberships(ctx, ms); err != nil {
			return err
		}
		return tx.InsertMemberships(ctx, ms[:3]) // existing edges are ignored
	})
	if tr.count() != 2 || tr.rows[0] != 7 || tr.rows[1] != 0 {
		t.Fatalf("inserts: %v %v", tr.calls, tr.rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, err := tx.MemberOf(ctx, 1)
		if err != nil {
			return err
		}
		if !slices.Equal(got, []int64{10, 11}) {
			t.Errorf("MemberOf(1) = %v", got)
		}
		page, err := tx.Members(ctx, 10, 0, 2)
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].Key != 1 || page[1].Key != 2 {
			t.Errorf("page 1: %v", page)
		}
		page, _ = tx.Members(ctx, 10, 2, 10)
		if len(page) != 3 || page[0].Key != 3 || page[2].Key != 5 {
			t.Errorf("page 2: %v", page)
		}
		return nil
	})
	// a deleted member is not listed
	update(t, db, func(tx shelfmark.WriteTx) error {
		r := row(3, 0, 0)
		r.Deleted = &d
		if err := tx.UpdateResource(ctx, r); err != nil {
			return err
		}
		return tx.DeleteMemberships(ctx, []shelfmark.Membership{{Collection: 10, Member: 5}, {Collection: 10, Member: 99}})
	})
	view(t, db, func(tx shelfmark.ReadTx) error {
		page, _ := tx.Members(ctx, 10, 0, 10)
		var keys []int64
		for _, r := range page {
			keys = append(keys, r.Key)
		}
		if !slices.Equal(keys, []int64{1, 2, 4}) {
			t.Errorf("members after delete: %v", keys)
		}
		return nil
	})
}

// pageBuffers returns the buffers (pages of tables and indexes) that one
// execution of query touches, with the plan PostgreSQL would use: custom
// (planned for these values) or generic (as a cached prepared statement is,
// after a few executions).
func pageBuffers(t *testing.T, schema, mode, query string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := adminPool(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer conn.Exec(ctx, "DEALLOCATE page; RESET search_path; RESET plan_cache_mode")
	if _, err := conn.Exec(ctx, "SET search_path TO "+schema+"; SET plan_cache_mode = "+mode+"; PREPARE page AS "+query); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE page("+placeholders(args)+")").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SHELFMARK_PG_SHOW_PLANS") != "" {
		b, _ := json.MarshalIndent(plan, "", " ")
		t.Logf("%s", b)
	}
	hit, _ := plan[0].Plan["Shared Hit Blocks"].(float64)
	read, _ := plan[0].Plan["Shared Read Blocks"].(float64)
	return int64(hit + read)
}

func placeholders(args []any) string {
	var p []string
	for _, a := range args {
		p = append(p, fmt.Sprint(a))
	}
	return strings.Join(p, ", ")
}

// TestPageCostFlat: a page of members (keyset over the memberships primary
// key) and a page of children (over the (parent, position) index) touch as
// many buffers deep in a large list as on its first page, with custom and
// generic plans (rules R1, R2, R11).
func TestPageCostFlat(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	const n = 40000
	// resources 2..n+1; collection 1 holds the even ones, collection 100000
	// holds all; resource 200000 has n/2 ordered children.
	var rows []*shelfmark.ResourceRow
	var ms []shelfmark.Membership
	for k := int64(2); k <= n+1; k++ {
		rows = append(rows, row(k, 0, 0))
		if k%2 == 0 {
			ms = append(ms, shelfmark.Membership{Collection: 1, Member: k})
		}
		ms = append(ms, shelfmark.Membership{Collection: 100000, Member: k})
	}
	rows = append(rows, row(200000, 0, 0))
	for i := int64(1); i <= n/2; i++ {
		rows = append(rows, row(200000+i, 200000, i))
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(tx.InsertResources(ctx, rows), tx.InsertMemberships(ctx, ms))
	})
	if _, err := adminPool(t).Exec(ctx, "ANALYZE "+schema+".memberships, "+schema+".resources"); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		for _, c := range []struct {
			name        string
			query       string
			owner, deep int64
		}{
			{"members", membersSQL, 1, n - 100},
			{"members of the larger collection", membersSQL, 100000, n - 100},
			{"children", childrenSQL, 200000, n/2 - 100},
		} {
			// The planner may join a page by merge join (about one buffer per
			// few rows) or by one index probe per row (about three buffers
			// per row): both are bounded by the page size, never by depth.
			const limit = 50
			first := pageBuffers(t, schema, mode, c.query, c.owner, 0, limit)
			deep := pageBuffers(t, schema, mode, c.query, c.owner, c.deep, limit)
			t.Logf("%s, %s: page 1 touches %d buffers, a page at depth %d touches %d", c.name, mode, first, c.deep, deep)
			if bound := int64(3*limit + 20); first > bound || deep > bound {
				t.Errorf("%s, %s: pages of %d touch %d (page 1) and %d (deep) buffers; more than %d grows with the list",
					c.name, mode, limit, first, deep, bound)
			}
		}
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		page, err := tx.Members(ctx, 1, n-10, 3)
		if err != nil {
			return err
		}
		if len(page) != 3 || page[0].Key != n-8 {
			t.Errorf("deep page %v", page)
		}
		return nil
	})
}

func childKeys(t testing.TB, db *DB, parent int64) (keys, positions []int64) {
	t.Helper()
	view(t, db, func(tx shelfmark.ReadTx) error {
		rows, err := tx.Children(context.Background(), parent, 0, 1000)
		for _, r := range rows {
			keys = append(keys, r.Key)
			positions = append(positions, r.Position)
		}
		return err
	})
	return keys, positions
}

func TestChildrenAndSetPositions(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	const base = shelfmark.UnorderedBase
	rows := []*shelfmark.ResourceRow{row(1, 0, 0), row(50, 0, 0)}
	for k := int64(2); k <= 6; k++ {
		rows = append(rows, row(k, 1, base+k))
	}
	rows = append(rows, row(51, 50, base+51))
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, rows) })
	if keys, _ := childKeys(t, db, 1); !slices.Equal(keys, []int64{2, 3, 4, 5, 6}) {
		t.Fatalf("unordered children by key: %v", keys)
	}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.SetPositions(ctx, 1, []int64{5, 3, 6}) })
	if tr.count() != 1 {
		t.Fatalf("SetPositions ran %v", tr.calls)
	}
	keys, pos := childKeys(t, db, 1)
	if !slices.Equal(keys, []int64{5, 3, 6, 2, 4}) || !slices.Equal(pos, []int64{1, 2, 3, base + 2, base + 4}) {
		t.Fatalf("after order: %v %v", keys, pos)
	}
	// a new order: 3 leaves it and becomes unordered; 2 joins; 51 (another
	// parent's child) is ignored
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.SetPositions(ctx, 1, []int64{2, 6, 5, 51}) })
	if tr.count() != 1 || tr.rows[0] != 4 {
		t.Fatalf("reorder: %v rows %v (want 4 rows written: 2, 6, 5, 3)", tr.calls, tr.rows)
	}
	keys, pos = childKeys(t, db, 1)
	if !slices.Equal(keys, []int64{2, 6, 5, 3, 4}) || !slices.Equal(pos, []int64{1, 2, 3, base + 3, base + 4}) {
		t.Fatalf("after reorder: %v %v", keys, pos)
	}
	if k, p := childKeys(t, db, 50); !slices.Equal(k, []int64{51}) || p[0] != base+51 {
		t.Fatalf("other parent's child moved: %v %v", k, p)
	}
	// the same order again writes nothing; versions never change
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.SetPositions(ctx, 1, []int64{2, 6, 5}) })
	if tr.rows[0] != 0 {
		t.Fatalf("same order wrote %d rows", tr.rows[0])
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		rs, _ := tx.Resources(ctx, []int64{1, 2, 3, 4, 5, 6})
		for _, r := range rs {
			if r.Version != 1 || r.Seq != 1 {
				t.Errorf("SetPositions changed %d: %+v", r.Key, r)
			}
		}
		// Children pages by position
		page, err := tx.Children(ctx, 1, 2, 2)
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].Key != 5 || page[1].Key != 3 {
			t.Errorf("children after 2: %v", page)
		}
		return nil
	})
	// no order: everyone unordered
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.SetPositions(ctx, 1, nil) })
	keys, pos = childKeys(t, db, 1)
	if !slices.Equal(keys, []int64{2, 3, 4, 5, 6}) || pos[0] != base+2 {
		t.Fatalf("after clearing: %v %v", keys, pos)
	}
	// deleted children are not listed
	update(t, db, func(tx shelfmark.WriteTx) error {
		r := row(4, 1, base+4)
		d := t0
		r.Deleted = &d
		return tx.UpdateResource(ctx, r)
	})
	if keys, _ := childKeys(t, db, 1); slices.Contains(keys, 4) {
		t.Fatalf("deleted child listed: %v", keys)
	}
}

// TestSetPositionsStatementsFixed: ordering 10 or 1,200 children sends the
// same single statement.
func TestSetPositionsStatementsFixed(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	for _, n := range []int{10, 1200} {
		parent := int64(n * 10000)
		rows := []*shelfmark.ResourceRow{row(parent, 0, 0)}
		var kids []int64
		for i := 1; i <= n; i++ {
			k := parent + int64(i)
			rows = append(rows, row(k, parent, shelfmark.UnorderedBase+k))
			kids = append(kids, k)
		}
		update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, rows) })
		slices.Reverse(kids)
		tr.reset()
		start := time.Now()
		update(t, db, func(tx shelfmark.WriteTx) error { return tx.SetPositions(ctx, parent, kids) })
		t.Logf("order %d children: %v, %d statement(s), %d rows", n, time.Since(start), tr.count(), tr.rows[0])
		if tr.count() != 1 || tr.rows[0] != int64(n) {
			t.Fatalf("order %d: %v %v", n, tr.calls, tr.rows)
		}
		keys, _ := childKeys(t, db, parent)
		if !slices.Equal(keys[:min(n, 1000)], kids[:min(n, 1000)]) {
			t.Fatalf("order %d not applied", n)
		}
	}
}

func TestTombstone(t *testing.T) {
	tr := &tracer{}
	db, schema := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	// 1 -> 2 -> 4, 1 -> 3 (3 already deleted) -> 5 ; 6 unrelated; collection 9
	earlier := t0.Add(-time.Hour)
	rows := []*shelfmark.ResourceRow{row(1, 0, 0), row(2, 1, 1), row(3, 1, 2), row(4, 2, 1), row(5, 3, 1), row(6, 0, 0), row(9, 0, 0)}
	rows[2].Deleted = &earlier
	rows[4].Deleted = &earlier
	var keys []int64
	var fields []shelfmark.Field
	for _, k := range []int64{1, 2, 4, 6} {
		keys = append(keys, k, k)
		fields = append(fields, shelfmark.Field{Predicate: "p", Objects: []shelfmark.Term{shelfmark.NewLiteral("a")}},
			shelfmark.Field{Predicate: "q", Objects: []shelfmark.Term{shelfmark.NewLiteral("b")}})
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(
			tx.InsertResources(ctx, rows),
			tx.PutFields(ctx, keys, fields),
			// 1 is a member of 9 and 6 is a member of 1 (1 as collection)
			tx.InsertMemberships(ctx, []shelfmark.Membership{{Collection: 9, Member: 1}, {Collection: 9, Member: 2}, {Collection: 1, Member: 6}}),
		)
	})
	at := t0.Add(time.Hour)
	var n int64
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		var err error
		n, err = tx.Tombstone(ctx, 1, 77, at)
		return err
	})
	if n != 3 {
		t.Fatalf("marked %d, want 3 (1, 2, 4)", n)
	}
	if tr.count() != 1 {
		t.Fatalf("tombstone ran %v", tr.calls)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		rs, err := tx.Resources(ctx, []int64{1, 2, 3, 4, 5, 6})
		if err != nil {
			return err
		}
		for _, r := range rs {
			switch r.Key {
			case 1, 2, 4:
				if r.Deleted == nil || !r.Deleted.Equal(at) || r.Seq != 77 || r.Version != 2 || !r.Modified.Equal(at) {
					t.Errorf("%d not marked: %+v", r.Key, r)
				}
			case 3, 5:
				if !r.Deleted.Equal(earlier) || r.Seq != 1 || r.Version != 1 {
					t.Errorf("already deleted %d changed: %+v", r.Key, r)
				}
			case 6:
				if r.Deleted != nil {
					t.Errorf("6 marked")
				}
			}
		}
		for _, k := range []int64{1, 2, 4} {
			if s, _ := tx.Fields(ctx, k); len(s) != 0 {
				t.Errorf("fields of %d kept: %v", k, s)
			}
		}
		if s, _ := tx.Fields(ctx, 6); len(s) != 2 {
			t.Errorf("fields of 6: %v", s)
		}
		if page, _ := tx.Members(ctx, 9, 0, 10); len(page) != 0 {
			t.Errorf("members of 9: %v", page)
		}
		// 6 stays a member of 1 in the table, but 1 is no live collection
		if got, _ := tx.MemberOf(ctx, 6); len(got) != 0 {
			t.Errorf("MemberOf(6) = %v", got)
		}
		return nil
	})
	// the edge where 1 is the collection stays (reads filter it out)
	var edges int
	if err := adminPool(t).QueryRow(ctx, `SELECT count(*) FROM `+schema+`.memberships`).Scan(&edges); err != nil || edges != 1 {
		t.Fatalf("%d memberships left (want 1: 6 in 1), %v", edges, err)
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		var err error
		n, err = tx.Tombstone(ctx, 1, 78, at)
		return err
	})
	if n != 0 {
		t.Fatalf("tombstoning a tombstone marked %d", n)
	}
}

func TestFiles(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	ctx := context.Background()
	files := []*shelfmark.File{
		{Name: "page1.tif", MediaType: "image/tiff", Size: 1234, SHA256: "ab", SHA512: "cd", MD5: "ef", Use: "original"},
		{Name: "ext.pdf", MediaType: "application/pdf", Size: -1, Use: "original", ExternalURL: "https://example.org/x.pdf"},
	}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertFiles(ctx, []int64{4, 5}, files) })
	if tr.count() != 1 || tr.rows[0] != 2 {
		t.Fatalf("InsertFiles ran %v %v", tr.calls, tr.rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		for i, k := range []int64{4, 5} {
			f, err := tx.File(ctx, k)
			if err != nil {
				return err
			}
			if f == nil || *f != *files[i] {
				t.Errorf("file %d = %+v", k, f)
			}
		}
		if f, err := tx.File(ctx, 6); f != nil || err != nil {
			t.Errorf("missing file: %v %v", f, err)
		}
		return nil
	})
}

// TestUpdateErrorRollsBack: fn's error comes back unchanged and nothing of
// the transaction stays.
func TestUpdateErrorRollsBack(t *testing.T) {
	db, _ := openTest(t, Options{})
	stopTickers(db)
	ctx := context.Background()
	want := shelfmark.Errorf(shelfmark.ECONFLICT, "no")
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}); err != nil {
			return err
		}
		if _, err := tx.NextSeq(ctx, 5); err != nil {
			return err
		}
		return want
	})
	if err != want { //nolint:errorlint // the very same value
		t.Fatalf("Update returned %v, want fn's error itself", err)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		if r, _ := tx.Resource(ctx, 1); r != nil {
			t.Error("rolled-back row visible")
		}
		return nil
	})
	// the numbers a rolled-back transaction took are a gap: the next is
	// after them, and the horizon passes them once the claim is gone
	update(t, db, func(tx shelfmark.WriteTx) error {
		seq, err := tx.NextSeq(ctx, 1)
		if seq != 6 {
			t.Errorf("seq after rollback = %d, want 6", seq)
		}
		return err
	})
	if h := horizonOf(t, db); h != 6 {
		t.Errorf("horizon after the rolled-back claim and a commit = %d, want 6", h)
	}
	// a panic in fn rolls back and releases the connection
	func() {
		defer func() { _ = recover() }()
		_ = db.Update(ctx, func(tx shelfmark.WriteTx) error { panic("boom") })
	}()
	if s := db.Stats(); s.InUse != 0 {
		t.Fatalf("connection leaked after panic: %+v", s)
	}
	update(t, db, func(tx shelfmark.WriteTx) error { _, err := tx.NextSeq(ctx, 1); return err })
	// driver errors are wrapped with context
	err = db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(2, 0, 0), row(2, 0, 0)})
	})
	if err == nil || !strings.Contains(err.Error(), "insert 2 resources") {
		t.Fatalf("duplicate insert: %v", err)
	}
}

// TestViewSnapshot: one View sees one snapshot, and is read-only.
func TestViewSnapshot(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	view(t, db, func(tx shelfmark.ReadTx) error {
		if r, err := tx.Resource(ctx, 1); r != nil || err != nil {
			t.Fatalf("before: %v %v", r, err)
		}
		update(t, db, func(w shelfmark.WriteTx) error { return w.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}) })
		if r, err := tx.Resource(ctx, 1); r != nil || err != nil {
			t.Fatalf("View saw a later commit: %v %v", r, err)
		}
		return nil
	})
	view(t, db, func(tx shelfmark.ReadTx) error {
		if r, _ := tx.Resource(ctx, 1); r == nil {
			t.Fatal("commit not visible to a new View")
		}
		return nil
	})
	err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		_, err := tx.(*readTx).r.exec(ctx, `DELETE FROM resources`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in View: %v", err)
	}
}

func TestRelaxed(t *testing.T) {
	for _, relaxed := range []bool{false, true} {
		db, _ := openTest(t, Options{Relaxed: relaxed})
		ctx := context.Background()
		want := map[bool]string{false: "on", true: "off"}[relaxed]
		update(t, db, func(tx shelfmark.WriteTx) error {
			var got string
			err := tx.(*writeTx).r.queryRow(ctx, `SELECT current_setting('synchronous_commit')`, nil, &got)
			if got != want {
				t.Errorf("relaxed=%v: synchronous_commit in Update = %q", relaxed, got)
			}
			return err
		})
		// outside Update (AllocateKeys) commits stay synchronous
		var got string
		if err := db.run(db.pool).queryRow(ctx, `SELECT current_setting('synchronous_commit')`, nil, &got); err != nil || got != "on" {
			t.Errorf("relaxed=%v: synchronous_commit outside Update = %q, %v", relaxed, got, err)
		}
		if _, err := db.AllocateKeys(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAllocateKeysConcurrent(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	const goroutines, each = 8, 10000
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; len(got[g]) < each; i++ {
				// blocks of 1..40 keys: about 4,000 allocations in all,
				// each a durable commit queued on the counter's row lock
				n := 1 + (i*7+g)%40
				first, err := db.AllocateKeys(ctx, n)
				if err != nil {
					t.Error(err)
					return
				}
				for k := first; k < first+int64(n); k++ {
					got[g] = append(got[g], k)
				}
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	var maxKey int64
	for _, ks := range got {
		for _, k := range ks {
			if seen[k] || k < 1 {
				t.Fatalf("key %d handed out twice (or invalid)", k)
			}
			seen[k] = true
			maxKey = max(maxKey, k)
		}
	}
	if int64(len(seen)) != maxKey {
		t.Fatalf("%d keys up to %d: blocks are not contiguous", len(seen), maxKey)
	}
	if _, err := db.AllocateKeys(ctx, 0); err == nil {
		t.Fatal("AllocateKeys(0) succeeded")
	}
}

// Helper processes: the test binary re-executed with helperEnv set.
const (
	helperEnv    = "SHELFMARK_PG_HELPER"
	helperDSNEnv = "SHELFMARK_PG_HELPER_DSN"
)

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("runs only as a helper process of other tests")
	}
	ctx := context.Background()
	db, err := Open(ctx, os.Getenv(helperDSNEnv), Options{MaxConns: 2})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	defer db.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch mode {
	case "migrate":
		fmt.Fprintln(out, "opened")
	case "mint":
		// 10,000 ids through the engine's minter, in small blocks so the
		// processes allocate from the database many times, concurrently
		m := shelfmark.NewMinter(db, 97)
		for i, total := 0, 0; total < 10000; i++ {
			n := min(1+i%5, 10000-total)
			keys, err := m.Mint(ctx, n)
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				os.Exit(2)
			}
			for _, k := range keys {
				fmt.Fprintln(out, "id", shelfmark.LegacyIDCodec().Encode(k))
			}
			total += n
		}
	}
}

// runHelpers starts n helper processes at once and returns their outputs.
func runHelpers(t *testing.T, n int, mode, dsn string) []string {
	t.Helper()
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDSNEnv+"="+dsn)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("helper %d: %v\n%s", i, err, stderr.String())
			}
			outs[i] = stdout.String()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return outs
}

// TestAllocateKeysProcesses: four processes, each minting 10,000 ids from
// one database (which they also migrate at the same moment), never mint the
// same id twice.
func TestAllocateKeysProcesses(t *testing.T) {
	dsn, _ := testSchema(t)
	outs := runHelpers(t, 4, "mint", dsn)
	seen := map[string]int{}
	for p, out := range outs {
		ids := 0
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) != 2 || f[0] != "id" {
				continue
			}
			if q, dup := seen[f[1]]; dup {
				t.Fatalf("id %s minted by processes %d and %d", f[1], q, p)
			}
			seen[f[1]] = p
			ids++
		}
		if ids != 10000 {
			t.Fatalf("process %d minted %d ids, want 10000:\n%.500s", p, ids, out)
		}
	}
	t.Logf("%d ids in 4 processes, no duplicate", len(seen))
}

// TestMigrations: opening twice applies nothing twice; concurrent opens (in
// goroutines and in processes) of an empty schema all succeed.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	dsn, schema := testSchema(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(ctx, dsn, Options{MaxConns: 2})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	tr := &tracer{}
	db, err := Open(ctx, dsn, Options{Tracer: tr.trace})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, q := range tr.calls {
		if strings.Contains(q, "CREATE TABLE counters") {
			t.Fatal("a migration ran again")
		}
	}
	ms, _ := migrations()
	var n int
	var counters int
	pool := adminPool(t)
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+schema+`.schema_migrations), (SELECT count(*) FROM `+schema+`.counters)`).Scan(&n, &counters); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || counters != 2 {
		t.Fatalf("%d migrations recorded (want %d), %d counters", n, len(ms), counters)
	}
	dsn2, schema2 := testSchema(t)
	for _, out := range runHelpers(t, 4, "migrate", dsn2) {
		if !strings.Contains(out, "opened") {
			t.Fatalf("helper output %q", out)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+schema2+`.schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("processes: %d migrations recorded, %v", n, err)
	}
}

// TestNextSeqCommitOrder: sequence numbers are handed out in commit order.
// Writers take a number, dawdle, then commit a row carrying it; a reader
// that looks at any moment must see the numbers 1..max with no gap, so a
// harvester reading "seq > X" never misses a change committed later with a
// lower number.
func TestNextSeqCommitOrder(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	pool := adminPool(t)
	var stop atomic.Bool
	var checks atomic.Int64
	readerDone := make(chan error, 1)
	go func() {
		for !stop.Load() {
			var n, mx int64
			err := pool.QueryRow(ctx, `SELECT count(*), coalesce(max(seq), 0) FROM `+schema+`.resources`).Scan(&n, &mx)
			if err != nil {
				readerDone <- err
				return
			}
			if n != mx {
				readerDone <- fmt.Errorf("a reader saw %d changes up to seq %d: a lower seq committed later", n, mx)
				return
			}
			checks.Add(1)
		}
		readerDone <- nil
	}()
	const writers, each = 6, 40
	var key atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
					seq, err := tx.NextSeq(ctx, 1)
					if err != nil {
						return err
					}
					time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
					r := row(key.Add(1), 0, 0)
					r.Seq = seq
					return tx.InsertResources(ctx, []*shelfmark.ResourceRow{r})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	var n, mx int64
	if err := pool.QueryRow(ctx, `SELECT count(*), max(seq) FROM `+schema+`.resources`).Scan(&n, &mx); err != nil || n != writers*each || mx != n {
		t.Fatalf("%d rows, max seq %d, %v", n, mx, err)
	}
	t.Logf("%d commits, %d consistent reads", n, checks.Load())
}

// TestNextSeqHeldUntilCommit: a second writer's NextSeq waits until the
// first writer, which took a number, has committed.
func TestNextSeqHeldUntilCommit(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	took := make(chan struct{})
	release := make(chan struct{})
	var firstDone atomic.Bool
	var first int64
	go func() {
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
			var err error
			first, err = tx.NextSeq(ctx, 3)
			close(took)
			<-release
			firstDone.Store(true)
			return err
		}); err != nil {
			t.Error(err)
		}
	}()
	<-took
	done := make(chan int64)
	go func() {
		var s int64
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
			var err error
			s, err = tx.NextSeq(ctx, 1)
			return err
		}); err != nil {
			t.Error(err)
		}
		done <- s
	}()
	select {
	case <-done:
		t.Fatal("second writer got a number while the first still held the counter")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	second := <-done
	if !firstDone.Load() || first != 1 || second != 4 {
		t.Fatalf("first %d, second %d", first, second)
	}
	// readers are not blocked by a writer
	took2, release2 := make(chan struct{}), make(chan struct{})
	writerDone := make(chan error)
	go func() {
		writerDone <- db.Update(ctx, func(tx shelfmark.WriteTx) error {
			_, err := tx.NextSeq(ctx, 1)
			close(took2)
			<-release2
			return err
		})
	}()
	<-took2
	view(t, db, func(tx shelfmark.ReadTx) error { _, err := tx.Resource(ctx, 1); return err })
	close(release2)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

// TestWriterLockPerSchema: a writer holding its schema's writer lock does
// not hold back a writer of another schema of the same database (separate
// repositories, for example the test suites of several packages at once),
// while a second writer of its own schema still waits for it.
func TestWriterLockPerSchema(t *testing.T) {
	a, _ := openTest(t, Options{})
	b, _ := openTest(t, Options{})
	ctx := context.Background()
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- a.Update(ctx, func(tx shelfmark.WriteTx) error {
			_, err := tx.NextSeq(ctx, 1)
			close(holding)
			<-release
			return err
		})
	}()
	<-holding
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	// the other schema writes at once (the bound only ends a test that
	// would otherwise hang)
	bctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.Update(bctx, func(tx shelfmark.WriteTx) error {
		_, err := tx.NextSeq(bctx, 1)
		return err
	}); err != nil {
		t.Fatalf("a writer of another schema: %v; want it not to wait for the first schema's writer", err)
	}
	// the same schema waits: its write cannot start before the holder ends
	second := make(chan int64, 1)
	go func() {
		var s int64
		if err := a.Update(ctx, func(tx shelfmark.WriteTx) error {
			var err error
			s, err = tx.NextSeq(ctx, 1)
			return err
		}); err != nil {
			t.Error(err)
		}
		second <- s
	}()
	select {
	case s := <-second:
		t.Fatalf("a second writer of the same schema took number %d while the first held the lock", s)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if s := <-second; s != 2 {
		t.Fatalf("the second writer of the same schema took number %d, want 2", s)
	}
}

// BenchmarkPutFields16: one Update writing the 16 fields of one
// patent-like record (54 statements), commit included.
func BenchmarkPutFields16(b *testing.B) {
	db, _ := openTest(b, Options{})
	ctx := context.Background()
	fields := make([]shelfmark.Field, 16)
	for i := range fields {
		fields[i] = shelfmark.Field{Predicate: fmt.Sprintf("%sp%02d", shelfmark.NSDC, i)}
		for j := 0; j < 1+i%5*2; j++ {
			fields[i].Objects = append(fields[i].Objects, shelfmark.NewLangLiteral(fmt.Sprintf("note %d about a patent for a better shelfmark", j), "en"))
		}
	}
	keys := make([]int64, len(fields))
	for i := 0; b.Loop(); i++ {
		for j := range keys {
			keys[j] = int64(i + 1)
		}
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutFields(ctx, keys, fields) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// TestLockSQLKeepsPublicKey: in the schema public (a repository whose
// connection string names none) the writers' and the migrations' locks are
// the one-key locks earlier versions took, so servers of both versions
// exclude each other during a rolling upgrade; in any other schema they
// are the schema's two-key locks.
func TestLockSQLKeepsPublicKey(t *testing.T) {
	ctx := context.Background()
	pool := adminPool(t)
	_, schema := testSchema(t)
	for _, c := range []struct {
		schema        string
		key           int64
		class         int32
		wantClassObjs func(classid, objid uint32, sub int16) bool
	}{
		{"public", writerLockKey, writerLockClass, func(classid, objid uint32, sub int16) bool {
			return sub == 1 && uint64(classid)<<32|uint64(objid) == uint64(writerLockKey)
		}},
		{schema, writerLockKey, writerLockClass, func(classid, objid uint32, sub int16) bool {
			return sub == 2 && int32(classid) == writerLockClass
		}},
		{"public", migrateLockKey, migrateLockClass, func(classid, objid uint32, sub int16) bool {
			return sub == 1 && uint64(classid)<<32|uint64(objid) == uint64(migrateLockKey)
		}},
	} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+c.schema); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, lockSQL("pg_advisory_xact_lock", c.key, c.class)); err != nil {
			t.Fatal(err)
		}
		var classid, objid uint32
		var sub int16
		if err := tx.QueryRow(ctx, `SELECT classid::int8, objid::int8, objsubid FROM pg_locks
			WHERE locktype = 'advisory' AND pid = pg_backend_pid()`).Scan(&classid, &objid, &sub); err != nil {
			t.Fatal(err)
		}
		tx.Rollback(ctx)
		if !c.wantClassObjs(classid, objid, sub) {
			t.Errorf("schema %s: the lock is (%d, %d, %d)", c.schema, classid, objid, sub)
		}
	}
}

// horizonOf reads the change horizon readers of the change feed stop at.
func horizonOf(t testing.TB, db *DB) int64 {
	t.Helper()
	var h int64
	if err := db.pool.QueryRow(context.Background(), `SELECT value FROM counters WHERE name = 'seq_horizon'`).Scan(&h); err != nil {
		t.Fatal(err)
	}
	return h
}
