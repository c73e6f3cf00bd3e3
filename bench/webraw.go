package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "github.com/mattn/go-sqlite3"    // database/sql driver "sqlite3"

	"github.com/shelfmark/shelfmark/warc"
)

// The raw limit of the web index's rows: plain batched INSERTs of the rows
// an index of the same pages holds (domains, URLs, captures, links) into
// scratch tables of the same definitions, on the same backend, straight
// through database/sql: no WARC reading, no engine, no counters.

// RawDB is scratch space on a scenario's backend, outside the engine: a
// new SQLite file, or a new schema of the PostgreSQL database. Close
// removes it.
type RawDB struct {
	DB      *sql.DB
	Backend string
	path    string // sqlite: the scratch file
	schema  string // postgres: the scratch schema
	admin   *sql.DB
	names   rawNames
	file    int64 // the captures' file (1 when 0)
}

// rawNames are the tables a RawDB inserts into: the scratch tables, or
// the index's own (RawWebAtSize), which keep the inbound counts in a
// table of their own (counts; none in the scratch tables, whose URL rows
// hold theirs).
type rawNames struct{ domains, urls, counts, captures, links string }

// scratchNames are the scratch tables' names.
var scratchNames = rawNames{domains: "raw_domains", urls: "raw_urls", captures: "raw_captures", links: "raw_links"}

// openRawSQLite opens a SQLite file with the store's settings (WAL,
// synchronous FULL, or NORMAL when relaxed) through one connection.
func openRawSQLite(path string, relaxed bool) (*sql.DB, error) {
	sync := "FULL"
	if relaxed {
		sync = "NORMAL"
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", sync)
	q.Set("_busy_timeout", "10000")
	q.Set("_cache_size", "-65536")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// openRawPostgres opens the PostgreSQL database at database through one
// connection, with search_path schema when given and synchronous_commit
// off when relaxed.
func openRawPostgres(database, schema string, relaxed bool) (*sql.DB, error) {
	u, err := url.Parse(database)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if schema != "" {
		q.Set("search_path", schema)
	}
	if relaxed {
		q.Set("synchronous_commit", "off")
	}
	u.RawQuery = q.Encode()
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// OpenRawScratch opens scratch space: with database "" a new SQLite file
// in dir with the store's settings (WAL, synchronous FULL, or NORMAL when
// relaxed); otherwise a new schema of the PostgreSQL database at that URL
// (synchronous_commit off when relaxed).
func OpenRawScratch(ctx context.Context, database, dir string, relaxed bool) (*RawDB, error) {
	if database == "" {
		f, err := os.CreateTemp(dir, "raw-webindex-*.db")
		if err != nil {
			return nil, err
		}
		path := f.Name()
		f.Close()
		db, err := openRawSQLite(path, relaxed)
		if err != nil {
			os.Remove(path)
			return nil, err
		}
		r := &RawDB{DB: db, Backend: "sqlite", path: path, names: scratchNames}
		if err := r.create(ctx); err != nil {
			r.Close()
			return nil, err
		}
		return r, nil
	}
	admin, err := sql.Open("pgx", database)
	if err != nil {
		return nil, err
	}
	schema := fmt.Sprintf("raw_webindex_%d_%d", os.Getpid(), rand.IntN(1e9))
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return nil, fmt.Errorf("raw scratch schema: %w", err)
	}
	r := &RawDB{Backend: "postgres", schema: schema, admin: admin, names: scratchNames}
	if r.DB, err = openRawPostgres(database, schema, relaxed); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.create(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Close drops the scratch space.
func (r *RawDB) Close() error {
	if r.DB != nil {
		r.DB.Close()
	}
	if r.path != "" {
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(r.path + s)
		}
	}
	if r.admin != nil {
		_, err := r.admin.Exec("DROP SCHEMA " + r.schema + " CASCADE")
		r.admin.Close()
		return err
	}
	return nil
}

// create makes the scratch tables: the web index's tables as the
// backend's migrations define them.
func (r *RawDB) create(ctx context.Context) error {
	ddl := `
CREATE TABLE raw_domains (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, urls INTEGER NOT NULL DEFAULT 0, inbound INTEGER NOT NULL DEFAULT 0);
CREATE INDEX raw_domains_top ON raw_domains (inbound DESC, id) WHERE inbound > 0;
CREATE TABLE raw_urls (id INTEGER PRIMARY KEY, surt TEXT NOT NULL UNIQUE, url TEXT NOT NULL, domain INTEGER NOT NULL, inbound INTEGER NOT NULL DEFAULT 0, current INTEGER NOT NULL DEFAULT 0);
CREATE INDEX raw_urls_top ON raw_urls (domain, inbound DESC, id) WHERE inbound > 0;
CREATE TABLE raw_captures (id INTEGER PRIMARY KEY, url INTEGER NOT NULL, file INTEGER NOT NULL, byte_offset INTEGER NOT NULL, byte_length INTEGER NOT NULL, time INTEGER NOT NULL, type TEXT NOT NULL, mime TEXT NOT NULL, status INTEGER NOT NULL, digest TEXT NOT NULL, record_id TEXT NOT NULL, links BLOB);
CREATE INDEX raw_captures_url ON raw_captures (url, time);
CREATE INDEX raw_captures_file ON raw_captures (file);
CREATE TABLE raw_links (dst INTEGER NOT NULL, src INTEGER NOT NULL, PRIMARY KEY (dst, src)) WITHOUT ROWID;`
	if r.Backend == "postgres" {
		ddl = `
CREATE TABLE raw_domains (id bigint PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, urls bigint NOT NULL DEFAULT 0, inbound bigint NOT NULL DEFAULT 0);
CREATE INDEX raw_domains_top ON raw_domains (inbound DESC, id) WHERE inbound > 0;
CREATE TABLE raw_urls (id bigint PRIMARY KEY, surt text COLLATE "C" NOT NULL UNIQUE, url text NOT NULL, domain bigint NOT NULL, inbound bigint NOT NULL DEFAULT 0, current bigint NOT NULL DEFAULT 0);
CREATE INDEX raw_urls_top ON raw_urls (domain, inbound DESC, id) WHERE inbound > 0;
CREATE TABLE raw_captures (id bigint PRIMARY KEY, url bigint NOT NULL, file bigint NOT NULL, byte_offset bigint NOT NULL, byte_length bigint NOT NULL, time bigint NOT NULL, type text NOT NULL, mime text NOT NULL, status int NOT NULL, digest text NOT NULL, record_id text NOT NULL, links bytea);
CREATE INDEX raw_captures_url ON raw_captures (url, time, id);
CREATE INDEX raw_captures_file ON raw_captures (file, id);
CREATE TABLE raw_links (dst bigint NOT NULL, src bigint NOT NULL, PRIMARY KEY (dst, src));`
	}
	for _, s := range strings.Split(strings.TrimSpace(ddl), ";") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if _, err := r.DB.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("raw scratch tables: %w", err)
		}
	}
	return nil
}

// RawWebResult is what RawWebLimit measured.
type RawWebResult struct {
	Pages       int64 `json:"pages"`
	DomainRows  int64 `json:"domain_rows"`
	URLRows     int64 `json:"url_rows"`
	CaptureRows int64 `json:"capture_rows"`
	LinkRows    int64 `json:"link_rows"`
	// HeldLinks are the link rows to a URL the index already held
	// (RawWebAtSize only).
	HeldLinks int64   `json:"held_links,omitempty"`
	Links     int64   `json:"links"` // the pages' links as extracted, with repeats
	Seconds   float64 `json:"seconds"`
	PagesPerS float64 `json:"pages_per_s"`
	// LinksPerS is Links per second: the rate to compare an index's
	// links/s with.
	LinksPerS    float64 `json:"links_per_s"`
	LinkRowsPerS float64 `json:"link_rows_per_s"`
	Batch        int     `json:"batch"`
}

// rawTables is the rows of one transaction.
type rawTables struct {
	domID   []int64
	domName []string
	urlID   []int64
	urlSURT []string
	urlURL  []string
	urlDom  []int64
	capID   []int64
	capURL  []int64
	capOff  []int64
	capTime []int64
	capDig  []string
	capRID  []string
	capLink [][]byte
	dst     []int64
	src     []int64
}

func (t *rawTables) reset() {
	*t = rawTables{domID: t.domID[:0], domName: t.domName[:0], urlID: t.urlID[:0], urlSURT: t.urlSURT[:0], urlURL: t.urlURL[:0],
		urlDom: t.urlDom[:0], capID: t.capID[:0], capURL: t.capURL[:0], capOff: t.capOff[:0], capTime: t.capTime[:0],
		capDig: t.capDig[:0], capRID: t.capRID[:0], capLink: t.capLink[:0], dst: t.dst[:0], src: t.src[:0]}
}

// RawWebLimit inserts, for d (or until the crawl's first captures run
// out), the rows an index of g's pages holds, in g's order, batch pages
// per durable transaction: each new domain and URL (ids given in order of
// first sight, as an index interns them), one capture row per page with
// its links packed, and the page's distinct links (dst, src) but the
// self-link. It reports the rates.
func RawWebLimit(ctx context.Context, r *RawDB, g *WebGraph, batch int, d time.Duration) (*RawWebResult, error) {
	if batch <= 0 {
		batch = 1000
	}
	res := &RawWebResult{Batch: batch}
	domains := map[int32]int64{}
	urls := map[webTarget]int64{}
	var t rawTables
	intern := func(x webTarget) int64 {
		if id, ok := urls[x]; ok {
			return id
		}
		dom, ok := domains[x.d]
		if !ok {
			dom = int64(len(domains) + 1)
			domains[x.d] = dom
			t.domID, t.domName = append(t.domID, dom), append(t.domName, g.names[x.d])
		}
		id := int64(len(urls) + 1)
		urls[x] = id
		u := g.url(x)
		c, err := warc.Canonical(u)
		if err != nil {
			c.SURT = u
		}
		t.urlID, t.urlSURT, t.urlURL, t.urlDom = append(t.urlID, id), append(t.urlSURT, c.SURT), append(t.urlURL, u), append(t.urlDom, dom)
		return id
	}
	start := time.Now()
	n := 0
	for time.Since(start) < d && n < g.First {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t.reset()
		for k := 0; k < batch && n < g.First; k++ {
			p := g.Page(n)
			src := intern(p.self)
			ids := make([]int64, 0, len(p.links))
			for _, l := range p.links {
				ids = append(ids, intern(l))
			}
			rawPageRows(&t, p, src, ids, int64(n+1))
			res.Links += int64(len(p.links))
			n++
		}
		if err := r.insert(ctx, &t); err != nil {
			return nil, fmt.Errorf("raw web rows: %w", err)
		}
		res.DomainRows += int64(len(t.domID))
		res.URLRows += int64(len(t.urlID))
		res.CaptureRows += int64(len(t.capID))
		res.LinkRows += int64(len(t.dst))
	}
	res.Seconds = time.Since(start).Seconds()
	res.Pages = int64(n)
	if res.Seconds > 0 {
		res.PagesPerS = float64(n) / res.Seconds
		res.LinksPerS = float64(res.Links) / res.Seconds
		res.LinkRowsPerS = float64(res.LinkRows) / res.Seconds
	}
	return res, nil
}

// insert writes one transaction's rows.
func (r *RawDB) insert(ctx context.Context, t *rawTables) error {
	n := r.names
	file := max(r.file, 1)
	tx, err := r.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if r.Backend == "postgres" {
		stmts := []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO ` + n.domains + ` (id, name) SELECT * FROM unnest($1::bigint[], $2::text[])`, []any{t.domID, t.domName}},
			{`INSERT INTO ` + n.urls + ` (id, surt, url, domain) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])`, []any{t.urlID, t.urlSURT, t.urlURL, t.urlDom}},
			{`INSERT INTO ` + n.captures + ` (id, url, file, byte_offset, byte_length, time, type, mime, status, digest, record_id, links)
			  SELECT id, url, $8, off, 900, t, 'response', 'text/html', 200, dig, rid, links FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::bytea[]) AS c(id, url, off, t, dig, rid, links)`,
				[]any{t.capID, t.capURL, t.capOff, t.capTime, t.capDig, t.capRID, t.capLink, file}},
			{`INSERT INTO ` + n.links + ` (dst, src) SELECT * FROM unnest($1::bigint[], $2::bigint[])`, []any{t.dst, t.src}},
		}
		if n.counts != "" {
			stmts = append(stmts, struct {
				sql  string
				args []any
			}{`INSERT INTO ` + n.counts + ` (id, domain) SELECT * FROM unnest($1::bigint[], $2::bigint[])`, []any{t.urlID, t.urlDom}})
		}
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		return tx.Commit()
	}
	// SQLite: multi-row VALUES, at most 999 parameters a statement
	rows := func(table, cols string, ncol, n int, args func(i int) []any) error {
		per := 999 / ncol
		for from := 0; from < n; from += per {
			to := min(n, from+per)
			var b strings.Builder
			b.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
			tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
			vals := make([]any, 0, (to-from)*ncol)
			for i := from; i < to; i++ {
				if i > from {
					b.WriteByte(',')
				}
				b.WriteString(tuple)
				vals = append(vals, args(i)...)
			}
			if _, err := tx.ExecContext(ctx, b.String(), vals...); err != nil {
				return err
			}
		}
		return nil
	}
	if err := rows(n.domains, "id, name", 2, len(t.domID), func(i int) []any { return []any{t.domID[i], t.domName[i]} }); err != nil {
		return err
	}
	if err := rows(n.urls, "id, surt, url, domain", 4, len(t.urlID), func(i int) []any { return []any{t.urlID[i], t.urlSURT[i], t.urlURL[i], t.urlDom[i]} }); err != nil {
		return err
	}
	if n.counts != "" {
		if err := rows(n.counts, "id, domain", 2, len(t.urlID), func(i int) []any { return []any{t.urlID[i], t.urlDom[i]} }); err != nil {
			return err
		}
	}
	if err := rows(n.captures, "id, url, file, byte_offset, byte_length, time, type, mime, status, digest, record_id, links", 12, len(t.capID), func(i int) []any {
		return []any{t.capID[i], t.capURL[i], file, t.capOff[i], 900, t.capTime[i], "response", "text/html", 200, t.capDig[i], t.capRID[i], t.capLink[i]}
	}); err != nil {
		return err
	}
	if err := rows(n.links, "dst, src", 2, len(t.dst), func(i int) []any { return []any{t.dst[i], t.src[i]} }); err != nil {
		return err
	}
	return tx.Commit()
}

// WebRows counts the rows of a store's web index.
type WebRows struct {
	Domains  int64 `json:"domains"`
	URLs     int64 `json:"urls"`
	Captures int64 `json:"captures"`
	Links    int64 `json:"links"`
	// Bytes is the index's size on disk: on PostgreSQL the web_ tables
	// with their indexes and TOAST; on SQLite the database file's pages in
	// use (the web index is nearly all of a bench store).
	Bytes int64 `json:"bytes"`
}

// CountWebRows counts the web index's rows of a store: the SQLite file
// sqlitePath when database is "", else the PostgreSQL database (its
// search_path names the store's schema).
func CountWebRows(ctx context.Context, database, sqlitePath string) (*WebRows, error) {
	var db *sql.DB
	var err error
	if database == "" {
		db, err = sql.Open("sqlite3", "file:"+(&url.URL{Path: sqlitePath}).EscapedPath()+"?mode=ro&_busy_timeout=10000")
	} else {
		db, err = sql.Open("pgx", database)
	}
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := &WebRows{}
	for _, c := range []struct {
		table string
		n     *int64
	}{{"web_domains", &out.Domains}, {"web_urls", &out.URLs}, {"web_captures", &out.Captures}, {"web_links", &out.Links}} {
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+c.table).Scan(c.n); err != nil {
			return nil, fmt.Errorf("count %s: %w", c.table, err)
		}
	}
	size := `SELECT (page_count - freelist_count) * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`
	if database != "" {
		size = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE 'web\_%'`
	}
	if err := db.QueryRowContext(ctx, size).Scan(&out.Bytes); err != nil {
		return nil, fmt.Errorf("size of the web index: %w", err)
	}
	return out, nil
}

// rawDir is where a SQLite scratch file goes: beside the store.
func rawDir(storePath string) string {
	if storePath == "" {
		return os.TempDir()
	}
	return filepath.Dir(storePath)
}
