package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// The web index (web.go in the root package, migration 0010_web.sql).
// Every bulk method sends one statement whatever the number of rows
// (unnest arrays, or COPY for many new captures and links), with the rows
// sorted by key so that concurrent writers lock them in one order.

// Statements of WebCaptures. The rest of the After capture's URL is one
// range of web_captures_url; the URLs after it a range of the surt index,
// each joined with its captures (which PostgreSQL puts in (time, id) order
// by an incremental sort of each URL's captures). A To of "" is sent as
// NULL: no upper bound.
const (
	capturesRestOfURLSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = (SELECT id FROM web_urls WHERE surt = $1) AND c.time >= $2 AND c.time < $3 AND (c.time, c.id) > ($4, $5)
ORDER BY c.time, c.id LIMIT $6`
	capturesFromSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
WHERE u.surt >= $1 AND ($2::text IS NULL OR u.surt < $2) AND c.time >= $3 AND c.time < $4
ORDER BY u.surt, c.time, c.id LIMIT $5`
	capturesAfterSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_urls u JOIN web_captures c ON c.url = u.id
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
	lo, hi := sqlstore.TimeBounds(q.Since, q.Until)
	var to *string
	if q.To != "" {
		to = &q.To
	}
	var out []*shelfmark.CaptureRow
	from, stmt := q.From, capturesFromSQL
	if a := q.After; a != nil && a.SURT >= q.From {
		if q.To == "" || a.SURT < q.To {
			rows, err := sqlstore.Captures(ctx, t, capturesRestOfURLSQL, a.SURT, lo, hi, sqlstore.WebNanos(a.Time), a.ID, q.Limit)
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
	rows, err := sqlstore.Captures(ctx, t, stmt, from, to, lo, hi, q.Limit-len(out))
	if err != nil {
		return nil, fmt.Errorf("postgres: web captures from %s: %w", from, err)
	}
	return append(out, rows...), nil
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
	names, first := sqlstore.FirstOf(len(rows), func(i int) string { return rows[i].Name })
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
	surts, first := sqlstore.FirstOf(len(rows), func(i int) string { return rows[i].SURT })
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
		if _, err := t.r.copyFrom(ctx, "web_captures", captureColumns, n, func(i int) ([]any, error) {
			c := rows[i]
			return []any{c.ID, c.URL, c.File, c.Offset, c.Length, sqlstore.WebNanos(c.Time), c.Type, c.MIME, int32(c.Status), c.Digest, c.RecordID, captureLinks(c), captureTarget(c)}, nil
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
		ids[i], urls[i], files[i], offsets[i], lengths[i], times[i] = c.ID, c.URL, c.File, c.Offset, c.Length, sqlstore.WebNanos(c.Time)
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
