package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestSearchTimeoutConformance runs the search deadline's conformance
// test on PostgreSQL.
func TestSearchTimeoutConformance(t *testing.T) {
	storagetest.RunSearchTimeout(t, func(t *testing.T, timeout time.Duration) shelfmark.Storage {
		dsn, _ := testSchema(t)
		db, err := Open(context.Background(), dsn, Options{Relaxed: true, SearchTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

// withAppName returns dsn with application_name set, so that the test can
// find its own sessions in pg_stat_activity on the shared server.
func withAppName(t *testing.T, dsn, name string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// expensiveCorpus stores storagetest.ExpensiveSearchDocs under a new public
// work.
func expensiveCorpus(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	t.Cleanup(func() { repo.Close() })
	res, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	work, _ := repo.IDs().Key(res.ID)
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, storagetest.ExpensiveSearchDocs(work, 3000))
	})
}

// searchExpensive runs storagetest.ExpensiveSearchText with ctx and
// returns its error and the backend (pid, and whether a standby) it ran
// on.
func searchExpensive(ctx context.Context, db *DB) (pid int32, standby bool, err error) {
	err = db.View(ctx, func(tx shelfmark.ReadTx) error {
		if err := tx.(*readTx).r.queryRow(ctx, `SELECT pg_backend_pid(), pg_is_in_recovery()`, nil, &pid, &standby); err != nil {
			return err
		}
		_, err := tx.Search(ctx, shelfmark.SearchQuery{Text: storagetest.ExpensiveSearchText, Facets: true, Now: time.Now()})
		return err
	})
	return pid, standby, err
}

// activeSessions returns how many sessions named app are running a
// statement on the server of dsn.
func activeSessions(t *testing.T, dsn, app string) int {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchTimeoutCancelsStatement: the server cancels a search
// statement at the search timeout (some 650 ms of ranking and headlines
// otherwise): the search answers the timeout, no statement of the store's
// sessions is left running, and the one connection of the pool, not
// closed but rolled back, answers the next read.
func TestSearchTimeoutCancelsStatement(t *testing.T) {
	ctx := context.Background()
	dsn, _ := testSchema(t)
	app := fmt.Sprintf("shelfmark-searchtimeout-%d", rand.IntN(1e9))
	db, err := Open(ctx, withAppName(t, dsn, app), Options{Relaxed: true, MaxConns: 1, SearchTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expensiveCorpus(t, db)
	var before string
	if err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		return tx.(*readTx).r.queryRow(ctx, `SELECT current_setting('statement_timeout')`, nil, &before)
	}); err != nil {
		t.Fatal(err)
	}
	pid, _, err := searchExpensive(ctx, db)
	if !shelfmark.IsSearchTimeout(err) || shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
		t.Fatalf("%v, want the search timeout", err)
	}
	waitFor(t, "no statement of the store running", func() bool { return activeSessions(t, dsn, app) == 0 })
	var after int32
	var timeout string
	if err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		return tx.(*readTx).r.queryRow(ctx, `SELECT pg_backend_pid(), current_setting('statement_timeout')`, nil, &after, &timeout)
	}); err != nil {
		t.Fatalf("read after the timeout: %v", err)
	}
	if after != pid || timeout != before {
		t.Fatalf("after the timeout: backend %d (the search ran on %d), statement_timeout %q (%q before)", after, pid, timeout, before)
	}
}

// TestSearchTimeoutRestored: a search puts statement_timeout back as it
// found it, for the rest of its transaction (a write transaction's
// statements after a search are not bounded by the search's deadline).
func TestSearchTimeoutRestored(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{Relaxed: true})
	expensiveCorpus(t, db)
	for _, q := range []shelfmark.SearchQuery{{Text: "page 7", Limit: 1}, {Collection: 1, Limit: 1}} {
		q.Now = time.Now()
		update(t, db, func(tx shelfmark.WriteTx) error {
			r := tx.(*writeTx).r
			if _, err := r.exec(ctx, `SET LOCAL statement_timeout = '1h'`); err != nil {
				return err
			}
			if _, err := tx.Search(ctx, q); err != nil {
				return err
			}
			var timeout string
			if err := r.queryRow(ctx, `SELECT current_setting('statement_timeout')`, nil, &timeout); err != nil {
				return err
			}
			if timeout != "1h" {
				t.Errorf("%+v: statement_timeout %q after the search, want 1h", q, timeout)
			}
			return nil
		})
	}
}

// TestSearchTimeoutReplica: a search routed to the read replica stops at
// the search timeout there too, and the replica's pool answers the next
// read.
func TestSearchTimeoutReplica(t *testing.T) {
	ctx := context.Background()
	app := fmt.Sprintf("shelfmark-searchtimeout-%d", rand.IntN(1e9))
	rurl := replicaURL(t)
	dsn, schema := testSchema(t)
	db, err := Open(ctx, dsn, Options{Relaxed: true, SearchTimeout: 50 * time.Millisecond,
		ReadReplica: withAppName(t, withSearchPath(rurl, schema), app), ReplicaProbeInterval: testProbe})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expensiveCorpus(t, db)
	waitReplayed(t, db)
	_, standby, err := searchExpensive(shelfmark.WithReplicaRead(ctx, ""), db)
	if !standby {
		t.Fatal("the search did not run on the replica")
	}
	if !shelfmark.IsSearchTimeout(err) || shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
		t.Fatalf("%v, want the search timeout", err)
	}
	waitFor(t, "no statement running on the replica", func() bool { return activeSessions(t, rurl, app) == 0 })
	if standby, found := where(t, db, shelfmark.WithReplicaRead(ctx, ""), 1<<62); !standby || found {
		t.Fatalf("read after the timeout: standby %v, found %v", standby, found)
	}
}
