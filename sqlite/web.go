package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
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

// Statements of the web index, named for TestWebPlans.
const (
	webURLsBySURTSQL   = `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.surt IN (SELECT value FROM json_each(?))`
	webURLRowsSQL      = `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.id IN (SELECT value FROM json_each(?)) ORDER BY u.id`
	webInboundSQL      = `SELECT src FROM web_links WHERE dst = ? AND src > ? ORDER BY src LIMIT ?`
	fileCapturesSQL    = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url WHERE c.file = ? AND c.id > ? ORDER BY c.id LIMIT ?`
	addURLCountsSQL    = `UPDATE web_url_counts SET inbound = inbound + (j.value ->> 1) FROM json_each(?) j WHERE web_url_counts.id = j.value ->> 0`
	addDomainCountsSQL = `UPDATE web_domains SET inbound = inbound + (j.value ->> 1), urls = urls + (j.value ->> 2)
		FROM json_each(?) j WHERE web_domains.id = j.value ->> 0`
	setCurrentSQL     = `UPDATE web_urls SET current = j.value ->> 1 FROM json_each(?) j WHERE web_urls.id = j.value ->> 0`
	deleteLinksSQL    = `DELETE FROM web_links WHERE (dst, src) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`
	deleteCapturesSQL = `DELETE FROM web_captures WHERE id IN (SELECT value FROM json_each(?))`
)

// Statements of WebCaptures. The rest of the After capture's URL is one
// range of web_captures_url; the URLs after it are a range of the surt
// index, each joined with its captures in (time, id) order, so the rows
// come in (surt, time, id) order without sorting.
const (
	capturesRestOfURLSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = (SELECT id FROM web_urls WHERE surt = ?) AND c.time >= ? AND c.time < ? AND (c.time > ? OR c.id > ?)
		ORDER BY c.time, c.id LIMIT ?`
	capturesFromSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt >= ? AND u.surt < ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesFromOpenSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt >= ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesAfterSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt > ? AND u.surt < ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
	capturesAfterOpenSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
		WHERE u.surt > ? AND c.time >= ? AND c.time < ?
		ORDER BY u.surt, c.time, c.id LIMIT ?`
)

// WebCaptures scans captures by SURT range in (SURT, time, id) order: at
// most two statements (the rest of the After capture's URL, then the URLs
// after it).
func (t *readTx) WebCaptures(ctx context.Context, q shelfmark.CaptureScan) ([]*shelfmark.CaptureRow, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	lo, hi := sqlstore.TimeBounds(q.Since, q.Until)
	var out []*shelfmark.CaptureRow
	from, strict := q.From, false
	if a := q.After; a != nil {
		if a.SURT < q.From {
			// before the range: the scan starts at From
		} else {
			if q.To == "" || a.SURT < q.To {
				// the range starts at the cursor's time (or at Since)
				ns := sqlstore.WebNanos(a.Time)
				rows, err := sqlstore.Captures(ctx, t, capturesRestOfURLSQL, a.SURT, max(lo, ns), hi, ns, a.ID, q.Limit)
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
	rows, err := sqlstore.Captures(ctx, t, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("web captures from %s: %w", from, err)
	}
	return append(out, rows...), nil
}

// InternWebDomains sets the IDs of domains by name, inserting the unknown
// ones: one statement to find the known, one to insert the rest. SQLite
// has one writer, so nothing can insert a name in between. Of rows that
// repeat a new name, the first gets New.
func (t *writeTx) InternWebDomains(ctx context.Context, rows []*shelfmark.WebDomainRow) error {
	if len(rows) == 0 {
		return nil
	}
	names, first := sqlstore.FirstOf(len(rows), func(i int) string { return rows[i].Name })
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
func (t *writeTx) InternWebURLs(ctx context.Context, rows []*shelfmark.WebURLRow) error {
	if len(rows) == 0 {
		return nil
	}
	surts, first := sqlstore.FirstOf(len(rows), func(i int) string { return rows[i].SURT })
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

// InsertWebCaptures inserts captures, one execution of a prepared
// statement each, and sets their IDs.
func (t *writeTx) InsertWebCaptures(ctx context.Context, rows []*shelfmark.CaptureRow) error {
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
		res, err := s.ExecContext(ctx, c.URL, c.File, c.Offset, c.Length, sqlstore.WebNanos(c.Time), c.Type, c.MIME, c.Status,
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
