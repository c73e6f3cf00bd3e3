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

// capturesRestOfURLSQL is sqlstore.Web.CapturesRestOfURL: one range of
// web_captures_url. (The other scans, a range of the surt index each URL
// joined with its captures, have them put in (time, id) order by an
// incremental sort of each URL's captures.)
const capturesRestOfURLSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
WHERE c.url = (SELECT id FROM web_urls WHERE surt = $1) AND c.time >= $2 AND c.time < $3 AND (c.time, c.id) > ($4, $5)
ORDER BY c.time, c.id LIMIT $6`

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
