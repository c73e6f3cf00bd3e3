package postgres

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestConformanceCopy runs the conformance suite's tests of the bulk
// inserts (storagetest.RunBulk) with every bulk insert of two rows or more
// sent with COPY, so that the suite covers the COPY paths too (with the
// default threshold its small batches use unnest). The other tests never
// reach a bulk insert, so they would only run again what TestConformance
// runs; each test run here must send at least one COPY, or it does not
// belong among them.
func TestConformanceCopy(t *testing.T) {
	storagetest.RunBulk(t, func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage {
		dsn, _ := testSchema(t)
		var copies atomic.Int64
		db, err := Open(context.Background(), dsn, Options{Tracer: func(q string, rows int64) {
			if strings.HasPrefix(q, "COPY ") {
				copies.Add(1)
			}
			if tracer != nil {
				tracer(q, rows)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		db.copyMin = 2
		t.Cleanup(func() {
			if copies.Load() == 0 {
				t.Errorf("%s sent no COPY with a threshold of 2 rows: it is no test of the bulk inserts (storagetest marks it bulk)", t.Name())
			}
		})
		return db
	})
}

// copyTest opens a DB whose bulk inserts of at least minRows rows use COPY.
func copyTest(t *testing.T, minRows int) (*DB, *tracer, string) {
	t.Helper()
	tr := &tracer{}
	db, schema := openTest(t, Options{Tracer: tr.trace})
	db.copyMin = minRows
	return db, tr, schema
}

// statements returns the traced statements, each cut to its first two
// words, and their rows.
func (tr *tracer) statements() ([]string, []int64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var qs []string
	for _, q := range tr.calls {
		w := strings.Fields(q)
		qs = append(qs, strings.Join(w[:min(2, len(w))], " "))
	}
	return qs, slices.Clone(tr.rows)
}

// TestCopyInserts: above the threshold, the bulk inserts use COPY, store
// exactly what the unnest statements store, and keep their semantics
// (fields replace, memberships ignore existing edges and repeats).
func TestCopyInserts(t *testing.T) {
	db, tr, _ := copyTest(t, 2)
	ctx := context.Background()

	// resources: every column, NULLs included, round-trips
	embargo := time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)
	deleted := t0.Add(time.Hour)
	lease := embargo.Add(time.Hour)
	full := &shelfmark.ResourceRow{Key: 7, Kind: shelfmark.KindFileSet, Visibility: shelfmark.Authenticated,
		Embargo: &embargo, Parent: 3, Position: 2, Version: 4, Seq: 9, Created: t0, Modified: t0.Add(time.Second), Deleted: &deleted,
		Source: 5, Effective: shelfmark.Access{Visibility: shelfmark.Private, Embargo: &embargo, Lease: &lease}}
	bare := &shelfmark.ResourceRow{Key: 3, Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Version: 1, Seq: 1, Created: t0, Modified: t0}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertResources(ctx, []*shelfmark.ResourceRow{full, bare}) })
	if qs, rows := tr.statements(); !slices.Equal(qs, []string{"COPY resources"}) || rows[0] != 2 {
		t.Fatalf("InsertResources ran %v %v", tr.calls, rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		got, err := tx.Resources(ctx, []int64{3, 7})
		if err != nil {
			return err
		}
		if len(got) != 2 || !reflect.DeepEqual(got[0], bare) || !reflect.DeepEqual(got[1], full) {
			t.Errorf("resources\n got %+v %+v\nwant %+v %+v", got[0], got[1], bare, full)
		}
		return nil
	})

	// fields of new resources: SAVEPOINT, COPY, RELEASE
	dc := shelfmark.NSDC
	title := shelfmark.Field{Predicate: dc + "title", Objects: []shelfmark.Term{shelfmark.NewLangLiteral("A", "de"), shelfmark.NewLiteral("‘unicode’\nß😀")}}
	subject := shelfmark.Field{Predicate: dc + "subject", Objects: []shelfmark.Term{shelfmark.NewIRI("http://example.org/s")}}
	date := shelfmark.Field{Predicate: dc + "date", Objects: []shelfmark.Term{shelfmark.NewTypedLiteral("1923", "http://www.w3.org/2001/XMLSchema#gYear")}}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{3, 3, 3, 7}, []shelfmark.Field{title, subject, date, title})
	})
	if qs, rows := tr.statements(); !slices.Equal(qs, []string{"SAVEPOINT " + copySavepoint, "COPY fields", "RELEASE SAVEPOINT"}) || rows[1] != 4 {
		t.Fatalf("PutFields of new fields ran %v %v", tr.calls, rows)
	}
	// existing fields: the COPY meets them, is undone, and the upsert
	// replaces them; a field without objects is deleted
	newTitle := shelfmark.Field{Predicate: dc + "title", Objects: []shelfmark.Term{shelfmark.NewLiteral("C")}}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{3, 3, 7}, []shelfmark.Field{newTitle, {Predicate: dc + "subject"}, subject})
	})
	want := []string{"SAVEPOINT " + copySavepoint, "COPY fields", "ROLLBACK TO", "INSERT INTO", "DELETE FROM"}
	if qs, rows := tr.statements(); !slices.Equal(qs, want) || rows[3] != 2 || rows[4] != 1 {
		t.Fatalf("PutFields over existing fields ran %v %v", tr.calls, rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		if got, _ := tx.Fields(ctx, 3); !reflect.DeepEqual(got, []shelfmark.Field{date, newTitle}) {
			t.Errorf("fields of 3: %v", got)
		}
		if got, _ := tx.Fields(ctx, 7); !reflect.DeepEqual(got, []shelfmark.Field{subject, title}) {
			t.Errorf("fields of 7: %v", got)
		}
		return nil
	})

	// memberships: new edges by COPY; existing edges and repeats fall back
	// to INSERT … ON CONFLICT DO NOTHING
	ms := []shelfmark.Membership{{Collection: 10, Member: 3}, {Collection: 10, Member: 7}, {Collection: 11, Member: 3}}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.InsertMemberships(ctx, ms) })
	if qs, rows := tr.statements(); !slices.Equal(qs, []string{"SAVEPOINT " + copySavepoint, "COPY memberships", "RELEASE SAVEPOINT"}) || rows[1] != 3 {
		t.Fatalf("InsertMemberships ran %v %v", tr.calls, rows)
	}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.InsertMemberships(ctx, []shelfmark.Membership{{Collection: 12, Member: 3}, {Collection: 12, Member: 3}, {Collection: 10, Member: 7}})
	})
	if qs, rows := tr.statements(); !slices.Equal(qs, []string{"SAVEPOINT " + copySavepoint, "COPY memberships", "ROLLBACK TO", "INSERT INTO"}) || rows[3] != 1 {
		t.Fatalf("InsertMemberships over existing edges ran %v %v", tr.calls, rows)
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		c := row(12, 0, 0)
		c.Kind = shelfmark.KindCollection
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(10, 0, 0), row(11, 0, 0), c})
	})
	view(t, db, func(tx shelfmark.ReadTx) error {
		if got, _ := tx.MemberOf(ctx, 3); !slices.Equal(got, []int64{10, 11, 12}) {
			t.Errorf("MemberOf(3) = %v", got)
		}
		if got, _ := tx.MemberOf(ctx, 7); !slices.Equal(got, []int64{10}) {
			t.Errorf("MemberOf(7) = %v", got)
		}
		return nil
	})

	// files and source keys
	files := []*shelfmark.File{
		{Name: "page1.tif", MediaType: "image/tiff", Size: 1234, SHA256: "ab", SHA512: "cd", MD5: "ef", Use: "original"},
		{Name: "ext.pdf", MediaType: "application/pdf", Size: -1, Use: "original", ExternalURL: "https://example.org/x.pdf"},
	}
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertFiles(ctx, []int64{4, 5}, files); err != nil {
			return err
		}
		return tx.InsertSources(ctx, []string{"bag/1", "bag/2"}, []int64{4, 5})
	})
	if qs, rows := tr.statements(); !slices.Equal(qs, []string{"COPY files", "COPY sources"}) || rows[0] != 2 || rows[1] != 2 {
		t.Fatalf("InsertFiles and InsertSources ran %v %v", tr.calls, rows)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		for i, k := range []int64{4, 5} {
			if f, err := tx.File(ctx, k); err != nil || f == nil || *f != *files[i] {
				t.Errorf("file %d = %+v, %v", k, f, err)
			}
		}
		if got, err := tx.Sources(ctx, []string{"bag/1", "bag/2", "bag/3"}); err != nil || !reflect.DeepEqual(got, map[string]int64{"bag/1": 4, "bag/2": 5}) {
			t.Errorf("sources %v, %v", got, err)
		}
		return nil
	})
}

// TestCopyStatementsFixed: a batch of 200 new works and one of 2,000 send
// the same statements (COPY from the default threshold on).
func TestCopyStatementsFixed(t *testing.T) {
	db, tr, _ := copyTest(t, defaultCopyMinRows)
	ctx := context.Background()
	next := int64(1)
	var traces [][]string
	for _, n := range []int{200, 2000} {
		var rows []*shelfmark.ResourceRow
		var keys []int64
		var fields []shelfmark.Field
		var ms []shelfmark.Membership
		for i := 0; i < n; i++ {
			k := next
			next++
			rows = append(rows, row(k, 0, 0))
			for _, p := range []string{"title", "date"} {
				keys = append(keys, k)
				fields = append(fields, shelfmark.Field{Predicate: shelfmark.NSDC + p, Objects: []shelfmark.Term{shelfmark.NewLiteral(fmt.Sprint(p, k))}})
			}
			ms = append(ms, shelfmark.Membership{Collection: 1 << 40, Member: k})
		}
		tr.reset()
		update(t, db, func(tx shelfmark.WriteTx) error {
			if err := tx.InsertResources(ctx, rows); err != nil {
				return err
			}
			if err := tx.PutFields(ctx, keys, fields); err != nil {
				return err
			}
			return tx.InsertMemberships(ctx, ms)
		})
		qs, counts := tr.statements()
		traces = append(traces, qs)
		if want := []int64{int64(n), 0, int64(2 * n), 0, 0, int64(n), 0}; !slices.Equal(counts, want) {
			t.Fatalf("%d works: rows %v, want %v (%v)", n, counts, want, tr.calls)
		}
	}
	if want := []string{"COPY resources", "SAVEPOINT " + copySavepoint, "COPY fields", "RELEASE SAVEPOINT",
		"SAVEPOINT " + copySavepoint, "COPY memberships", "RELEASE SAVEPOINT"}; !slices.Equal(traces[0], want) || !slices.Equal(traces[1], want) {
		t.Fatalf("statements\n 200: %v\n2000: %v\nwant: %v", traces[0], traces[1], want)
	}
}

// TestCopySavepointsCapped: one transaction opens at most
// maxCopySavepoints savepoints for COPY; later bulk inserts of memberships
// and fields use the unnest statements.
func TestCopySavepointsCapped(t *testing.T) {
	db, tr, schema := copyTest(t, 2)
	ctx := context.Background()
	const calls = maxCopySavepoints + 3
	tr.reset()
	update(t, db, func(tx shelfmark.WriteTx) error {
		for i := int64(0); i < calls; i++ {
			ms := []shelfmark.Membership{{Collection: 1, Member: 10 + 2*i}, {Collection: 1, Member: 11 + 2*i}}
			if err := tx.InsertMemberships(ctx, ms); err != nil {
				return err
			}
		}
		f := shelfmark.Field{Predicate: shelfmark.NSDC + "title", Objects: []shelfmark.Term{shelfmark.NewLiteral("x")}}
		return tx.PutFields(ctx, []int64{1, 2}, []shelfmark.Field{f, f})
	})
	qs, rows := tr.statements()
	var copies, inserts int
	var n int64
	for i, q := range qs {
		switch q {
		case "COPY memberships":
			copies++
			n += rows[i]
		case "INSERT INTO":
			inserts++
			n += rows[i]
		}
	}
	if copies != maxCopySavepoints || inserts != calls-maxCopySavepoints+1 || n != 2*calls+2 || qs[len(qs)-1] != "INSERT INTO" {
		t.Fatalf("%d COPY and %d INSERT statements writing %d rows: %v", copies, inserts, n, qs)
	}
	var stored int
	if err := adminPool(t).QueryRow(ctx, `SELECT count(*) FROM `+schema+`.memberships`).Scan(&stored); err != nil || stored != 2*calls {
		t.Fatalf("%d memberships stored, want %d (%v)", stored, 2*calls, err)
	}
}

// TestCopyFailure: a COPY that fails returns a wrapped error, as the
// unnest statement did; the transaction rolls back entirely and the
// connection goes back to the pool usable.
func TestCopyFailure(t *testing.T) {
	db, _, schema := copyTest(t, 2)
	stopTickers(db)
	ctx := context.Background()
	// a key twice: COPY straight into resources fails, the whole Update
	// rolls back
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0), row(2, 0, 0)}); err != nil {
			return err
		}
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(3, 0, 0), row(3, 0, 0)})
	})
	if err == nil || !strings.Contains(err.Error(), "postgres: insert 2 resources") || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("duplicate keys: %v", err)
	}
	// a failure other than a unique violation inside the savepoint of the
	// fields' COPY: returned as an error too
	if _, err := adminPool(t).Exec(ctx, `ALTER TABLE `+schema+`.fields ADD CONSTRAINT poison CHECK (predicate <> 'http://example.org/poison')`); err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}); err != nil {
			return err
		}
		return tx.PutFields(ctx, []int64{1, 1}, []shelfmark.Field{
			{Predicate: shelfmark.NSDC + "title", Objects: []shelfmark.Term{shelfmark.NewLiteral("x")}},
			{Predicate: "http://example.org/poison", Objects: []shelfmark.Term{shelfmark.NewLiteral("x")}}})
	})
	if err == nil || !strings.Contains(err.Error(), "postgres: put 2 fields") || !strings.Contains(err.Error(), "23514") {
		t.Fatalf("check violation: %v", err)
	}
	if s := db.Stats(); s.InUse != 0 {
		t.Fatalf("connection held after a failed COPY: %+v", s)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		if rows, err := tx.Resources(ctx, []int64{1, 2, 3}); len(rows) != 0 || err != nil {
			t.Errorf("rolled-back rows visible: %v, %v", rows, err)
		}
		return nil
	})
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0), row(2, 0, 0)})
	})
}

// failures counts the group commits that failed, and the largest.
type failures struct {
	mu      sync.Mutex
	n, most int
}

func (f *failures) ObserveCommit(ops int, d time.Duration, err error) {
	if err != nil {
		f.mu.Lock()
		f.n, f.most = f.n+1, max(f.most, ops)
		f.mu.Unlock()
	}
}

// TestCopyFlushFailureRetried: when the engine's bulk flush of a batch
// fails inside a COPY (here a CHECK constraint that one resource of the
// batch breaks), the engine rolls back and runs the batch again op by op:
// the one bad op fails, every other op is stored.
func TestCopyFlushFailureRetried(t *testing.T) {
	for _, table := range []string{"resources", "fields"} {
		t.Run(table, func(t *testing.T) {
			db, _, schema := copyTest(t, defaultCopyMinRows)
			ctx := context.Background()
			poison := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
			check := fmt.Sprintf(`ALTER TABLE %s.resources ADD CONSTRAINT poison CHECK (embargo IS DISTINCT FROM %d)`, schema, poison.UnixMicro())
			if table == "fields" {
				check = `ALTER TABLE ` + schema + `.fields ADD CONSTRAINT poison CHECK (predicate <> 'http://example.org/poison')`
			}
			admin := adminPool(t)
			if _, err := admin.Exec(ctx, check); err != nil {
				t.Fatal(err)
			}
			obs := &failures{}
			// one committer: the 200 ops queue behind the collection's
			// transaction and make one batch
			repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{Observer: obs, Committers: 1})
			defer repo.Close()
			ids, err := repo.MintIDs(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			const n, bad = 200, 150
			nrs := make([]*shelfmark.NewResource, n)
			for i := range nrs {
				nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{ids[0]},
					Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprint("work ", i))}}}
			}
			if table == "fields" {
				nrs[bad].Metadata = append(nrs[bad].Metadata, shelfmark.Statement{Predicate: "http://example.org/poison", Object: shelfmark.NewLiteral("x")})
			} else {
				nrs[bad].Embargo = &poison
			}
			// Hold the writer lock while the committer's first transaction
			// (creating the collection) waits for it and the 200 ops
			// queue, so that they all make the next batch.
			conn, err := admin.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Release()
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext($2))`, writerLockClass, schema); err != nil {
				t.Fatal(err)
			}
			var collErr error
			var out []*shelfmark.Resource
			var errs []error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, collErr = repo.CreateResource(ctx, &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindCollection})
			}()
			time.Sleep(100 * time.Millisecond)
			go func() {
				defer wg.Done()
				out, errs = repo.CreateResources(ctx, nrs)
			}()
			time.Sleep(200 * time.Millisecond)
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, writerLockClass, schema); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if collErr != nil {
				t.Fatal(collErr)
			}
			for i, err := range errs {
				if (err != nil) != (i == bad) {
					t.Fatalf("op %d: %v", i, err)
				}
			}
			if !strings.Contains(errs[bad].Error(), "poison") {
				t.Fatalf("the bad op failed with %v", errs[bad])
			}
			for i, r := range out {
				if i == bad {
					continue
				}
				got, err := repo.FindResource(ctx, r.ID)
				if err != nil || len(got.Metadata) != 1 || !slices.Equal(got.MemberOf, []shelfmark.ID{ids[0]}) {
					t.Fatalf("work %d: %+v, %v", i, got, err)
				}
			}
			// the bulk flush of all 200 failed, then the op-by-op run
			// without the bad op's writes
			if obs.n != 2 || obs.most != n {
				t.Fatalf("%d failed commits, the largest of %d ops; want 2, of %d", obs.n, obs.most, n)
			}
			t.Logf("%d failed commits, the largest of %d ops", obs.n, obs.most)
		})
	}
}

// BenchmarkBatchInsert: one Update writing the new rows of a group commit
// of 256 patent-like works (a resource row, 16 fields and a membership
// each), as the engine's buffer flushes them, with unnest statements and
// with COPY; commit included.
func BenchmarkBatchInsert(b *testing.B) {
	for _, mode := range []struct {
		name    string
		copyMin int
	}{{"unnest", 0}, {"copy", defaultCopyMinRows}} {
		b.Run(mode.name, func(b *testing.B) {
			db, _ := openTest(b, Options{})
			db.copyMin = mode.copyMin
			ctx := context.Background()
			const works = 256
			next := int64(1)
			for b.Loop() {
				rows := make([]*shelfmark.ResourceRow, works)
				var keys []int64
				var fields []shelfmark.Field
				var ms []shelfmark.Membership
				for i := range rows {
					k := next
					next++
					rows[i] = row(k, 0, 0)
					for j := 0; j < 16; j++ {
						f := shelfmark.Field{Predicate: fmt.Sprintf("%sp%02d", shelfmark.NSDC, j)}
						for o := 0; o < 1+j%5*2; o++ {
							f.Objects = append(f.Objects, shelfmark.NewLangLiteral(fmt.Sprintf("note %d about patent %d", o, k), "en"))
						}
						keys, fields = append(keys, k), append(fields, f)
					}
					ms = append(ms, shelfmark.Membership{Collection: 1 << 40, Member: k})
				}
				if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
					if err := tx.InsertResources(ctx, rows); err != nil {
						return err
					}
					if err := tx.PutFields(ctx, keys, fields); err != nil {
						return err
					}
					return tx.InsertMemberships(ctx, ms)
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*works)/b.Elapsed().Seconds(), "works/s")
		})
	}
}
