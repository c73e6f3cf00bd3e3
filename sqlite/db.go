// Package sqlite implements shelfmark.Storage on SQLite (mattn/go-sqlite3,
// built with cgo and the sqlite_fts5 tag). It is the embedded default: one
// database file in WAL mode, one write connection (the engine batches writes
// into group commits) and a pool of read connections that never block it.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Options configure a database.
type Options struct {
	// Tracer, when set, sees every statement and its row count.
	Tracer shelfmark.StatementTracer
	// Relaxed sets synchronous=NORMAL: commits survive a crash of the
	// process but the last ones may be lost if the machine loses power.
	// The default (false) is synchronous=FULL: every acknowledged commit is
	// on disk.
	Relaxed bool
	// ReadConns is the size of the read pool (0 = 2 × cores, at least 4).
	ReadConns int
	// WALLimit bounds the write-ahead log file (0 = DefaultWALLimit).
	// Past it, a commit waits briefly for the read transactions that still
	// use old frames of the log, so that the log can be rewound even
	// when readers never pause; the file is then truncated back to it.
	WALLimit int64
	// SearchTimeout bounds the statements of one search (0 =
	// shelfmark.DefaultSearchTimeout; less than 0: no bound). A search
	// still running at it is interrupted and answers
	// shelfmark.SearchTimeoutError (see searchtimeout.go).
	SearchTimeout time.Duration
	// WriteCache is the most memory, in bytes, that the write
	// connection's page cache holds (0: DefaultWriteCache). It fills only
	// as the writer reads pages, so a larger one costs nothing while the
	// database is small. On a large database whose writes land on keys
	// spread over large tables (a link index of millions of pages), it
	// keeps more of the pages the writer changes again and again, which it
	// would otherwise read back from the operating system's cache.
	WriteCache int64
	// CheckpointAtLimit leaves the write-ahead log to grow to WALLimit
	// before it is copied into the database file, instead of copying it
	// after every commit. A bulk load whose transactions change pages
	// spread over large indexes (a web archive's link index) then writes
	// a page it changes in many transactions to the database file once
	// per limit's worth of log rather than once per transaction; the
	// commit that finds the log past the limit copies it, holding the
	// writer's turn. Readers see the same data either way; a process
	// killed meanwhile leaves up to the limit of log, which the next open
	// reads back before it starts.
	CheckpointAtLimit bool
}

// DefaultWriteCache is the write connection's page cache unless
// Options.WriteCache says otherwise: the right edges and the random-key
// index pages that every insert touches.
const DefaultWriteCache = 64 << 20

// DB is a SQLite database. It implements shelfmark.Storage.
type DB struct {
	sqlstore.Direct

	path   string
	tracer shelfmark.StatementTracer
	write  *sql.DB // one writer at a time (writeMu), plus a spare connection for preparing statements
	read   *sql.DB // readers bounded by readSem, plus a spare connection for preparing statements
	ckptDB *sql.DB // the checkpointer's connection
	ckpt   *checkpointer

	closeOnce sync.Once

	writeMu sync.Mutex    // SQLite has one writer: transactions take turns here, not in busy loops
	readSem chan struct{} // bounds concurrent read transactions below the pool size

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared statements of the write and read pools, by pool+SQL

	searchTimeout time.Duration // see Options.SearchTimeout; 0: none

	chunked map[string]bool // the statements read in chunks (chunks.go)
}

var _ shelfmark.Storage = (*DB)(nil)

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. The first Open of the process also has glibc keep
// freed memory for SQLite's next statement (tuneMalloc).
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if err := registerRank(); err != nil {
		return nil, err
	}
	if err := registerChunks(); err != nil {
		return nil, err
	}
	tuneMalloc()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create database directory: %w", err)
	}
	sync := "FULL"
	if opts.Relaxed {
		sync = "NORMAL"
	}
	params := url.Values{}
	params.Set("_journal_mode", "WAL")
	params.Set("_synchronous", sync)
	params.Set("_busy_timeout", "10000")
	params.Set("_foreign_keys", "0")
	// Each connection without a mutex of its own (SQLite's multi-thread
	// mode): database/sql hands a connection, and its statements and
	// rows, to one goroutine at a time, so the lock SQLite otherwise takes
	// and releases at every call (each column of each row read) guards
	// nothing. sqlite3_interrupt, which the driver calls from another
	// goroutine when a context ends, takes no such lock. A read of a
	// book's pages and files is about 8% faster without it.
	params.Set("_mutex", "no")
	params.Set("_cache_size", "-65536") // 64 MiB, the checkpointer's
	wparams := cloneValues(params)
	wparams.Set("_txlock", "immediate")
	writeCache := opts.WriteCache
	if writeCache <= 0 {
		writeCache = DefaultWriteCache
	}
	// in KiB when negative
	wparams.Set("_cache_size", strconv.FormatInt(-max(writeCache>>10, 1), 10))
	rparams := cloneValues(params)
	rparams.Set("_txlock", "deferred")
	rparams.Set("_query_only", "1")
	// A reader's pages come from the operating system's page cache, which
	// every connection shares; a private cache of 64 MiB on each of them
	// holds the same pages several times over and keeps growing with the
	// database until each is full (several hundred MiB of RSS on a large
	// one). The writer keeps Options.WriteCache.
	rparams.Set("_cache_size", "-16384") // 16 MiB per read connection

	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?"
	// SQLite's automatic checkpoint is off on the write connection: the
	// checkpointer copies the log into the database file from a connection
	// of its own while writers go on, and past WALLimit waits for the
	// readers of old frames (checkpoint.go); journal_size_limit truncates
	// the rewound file back to the limit.
	limit := opts.WALLimit
	if limit <= 0 {
		limit = DefaultWALLimit
	}
	onConnect := fmt.Sprintf("PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = %d", limit)
	w := openPool(dsn+wparams.Encode(), onConnect)
	w.SetMaxOpenConns(2)
	w.SetMaxIdleConns(2)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, tracer: opts.Tracer, write: w, stmts: map[string]*sql.Stmt{}, searchTimeout: sqlstore.SearchTimeout(opts.SearchTimeout),
		chunked: chunkedStatements()}
	db.Direct = sqlstore.NewDirect(&dialect, db.direct)
	if err := requireFTS5(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r := openPool(dsn+rparams.Encode(), "")
	n := opts.ReadConns
	if n <= 0 {
		n = max(2*runtime.NumCPU(), 4)
	}
	r.SetMaxOpenConns(n + 1)
	r.SetMaxIdleConns(n + 1)
	db.readSem = make(chan struct{}, n)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	db.read = r
	c := openPool(dsn+params.Encode(), "")
	c.SetMaxOpenConns(1)
	c.SetMaxIdleConns(1)
	c.SetConnMaxLifetime(0)
	c.SetConnMaxIdleTime(0)
	db.ckptDB, db.ckpt = c, newCheckpointer(c, path+"-wal", limit, opts.CheckpointAtLimit, &db.writeMu)
	return db, nil
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// Backend returns "sqlite".
func (db *DB) Backend() string { return "sqlite" }

// Path returns the database file.
func (db *DB) Path() string { return db.path }

// Close closes both pools. Closing twice is harmless.
func (db *DB) Close() error {
	var err error
	db.closeOnce.Do(func() { err = db.close() })
	return err
}

func (db *DB) close() error {
	db.mu.Lock()
	for _, s := range db.stmts {
		s.Close()
	}
	db.stmts = map[string]*sql.Stmt{}
	db.mu.Unlock()
	err1 := db.read.Close()
	db.ckpt.close()
	db.ckptDB.Close()
	err2 := db.write.Close()
	if err1 != nil {
		return fmt.Errorf("close read pool: %w", err1)
	}
	if err2 != nil {
		return fmt.Errorf("close write pool: %w", err2)
	}
	return nil
}

// Stats reports the read pool (the write pool is always one connection).
func (db *DB) Stats() shelfmark.PoolStats {
	s := db.read.Stats()
	w := db.write.Stats()
	return shelfmark.PoolStats{
		MaxOpen:      s.MaxOpenConnections + w.MaxOpenConnections,
		InUse:        s.InUse + w.InUse,
		Idle:         s.Idle + w.Idle,
		WaitCount:    s.WaitCount + w.WaitCount,
		WaitDuration: s.WaitDuration + w.WaitDuration,
	}
}

// prepared returns a statement prepared once on pool p.
func (db *DB) prepared(ctx context.Context, p *sql.DB, query string) (*sql.Stmt, error) {
	key := query
	if p == db.read {
		key = "r:" + query
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if s, ok := db.stmts[key]; ok {
		return s, nil
	}
	s, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", firstLine(query), err)
	}
	db.stmts[key] = s
	return s, nil
}

func firstLine(q string) string {
	q = strings.TrimSpace(q)
	if i := strings.IndexByte(q, '\n'); i >= 0 {
		q = q[:i]
	}
	return q
}

// View runs fn in a read transaction on the read pool.
func (db *DB) View(ctx context.Context, fn func(shelfmark.ReadTx) error) error {
	select {
	case db.readSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.readSem }()
	sqlTx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer sqlTx.Rollback()
	return fn(db.newReadTx(db.read, sqlTx))
}

// Update runs fn in a write transaction (BEGIN IMMEDIATE) and commits it.
func (db *DB) Update(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return full(fmt.Errorf("begin write: %w", err))
	}
	if err := fn(db.newWriteTx(db.write, sqlTx)); err != nil {
		if rerr := sqlTx.Rollback(); rerr != nil {
			return fmt.Errorf("%w (and rollback failed: %v)", err, rerr)
		}
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return full(fmt.Errorf("commit: %w", err))
	}
	db.ckpt.afterCommit(ctx)
	return nil
}

// UpdateQueue runs fn like Update: SQLite has one writer, and the
// connection's durability is set for all its transactions.
func (db *DB) UpdateQueue(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	return db.Update(ctx, fn)
}

// connector opens connections with mattn's driver without registering a
// global driver name, running an optional statement on each new connection.
type connector struct {
	driver *sqlite3.SQLiteDriver
	dsn    string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.driver }

func openPool(dsn, onConnect string) *sql.DB {
	d := &sqlite3.SQLiteDriver{}
	if onConnect != "" {
		d.ConnectHook = func(conn *sqlite3.SQLiteConn) error {
			_, err := conn.Exec(onConnect, nil)
			return err
		}
	}
	return sql.OpenDB(connector{driver: d, dsn: dsn})
}
