package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScaleProbe reads what the scale scenario measures about a database
// through a connection of its own, with read-only queries: the size of
// every table and index, the OAI-PMH view's datestamps, members deep in a
// collection's listing, and (PostgreSQL
// on this machine) the server processes' CPU time.
type ScaleProbe struct {
	db      *sql.DB
	backend string

	mu   sync.Mutex
	cpus map[int]time.Duration // the last CPU time read of each server process
	sum  time.Duration         // CPU time seen so far, summed over processes
}

// OpenScaleProbe opens a probe of the PostgreSQL database at database
// (its schema is the connection's current_schema(), so a search_path in
// the URL is obeyed) or, when database is empty, of the SQLite file at
// path (read-only).
func OpenScaleProbe(database, path string) (*ScaleProbe, error) {
	if database != "" {
		db, err := sql.Open("pgx", database)
		if err != nil {
			return nil, fmt.Errorf("scale probe: %w", err)
		}
		db.SetMaxOpenConns(1)
		return &ScaleProbe{db: db, backend: "postgres", cpus: map[int]time.Duration{}}, nil
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_busy_timeout=10000")
	if err != nil {
		return nil, fmt.Errorf("scale probe: %w", err)
	}
	db.SetMaxOpenConns(1)
	return &ScaleProbe{db: db, backend: "sqlite"}, nil
}

// Close closes the probe's connection.
func (p *ScaleProbe) Close() error { return p.db.Close() }

// pgRelations lists the tables and indexes of the current schema with
// their sizes and row estimates.
const pgRelations = `
SELECT c.relname, c.relkind IN ('r', 'p'), COALESCE(t.relname, ''),
       pg_relation_size(c.oid),
       CASE WHEN c.relkind IN ('r', 'p') THEN pg_indexes_size(c.oid) ELSE 0 END,
       CASE WHEN c.relkind IN ('r', 'p') THEN pg_total_relation_size(c.oid) ELSE 0 END,
       c.reltuples::bigint
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_class t ON t.oid = i.indrelid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'i')
ORDER BY 1`

// Relations returns the size of every table and index. On SQLite it reads
// the dbstat table where the library has it, else the whole file as one
// relation named "database".
func (p *ScaleProbe) Relations(ctx context.Context) ([]Relation, error) {
	if p.backend == "postgres" {
		rows, err := p.db.QueryContext(ctx, pgRelations)
		if err != nil {
			return nil, fmt.Errorf("scale probe: sizes: %w", err)
		}
		defer rows.Close()
		var out []Relation
		for rows.Next() {
			var r Relation
			var table bool
			if err := rows.Scan(&r.Name, &table, &r.Table, &r.Bytes, &r.IndexBytes, &r.TotalBytes, &r.Rows); err != nil {
				return nil, fmt.Errorf("scale probe: sizes: %w", err)
			}
			r.Kind = "index"
			if table {
				r.Kind = "table"
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("scale probe: sizes: %w", err)
		}
		return out, nil
	}
	rows, err := p.db.QueryContext(ctx, `SELECT d.name, COALESCE(m.type, 'table'), COALESCE(m.tbl_name, ''), sum(d.pgsize)
		FROM dbstat d LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY d.name ORDER BY d.name`)
	if err == nil {
		defer rows.Close()
		var out []Relation
		idx := map[string]int64{}
		for rows.Next() {
			r := Relation{Rows: -1}
			if err := rows.Scan(&r.Name, &r.Kind, &r.Table, &r.Bytes); err != nil {
				return nil, fmt.Errorf("scale probe: sizes: %w", err)
			}
			if r.Kind != "index" {
				r.Kind, r.Table = "table", ""
			} else {
				idx[r.Table] += r.Bytes
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("scale probe: sizes: %w", err)
		}
		for i := range out {
			if out[i].Kind == "table" {
				out[i].IndexBytes = idx[out[i].Name]
				out[i].TotalBytes = out[i].Bytes + out[i].IndexBytes
			}
		}
		return out, nil
	}
	var pages, size int64
	if err := p.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return nil, fmt.Errorf("scale probe: sizes: %w", err)
	}
	if err := p.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil {
		return nil, fmt.Errorf("scale probe: sizes: %w", err)
	}
	return []Relation{{Name: "database", Kind: "table", Bytes: pages * size, TotalBytes: pages * size, Rows: -1}}, nil
}

// Datestamp returns the datestamp (Unix seconds) of the oai_dc record at
// fraction frac (0..1) of the view's sequence range.
func (p *ScaleProbe) Datestamp(ctx context.Context, frac float64) (int64, error) {
	var lo, hi sql.NullInt64
	if err := p.db.QueryRowContext(ctx, "SELECT min(seq), max(seq) FROM oai_records WHERE prefix = 'oai_dc'").Scan(&lo, &hi); err != nil {
		return 0, fmt.Errorf("scale probe: datestamps: %w", err)
	}
	if !lo.Valid {
		return 0, fmt.Errorf("scale probe: the OAI-PMH view holds no oai_dc record")
	}
	at := lo.Int64 + int64(frac*float64(hi.Int64-lo.Int64))
	var ds int64
	// the number is formatted in: one statement for both drivers' placeholders
	q := "SELECT datestamp FROM oai_records WHERE prefix = 'oai_dc' AND seq >= " + strconv.FormatInt(at, 10) + " ORDER BY seq LIMIT 1"
	if err := p.db.QueryRowContext(ctx, q).Scan(&ds); err != nil {
		return 0, fmt.Errorf("scale probe: datestamps: %w", err)
	}
	return ds, nil
}

// MemberAt returns the key of a member of collection at about frac (0 to
// 1) of the way through its members in key order, the order member pages
// are listed in, and never its last member: a page after it is never
// empty. Works are numbered in the order they were read, but parallel
// ingest workers store them in another order, so a work's number says
// nothing of its place in the listing. The cost is four lookups in the
// memberships' primary key, whatever the collection's size.
func (p *ScaleProbe) MemberAt(ctx context.Context, collection int64, frac float64) (int64, error) {
	c := strconv.FormatInt(collection, 10)
	var lo, hi sql.NullInt64
	// one subquery each, so that both engines read min and max from the
	// index's ends
	if err := p.db.QueryRowContext(ctx, "SELECT (SELECT min(member) FROM memberships WHERE collection = "+c+
		"), (SELECT max(member) FROM memberships WHERE collection = "+c+")").Scan(&lo, &hi); err != nil {
		return 0, fmt.Errorf("scale probe: members of %d: %w", collection, err)
	}
	if !lo.Valid || lo.Int64 == hi.Int64 {
		return 0, fmt.Errorf("scale probe: collection %d has fewer than two members", collection)
	}
	at := lo.Int64 + int64(frac*float64(hi.Int64-lo.Int64))
	var key sql.NullInt64
	// the first member at or past at, short of the last; when every member
	// past at is the last, the one before it
	if err := p.db.QueryRowContext(ctx, "SELECT COALESCE((SELECT min(member) FROM memberships WHERE collection = "+c+
		" AND member >= "+strconv.FormatInt(at, 10)+" AND member < "+strconv.FormatInt(hi.Int64, 10)+
		"), (SELECT max(member) FROM memberships WHERE collection = "+c+" AND member < "+strconv.FormatInt(hi.Int64, 10)+"))").Scan(&key); err != nil {
		return 0, fmt.Errorf("scale probe: members of %d: %w", collection, err)
	}
	if !key.Valid {
		return 0, fmt.Errorf("scale probe: collection %d has no member before its last", collection)
	}
	return key.Int64, nil
}

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// BackendCPU returns the CPU time the PostgreSQL server's processes have
// used, as far as this probe has seen them: it sums, over the processes
// pg_stat_activity lists that /proc shows as postgres processes, what each
// used since the probe first saw it (a process seen for the first time
// counts whole). Processes that come and go between two calls are missed.
// ok is false on SQLite or when no process can be read (a server on
// another machine).
func (p *ScaleProbe) BackendCPU(ctx context.Context) (d time.Duration, ok bool) {
	if p.backend != "postgres" {
		return 0, false
	}
	rows, err := p.db.QueryContext(ctx, "SELECT pid FROM pg_stat_activity")
	if err != nil {
		return 0, false
	}
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	rows.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := false
	for _, pid := range pids {
		cpu, ok := procCPU(pid)
		if !ok {
			continue
		}
		seen = true
		p.sum += cpu - p.cpus[pid]
		p.cpus[pid] = cpu
	}
	return p.sum, seen
}

// procCPU returns the user and system CPU time of a postgres process.
func procCPU(pid int) (time.Duration, bool) {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil || !strings.HasPrefix(string(comm), "postgres") {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// the fields after the command (which may hold spaces) in parentheses
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * clockTick, true
}
