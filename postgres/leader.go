package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
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
type Elector struct {
	db     *DB
	opts   ElectorOptions
	mu     sync.Mutex
	conns  map[*pgx.Conn]bool // every connection opened, closed by Close
	closed bool
}

var _ shelfmark.Elector = (*Elector)(nil)

// Elector returns an elector on db's database. Close it to give up every
// leadership it holds.
func (db *DB) Elector(opts ElectorOptions) *Elector {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Check <= 0 {
		opts.Check = time.Second
	}
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 3 * time.Second
	}
	return &Elector{db: db, opts: opts, conns: map[*pgx.Conn]bool{}}
}

// errElectorClosed is the error of a campaign on a closed elector.
var errElectorClosed = errors.New("postgres: elector closed")

// connect opens the dedicated connection of one campaign, with TCP
// keepalives on both ends and a user timeout on the server's, so that a
// lost machine is found dead within seconds.
func (e *Elector) connect(ctx context.Context, name string) (*pgx.Conn, error) {
	cfg := e.db.pool.Config().ConnConfig.Copy()
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
		return nil, fmt.Errorf("postgres: connect for leadership %s: %w", name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		conn.Close(context.Background())
		return nil, errElectorClosed
	}
	e.conns[conn] = true
	return conn, nil
}

// drop closes conn (which frees its locks) and forgets it.
func (e *Elector) drop(conn *pgx.Conn) {
	e.mu.Lock()
	delete(e.conns, conn)
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn.Close(ctx)
}

// Campaign implements shelfmark.Elector: it tries the name's lock every
// Poll until it holds it or ctx ends.
func (e *Elector) Campaign(ctx context.Context, name string) (shelfmark.Leadership, error) {
	conn, err := e.connect(ctx, name)
	if err != nil {
		return nil, err
	}
	var schema string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		e.drop(conn)
		return nil, fmt.Errorf("postgres: leadership %s: %w", name, err)
	}
	key := leaderKey(schema, name)
	t := time.NewTicker(e.opts.Poll)
	defer t.Stop()
	for {
		var got bool
		err := e.db.run(conn).queryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, []any{leaderLockClass, key}, &got)
		if err != nil {
			e.drop(conn)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("postgres: leadership %s: %w", name, err)
		}
		if got {
			l := &leadership{e: e, conn: conn, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
			go l.watch()
			return l, nil
		}
		select {
		case <-ctx.Done():
			e.drop(conn)
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// Close ends every campaign and leadership of the elector as the death of
// the process would: it closes their sockets, so PostgreSQL ends their
// sessions and frees their locks, and the leaderships are lost.
func (e *Elector) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for c := range e.conns {
		// the socket, not the pgx.Conn, which its owner may be using
		c.PgConn().Conn().Close()
	}
	return nil
}

// leaderKey is the second key of a leadership's lock: an FNV-1a hash of
// the schema and the name, so that repositories in several schemas of
// one database elect their leaders apart.
func leaderKey(schema, name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(strconv.Quote(schema) + "/" + name))
	return int32(h.Sum32())
}

// leadership is a held lock and its connection.
type leadership struct {
	e        *Elector
	conn     *pgx.Conn
	lost     chan struct{} // closed as soon as the leadership is lost
	stop     chan struct{} // closed by Resign
	done     chan struct{} // closed once the connection is closed
	stopOnce sync.Once
}

// Lost implements shelfmark.Leadership.
func (l *leadership) Lost() <-chan struct{} { return l.lost }

// Resign implements shelfmark.Leadership: closing the connection frees
// the lock. It returns once the connection is closed.
func (l *leadership) Resign() {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
}

// watch asks the connection every Check whether it is alive; when it is
// not (or Resign was called), it marks the leadership lost and then
// closes the connection (which, on a dead network, may take seconds that
// the task must not run on).
func (l *leadership) watch() {
	defer close(l.done)
	defer l.e.drop(l.conn)
	defer close(l.lost)
	t := time.NewTicker(l.e.opts.Check)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.e.opts.CheckTimeout)
		_, err := l.conn.Exec(ctx, `SELECT 1`)
		cancel()
		if err != nil {
			return
		}
	}
}
