package postgres

// The read replica tests run against the test cluster's streaming replica,
// named by SHELFMARK_TEST_REPLICA_URL (scripts/postgres.sh replica-start;
// export SHELFMARK_TEST_REPLICA_URL=$(scripts/postgres.sh replica-url)).
// Only TestReplicaPaused pauses the replica's replay, so no other test
// here depends on its timing.

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
)

const replicaEnv = "SHELFMARK_TEST_REPLICA_URL"

// replicaURL returns the replica's DSN, skipping the test without one
// (failing it when SHELFMARK_REQUIRE_TOOLS is set, as in CI).
func replicaURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(replicaEnv)
	if u == "" {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
			t.Fatalf("%s is not set (scripts/postgres.sh replica-start; export %s=$(scripts/postgres.sh replica-url))", replicaEnv, replicaEnv)
		}
		t.Skipf("%s is not set: run scripts/postgres.sh replica-start and export %s=$(scripts/postgres.sh replica-url)", replicaEnv, replicaEnv)
	}
	return u
}

// testProbe is the probe interval of the tests: short, so that polls end
// soon; nothing depends on it being kept.
const testProbe = 50 * time.Millisecond

// openReplicaTest opens a DB on a fresh schema with the replica, through
// primaryDSN when not empty (a proxy to the same server), and waits until
// the replica has replayed the schema.
func openReplicaTest(t *testing.T, opts Options, viaPrimary func(dsn string) string) (*DB, string) {
	t.Helper()
	rurl := replicaURL(t)
	dsn, schema := testSchema(t)
	if viaPrimary != nil {
		dsn = viaPrimary(dsn)
	}
	if opts.ReadReplica == "" {
		opts.ReadReplica = withSearchPath(rurl, schema)
	}
	if opts.ReplicaProbeInterval == 0 {
		opts.ReplicaProbeInterval = testProbe
	}
	db, err := Open(context.Background(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, schema
}

// waitFor polls cond until it holds, for a minute at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitCaughtUp waits until the replica is healthy and has replayed all the
// primary had at the last probe.
func waitCaughtUp(t *testing.T, db *DB) {
	t.Helper()
	waitFor(t, "the replica to catch up", func() bool {
		st := db.ReplicaStats()
		return st.Healthy && st.LagKnown && st.LagBytes == 0
	})
}

// waitReplayed waits until the replica has replayed every write committed
// before the call, as its probe sees it.
func waitReplayed(t *testing.T, db *DB) {
	t.Helper()
	pos, err := db.WritePosition(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parseLSN(pos)
	waitFor(t, "the replica to replay "+pos, func() bool {
		st := db.ReplicaStats()
		got, _ := parseLSN(st.ReplayPosition)
		return st.Healthy && got >= want
	})
}

// where runs a read with ctx and reports whether it ran on a standby, and
// whether it found the resource key.
func where(t *testing.T, db *DB, ctx context.Context, key int64) (standby, found bool) {
	t.Helper()
	err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		if err := tx.(*readTx).r.queryRow(ctx, `SELECT pg_is_in_recovery()`, nil, &standby); err != nil {
			return err
		}
		row, err := tx.Resource(ctx, key)
		found = row != nil
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return standby, found
}

// insert writes a resource row with key.
func insert(t *testing.T, db *DB, key int64) {
	t.Helper()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(context.Background(), []*shelfmark.ResourceRow{row(key, 0, 0)})
	})
}

func TestReplicaRouting(t *testing.T) {
	db, _ := openReplicaTest(t, Options{}, nil)
	waitCaughtUp(t, db)
	insert(t, db, 1)
	pos, err := db.WritePosition(context.Background())
	if err != nil || pos == "" {
		t.Fatalf("WritePosition = %q, %v", pos, err)
	}
	before := db.ReplicaStats()
	if standby, _ := where(t, db, context.Background(), 1); standby {
		t.Error("a read without the mark ran on the replica")
	}
	// The marked read with the write's position waits for nothing: it
	// runs on the replica once the replica has replayed the write.
	marked := shelfmark.WithReplicaRead(context.Background(), pos)
	waitReplayed(t, db)
	standby, found := where(t, db, marked, 1)
	if !standby || !found {
		t.Errorf("a marked read with a replayed position: on the standby %v, found %v; want both", standby, found)
	}
	after := db.ReplicaStats()
	if after.ReadsReplica-before.ReadsReplica < 1 || after.ReadsPrimary-before.ReadsPrimary < 1 {
		t.Errorf("reads counted replica %d→%d, primary %d→%d", before.ReadsReplica, after.ReadsReplica, before.ReadsPrimary, after.ReadsPrimary)
	}
	if after.Pool.MaxOpen < 1 {
		t.Errorf("replica pool %+v", after.Pool)
	}
	// A position the storage cannot read sends the read to the primary.
	if standby, found := where(t, db, shelfmark.WithReplicaRead(context.Background(), "junk"), 1); standby || !found {
		t.Errorf("a marked read with a malformed position: on the standby %v, found %v", standby, found)
	}
}

// TestReplicaPaused pauses the replica's replay: a read with the position of
// a write it has not replayed goes to the primary and sees the write; one
// without a position stays on the replica (and does not see it) while the
// lag is within the bound, and goes to the primary once it is not.
func TestReplicaPaused(t *testing.T) {
	db, schema := openReplicaTest(t, Options{MaxReplicaLag: time.Hour}, nil)
	waitCaughtUp(t, db)
	ctx := context.Background()
	standby, err := pgxpool.New(ctx, replicaURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(standby.Close) // after the resume below (cleanups run last first)
	if _, err := standby.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := standby.Exec(context.Background(), `SELECT pg_wal_replay_resume()`); err != nil {
			t.Errorf("resume the replica's replay: %v", err)
		}
	})
	waitFor(t, "the replay to pause", func() bool {
		var state string
		err := standby.QueryRow(ctx, `SELECT pg_get_wal_replay_pause_state()`).Scan(&state)
		return err == nil && state == "paused"
	})

	insert(t, db, 7)
	pos, err := db.WritePosition(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := db.ReplicaStats()
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(ctx, pos), 7); onStandby || !found {
		t.Errorf("read your writes while replay is paused: on the standby %v, found %v; want the primary, found", onStandby, found)
	}
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(ctx, ""), 7); !onStandby || found {
		t.Errorf("a marked read without a position, lag within the bound: on the standby %v, found %v; want the standby, not found", onStandby, found)
	}
	after := db.ReplicaStats()
	if d := after.Fallbacks[shelfmark.FallbackPosition] - before.Fallbacks[shelfmark.FallbackPosition]; d != 1 {
		t.Errorf("%d position fallbacks, want 1", d)
	}
	checkReadYourWrites(t, db) // over HTTP (replica_http_test.go)
	checkHarvestBehind(t, db)  // OAI-PMH pages (replica_oai_test.go)

	// The same database, with a bound the paused replica soon exceeds.
	small, err := Open(ctx, withSearchPath(os.Getenv(dsnEnv), schema), Options{ReadReplica: withSearchPath(replicaURL(t), schema),
		MaxReplicaLag: 100 * time.Millisecond, ReplicaProbeInterval: testProbe})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	insert(t, small, 8) // the primary moves on; the replica does not
	waitFor(t, "the lag to pass the bound", func() bool {
		st := small.ReplicaStats()
		return st.Healthy && st.LagKnown && st.Lag > st.MaxLag && st.LagBytes > 0
	})
	if onStandby, found := where(t, small, shelfmark.WithReplicaRead(ctx, ""), 8); onStandby || !found {
		t.Errorf("a marked read with the replica far behind: on the standby %v, found %v; want the primary, found", onStandby, found)
	}
	if n := small.ReplicaStats().Fallbacks[shelfmark.FallbackLag]; n < 1 {
		t.Errorf("%d lag fallbacks", n)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestReplicaUnreachable(t *testing.T) {
	dsn := replicaURL(t)
	dead := replaceHost(t, dsn, closedPort(t))
	primary, schema := testSchema(t)
	db, err := Open(context.Background(), primary, Options{ReadReplica: withSearchPath(dead, schema), ReplicaProbeInterval: testProbe})
	if err != nil {
		t.Fatalf("a replica that does not answer keeps the database from opening: %v", err)
	}
	defer db.Close()
	insert(t, db, 3)
	// Before the first probe and after it, marked reads run on the primary.
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(context.Background(), ""), 3); onStandby || !found {
		t.Errorf("marked read with the replica down: on the standby %v, found %v", onStandby, found)
	}
	waitFor(t, "the probe to find the replica down", func() bool {
		st := db.ReplicaStats()
		return !st.Healthy && st.Err != "" && st.Err != "not probed yet"
	})
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(context.Background(), ""), 3); onStandby || !found {
		t.Errorf("marked read with the replica down: on the standby %v, found %v", onStandby, found)
	}
	if n := db.ReplicaStats().Fallbacks[shelfmark.FallbackUnhealthy]; n < 1 {
		t.Errorf("%d unhealthy fallbacks", n)
	}
}

// replaceHost returns the URL dsn with host:port replaced by addr.
func replaceHost(t *testing.T, dsn, addr string) string {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	old := net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
	out := strings.Replace(dsn, "@"+old+"/", "@"+addr+"/", 1)
	if out == dsn {
		t.Fatalf("cannot find %s in %s", old, dsn)
	}
	return out
}

// TestPrimaryUnreachable reaches the primary through a proxy and then
// closes it: writes fail at once with EUNAVAILABLE (not when a context
// ends), and marked reads are served by the replica.
func TestPrimaryUnreachable(t *testing.T) {
	var p *proxy
	db, _ := openReplicaTest(t, Options{MaxReplicaLag: time.Hour}, func(dsn string) string {
		cfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		p = newProxy(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))), nil)
		return replaceHost(t, dsn, p.ln.Addr().String())
	})
	s := newReplicaServer(t, db)
	id, _, _ := s.createWork()
	insert(t, db, 5)
	waitReplayed(t, db)
	p.close()

	// A write: it ends with EUNAVAILABLE, of its own accord (the context
	// is only a backstop against hanging for ever).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(6, 0, 0)})
	})
	if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || ctx.Err() != nil {
		t.Fatalf("a write with the primary gone: %v (code %s, context %v); want EUNAVAILABLE before the context ends", err, shelfmark.ErrorCode(err), ctx.Err())
	}
	var se *shelfmark.Error
	if !errors.As(err, &se) || se.Details["retry_after"] == nil {
		t.Errorf("no retry_after in %v", err)
	}
	if _, err := db.AllocateKeys(ctx, 1); shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
		t.Errorf("AllocateKeys with the primary gone: %v", err)
	}
	// An unmarked read fails the same way. It must run a statement: a
	// read transaction opens lazily, so an empty one never reaches the
	// primary.
	if err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		_, err := tx.Resource(ctx, 5)
		return err
	}); shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
		t.Errorf("an unmarked read with the primary gone: %v", err)
	}
	// Marked reads go on, on the replica, before and after the probe
	// notices.
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(ctx, ""), 5); !onStandby || !found {
		t.Errorf("a marked read with the primary gone: on the standby %v, found %v", onStandby, found)
	}
	waitFor(t, "the probe to find the primary gone", func() bool { return !db.ReplicaStats().PrimaryReachable })
	if onStandby, found := where(t, db, shelfmark.WithReplicaRead(ctx, ""), 5); !onStandby || !found {
		t.Errorf("a marked read with the primary gone: on the standby %v, found %v", onStandby, found)
	}
	if st := db.ReplicaStats(); !st.Healthy || st.LagKnown {
		t.Errorf("stats with the primary gone: %+v", st)
	}
	checkPrimaryGoneHTTP(t, s, id) // over HTTP (replica_http_test.go)
}
