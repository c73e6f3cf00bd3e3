package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
)

// Read replicas
//
// With Options.ReadReplica, a DB keeps a second pool on a PostgreSQL
// streaming replica (a hot standby) and answers there the Views whose
// context carries shelfmark.WithReplicaRead, when
//
//   - the replica answered its last probe and is in recovery,
//   - it has replayed the write position the read requires, if any, and
//   - its lag is within Options.MaxReplicaLag,
//
// and on the primary otherwise (each such read counted by its reason). A
// View without the mark always runs on the primary.
//
// Two background probes, one per server, each on a connection of its own
// (so a full pool or a dead server never delays the other), run every
// Options.ReplicaProbeInterval. The primary's probe samples its write-ahead
// log insert position; the replica's reads its replay position and measures
// the lag against those samples: 0 when it has replayed what the primary had
// at the last sample, otherwise the age of the first sample it has not
// replayed (so the lag needs no clock agreement between the servers, and an
// idle primary does not look lagged). Reads only load the last result.
//
// When the primary does not answer its probe, its lag cannot be measured:
// marked reads then stay on a healthy replica whatever its last lag (a
// stale answer is better than none while no write can happen anyway), but
// a read that requires a position the replica has not replayed still goes
// to the primary (and fails there): a client never reads a state older than
// its own write.

// Default replica settings.
const (
	// DefaultMaxReplicaLag is the lag above which marked reads go to the
	// primary.
	DefaultMaxReplicaLag = 5 * time.Second
	// DefaultReplicaProbeInterval is how often the lag is measured.
	DefaultReplicaProbeInterval = time.Second
	// DefaultConnectTimeout bounds the opening of a connection (to the
	// primary or the replica) when the connection string sets no
	// connect_timeout: with the server gone, a request fails within it
	// instead of waiting for the operating system's TCP timeout.
	DefaultConnectTimeout = 5 * time.Second
	// unavailableRetry is the Retry-After (seconds) advised when the
	// database cannot be reached.
	unavailableRetry int64 = 5
)

// fallbackReasons lists the shelfmark.Fallback* reasons in the order of
// replica.fallbacks.
var fallbackReasons = []string{shelfmark.FallbackUnhealthy, shelfmark.FallbackLag, shelfmark.FallbackPosition, shelfmark.FallbackError}

// lsnSample is the primary's insert position at a moment.
type lsnSample struct {
	at  time.Time
	lsn uint64
}

// replicaState is the outcome of the last probes, read by every routed
// View.
type replicaState struct {
	healthy, primaryOK, lagKnown bool
	err                          string
	lag                          time.Duration
	lagBytes                     int64
	replay                       uint64
}

// replica is a DB's read replica: its pool, its probes and its counters.
type replica struct {
	pool     *pgxpool.Pool
	maxLag   time.Duration
	interval time.Duration
	primary  *pgx.ConnConfig // for the primary's probe connection
	standby  *pgx.ConnConfig // for the replica's probe connection

	state atomic.Pointer[replicaState]

	mu        sync.Mutex
	samples   []lsnSample // the primary's positions, oldest first
	primaryOK bool

	readsReplica, readsPrimary atomic.Int64
	fallbacks                  [4]atomic.Int64 // by fallbackReasons

	stop context.CancelFunc
	done sync.WaitGroup
}

// openReplica connects the replica's pool and starts the probes.
func openReplica(ctx context.Context, dsn string, primary *pgxpool.Config, opts Options) (*replica, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse the read replica's connection string: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	cfg.MaxConns = primary.MaxConns
	sessionDefaults(cfg)
	// A replica that is down when the server starts must not keep it
	// from starting: reads go to the primary until it answers.
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: read replica: %w", err)
	}
	rp := &replica{pool: pool, maxLag: opts.MaxReplicaLag, interval: opts.ReplicaProbeInterval,
		primary: primary.ConnConfig.Copy(), standby: cfg.ConnConfig.Copy()}
	if rp.maxLag <= 0 {
		rp.maxLag = DefaultMaxReplicaLag
	}
	if rp.interval <= 0 {
		rp.interval = DefaultReplicaProbeInterval
	}
	rp.state.Store(&replicaState{err: "not probed yet"})
	pctx, cancel := context.WithCancel(context.Background())
	rp.stop = cancel
	rp.done.Add(2)
	go rp.loop(pctx, rp.primary, rp.probePrimary)
	go rp.loop(pctx, rp.standby, rp.probeReplica)
	return rp, nil
}

// close stops the probes and closes the pool.
func (rp *replica) close() {
	rp.stop()
	rp.done.Wait()
	rp.pool.Close()
}

// loop runs probe every interval on a connection of its own, opened again
// after any failure.
func (rp *replica) loop(ctx context.Context, cfg *pgx.ConnConfig, probe func(context.Context, *pgx.Conn, error)) {
	defer rp.done.Done()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			closeConn(conn)
		}
	}()
	tick := time.NewTicker(rp.interval)
	defer tick.Stop()
	for {
		// Each probe is bounded: a connection that hangs is dropped.
		pctx, cancel := context.WithTimeout(ctx, max(2*rp.interval, 2*time.Second))
		var err error
		if conn == nil {
			conn, err = pgx.ConnectConfig(pctx, cfg)
			if err != nil {
				conn = nil
			}
		}
		probe(pctx, conn, err)
		if conn != nil && (pctx.Err() != nil || conn.IsClosed()) {
			closeConn(conn)
			conn = nil
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// closeConn closes a probe's connection, waiting a second at most for a
// server that may be gone.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// probePrimary samples the primary's insert position.
func (rp *replica) probePrimary(ctx context.Context, conn *pgx.Conn, err error) {
	var text string
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&text)
	}
	var lsn uint64
	if err == nil {
		var ok bool
		if lsn, ok = parseLSN(text); !ok {
			err = fmt.Errorf("unreadable position %q", text)
		}
	}
	if err != nil && conn != nil {
		closeConn(conn) // opened again at the next probe
	}
	now := time.Now()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.primaryOK = err == nil
	if err != nil {
		return
	}
	rp.samples = append(rp.samples, lsnSample{at: now, lsn: lsn})
	// Keep the samples of the last maxLag (and the one before them): an
	// older one would only tell that the lag is beyond the bound.
	cut := 0
	for cut+1 < len(rp.samples) && now.Sub(rp.samples[cut+1].at) > rp.maxLag+rp.interval {
		cut++
	}
	if cut > 0 {
		rp.samples = append(rp.samples[:0], rp.samples[cut:]...)
	}
}

// probeReplica reads the replica's replay position and works out its lag.
func (rp *replica) probeReplica(ctx context.Context, conn *pgx.Conn, err error) {
	var (
		recovery bool
		text     *string
	)
	if err == nil {
		err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text`).Scan(&recovery, &text)
		if err != nil {
			closeConn(conn)
		}
	}
	st := &replicaState{}
	var replay uint64
	switch {
	case err != nil:
		st.err = err.Error()
	case !recovery || text == nil:
		st.err = "the read database is not a standby in recovery"
	default:
		var ok bool
		if replay, ok = parseLSN(*text); !ok {
			st.err = fmt.Sprintf("unreadable replay position %q", *text)
		} else {
			st.healthy = true
			st.replay = replay
		}
	}
	now := time.Now()
	rp.mu.Lock()
	st.primaryOK = rp.primaryOK
	if st.healthy && len(rp.samples) > 0 {
		last := rp.samples[len(rp.samples)-1]
		st.lagKnown = st.primaryOK
		if replay < last.lsn {
			st.lagBytes = int64(last.lsn - replay)
			for _, s := range rp.samples {
				if s.lsn > replay {
					st.lag = now.Sub(s.at)
					break
				}
			}
		}
	}
	rp.mu.Unlock()
	rp.state.Store(st)
}

// route returns "" when a read that requires minPosition may run on the
// replica, or the reason it may not.
func (rp *replica) route(minPosition string) string {
	st := rp.state.Load()
	if !st.healthy {
		return shelfmark.FallbackUnhealthy
	}
	if minPosition != "" {
		p, ok := parseLSN(minPosition)
		if !ok || st.replay < p {
			return shelfmark.FallbackPosition
		}
	}
	if st.primaryOK && (!st.lagKnown || st.lag > rp.maxLag) {
		return shelfmark.FallbackLag
	}
	return ""
}

// fallback counts a marked read sent to the primary.
func (rp *replica) fallback(reason string) {
	for i, r := range fallbackReasons {
		if r == reason {
			rp.fallbacks[i].Add(1)
		}
	}
}

// stats reports the replica for shelfmark.ReplicaStats.
func (rp *replica) stats() shelfmark.ReplicaStats {
	st := rp.state.Load()
	s := shelfmark.ReplicaStats{Configured: true, Healthy: st.healthy, Err: st.err, PrimaryReachable: st.primaryOK,
		LagKnown: st.lagKnown, Lag: st.lag, LagBytes: st.lagBytes, MaxLag: rp.maxLag,
		ReadsReplica: rp.readsReplica.Load(), ReadsPrimary: rp.readsPrimary.Load(),
		Fallbacks: make(map[string]int64, len(fallbackReasons)), Pool: poolStats(rp.pool)}
	if st.healthy {
		s.ReplayPosition = formatLSN(st.replay)
	}
	for i, r := range fallbackReasons {
		s.Fallbacks[r] = rp.fallbacks[i].Load()
	}
	return s
}

// parseLSN reads a write-ahead log position as PostgreSQL prints it
// ("16/B374D848": two hexadecimal halves of a 64-bit byte offset).
func parseLSN(s string) (uint64, bool) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok || hi == "" || lo == "" || len(hi) > 8 || len(lo) > 8 {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return h<<32 | l, true
}

// formatLSN prints a position as PostgreSQL does.
func formatLSN(v uint64) string {
	return fmt.Sprintf("%X/%X", v>>32, v&0xffffffff)
}

// WritePosition implements shelfmark.ReplicaRouter: the primary's write-ahead
// log insert position, which is at or past the commit record of every
// transaction committed before the call (even one committed without
// waiting for the disk). It is "" without a replica.
func (db *DB) WritePosition(ctx context.Context) (string, error) {
	if db.replica == nil {
		return "", nil
	}
	var text string
	if err := db.run(db.pool).queryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`, nil, &text); err != nil {
		return "", fmt.Errorf("postgres: write position: %w", err)
	}
	return text, nil
}

// ReplicaStats implements shelfmark.ReplicaRouter.
func (db *DB) ReplicaStats() shelfmark.ReplicaStats {
	if db.replica == nil {
		return shelfmark.ReplicaStats{}
	}
	return db.replica.stats()
}

var _ shelfmark.ReplicaRouter = (*DB)(nil)

// poolStats describes a pool.
func poolStats(p *pgxpool.Pool) shelfmark.PoolStats {
	s := p.Stat()
	return shelfmark.PoolStats{
		MaxOpen:      int(s.MaxConns()),
		InUse:        int(s.AcquiredConns()),
		Idle:         int(s.IdleConns()),
		WaitCount:    s.EmptyAcquireCount(),
		WaitDuration: s.EmptyAcquireWaitTime(),
	}
}

// unreachable reports whether err means the database server cannot be
// reached or went away: a failed connection, a connection that broke, or
// a server that is shutting down or starting.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var (
		ce    *pgconn.ConnectError
		pgErr *pgconn.PgError
		netE  net.Error
	)
	switch {
	case errors.As(err, &ce):
		return true
	case errors.As(err, &pgErr):
		// class 08: connection exception; 57P01..57P03: the server is
		// shutting down, crashed, or cannot accept connections yet.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &netE):
		return true
	}
	return false
}

// unavailable turns an error that means the database cannot be reached
// into EUNAVAILABLE (503 with Retry-After), keeping it wrapped for the logs.
func unavailable(err error) error {
	if !unreachable(err) || shelfmark.ErrorCode(err) == shelfmark.EUNAVAILABLE {
		return err
	}
	e := &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: "The database cannot be reached; try again in a few seconds.",
		Details: map[string]any{"retry_after": unavailableRetry}}
	return fmt.Errorf("%w: %w", e, err)
}
