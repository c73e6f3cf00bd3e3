package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// leaderLockClass is the first key of the two-key advisory locks that
// hold leaderships (pg_try_advisory_lock(int4, int4)); the second is a
// hash of the schema and the task's name. The class keeps them apart from
// the locks of the migrations and the writers (migrateLockClass,
// writerLockClass).
const leaderLockClass int32 = 0x53684c64 // "ShLd"

// ElectorOptions configure an Elector. The zero value gives the defaults.
type ElectorOptions struct {
	// Poll is how often a campaign tries to take a leadership another
	// process holds (default 1 s).
	Poll time.Duration
	// Check is how often a leader checks that its connection is alive
	// (default 1 s), and CheckTimeout how long it waits for the answer
	// (default 3 s) before it takes the leadership as lost.
	Check, CheckTimeout time.Duration
}

// Elector elects leaders among the processes sharing a database (it
// implements shelfmark.Elector) with a PostgreSQL session advisory lock
// per name, held on a connection of its own outside the pool.
//
// Takeover: a holder killed with its machine still running has its socket
// closed by the kernel; PostgreSQL ends the session and frees the lock at
// once, and the next campaign's poll (Poll, 1 s) takes it. A holder whose
// machine is lost or cut off is found dead by the server's TCP keepalive
// (set on the connection: 5 s idle, then 3 probes 1 s apart) or by
// tcp_user_timeout (10 s, which on Linux also bounds the keepalive
// probes): the lock is free about 10 s after the last word from the
// holder.
//
// Overlap: a leader asks its connection every Check (1 s) and takes the
// leadership as lost when an answer does not come within CheckTimeout
// (3 s), so it stops believing it leads at most Check+CheckTimeout (4 s)
// after its session ended, plus the time its task takes to return after
// its context is cancelled (one transaction). When the holder is cut off
// from the database, that is before the server frees the lock (above), so
// the two never overlap; only a session the server ends by itself
// (pg_terminate_backend, a restart of the database) lets another process
// lead up to those 4 s before the holder notices. shelfmark.Elector says
// why the tasks tolerate that.
type Elector = sqlstore.Elector[*leaderConn]

// Elector returns an elector on db's database. Close it to give up every
// leadership it holds.
func (db *DB) Elector(opts ElectorOptions) *Elector {
	if opts.Check <= 0 {
		opts.Check = time.Second
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 3 * time.Second
	}
	return sqlstore.NewElector[*leaderConn](sessionLocks{db: db, checkTimeout: opts.CheckTimeout}, "postgres: ", opts.Poll, opts.Check)
}

// sessionLocks are the leaders' advisory locks, each held by a session of
// its own outside the pool (sqlstore.Locks).
type sessionLocks struct {
	db           *DB
	checkTimeout time.Duration
}

// leaderConn is a leader's session and the key of its lock.
type leaderConn struct {
	conn *pgx.Conn
	key  int32
}

// Open implements sqlstore.Locks: a connection of its own, with TCP
// keepalives and a user timeout that let the server find a lost holder
// (see Elector), and the lock key of name in the connection's schema.
func (l sessionLocks) Open(ctx context.Context, name string) (*leaderConn, error) {
	cfg := l.db.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "shelfmark leader " + name
	cfg.RuntimeParams["tcp_keepalives_idle"] = "5"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "1"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	cfg.RuntimeParams["tcp_user_timeout"] = "10000" // ms
	d := &net.Dialer{Timeout: 10 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: time.Second, Count: 3}}
	cfg.DialFunc = d.DialContext
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		l.Close(&leaderConn{conn: conn})
		return nil, err
	}
	return &leaderConn{conn: conn, key: leaderKey(schema, name)}, nil
}

// TryLock implements sqlstore.Locks with pg_try_advisory_lock.
func (l sessionLocks) TryLock(ctx context.Context, c *leaderConn, _ string) (bool, error) {
	var got bool
	err := l.db.run(c.conn).queryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, []any{leaderLockClass, c.key}, &got)
	return got, err
}

// Check implements sqlstore.Locks: the session answers within the check
// timeout (a session lock lasts as long as its session).
func (l sessionLocks) Check(c *leaderConn) error {
	ctx, cancel := context.WithTimeout(context.Background(), l.checkTimeout)
	defer cancel()
	_, err := c.conn.Exec(ctx, `SELECT 1`)
	return err
}

// Close implements sqlstore.Locks: ending the session releases its lock.
func (sessionLocks) Close(c *leaderConn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.conn.Close(ctx)
}

// Abort implements sqlstore.Locks: it closes the session's socket under
// whatever uses it, and the server ends the session.
func (sessionLocks) Abort(c *leaderConn) { c.conn.PgConn().Conn().Close() }

// leaderKey is the second key of a leadership's lock: an FNV-1a hash of
// the schema and the name, so that repositories in several schemas of
// one database elect their leaders apart.
func leaderKey(schema, name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(strconv.Quote(schema) + "/" + name))
	return int32(h.Sum32())
}
