package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// The web index (web.go in the root package, migration 0010_web.sql).
// Every bulk method sends one statement whatever the number of rows
// (unnest arrays, or COPY for many new captures and links), with the rows
// sorted by key so that concurrent writers lock them in one order.

// webNanos is t as stored: Unix nanoseconds.
func webNanos(t time.Time) int64 { return t.UnixNano() }

func fromWebNanos(v int64) time.Time { return time.Unix(0, v).UTC() }

// cursorNanos is the time of a WebURLCaptures cursor: a zero time starts
// before the first capture, or, descending, after the last.
func cursorNanos(at time.Time, desc bool) int64 {
	switch {
	case !at.IsZero():
		return webNanos(at)
	case desc:
		return math.MaxInt64
	}
	return math.MinInt64
}

// webURLCols are the columns scanWebURL reads, from webURLsFrom: a URL u
// and its count n.
const (
	webURLCols  = `u.id, u.surt, u.url, u.domain, n.inbound, u.current`
	webURLsFrom = ` FROM web_urls u JOIN web_url_counts n ON n.id = u.id`
)

func scanWebURL(rows pgx.Rows) (*shelfmark.WebURLRow, error) {
	var u shelfmark.WebURLRow
	err := rows.Scan(&u.ID, &u.SURT, &u.URL, &u.Domain, &u.Inbound, &u.Current)
	return &u, err
}

const webDomainCols = `id, name, urls, inbound`

func scanWebDomain(rows pgx.Rows) (*shelfmark.WebDomainRow, error) {
	var d shelfmark.WebDomainRow
	err := rows.Scan(&d.ID, &d.Name, &d.URLs, &d.Inbound)
	return &d, err
}

const webFileCols = `file, work, byte_offset, records, errors, done, removed`

func scanWebFile(rows pgx.Rows) (*shelfmark.WebFileRow, error) {
	var f shelfmark.WebFileRow
	err := rows.Scan(&f.File, &f.Work, &f.Offset, &f.Records, &f.Errors, &f.Done, &f.Removed)
	return &f, err
}

// captureCols are the columns scanCapture reads: a capture c joined with
// its URL u; the capture's URL is its own when it has one (see
// migration 0014_capture_target.sql), else its key's.
const captureCols = `c.id, c.url, c.file, c.byte_offset, c.byte_length, c.time, c.type, c.mime, c.status, c.digest, c.record_id, c.links, u.surt, COALESCE(c.target, u.url)`

func scanCapture(rows pgx.Rows) (*shelfmark.CaptureRow, error) {
	var (
		c      shelfmark.CaptureRow
		ns     int64
		status int32
		links  []byte
	)
	if err := rows.Scan(&c.ID, &c.URL, &c.File, &c.Offset, &c.Length, &ns, &c.Type, &c.MIME, &status,
		&c.Digest, &c.RecordID, &links, &c.SURT, &c.Target); err != nil {
		return nil, err
	}
	c.Time, c.Status = fromWebNanos(ns), int(status)
	if links != nil {
		ids, err := shelfmark.DecodeLinkIDs(links)
		if err != nil {
			return nil, fmt.Errorf("capture %d: %w", c.ID, err)
		}
		c.HasLinks, c.Links = true, ids
	}
	return &c, nil
}

func (t *readTx) webURLs(ctx context.Context, sql string, args ...any) ([]*shelfmark.WebURLRow, error) {
	var out []*shelfmark.WebURLRow
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		u, err := scanWebURL(rows)
		out = append(out, u)
		return err
	})
	return out, err
}

func (t *readTx) webDomains(ctx context.Context, sql string, args ...any) ([]*shelfmark.WebDomainRow, error) {
	var out []*shelfmark.WebDomainRow
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		d, err := scanWebDomain(rows)
		out = append(out, d)
		return err
	})
	return out, err
}

func (t *readTx) captures(ctx context.Context, sql string, args ...any) ([]*shelfmark.CaptureRow, error) {
	var out []*shelfmark.CaptureRow
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		c, err := scanCapture(rows)
		out = append(out, c)
		return err
	})
	return out, err
}

// WebFile returns a file's index state, or nil.
func (t *readTx) WebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	var out *shelfmark.WebFileRow
	_, err := t.r.query(ctx, `SELECT `+webFileCols+` FROM web_files WHERE file = $1`, []any{file}, func(rows pgx.Rows) (err error) {
		out, err = scanWebFile(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: web file %d: %w", file, err)
	}
	return out, nil
}

// WebFiles returns up to limit files with keys above after, by key.
func (t *readTx) WebFiles(ctx context.Context, after int64, limit int) ([]*shelfmark.WebFileRow, error) {
	var out []*shelfmark.WebFileRow
	_, err := t.r.query(ctx, `SELECT `+webFileCols+` FROM web_files WHERE file > $1 ORDER BY file LIMIT $2`, []any{after, limit}, func(rows pgx.Rows) error {
		f, err := scanWebFile(rows)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: web files after %d: %w", after, err)
	}
	return out, nil
}

// WebURLsBySURT returns the known URLs among surts.
func (t *readTx) WebURLsBySURT(ctx context.Context, surts []string) (map[string]*shelfmark.WebURLRow, error) {
	out := make(map[string]*shelfmark.WebURLRow, len(surts))
	if len(surts) == 0 {
		return out, nil
	}
	rows, err := t.webURLs(ctx, `SELECT `+webURLCols+webURLsFrom+` WHERE u.surt = ANY($1)`, surts)
	if err != nil {
		return nil, fmt.Errorf("postgres: web urls by surt (%d): %w", len(surts), err)
	}
	for _, u := range rows {
		out[u.SURT] = u
	}
	return out, nil
}

// WebURLRows returns the URLs of ids that exist, by id.
func (t *readTx) WebURLRows(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.webURLs(ctx, `SELECT `+webURLCols+webURLsFrom+` WHERE u.id = ANY($1) ORDER BY u.id`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: web urls (%d): %w", len(ids), err)
	}
	return rows, nil
}

// WebDomain returns a domain by name, or nil.
func (t *readTx) WebDomain(ctx context.Context, name string) (*shelfmark.WebDomainRow, error) {
	rows, err := t.webDomains(ctx, `SELECT `+webDomainCols+` FROM web_domains WHERE name = $1`, name)
	if err != nil {
		return nil, fmt.Errorf("postgres: web domain %q: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows[0], nil
}

// WebDomainRows returns the domains of ids that exist, by id.
func (t *readTx) WebDomainRows(ctx context.Context, ids []int64) ([]*shelfmark.WebDomainRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.webDomains(ctx, `SELECT `+webDomainCols+` FROM web_domains WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: web domains (%d): %w", len(ids), err)
	}
	return rows, nil
}

// WebCaptureRows returns the captures of ids that exist, by id.
func (t *readTx) WebCaptureRows(ctx context.Context, ids []int64) ([]*shelfmark.CaptureRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.captures(ctx, `SELECT `+captureCols+` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.id = ANY($1) ORDER BY c.id`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: web captures (%d): %w", len(ids), err)
	}
	return rows, nil
}

// timeBounds returns the capture time range of a scan: since <= time <
// until, the zero times meaning no bound.
func timeBounds(since, until time.Time) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if !since.IsZero() {
		lo = webNanos(since)
	}
	if !until.IsZero() {
		hi = webNanos(until)
	}
	return lo, hi
}

// Statements of WebCaptures. The rest of the After capture's URL is one
// range of web_captures_url; the URLs after it a range of the surt index,
// each joined with its captures (which PostgreSQL puts in (time, id) order
// by an incremental sort of each URL's captures). A To of "" is sent as
// NULL: no upper bound.
const (
	capturesRestOfURLSQL = `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = (SELECT id FROM web_urls WHERE surt = $1) AND c.time >= $2 AND c.time < $3 AND (c.time, c.id) > ($4, $5)
ORDER BY c.time, c.id LIMIT $6`
	capturesFromSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt >= $1 AND ($2::text IS NULL OR u.surt < $2) AND c.time >= $3 AND c.time < $4
ORDER BY u.surt, c.time, c.id LIMIT $5`
	capturesAfterSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt > $1 AND ($2::text IS NULL OR u.surt < $2) AND c.time >= $3 AND c.time < $4
ORDER BY u.surt, c.time, c.id LIMIT $5`
)

// WebCaptures scans captures by SURT range in (SURT, time, id) order: at
// most two statements (the rest of the After capture's URL, then the URLs
// after it).
func (t *readTx) WebCaptures(ctx context.Context, q shelfmark.CaptureScan) ([]*shelfmark.CaptureRow, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	lo, hi := timeBounds(q.Since, q.Until)
	var to *string
	if q.To != "" {
		to = &q.To
	}
	var out []*shelfmark.CaptureRow
	from, stmt := q.From, capturesFromSQL
	if a := q.After; a != nil && a.SURT >= q.From {
		if q.To == "" || a.SURT < q.To {
			rows, err := t.captures(ctx, capturesRestOfURLSQL, a.SURT, lo, hi, webNanos(a.Time), a.ID, q.Limit)
			if err != nil {
				return nil, fmt.Errorf("postgres: web captures after %s: %w", a.SURT, err)
			}
			out = rows
		}
		from, stmt = a.SURT, capturesAfterSQL
	}
	if len(out) >= q.Limit || (q.To != "" && from >= q.To) {
		return out, nil
	}
	rows, err := t.captures(ctx, stmt, from, to, lo, hi, q.Limit-len(out))
	if err != nil {
		return nil, fmt.Errorf("postgres: web captures from %s: %w", from, err)
	}
	return append(out, rows...), nil
}

// urlCapturesSQL is a page of one URL's captures after (time, id), or
// before it when desc is set: one range of web_captures_url.
func urlCapturesSQL(desc bool) string {
	if desc {
		return `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = $1 AND (c.time, c.id) < ($2, $3) ORDER BY c.time DESC, c.id DESC LIMIT $4`
	}
	return `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = $1 AND (c.time, c.id) > ($2, $3) ORDER BY c.time, c.id LIMIT $4`
}

// WebURLCaptures returns up to limit captures of url after (at, id) by
// (time, id), or before it, descending, when desc is set.
func (t *readTx) WebURLCaptures(ctx context.Context, url int64, at time.Time, id int64, desc bool, limit int) ([]*shelfmark.CaptureRow, error) {
	rows, err := t.captures(ctx, urlCapturesSQL(desc), url, cursorNanos(at, desc), id, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: captures of web url %d: %w", url, err)
	}
	return rows, nil
}

// WebFileCaptures returns up to limit captures of file with ids above
// after, by id.
func (t *readTx) WebFileCaptures(ctx context.Context, file, after int64, limit int) ([]*shelfmark.CaptureRow, error) {
	rows, err := t.captures(ctx, `SELECT `+captureCols+` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.file = $1 AND c.id > $2 ORDER BY c.id LIMIT $3`, file, after, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: captures of web file %d: %w", file, err)
	}
	return rows, nil
}

// WebInbound returns up to limit pages linking to dst with ids above
// after, ascending: one range of the web_links key.
func (t *readTx) WebInbound(ctx context.Context, dst, after int64, limit int) ([]int64, error) {
	var out []int64
	_, err := t.r.query(ctx, `SELECT src FROM web_links WHERE dst = $1 AND src > $2 ORDER BY src LIMIT $3`, []any{dst, after, limit}, func(rows pgx.Rows) error {
		var id int64
		err := rows.Scan(&id)
		out = append(out, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: inbound links of web url %d: %w", dst, err)
	}
	return out, nil
}

// webTopURLsSQL reads the first n entries of the domain's range of the
// partial index web_url_counts_top.
const webTopURLsSQL = `SELECT ` + webURLCols + ` FROM web_url_counts n JOIN web_urls u ON u.id = n.id
WHERE n.domain = $1 AND n.inbound > 0 ORDER BY n.inbound DESC, n.id LIMIT $2`

// webTopDomainsSQL reads the first n entries of web_domains_top.
const webTopDomainsSQL = `SELECT ` + webDomainCols + ` FROM web_domains WHERE inbound > 0 ORDER BY inbound DESC, id LIMIT $1`

// WebTopURLs returns the n URLs of domain with the most inbound links.
func (t *readTx) WebTopURLs(ctx context.Context, domain int64, n int) ([]*shelfmark.WebURLRow, error) {
	rows, err := t.webURLs(ctx, webTopURLsSQL, domain, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: top urls of web domain %d: %w", domain, err)
	}
	return rows, nil
}

// WebTopDomains returns the n domains with the most inbound links.
func (t *readTx) WebTopDomains(ctx context.Context, n int) ([]*shelfmark.WebDomainRow, error) {
	rows, err := t.webDomains(ctx, webTopDomainsSQL, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: top web domains: %w", err)
	}
	return rows, nil
}

// LockWebFile returns a file's index state, or nil, locked until the
// transaction ends.
func (t *writeTx) LockWebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	var out *shelfmark.WebFileRow
	_, err := t.r.query(ctx, `SELECT `+webFileCols+` FROM web_files WHERE file = $1 FOR UPDATE`, []any{file}, func(rows pgx.Rows) (err error) {
		out, err = scanWebFile(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: lock web file %d: %w", file, err)
	}
	return out, nil
}

// PutWebFile inserts or replaces a file's state.
func (t *writeTx) PutWebFile(ctx context.Context, f *shelfmark.WebFileRow) error {
	if _, err := t.r.exec(ctx, `INSERT INTO web_files (`+webFileCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (file) DO UPDATE SET work = EXCLUDED.work, byte_offset = EXCLUDED.byte_offset, records = EXCLUDED.records,
errors = EXCLUDED.errors, done = EXCLUDED.done, removed = EXCLUDED.removed`,
		f.File, f.Work, f.Offset, f.Records, f.Errors, f.Done, f.Removed); err != nil {
		return fmt.Errorf("postgres: put web file %d: %w", f.File, err)
	}
	return nil
}

// firstOf returns the distinct keys of n rows in ascending order and, for
// each, the index of the first row that has it.
func firstOf(n int, key func(i int) string) (keys []string, first map[string]int) {
	first = make(map[string]int, n)
	for i := 0; i < n; i++ {
		k := key(i)
		if _, ok := first[k]; !ok {
			first[k] = i
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, first
}

// intern finds the ids of keys in table by column, inserting the unknown
// ones: one statement to find the known, one to insert the rest (ON
// CONFLICT DO NOTHING, in key order), and, only when a concurrent writer
// inserted some of them meanwhile, one more to read those. insert returns
// the INSERT … RETURNING id, key statement and its arguments for the
// missing keys. newKey is called for each key this call inserted.
func (t *writeTx) intern(ctx context.Context, what, table, column string, keys []string,
	insert func(missing []string) (string, []any), newKey func(string)) (map[string]int64, error) {
	ids := make(map[string]int64, len(keys))
	scan := func(rows pgx.Rows) error {
		var id int64
		var k string
		err := rows.Scan(&id, &k)
		ids[k] = id
		return err
	}
	find := `SELECT id, ` + column + ` FROM ` + table + ` WHERE ` + column + ` = ANY($1)`
	if _, err := t.r.query(ctx, find, []any{keys}, scan); err != nil {
		return nil, fmt.Errorf("postgres: find %d %s: %w", len(keys), what, err)
	}
	var missing []string
	for _, k := range keys {
		if _, ok := ids[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return ids, nil
	}
	sql, args := insert(missing)
	if _, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		var id int64
		var k string
		err := rows.Scan(&id, &k)
		ids[k] = id
		newKey(k)
		return err
	}); err != nil {
		return nil, fmt.Errorf("postgres: insert %d %s: %w", len(missing), what, err)
	}
	var raced []string
	for _, k := range missing {
		if _, ok := ids[k]; !ok {
			raced = append(raced, k)
		}
	}
	if len(raced) > 0 {
		// inserted by a transaction that committed after this one's
		// first statement began: READ COMMITTED shows them now
		if _, err := t.r.query(ctx, find, []any{raced}, scan); err != nil {
			return nil, fmt.Errorf("postgres: find %d %s: %w", len(raced), what, err)
		}
		for _, k := range raced {
			if _, ok := ids[k]; !ok {
				return nil, fmt.Errorf("postgres: %s %q neither inserted nor found", what, k)
			}
		}
	}
	return ids, nil
}

// InternWebDomains sets the IDs of domains by name, inserting the unknown
// ones, safely beside concurrent writers. Of rows that repeat a new name,
// the first gets New.
func (t *writeTx) InternWebDomains(ctx context.Context, rows []*shelfmark.WebDomainRow) error {
	if len(rows) == 0 {
		return nil
	}
	names, first := firstOf(len(rows), func(i int) string { return rows[i].Name })
	ids, err := t.intern(ctx, "web domains", "web_domains", "name", names, func(missing []string) (string, []any) {
		return `INSERT INTO web_domains (name) SELECT * FROM unnest($1::text[])
ON CONFLICT (name) DO NOTHING RETURNING id, name`, []any{missing}
	}, func(name string) { rows[first[name]].New = true })
	if err != nil {
		return err
	}
	for _, d := range rows {
		d.ID = ids[d.Name]
	}
	return nil
}

// InternWebURLs sets the IDs of URLs by SURT, inserting the unknown ones
// (as InternWebDomains does).
func (t *writeTx) InternWebURLs(ctx context.Context, rows []*shelfmark.WebURLRow) error {
	if len(rows) == 0 {
		return nil
	}
	surts, first := firstOf(len(rows), func(i int) string { return rows[i].SURT })
	ids, err := t.intern(ctx, "web urls", "web_urls", "surt", surts, func(missing []string) (string, []any) {
		urls, domains := make([]string, len(missing)), make([]int64, len(missing))
		for i, s := range missing {
			u := rows[first[s]]
			urls[i], domains[i] = u.URL, u.Domain
		}
		// the new URLs and their counts in one statement
		return `WITH ins AS (
    INSERT INTO web_urls (surt, url, domain) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
    ON CONFLICT (surt) DO NOTHING RETURNING id, surt, domain
), counts AS (
    INSERT INTO web_url_counts (id, domain) SELECT id, domain FROM ins
)
SELECT id, surt FROM ins`, []any{missing, urls, domains}
	}, func(surt string) { rows[first[surt]].New = true })
	if err != nil {
		return err
	}
	for _, u := range rows {
		u.ID = ids[u.SURT]
	}
	return nil
}

// LockWebURLs returns the rows of ids, locked in id order until the
// transaction ends.
func (t *writeTx) LockWebURLs(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.webURLs(ctx, `SELECT `+webURLCols+webURLsFrom+` WHERE u.id = ANY($1) ORDER BY u.id FOR UPDATE`, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: lock %d web urls: %w", len(ids), err)
	}
	return rows, nil
}

// captureColumns are the columns InsertWebCaptures writes.
var captureColumns = []string{"id", "url", "file", "byte_offset", "byte_length", "time", "type", "mime", "status", "digest", "record_id", "links", "target"}

func captureLinks(c *shelfmark.CaptureRow) []byte {
	if !c.HasLinks {
		return nil
	}
	return append([]byte{}, shelfmark.EncodeLinkIDs(c.Links)...)
}

// captureTarget is the target column of c: its own URL, or NULL when it
// has none apart from its URL row's.
func captureTarget(c *shelfmark.CaptureRow) *string {
	if c.Target == "" {
		return nil
	}
	return &c.Target
}

// InsertWebCaptures takes ids for the captures from the table's sequence
// and inserts them: two statements (the insert a COPY for many rows).
func (t *writeTx) InsertWebCaptures(ctx context.Context, rows []*shelfmark.CaptureRow) error {
	n := len(rows)
	if n == 0 {
		return nil
	}
	i := 0
	if _, err := t.r.query(ctx, `SELECT nextval(pg_get_serial_sequence('web_captures', 'id')) FROM generate_series(1, $1)`,
		[]any{n}, func(r pgx.Rows) error {
			if i >= n {
				return fmt.Errorf("more ids than captures")
			}
			err := r.Scan(&rows[i].ID)
			i++
			return err
		}); err != nil {
		return fmt.Errorf("postgres: take ids for %d web captures: %w", n, err)
	}
	if i != n {
		return fmt.Errorf("postgres: took %d ids for %d web captures", i, n)
	}
	if t.r.useCopy(n) {
		if _, err := t.r.copyFrom(ctx, "web_captures", captureColumns, n, func(i int) []any {
			c := rows[i]
			return []any{c.ID, c.URL, c.File, c.Offset, c.Length, webNanos(c.Time), c.Type, c.MIME, int32(c.Status), c.Digest, c.RecordID, captureLinks(c), captureTarget(c)}
		}); err != nil {
			return fmt.Errorf("postgres: insert %d web captures: %w", n, err)
		}
		return nil
	}
	ids, urls, files, offsets, lengths, times := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	types, mimes, digests, recordIDs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	statuses := make([]int32, n)
	links := make([][]byte, n)
	targets := make([]*string, n)
	for i, c := range rows {
		ids[i], urls[i], files[i], offsets[i], lengths[i], times[i] = c.ID, c.URL, c.File, c.Offset, c.Length, webNanos(c.Time)
		types[i], mimes[i], digests[i], recordIDs[i] = c.Type, c.MIME, c.Digest, c.RecordID
		statuses[i], links[i], targets[i] = int32(c.Status), captureLinks(c), captureTarget(c)
	}
	if _, err := t.r.exec(ctx, `INSERT INTO web_captures (id, url, file, byte_offset, byte_length, time, type, mime, status, digest, record_id, links, target)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[],
  $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::bytea[], $13::text[])`,
		ids, urls, files, offsets, lengths, times, types, mimes, statuses, digests, recordIDs, links, targets); err != nil {
		return fmt.Errorf("postgres: insert %d web captures: %w", n, err)
	}
	return nil
}

// DeleteWebCaptures removes captures in one statement.
func (t *writeTx) DeleteWebCaptures(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Sorted(slices.Values(ids))
	if _, err := t.r.exec(ctx, `DELETE FROM web_captures WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("postgres: delete %d web captures: %w", len(ids), err)
	}
	return nil
}

// sortedPairs returns m's keys in order and their values, leaving out zero
// values when skipZero is set.
func sortedPairs(m map[int64]int64, skipZero bool) (keys, vals []int64) {
	keys = make([]int64, 0, len(m))
	for k, v := range m {
		if v != 0 || !skipZero {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	vals = make([]int64, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return keys, vals
}

// SetWebCurrent sets the current capture of URLs in one statement.
func (t *writeTx) SetWebCurrent(ctx context.Context, current map[int64]int64) error {
	if len(current) == 0 {
		return nil
	}
	keys, vals := sortedPairs(current, false)
	if _, err := t.r.exec(ctx, `UPDATE web_urls u SET current = d.current
FROM unnest($1::bigint[], $2::bigint[]) AS d(id, current) WHERE u.id = d.id`, keys, vals); err != nil {
		return fmt.Errorf("postgres: set the current captures of %d web urls: %w", len(keys), err)
	}
	return nil
}

// linkArrays returns links sorted by (dst, src) as two arrays.
func linkArrays(links []shelfmark.WebLink) (dsts, srcs []int64) {
	links = slices.Clone(links)
	slices.SortFunc(links, func(a, b shelfmark.WebLink) int {
		if a.Dst != b.Dst {
			return cmpInt(a.Dst, b.Dst)
		}
		return cmpInt(a.Src, b.Src)
	})
	dsts, srcs = make([]int64, len(links)), make([]int64, len(links))
	for i, l := range links {
		dsts[i], srcs[i] = l.Dst, l.Src
	}
	return dsts, srcs
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var linkColumns = []string{"dst", "src"}

// AddWebLinks inserts links in one statement (COPY for many); a link that
// exists already is an error.
func (t *writeTx) AddWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	dsts, srcs := linkArrays(links)
	if t.r.useCopy(len(dsts)) {
		if _, err := t.r.copyFrom(ctx, "web_links", linkColumns, len(dsts), func(i int) []any {
			return []any{dsts[i], srcs[i]}
		}); err != nil {
			return fmt.Errorf("postgres: add %d web links: %w", len(dsts), err)
		}
		return nil
	}
	if _, err := t.r.exec(ctx, `INSERT INTO web_links (dst, src) SELECT * FROM unnest($1::bigint[], $2::bigint[])`, dsts, srcs); err != nil {
		return fmt.Errorf("postgres: add %d web links: %w", len(dsts), err)
	}
	return nil
}

// DeleteWebLinks removes links in one statement.
func (t *writeTx) DeleteWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	dsts, srcs := linkArrays(links)
	if _, err := t.r.exec(ctx, `DELETE FROM web_links l USING unnest($1::bigint[], $2::bigint[]) AS d(dst, src)
WHERE l.dst = d.dst AND l.src = d.src`, dsts, srcs); err != nil {
		return fmt.Errorf("postgres: delete %d web links: %w", len(dsts), err)
	}
	return nil
}

// AddWebCounts adds the deltas in id order: one statement for the URLs,
// one for the domains. Zero deltas are left out.
func (t *writeTx) AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error {
	if keys, vals := sortedPairs(urlInbound, true); len(keys) > 0 {
		if _, err := t.r.exec(ctx, `UPDATE web_url_counts u SET inbound = u.inbound + d.delta
FROM unnest($1::bigint[], $2::bigint[]) AS d(id, delta) WHERE u.id = d.id`, keys, vals); err != nil {
			return fmt.Errorf("postgres: add inbound counts of %d web urls: %w", len(keys), err)
		}
	}
	ids := make([]int64, 0, len(domainInbound)+len(domainURLs))
	for id, v := range domainInbound {
		if v != 0 {
			ids = append(ids, id)
		}
	}
	for id, v := range domainURLs {
		if v != 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	inbound, urls := make([]int64, len(ids)), make([]int64, len(ids))
	for i, id := range ids {
		inbound[i], urls[i] = domainInbound[id], domainURLs[id]
	}
	if _, err := t.r.exec(ctx, `UPDATE web_domains w SET inbound = w.inbound + d.inbound, urls = w.urls + d.urls
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS d(id, inbound, urls) WHERE w.id = d.id`, ids, inbound, urls); err != nil {
		return fmt.Errorf("postgres: add counts of %d web domains: %w", len(ids), err)
	}
	return nil
}
