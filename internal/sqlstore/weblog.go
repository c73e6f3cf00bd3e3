package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/shelfmark/shelfmark"
)

// The web index's link log (migration 0029_web_link_log.sql) and the
// statements of a merge, the same in both dialects.

// LogWebLinks adds changes to the log in one statement, in key order; a
// link logged before gets the sum of the deltas.
func (w *WriteTx) LogWebLinks(ctx context.Context, changes []shelfmark.WebLinkChange) error {
	if len(changes) == 0 {
		return nil
	}
	changes = slices.Clone(changes)
	slices.SortFunc(changes, compareChanges)
	rows := Rows{Cols: intCols("dst", "src", "delta"), N: len(changes), Row: func(i int, v []any) {
		v[0], v[1], v[2] = changes[i].Dst, changes[i].Src, changes[i].Delta
	}}
	if _, err := w.execFrom(ctx, rows, func(v string) string {
		return `INSERT INTO web_link_log (dst, src, delta) SELECT dst, src, delta FROM ` + v + ` WHERE true
ON CONFLICT (dst, src) DO UPDATE SET delta = web_link_log.delta + excluded.delta`
	}); err != nil {
		return fmt.Errorf("%slog %d web link changes: %w", w.d.Prefix, len(changes), err)
	}
	return nil
}

// WebLinkLogAtSQL is the statement of WebLinkLogAt in a dialect whose
// placeholders arg writes: dst, src, skip.
func WebLinkLogAtSQL(arg func(int) string) string {
	return `SELECT dst, src FROM web_link_log WHERE (dst, src) >= (` + arg(1) + `, ` + arg(2) + `)
ORDER BY dst, src LIMIT 1 OFFSET ` + arg(3)
}

// TakeWebLinkLogSQL is the statement of TakeWebLinkLog: from's dst and
// src, to's.
func TakeWebLinkLogSQL(arg func(int) string) string {
	return `DELETE FROM web_link_log WHERE (dst, src) >= (` + arg(1) + `, ` + arg(2) + `)
AND (dst, src) < (` + arg(3) + `, ` + arg(4) + `) RETURNING dst, src, delta`
}

// WebLinkLogAt returns the key skip rows after the first log row at or
// after from: one range of the log's key.
func (w *WriteTx) WebLinkLogAt(ctx context.Context, from shelfmark.WebLink, skip int) (shelfmark.WebLink, bool, error) {
	var at shelfmark.WebLink
	found := false
	if err := w.q.EachRow(ctx, WebLinkLogAtSQL(w.d.Arg), []any{from.Dst, from.Src, skip}, func(r Scanner) error {
		found = true
		return r.Scan(&at.Dst, &at.Src)
	}); err != nil {
		return at, false, fmt.Errorf("%sweb link log at %v + %d: %w", w.d.Prefix, from, skip, err)
	}
	return at, found, nil
}

// TakeWebLinkLog deletes the log's rows from <= (dst, src) < to and
// returns them in key order: one statement.
func (w *WriteTx) TakeWebLinkLog(ctx context.Context, from, to shelfmark.WebLink) ([]shelfmark.WebLinkChange, error) {
	var out []shelfmark.WebLinkChange
	if err := w.q.EachRow(ctx, TakeWebLinkLogSQL(w.d.Arg), []any{from.Dst, from.Src, to.Dst, to.Src}, func(r Scanner) error {
		var c shelfmark.WebLinkChange
		err := r.Scan(&c.Dst, &c.Src, &c.Delta)
		out = append(out, c)
		return err
	}); err != nil {
		return nil, fmt.Errorf("%stake the web link log from %v to %v: %w", w.d.Prefix, from, to, err)
	}
	// RETURNING gives no order
	slices.SortFunc(out, compareChanges)
	return out, nil
}

// LockWebMerge writes the merge row: one statement.
func (w *WriteTx) LockWebMerge(ctx context.Context) error {
	if _, err := w.q.Exec(ctx, `UPDATE web_merge SET chunks = chunks + 1 WHERE id = 1`); err != nil {
		return fmt.Errorf("%slock the web merge: %w", w.d.Prefix, err)
	}
	return nil
}

// AddWebInbound adds the deltas to the URLs' counts in id order, learning
// their domains from the rows it updates, then each domain's sum to the
// domain (AddWebCounts): two statements. Zero deltas are left out.
func (w *WriteTx) AddWebInbound(ctx context.Context, urlInbound map[int64]int64) error {
	keys, vals := SortedPairs(urlInbound, true)
	if len(keys) == 0 {
		return nil
	}
	from, args, err := w.d.From(pairs("id", "delta", keys, vals), 1)
	if err != nil {
		return err
	}
	domains := map[int64]int64{}
	if err := w.q.EachRow(ctx, `UPDATE web_url_counts SET inbound = web_url_counts.inbound + v.delta FROM `+from+`
WHERE web_url_counts.id = v.id RETURNING web_url_counts.id, web_url_counts.domain`, args, func(r Scanner) error {
		var id, domain int64
		err := r.Scan(&id, &domain)
		domains[domain] += urlInbound[id]
		return err
	}); err != nil {
		return fmt.Errorf("%sadd inbound counts of %d web urls: %w", w.d.Prefix, len(keys), err)
	}
	return w.AddWebCounts(ctx, nil, domains, nil)
}

// compareLinks orders links by (dst, src), the order of the web_links and
// web_link_log keys.
func compareLinks(a, b shelfmark.WebLink) int {
	if a.Dst != b.Dst {
		return cmp.Compare(a.Dst, b.Dst)
	}
	return cmp.Compare(a.Src, b.Src)
}

// compareChanges orders changes by their links' key.
func compareChanges(a, b shelfmark.WebLinkChange) int { return compareLinks(a.WebLink, b.WebLink) }
