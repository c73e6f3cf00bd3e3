package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

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

// Statements of the web index, named for TestWebPlans.
const (
	webURLsBySURTSQL  = `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.surt IN (SELECT value FROM json_each(?))`
	webURLRowsSQL     = `SELECT ` + sqlstore.WebURLCols + sqlstore.WebURLsFrom + ` WHERE u.id IN (SELECT value FROM json_each(?)) ORDER BY u.id`
	fileCapturesSQL   = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url WHERE c.file = ? AND c.id > ? ORDER BY c.id LIMIT ?`
	deleteCapturesSQL = `DELETE FROM web_captures WHERE id IN (SELECT value FROM json_each(?))`
)

// capturesRestOfURLSQL is sqlstore.Web.CapturesRestOfURL: one range of
// web_captures_url.
const capturesRestOfURLSQL = `SELECT ` + sqlstore.CaptureCols + ` FROM web_captures c JOIN web_urls u ON u.id = c.url
		WHERE c.url = (SELECT id FROM web_urls WHERE surt = ?) AND c.time >= ? AND c.time < ? AND (c.time > ? OR c.id > ?)
		ORDER BY c.time, c.id LIMIT ?`

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
