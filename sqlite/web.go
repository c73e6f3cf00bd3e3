package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The web index (web.go in the root package, migration 0010_web.sql).
//
// The engine writes it a batch of pages at a time: thousands of URLs,
// links and counts per call. Each bulk method sends its rows in one JSON
// array read by json_each (one statement, one prepared text, whatever the
// number of rows) rather than one statement per row: the per-statement
// cost of database/sql and cgo would otherwise exceed the B-tree work.
// Rows are sent sorted by key, so the B-tree pages they touch are visited
// in order. Captures, which carry a BLOB, are inserted one row per
// execution of a prepared statement.

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

func scanWebURL(r *sql.Rows) (*shelfmark.WebURLRow, error) {
	var u shelfmark.WebURLRow
	err := r.Scan(&u.ID, &u.SURT, &u.URL, &u.Domain, &u.Inbound, &u.Current)
	return &u, err
}

const webDomainCols = `id, name, urls, inbound`

func scanWebDomain(r *sql.Rows) (*shelfmark.WebDomainRow, error) {
	var d shelfmark.WebDomainRow
	err := r.Scan(&d.ID, &d.Name, &d.URLs, &d.Inbound)
	return &d, err
}

const webFileCols = `file, work, byte_offset, records, errors, done, removed`

func scanWebFile(r *sql.Rows) (*shelfmark.WebFileRow, error) {
	var f shelfmark.WebFileRow
	err := r.Scan(&f.File, &f.Work, &f.Offset, &f.Records, &f.Errors, &f.Done, &f.Removed)
	return &f, err
}

// captureCols are the columns scanCapture reads: a capture c joined with
// its URL u; the capture's URL is its own when it has one (see
// migration 0014_capture_target.sql), else its key's.
const captureCols = `c.id, c.url, c.file, c.byte_offset, c.byte_length, c.time, c.type, c.mime, c.status, c.digest, c.record_id, c.links, u.surt, COALESCE(c.target, u.url)`

func scanCapture(r *sql.Rows) (*shelfmark.CaptureRow, error) {
	var (
		c     shelfmark.CaptureRow
		ns    int64
		links any
	)
	if err := r.Scan(&c.ID, &c.URL, &c.File, &c.Offset, &c.Length, &ns, &c.Type, &c.MIME, &c.Status,
		&c.Digest, &c.RecordID, &links, &c.SURT, &c.Target); err != nil {
		return nil, err
	}
	c.Time = fromWebNanos(ns)
	switch b := links.(type) {
	case nil:
	case []byte:
		ids, err := shelfmark.DecodeLinkIDs(b)
		if err != nil {
			return nil, fmt.Errorf("capture %d: %w", c.ID, err)
		}
		c.HasLinks, c.Links = true, ids
	case string: // a zero-length blob may come back as text
		ids, err := shelfmark.DecodeLinkIDs([]byte(b))
		if err != nil {
			return nil, fmt.Errorf("capture %d: %w", c.ID, err)
		}
		c.HasLinks, c.Links = true, ids
	default:
		return nil, fmt.Errorf("capture %d: links of type %T", c.ID, links)
	}
	return &c, nil
}

func (t *tx) webURLs(ctx context.Context, q string, args ...any) ([]*shelfmark.WebURLRow, error) {
	var out []*shelfmark.WebURLRow
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		u, err := scanWebURL(r)
		out = append(out, u)
		return err
	})
	return out, err
}

func (t *tx) webDomains(ctx context.Context, q string, args ...any) ([]*shelfmark.WebDomainRow, error) {
	var out []*shelfmark.WebDomainRow
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		d, err := scanWebDomain(r)
		out = append(out, d)
		return err
	})
	return out, err
}

func (t *tx) captures(ctx context.Context, q string, args ...any) ([]*shelfmark.CaptureRow, error) {
	var out []*shelfmark.CaptureRow
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		c, err := scanCapture(r)
		out = append(out, c)
		return err
	})
	return out, err
}

// jsonStrings encodes strings as a JSON array for json_each().
func jsonStrings(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonPairs encodes [[a, b], …] for json_each() with value->>0, value->>1.
func jsonPairs(n int, pair func(i int) (int64, int64)) string {
	b := make([]byte, 0, n*16+2)
	b = append(b, '[')
	for i := 0; i < n; i++ {
		x, y := pair(i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, x, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, y, 10)
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// WebFile returns a file's index state, or nil.
func (t *tx) WebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	var out *shelfmark.WebFileRow
	err := t.query(ctx, `SELECT `+webFileCols+` FROM web_files WHERE file = ?`, []any{file}, func(r *sql.Rows) (err error) {
		out, err = scanWebFile(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("web file %d: %w", file, err)
	}
	return out, nil
}

// LockWebFile is WebFile: a write transaction holds SQLite's one write
// lock already.
func (t *tx) LockWebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	return t.WebFile(ctx, file)
}

// WebFiles returns up to limit files with keys above after, by key.
func (t *tx) WebFiles(ctx context.Context, after int64, limit int) ([]*shelfmark.WebFileRow, error) {
	var out []*shelfmark.WebFileRow
	err := t.query(ctx, `SELECT `+webFileCols+` FROM web_files WHERE file > ? ORDER BY file LIMIT ?`, []any{after, limit}, func(r *sql.Rows) error {
		f, err := scanWebFile(r)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("web files after %d: %w", after, err)
	}
	return out, nil
}

// Statements of the web index, named for TestWebPlans.
const (
	webURLsBySURTSQL   = `SELECT ` + webURLCols + webURLsFrom + ` WHERE u.surt IN (SELECT value FROM json_each(?))`
	webURLRowsSQL      = `SELECT ` + webURLCols + webURLsFrom + ` WHERE u.id IN (SELECT value FROM json_each(?)) ORDER BY u.id`
	webInboundSQL      = `SELECT src FROM web_links WHERE dst = ? AND src > ? ORDER BY src LIMIT ?`
	fileCapturesSQL    = `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url WHERE c.file = ? AND c.id > ? ORDER BY c.id LIMIT ?`
	addURLCountsSQL    = `UPDATE web_url_counts SET inbound = inbound + (j.value ->> 1) FROM json_each(?) j WHERE web_url_counts.id = j.value ->> 0`
	addDomainCountsSQL = `UPDATE web_domains SET inbound = inbound + (j.value ->> 1), urls = urls + (j.value ->> 2)
		FROM json_each(?) j WHERE web_domains.id = j.value ->> 0`
	setCurrentSQL     = `UPDATE web_urls SET current = j.value ->> 1 FROM json_each(?) j WHERE web_urls.id = j.value ->> 0`
	insertLinksSQL    = `INSERT INTO web_links (dst, src) SELECT value ->> 0, value ->> 1 FROM json_each(?) ORDER BY key`
	deleteLinksSQL    = `DELETE FROM web_links WHERE (dst, src) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`
	deleteCapturesSQL = `DELETE FROM web_captures WHERE id IN (SELECT value FROM json_each(?))`
)

// urlCapturesSQL is a page of one URL's captures after (time, id), or
// before it when desc is set: one range of web_captures_url, which starts
// at the time (the id only filters the captures at that time). Arguments:
// url, time, time, id, limit.
func urlCapturesSQL(desc bool) string {
	if desc {
		return `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = ? AND c.time <= ? AND (c.time < ? OR c.id < ?) ORDER BY c.time DESC, c.id DESC LIMIT ?`
	}
	return `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = ? AND c.time >= ? AND (c.time > ? OR c.id > ?) ORDER BY c.time, c.id LIMIT ?`
}

// WebURLsBySURT returns the known URLs among surts.
func (t *tx) WebURLsBySURT(ctx context.Context, surts []string) (map[string]*shelfmark.WebURLRow, error) {
	out := make(map[string]*shelfmark.WebURLRow, len(surts))
	if len(surts) == 0 {
		return out, nil
	}
	rows, err := t.webURLs(ctx, webURLsBySURTSQL, jsonStrings(surts))
	if err != nil {
		return nil, fmt.Errorf("web urls by surt (%d): %w", len(surts), err)
	}
	for _, u := range rows {
		out[u.SURT] = u
	}
	return out, nil
}

// WebURLRows returns the URLs of ids that exist, by id.
func (t *tx) WebURLRows(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.webURLs(ctx, webURLRowsSQL, jsonInts(ids))
	if err != nil {
		return nil, fmt.Errorf("web urls (%d): %w", len(ids), err)
	}
	return rows, nil
}

// WebDomain returns a domain by name, or nil.
func (t *tx) WebDomain(ctx context.Context, name string) (*shelfmark.WebDomainRow, error) {
	rows, err := t.webDomains(ctx, `SELECT `+webDomainCols+` FROM web_domains WHERE name = ?`, name)
	if err != nil {
		return nil, fmt.Errorf("web domain %q: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows[0], nil
}

// WebDomainRows returns the domains of ids that exist, by id.
func (t *tx) WebDomainRows(ctx context.Context, ids []int64) ([]*shelfmark.WebDomainRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.webDomains(ctx, `SELECT `+webDomainCols+` FROM web_domains WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, jsonInts(ids))
	if err != nil {
		return nil, fmt.Errorf("web domains (%d): %w", len(ids), err)
	}
	return rows, nil
}

// WebCaptureRows returns the captures of ids that exist, by id.
func (t *tx) WebCaptureRows(ctx context.Context, ids []int64) ([]*shelfmark.CaptureRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := t.captures(ctx, `SELECT `+captureCols+` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.id IN (SELECT value FROM json_each(?)) ORDER BY c.id`, jsonInts(ids))
	if err != nil {
		return nil, fmt.Errorf("web captures (%d): %w", len(ids), err)
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
// range of web_captures_url; the URLs after it are a range of the surt
// index, each joined with its captures in (time, id) order, so the rows
// come in (surt, time, id) order without sorting.
const (
	capturesRestOfURLSQL = `SELECT ` + captureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = (SELECT id FROM web_urls WHERE surt = ?) AND c.time >= ? AND c.time < ? AND (c.time > ? OR c.id > ?)
		ORDER BY c.time, c.id LIMIT ?`
	capturesFromSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt >= ? AND u.surt < ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesFromOpenSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt >= ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesAfterSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt > ? AND u.surt < ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesAfterOpenSQL = `SELECT ` + captureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt > ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
)

// WebCaptures scans captures by SURT range in (SURT, time, id) order: at
// most two statements (the rest of the After capture's URL, then the URLs
// after it).
func (t *tx) WebCaptures(ctx context.Context, q shelfmark.CaptureScan) ([]*shelfmark.CaptureRow, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	lo, hi := timeBounds(q.Since, q.Until)
	var out []*shelfmark.CaptureRow
	from, strict := q.From, false
	if a := q.After; a != nil {
		if a.SURT < q.From {
			// before the range: the scan starts at From
		} else {
			if q.To == "" || a.SURT < q.To {
				// the range starts at the cursor's time (or at Since)
				ns := webNanos(a.Time)
				rows, err := t.captures(ctx, capturesRestOfURLSQL, a.SURT, max(lo, ns), hi, ns, a.ID, q.Limit)
				if err != nil {
					return nil, fmt.Errorf("web captures after %s: %w", a.SURT, err)
				}
				out = rows
			}
			from, strict = a.SURT, true
		}
	}
	if len(out) >= q.Limit || (q.To != "" && from >= q.To) {
		return out, nil
	}
	var (
		stmt string
		args []any
	)
	n := q.Limit - len(out)
	switch {
	case strict && q.To != "":
		stmt, args = capturesAfterSQL, []any{from, q.To, lo, hi, n}
	case strict:
		stmt, args = capturesAfterOpenSQL, []any{from, lo, hi, n}
	case q.To != "":
		stmt, args = capturesFromSQL, []any{from, q.To, lo, hi, n}
	default:
		stmt, args = capturesFromOpenSQL, []any{from, lo, hi, n}
	}
	rows, err := t.captures(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("web captures from %s: %w", from, err)
	}
	return append(out, rows...), nil
}

// WebURLCaptures returns up to limit captures of url after (at, id) by
// (time, id), or before it, descending, when desc is set.
func (t *tx) WebURLCaptures(ctx context.Context, url int64, at time.Time, id int64, desc bool, limit int) ([]*shelfmark.CaptureRow, error) {
	ns := cursorNanos(at, desc)
	rows, err := t.captures(ctx, urlCapturesSQL(desc), url, ns, ns, id, limit)
	if err != nil {
		return nil, fmt.Errorf("captures of web url %d: %w", url, err)
	}
	return rows, nil
}

// WebFileCaptures returns up to limit captures of file with ids above
// after, by id.
func (t *tx) WebFileCaptures(ctx context.Context, file, after int64, limit int) ([]*shelfmark.CaptureRow, error) {
	rows, err := t.captures(ctx, fileCapturesSQL, file, after, limit)
	if err != nil {
		return nil, fmt.Errorf("captures of web file %d: %w", file, err)
	}
	return rows, nil
}

// WebInbound returns up to limit pages linking to dst with ids above
// after, ascending: one range of the web_links key.
func (t *tx) WebInbound(ctx context.Context, dst, after int64, limit int) ([]int64, error) {
	var out []int64
	err := t.query(ctx, webInboundSQL, []any{dst, after, limit}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		out = append(out, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("inbound links of web url %d: %w", dst, err)
	}
	return out, nil
}

// webTopURLsSQL reads the first n entries of the domain's range of the
// partial index web_url_counts_top.
const webTopURLsSQL = `SELECT ` + webURLCols + ` FROM web_url_counts n JOIN web_urls u ON u.id = n.id
	WHERE n.domain = ? AND n.inbound > 0 ORDER BY n.inbound DESC, n.id LIMIT ?`

// webTopDomainsSQL reads the first n entries of web_domains_top.
const webTopDomainsSQL = `SELECT ` + webDomainCols + ` FROM web_domains WHERE inbound > 0 ORDER BY inbound DESC, id LIMIT ?`

// WebTopURLs returns the n URLs of domain with the most inbound links.
func (t *tx) WebTopURLs(ctx context.Context, domain int64, n int) ([]*shelfmark.WebURLRow, error) {
	rows, err := t.webURLs(ctx, webTopURLsSQL, domain, n)
	if err != nil {
		return nil, fmt.Errorf("top urls of web domain %d: %w", domain, err)
	}
	return rows, nil
}

// WebTopDomains returns the n domains with the most inbound links.
func (t *tx) WebTopDomains(ctx context.Context, n int) ([]*shelfmark.WebDomainRow, error) {
	rows, err := t.webDomains(ctx, webTopDomainsSQL, n)
	if err != nil {
		return nil, fmt.Errorf("top web domains: %w", err)
	}
	return rows, nil
}

// PutWebFile inserts or replaces a file's state.
func (t *tx) PutWebFile(ctx context.Context, f *shelfmark.WebFileRow) error {
	if _, err := t.exec(ctx, `INSERT INTO web_files (`+webFileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (file) DO UPDATE SET work = excluded.work, byte_offset = excluded.byte_offset, records = excluded.records,
		errors = excluded.errors, done = excluded.done, removed = excluded.removed`,
		f.File, f.Work, f.Offset, f.Records, f.Errors, f.Done, f.Removed); err != nil {
		return fmt.Errorf("put web file %d: %w", f.File, err)
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

// InternWebDomains sets the IDs of domains by name, inserting the unknown
// ones: one statement to find the known, one to insert the rest. SQLite
// has one writer, so nothing can insert a name in between. Of rows that
// repeat a new name, the first gets New.
func (t *tx) InternWebDomains(ctx context.Context, rows []*shelfmark.WebDomainRow) error {
	if len(rows) == 0 {
		return nil
	}
	names, first := firstOf(len(rows), func(i int) string { return rows[i].Name })
	ids := make(map[string]int64, len(names))
	if err := t.query(ctx, `SELECT id, name FROM web_domains WHERE name IN (SELECT value FROM json_each(?))`,
		[]any{jsonStrings(names)}, func(r *sql.Rows) error {
			var id int64
			var name string
			err := r.Scan(&id, &name)
			ids[name] = id
			return err
		}); err != nil {
		return fmt.Errorf("find %d web domains: %w", len(names), err)
	}
	missing := names[:0:0]
	for _, n := range names {
		if _, ok := ids[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if err := t.query(ctx, `INSERT INTO web_domains (name) SELECT value FROM json_each(?) RETURNING id, name`,
			[]any{jsonStrings(missing)}, func(r *sql.Rows) error {
				var id int64
				var name string
				err := r.Scan(&id, &name)
				ids[name] = id
				rows[first[name]].New = true
				return err
			}); err != nil {
			return fmt.Errorf("insert %d web domains: %w", len(missing), err)
		}
	}
	for _, d := range rows {
		d.ID = ids[d.Name]
	}
	return nil
}

// InternWebURLs sets the IDs of URLs by SURT, inserting the unknown ones
// (as InternWebDomains does).
func (t *tx) InternWebURLs(ctx context.Context, rows []*shelfmark.WebURLRow) error {
	if len(rows) == 0 {
		return nil
	}
	surts, first := firstOf(len(rows), func(i int) string { return rows[i].SURT })
	ids := make(map[string]int64, len(surts))
	if err := t.query(ctx, `SELECT id, surt FROM web_urls WHERE surt IN (SELECT value FROM json_each(?))`,
		[]any{jsonStrings(surts)}, func(r *sql.Rows) error {
			var id int64
			var surt string
			err := r.Scan(&id, &surt)
			ids[surt] = id
			return err
		}); err != nil {
		return fmt.Errorf("find %d web urls: %w", len(surts), err)
	}
	var b []byte
	missing := 0
	for _, s := range surts {
		if _, ok := ids[s]; ok {
			continue
		}
		u := rows[first[s]]
		if missing == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		missing++
		b = append(b, '[')
		b = appendJSONString(b, u.SURT)
		b = append(b, ',')
		b = appendJSONString(b, u.URL)
		b = append(b, ',')
		b = strconv.AppendInt(b, u.Domain, 10)
		b = append(b, ']')
	}
	if missing > 0 {
		b = append(b, ']')
		var counts []int64 // id, domain, …
		if err := t.query(ctx, `INSERT INTO web_urls (surt, url, domain)
			SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) ORDER BY key RETURNING id, surt, domain`,
			[]any{string(b)}, func(r *sql.Rows) error {
				var id, domain int64
				var surt string
				err := r.Scan(&id, &surt, &domain)
				ids[surt] = id
				rows[first[surt]].New = true
				counts = append(counts, id, domain)
				return err
			}); err != nil {
			return fmt.Errorf("insert %d web urls: %w", missing, err)
		}
		if _, err := t.exec(ctx, `INSERT INTO web_url_counts (id, domain) SELECT value ->> 0, value ->> 1 FROM json_each(?) ORDER BY key`,
			jsonPairs(len(counts)/2, func(i int) (int64, int64) { return counts[2*i], counts[2*i+1] })); err != nil {
			return fmt.Errorf("insert the counts of %d web urls: %w", missing, err)
		}
	}
	for _, u := range rows {
		u.ID = ids[u.SURT]
	}
	return nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// LockWebURLs returns the rows of ids. SQLite's write transaction holds
// the only write lock already.
func (t *tx) LockWebURLs(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	return t.WebURLRows(ctx, ids)
}

// InsertWebCaptures inserts captures, one execution of a prepared
// statement each, and sets their IDs.
func (t *tx) InsertWebCaptures(ctx context.Context, rows []*shelfmark.CaptureRow) error {
	if len(rows) == 0 {
		return nil
	}
	const q = `INSERT INTO web_captures (url, file, byte_offset, byte_length, time, type, mime, status, digest, record_id, links, target)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	s, err := t.stmt(ctx, q)
	if err != nil {
		return err
	}
	for _, c := range rows {
		var links any
		if c.HasLinks {
			links = append([]byte{}, shelfmark.EncodeLinkIDs(c.Links)...)
		}
		var target any
		if c.Target != "" {
			target = c.Target
		}
		res, err := s.ExecContext(ctx, c.URL, c.File, c.Offset, c.Length, webNanos(c.Time), c.Type, c.MIME, c.Status,
			c.Digest, c.RecordID, links, target)
		if err != nil {
			return full(fmt.Errorf("insert web capture of %s: %w", c.RecordID, err))
		}
		if c.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("insert web capture of %s: %w", c.RecordID, err)
		}
		if t.db.tracer != nil {
			t.db.tracer(q, 1)
		}
	}
	return nil
}

// DeleteWebCaptures removes captures.
func (t *tx) DeleteWebCaptures(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Sorted(slices.Values(ids))
	if _, err := t.exec(ctx, deleteCapturesSQL, jsonInts(ids)); err != nil {
		return fmt.Errorf("delete %d web captures: %w", len(ids), err)
	}
	return nil
}

// sortedPairs returns m's entries as [key, value] pairs by key, leaving
// out zero values when skipZero is set.
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

// SetWebCurrent sets the current capture of URLs, in one statement.
func (t *tx) SetWebCurrent(ctx context.Context, current map[int64]int64) error {
	if len(current) == 0 {
		return nil
	}
	keys, vals := sortedPairs(current, false)
	if _, err := t.exec(ctx, setCurrentSQL,
		jsonPairs(len(keys), func(i int) (int64, int64) { return keys[i], vals[i] })); err != nil {
		return fmt.Errorf("set the current captures of %d web urls: %w", len(keys), err)
	}
	return nil
}

// sortLinks sorts links by (dst, src), the order of the web_links key.
func sortLinks(links []shelfmark.WebLink) []shelfmark.WebLink {
	links = slices.Clone(links)
	slices.SortFunc(links, func(a, b shelfmark.WebLink) int {
		if a.Dst != b.Dst {
			return cmpInt(a.Dst, b.Dst)
		}
		return cmpInt(a.Src, b.Src)
	})
	return links
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

// AddWebLinks inserts links in one statement; a link that exists already
// is an error.
func (t *tx) AddWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	links = sortLinks(links)
	if _, err := t.exec(ctx, insertLinksSQL,
		jsonPairs(len(links), func(i int) (int64, int64) { return links[i].Dst, links[i].Src })); err != nil {
		return fmt.Errorf("add %d web links: %w", len(links), err)
	}
	return nil
}

// DeleteWebLinks removes links in one statement.
func (t *tx) DeleteWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	links = sortLinks(links)
	if _, err := t.exec(ctx, deleteLinksSQL,
		jsonPairs(len(links), func(i int) (int64, int64) { return links[i].Dst, links[i].Src })); err != nil {
		return fmt.Errorf("delete %d web links: %w", len(links), err)
	}
	return nil
}

// AddWebCounts adds the deltas, in id order: one statement for the URLs,
// one for the domains. Zero deltas are left out.
func (t *tx) AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error {
	if keys, vals := sortedPairs(urlInbound, true); len(keys) > 0 {
		if _, err := t.exec(ctx, addURLCountsSQL,
			jsonPairs(len(keys), func(i int) (int64, int64) { return keys[i], vals[i] })); err != nil {
			return fmt.Errorf("add inbound counts of %d web urls: %w", len(keys), err)
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
	b := make([]byte, 0, 24*len(ids))
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, domainInbound[id], 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, domainURLs[id], 10)
		b = append(b, ']')
	}
	b = append(b, ']')
	if _, err := t.exec(ctx, addDomainCountsSQL, string(b)); err != nil {
		return fmt.Errorf("add counts of %d web domains: %w", len(ids), err)
	}
	return nil
}
