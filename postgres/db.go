// Package postgres implements shelfmark.Storage on PostgreSQL with pgx and
// pgxpool.
//
// # Transactions
//
// View runs in a REPEATABLE READ, READ ONLY transaction, so one call sees one
// snapshot. Its BEGIN goes with its first statement and its COMMIT after it
// has returned, and statements that do not depend on each other's rows go
// in one pipeline (sqlstore.RunBatch): on a busy machine a read's latency
// is its round trips. Update runs in a READ COMMITTED transaction that
// first takes a transaction-scoped advisory lock (the "writer lock"). Its
// BEGIN and the lock go with its first statement, in one pipeline; the
// writes of a group commit are queued and sent together (Pipeline); and
// the COMMIT of a transaction that took change numbers carries the advance
// of the horizon (below) in the same simple query: a create of one work
// costs three round trips (BEGIN with the claim of its change number, its
// writes, COMMIT with the advance). Updates run one at a time, as they do on SQLite, and
// every statement of an Update sees everything committed before it began:
// an engine that reads a resource, checks its version (If-Match) and writes
// it back cannot lose a concurrent update, whatever the order in which it
// reads and calls NextSeq. Only UpdateParallel transactions run side by
// side (below). Readers (View) never wait for writers.
//
// # Parallel commits and the change horizon
//
// UpdateParallel (shelfmark.ParallelStorage) takes the writer lock in shared
// mode: the engine's batches of creates, whose writes are new rows under
// keys of their own, commit side by side, while every Update still runs
// alone. Their change numbers therefore no longer come from a row lock
// held until the commit: they come from the sequence change_seq, taken
// under a lock held only while a transaction takes them
// (shelfmark_claim_seq). So numbers are no longer in commit order, and a
// reader of "seq > X" could move past a number whose transaction commits
// later. To prevent that, each transaction that takes numbers marks the
// first with a claim, a transaction-scoped advisory lock in pg_locks, taken
// before the sequence moves. The horizon is the highest number below every
// claim still held. After a transaction that took numbers ends, committed
// or not, one statement raises the counter seq_horizon to it
// (shelfmark_advance_horizon, not waiting for its own flush), and a ticker
// of each process does the same every second for claims whose transaction
// ended without it (a process that died). The change feed (Changes) reads
// only up to seq_horizon, so the search indexer, the OAI-PMH projector, the
// preserver and every other follower of the feed never skip a change that
// commits late; they see it once every transaction numbered before it has
// ended. A rolled-back transaction leaves a gap in the numbers, which the
// horizon passes. The counter "seq" of Counter and AddCounter is the last
// number taken (change_seq).
//
// Consequence for callers: do not call AllocateKeys (or anything else that
// needs a second pooled connection) from inside an Update's fn while other
// goroutines may be blocked in Update holding the rest of the pool: mint keys
// before the transaction, as shelfmark.Minter is meant to be used.
//
// # Durability
//
// By default a returned Update is durable (synchronous_commit on, rule R10).
// Options.Relaxed sets synchronous_commit = off on write transactions: a
// crash of the database server may lose the last writes it acknowledged
// (those of roughly the last 3×wal_writer_delay, 600 ms by default), but it
// never corrupts the database or leaves a transaction half applied, because
// the WAL is still written in order and replayed as a prefix. AllocateKeys
// always commits synchronously, even when relaxed: a key block lost in a
// crash would be handed out again to another process while the first still
// holds it.
//
// # Statements
//
// Every SQL statement goes through one wrapper (runner) that reports it to
// Options.Tracer. Bulk writes send one statement per call whatever the
// number of rows (unnest arrays), and no statement at all for empty input.
// Bulk inserts of many rows (at least defaultCopyMinRows: the new rows of a
// group commit's batch, buffered by the engine) use COPY instead: straight
// into the table where an existing row is an error anyway (resources,
// files, sources), and inside a savepoint where existing rows must be
// replaced or kept (fields, memberships), falling back to the unnest
// statement with ON CONFLICT when the COPY meets one. The number of
// statements still does not depend on the number of rows.
//
// # Read replicas
//
// With Options.ReadReplica, a View whose context is marked with
// shelfmark.WithReplicaRead may run on a streaming replica, when the
// replica is healthy, has replayed the write position the read requires and
// lags less than Options.MaxReplicaLag (measured by background probes);
// every other read, and every write, runs on the primary. A connection to
// either that cannot be made within DefaultConnectTimeout (unless the
// connection string sets connect_timeout), or that breaks, is EUNAVAILABLE.
// See replica.go.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Options configure Open.
type Options struct {
	// Tracer, when non-nil, is called after every SQL statement with its
	// text and the number of rows it returned or affected.
	Tracer shelfmark.StatementTracer
	// MaxConns caps the connection pool. 0 derives it from the machine:
	// 4 per CPU core, at least 8 (rule R9).
	MaxConns int
	// Relaxed turns synchronous_commit off for write transactions: faster
	// commits, but a database crash may lose the last acknowledged writes
	// (never corrupts). Key allocation stays durable. See the package
	// documentation.
	Relaxed bool
	// ReadReplica, when set, is the connection string of a streaming
	// replica of the database (a hot standby) that answers the reads
	// marked with shelfmark.WithReplicaRead; see replica.go.
	ReadReplica string
	// MaxReplicaLag is the lag above which marked reads go to the primary
	// (default DefaultMaxReplicaLag); ReplicaProbeInterval is how often
	// the lag is measured (default DefaultReplicaProbeInterval).
	MaxReplicaLag        time.Duration
	ReplicaProbeInterval time.Duration
	// SearchTimeout bounds each statement of a search, on the primary and
	// on the replica (0 = shelfmark.DefaultSearchTimeout; less than 0: no
	// bound). The server cancels a statement still running at it, and the
	// search answers shelfmark.SearchTimeoutError (see searchtimeout.go).
	SearchTimeout time.Duration
}

// DefaultMaxConns is the pool size used when Options.MaxConns is 0: four
// connections per CPU core, at least 8.
func DefaultMaxConns() int {
	return max(4*runtime.NumCPU(), 8)
}

// The migrations' and the writers' advisory locks are per schema: every
// process writing to one schema takes turns, and the repositories in two
// schemas of one database (every test's, for one) never wait for each
// other's migrations or writers. In a schema other than public a lock takes
// two keys (pg_advisory_lock(int4, int4)): a class of its own, and a hash
// of the schema the connection writes to, which the server computes in the
// same statement (schemaLockKey). In public, the schema of a repository
// whose connection string names none, it is the one-key lock earlier
// versions took in every schema (migrateLockKey, writerLockKey), so that
// servers of an earlier version and of this one exclude each other. (Since
// the migration 0028_parallel_commits removed the counter earlier versions
// took change numbers from, their writes fail: servers of earlier versions
// are stopped before this version starts, in any schema.)
const (
	migrateLockClass int32 = 0x53684d67 // "ShMg"
	writerLockClass  int32 = 0x53685772 // "ShWr"
	migrateLockKey   int64 = 0x5368656c666d0001
	writerLockKey    int64 = 0x5368656c666d0002
)

// schemaLockKey is the SQL of the second key of the migrations' and the
// writers' locks: a hash of current_schema(), the first schema of the
// search_path that exists (0 when none does yet).
const schemaLockKey = "COALESCE(hashtext(current_schema()), 0)"

// lockSQL is the statement calling fn (pg_advisory_lock, …_unlock,
// …_xact_lock) on the lock of the connection's schema: key in public,
// (class, schemaLockKey) elsewhere; only the branch taken is run.
func lockSQL(fn string, key int64, class int32) string {
	return fmt.Sprintf("SELECT CASE WHEN current_schema() = 'public' THEN %s(%d) ELSE %s(%d, %s) END", fn, key, fn, class, schemaLockKey)
}

// The statements that begin a write transaction (write): READ COMMITTED,
// then the writer lock, then, when relaxed, no wait for the WAL flush.
const (
	beginReadCommitted = "BEGIN ISOLATION LEVEL READ COMMITTED"
	beginNoFlushWait   = "SET LOCAL synchronous_commit = off"
)

var (
	beginWrite        = []string{beginReadCommitted, lockSQL("pg_advisory_xact_lock", writerLockKey, writerLockClass)}
	beginWriteRelaxed = slices.Concat(beginWrite, []string{beginNoFlushWait})
)

// DB is a PostgreSQL database holding a Shelfmark repository. It implements
// shelfmark.Storage and is safe for concurrent use.
type DB struct {
	sqlstore.Direct

	pool    *pgxpool.Pool
	replica *replica // nil without Options.ReadReplica
	tracer  shelfmark.StatementTracer
	relaxed bool
	copyMin int // bulk inserts of at least this many rows use COPY

	searchTimeout time.Duration // see Options.SearchTimeout; 0: none
	horizon       *ticker       // advances the change horizon (horizon.go)
	stats         *ticker       // keeps the planner's statistics up with growing tables (stats.go)
}

var _ shelfmark.Storage = (*DB)(nil)

// sessionDefaults sets the session settings of the pool's connections that
// the connection string does not set itself.
//
// jit is off: PostgreSQL compiles a statement's expressions to machine code
// when its estimated cost passes jit_above_cost, and the estimates of the
// engine's statements grow with the tables (a search for a rare word is
// estimated from a default selectivity of the whole search_docs), so
// around a million works every search began to pay 20–90 ms of
// compilation for a millisecond of work. The engine's statements are short
// index reads; none gains from JIT. A connection string that names jit
// (jit=on) keeps its own.
func sessionDefaults(cfg *pgxpool.Config) {
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["jit"]; !ok {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
}

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value connection string, as pgx accepts), brings its schema up to date
// and returns it. Several processes may open the same database at once: the
// migrations run under an advisory lock.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse connection string: %w", err)
	}
	n := opts.MaxConns
	if n <= 0 {
		n = DefaultMaxConns()
	}
	cfg.MaxConns = int32(n)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	sessionDefaults(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	db := &DB{pool: pool, tracer: opts.Tracer, relaxed: opts.Relaxed, copyMin: defaultCopyMinRows, searchTimeout: sqlstore.SearchTimeout(opts.SearchTimeout)}
	db.Direct = sqlstore.NewDirect(&dialect, db.direct)
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if opts.ReadReplica != "" {
		if db.replica, err = openReplica(ctx, opts.ReadReplica, cfg, opts); err != nil {
			pool.Close()
			return nil, err
		}
	}
	db.horizon = startTicker(horizonEvery, db.tickHorizon)
	db.stats = startTicker(statsEvery, db.tickStats)
	return db, nil
}

// Backend returns "postgres".
func (db *DB) Backend() string { return "postgres" }

// Close closes every connection of the pool.
func (db *DB) Close() error {
	if db.replica != nil {
		db.replica.close()
	}
	db.horizon.stop()
	db.stats.stop()
	db.pool.Close()
	return nil
}

// Stats reports the connection pool.
func (db *DB) Stats() shelfmark.PoolStats { return poolStats(db.pool) }

// View runs fn in a REPEATABLE READ, READ ONLY transaction: every read of fn
// sees the same snapshot. The transaction begins with fn's first statement,
// sent with it (lazyRead): one round trip fewer a read, none for a fn that
// reads nothing; it ends after View returns (see view). With a read
// replica, a read whose context is marked with shelfmark.WithReplicaRead
// runs there when the replica may answer it (see replica.go); when the
// replica cannot even begin the transaction, fn runs on the primary
// instead.
func (db *DB) View(ctx context.Context, fn func(shelfmark.ReadTx) error) error {
	rp := db.replica
	if rp == nil {
		return db.view(ctx, db.pool, fn)
	}
	if pos, marked := shelfmark.ReplicaReadFrom(ctx); marked {
		reason := rp.route(pos)
		if reason == "" {
			err := db.view(ctx, rp.pool, fn)
			if !errors.Is(err, errBegin) || ctx.Err() != nil {
				rp.readsReplica.Add(1)
				return err
			}
			reason = shelfmark.FallbackError
		}
		rp.fallback(reason)
	}
	rp.readsPrimary.Add(1)
	return db.view(ctx, db.pool, fn)
}

// errBegin marks the failure to begin a read transaction.
var errBegin = errors.New("begin read transaction")

// view runs fn in a read transaction on pool. The transaction ends after
// view returns, on the connection's own goroutine (lazyRead.end): a read
// answers one round trip sooner, and the end of a READ ONLY transaction
// cannot change what it read (at REPEATABLE READ no commit of a read
// fails for serialization). The connection goes back to the pool once the
// end is answered; Close waits for that (pgxpool.Pool.Close waits
// for every connection).
func (db *DB) view(ctx context.Context, pool *pgxpool.Pool, fn func(shelfmark.ReadTx) error) (err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %w: %w", errBegin, unavailable(err))
	}
	q := &lazyRead{conn: conn.Conn()}
	ended := false
	defer func() {
		if !ended { // fn panicked
			q.rollback()
			conn.Release()
		}
	}()
	err = fn(db.newReadTx(q))
	ended = true
	if q.tx == nil {
		conn.Release()
		return err
	}
	go func() {
		q.end(err == nil)
		conn.Release()
	}()
	return err
}

// Update runs fn in a write transaction and commits it. An error from fn
// rolls back and is returned unchanged. See the package documentation for
// the writer lock and durability.
func (db *DB) Update(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	begin := beginWrite
	if db.relaxed {
		begin = beginWriteRelaxed
	}
	return db.write(ctx, begin, fn)
}

// write runs fn in a write transaction started by the statements of
// begin and commits it, on a connection of its own from the
// pool. The transaction is driven by its statements rather than by
// pgx.Tx: begin goes with fn's first statement (pipe), a transaction in
// which fn ran none never begins, and when it took change numbers its
// COMMIT and the advance of the change horizon go to the server in one
// simple query of two statements (the advance runs, in a transaction of
// its own, only once the COMMIT has succeeded). A connection given back
// while still in a transaction (a rollback that failed) is closed by the
// pool, never reused.
func (db *DB) write(ctx context.Context, begin []string, fn func(shelfmark.WriteTx) error) error {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin write transaction: %w", unavailable(err))
	}
	defer c.Release()
	wtx := db.newWriteTx(c)
	wtx.pipe.begin = begin
	ended, advanced := false, false
	defer func() {
		if !ended && wtx.pipe.begun() {
			rollbackConn(c)
		}
		if wtx.claimed && !advanced {
			db.advanceHorizon()
		}
	}()
	if err := fn(wtx); err != nil {
		return err
	}
	if !wtx.pipe.begun() {
		ended = true // no statement ran: nothing began, nothing to commit
		return nil
	}
	pg := c.Conn().PgConn()
	if pg.TxStatus() == 'E' {
		// a statement failed and fn went on: COMMIT would only roll back
		return fmt.Errorf("postgres: commit: %w", pgx.ErrTxCommitRollback)
	}
	sql := "COMMIT"
	if wtx.claimed {
		sql += "; " + advanceSQL
	}
	results, err := pg.Exec(ctx, sql).ReadAll()
	ended = pg.TxStatus() == 'I'
	if len(results) == 0 || results[0].Err != nil {
		if len(results) > 0 {
			err = results[0].Err
		}
		return unavailable(full(fmt.Errorf("postgres: commit: %w", err)))
	}
	if tag := results[0].CommandTag.String(); tag != "COMMIT" {
		return fmt.Errorf("postgres: commit: %w (%s)", pgx.ErrTxCommitRollback, tag)
	}
	if len(results) > 1 && results[1].Err == nil {
		advanced = true
		if db.tracer != nil {
			db.tracer(advanceSQL, results[1].CommandTag.RowsAffected())
		}
	}
	return nil
}

// beginQueue starts a job-queue transaction: no writer lock (it takes no
// sequence numbers; FOR UPDATE SKIP LOCKED keeps claims apart) and no
// wait for the WAL flush (see shelfmark.Storage.UpdateQueue).
var beginQueue = []string{beginReadCommitted, beginNoFlushWait}

// UpdateQueue runs fn in a job-queue transaction.
func (db *DB) UpdateQueue(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	return db.write(ctx, beginQueue, fn)
}

// endTimeout bounds the COMMIT or ROLLBACK that ends a transaction off
// its caller's context.
const endTimeout = 10 * time.Second

// rollback ends tx if it is still open (after an error or a panic in fn).
// It runs even when the caller's context is done; a connection whose
// rollback fails is closed by pgx and not returned to the pool.
func rollback(tx pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	_ = tx.Rollback(ctx) // ErrTxClosed after a commit: nothing to do
}

// rollbackConn ends the write transaction open on c (after an error or a
// panic in fn), as rollback does for a pgx.Tx; a connection whose
// rollback fails is left in its transaction, which Release sees, and so
// is closed rather than pooled.
func rollbackConn(c *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	_, _ = c.Exec(ctx, "ROLLBACK")
}

// querier is what pgxpool.Pool, *pgxpool.Conn and pgx.Tx have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// runner is the one place that sends SQL: every statement of the package
// goes through its methods, which report it to the tracer.
type runner struct {
	q             querier
	tracer        shelfmark.StatementTracer
	copyMin       int           // see DB.copyMin
	searchTimeout time.Duration // see DB.searchTimeout
}

func (db *DB) run(q querier) runner {
	return runner{q: q, tracer: db.tracer, copyMin: db.copyMin, searchTimeout: db.searchTimeout}
}

// useCopy reports whether a bulk insert of n rows should use COPY.
func (r runner) useCopy(n int) bool { return r.copyMin > 0 && n >= r.copyMin }

func (r runner) trace(sql string, rows int64) {
	if r.tracer != nil {
		r.tracer(sql, rows)
	}
}

// exec runs a statement that returns no rows and reports the rows it
// affected.
func (r runner) exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if p, ok := r.q.(*pipe); ok && p.add(sql, args) {
		return 0, nil // reported when sent
	}
	tag, err := r.q.Exec(ctx, sql, args...)
	n := tag.RowsAffected()
	r.trace(sql, n)
	return n, unavailable(full(err))
}

// query runs a query and calls each for every row; it reports the rows
// returned.
func (r runner) query(ctx context.Context, sql string, args []any, each func(pgx.Rows) error) (int64, error) {
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		r.trace(sql, 0)
		return 0, unavailable(full(err))
	}
	var n int64
	for rows.Next() {
		if err = each(rows); err != nil {
			break
		}
		n++
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	r.trace(sql, n)
	return n, unavailable(full(err))
}

// batch runs statements in one round trip (sqlstore.Batcher), each
// reported as query reports it. A statement that names its own pgx
// execution mode cannot go in a batch: then they run one after another.
func (r runner) batch(ctx context.Context, qs []sqlstore.Batch) error {
	var send func(*pgx.Batch) (pgx.BatchResults, error)
	switch q := r.q.(type) {
	case *lazyRead:
		send = func(b *pgx.Batch) (pgx.BatchResults, error) { return q.sendBatch(ctx, b) }
	case *pipe:
		send = func(b *pgx.Batch) (pgx.BatchResults, error) { return q.sendBatch(ctx, b) }
	case interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	}:
		send = func(b *pgx.Batch) (pgx.BatchResults, error) { return q.SendBatch(ctx, b), nil }
	}
	b := &pgx.Batch{}
	for _, s := range qs {
		if !batchable(s.Args) {
			send = nil
		}
		b.Queue(s.Query, s.Args...)
	}
	if send == nil {
		for _, s := range qs {
			if _, err := r.query(ctx, s.Query, s.Args, func(rows pgx.Rows) error { return s.Each(rows) }); err != nil {
				return err
			}
		}
		return nil
	}
	br, err := send(b)
	if err != nil {
		for _, s := range qs {
			r.trace(s.Query, 0)
		}
		return unavailable(full(err))
	}
	for i, s := range qs {
		if err = r.batchResult(br, s); err != nil {
			for _, s := range qs[i+1:] {
				r.trace(s.Query, 0)
			}
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return unavailable(full(err))
}

// batchResult reads the rows of the batch's next statement into s.Each.
func (r runner) batchResult(br pgx.BatchResults, s sqlstore.Batch) error {
	rows, err := br.Query()
	if err != nil {
		r.trace(s.Query, 0)
		return err
	}
	var n int64
	for rows.Next() {
		if err = s.Each(rows); err != nil {
			break
		}
		n++
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	r.trace(s.Query, n)
	return err
}

// queryRow runs a query that returns exactly one row and scans it into dest.
func (r runner) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	n, err := r.query(ctx, sql, args, func(rows pgx.Rows) error { return rows.Scan(dest...) })
	if err == nil && n != 1 {
		err = fmt.Errorf("expected one row, got %d", n)
	}
	return err
}
