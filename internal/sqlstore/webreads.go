package sqlstore

import (
	"time"

	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// Web is a dialect's statements of the web index reads of Tx. Their
// arguments are those of the methods named, in that order; a list is one
// argument bound by Dialect.Int64s or Strings.
type Web struct {
	WebFile string // file
	// LockWebFile is WebFile, and locks the row until the transaction
	// ends (where the dialect can: SQLite's one writer holds the whole
	// database).
	LockWebFile string
	// LockWebURLs is WebURLRows, and locks the rows in id order until
	// the transaction ends (where the dialect can).
	LockWebURLs     string
	WebFiles        string // after, limit
	WebURLsBySURT   string // surts
	WebURLRows      string // ids
	WebDomainRows   string // ids
	WebCaptureRows  string // ids
	WebFileCaptures string // file, after, limit
	WebURLView      string // surt
	WebInbound      string // dst, after, limit
	WebTopURLs      string // domain, n
	WebTopDomains   string // n
	// The statements of WebCaptures, each of CaptureCols in (surt, time,
	// id) order. CapturesRestOfURL reads the captures of the URL surt
	// after a cursor (one range of web_captures_url): surt, since, until,
	// cursor time, cursor id, limit. The others read a range of the surt
	// index, each URL joined with its captures in (time, id) order:
	// CapturesFrom from surt >= from, CapturesAfter from surt > from, up
	// to surt < to: from, to, since, until, limit; the Open forms have no
	// upper bound: from, since, until, limit.
	CapturesRestOfURL                                                string
	CapturesFrom, CapturesFromOpen, CapturesAfter, CapturesAfterOpen string
	// WebURLCaptures and WebURLCapturesDesc read CaptureCols of a page of
	// one URL's captures after (time, id), or before it: one range of
	// web_captures_url. url, time, id, limit.
	WebURLCaptures     string
	WebURLCapturesDesc string
}

// WebFile returns a file's index state, or nil: one statement.
func (t *Tx) WebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	out, err := WebFile(ctx, t.q, t.d.WebFile, file)
	if err != nil {
		return nil, fmt.Errorf("%sweb file %d: %w", t.d.Prefix, file, err)
	}
	return out, nil
}

// WebFiles returns up to limit files with keys above after, by key: one
// range of the primary key.
func (t *Tx) WebFiles(ctx context.Context, after int64, limit int) ([]*shelfmark.WebFileRow, error) {
	out, err := Collect(ctx, t.q, t.d.WebFiles, []any{after, limit}, ScanWebFile)
	if err != nil {
		return nil, fmt.Errorf("%sweb files after %d: %w", t.d.Prefix, after, err)
	}
	return out, nil
}

// WebURLsBySURT returns the known URLs among surts: one statement.
func (t *Tx) WebURLsBySURT(ctx context.Context, surts []string) (map[string]*shelfmark.WebURLRow, error) {
	out := make(map[string]*shelfmark.WebURLRow, len(surts))
	if len(surts) == 0 {
		return out, nil
	}
	rows, err := WebURLs(ctx, t.q, t.d.WebURLsBySURT, t.d.Strings(surts))
	if err != nil {
		return nil, fmt.Errorf("%sweb urls by surt (%d): %w", t.d.Prefix, len(surts), err)
	}
	for _, u := range rows {
		out[u.SURT] = u
	}
	return out, nil
}

// WebURLRows returns the URLs of ids that exist, by id: one statement.
func (t *Tx) WebURLRows(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := WebURLs(ctx, t.q, t.d.WebURLRows, t.d.Int64s(ids))
	if err != nil {
		return nil, fmt.Errorf("%sweb urls (%d): %w", t.d.Prefix, len(ids), err)
	}
	return rows, nil
}

// WebDomainRows returns the domains of ids that exist, by id: one
// statement.
func (t *Tx) WebDomainRows(ctx context.Context, ids []int64) ([]*shelfmark.WebDomainRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := WebDomains(ctx, t.q, t.d.WebDomainRows, t.d.Int64s(ids))
	if err != nil {
		return nil, fmt.Errorf("%sweb domains (%d): %w", t.d.Prefix, len(ids), err)
	}
	return rows, nil
}

// WebCaptureRows returns the captures of ids that exist, by id: one
// statement.
func (t *Tx) WebCaptureRows(ctx context.Context, ids []int64) ([]*shelfmark.CaptureRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := Captures(ctx, t.q, t.d.WebCaptureRows, t.d.Int64s(ids))
	if err != nil {
		return nil, fmt.Errorf("%sweb captures (%d): %w", t.d.Prefix, len(ids), err)
	}
	return rows, nil
}

// WebFileCaptures returns up to limit captures of file with ids above
// after, by id: one range of an index.
func (t *Tx) WebFileCaptures(ctx context.Context, file, after int64, limit int) ([]*shelfmark.CaptureRow, error) {
	rows, err := Captures(ctx, t.q, t.d.WebFileCaptures, file, after, limit)
	if err != nil {
		return nil, fmt.Errorf("%scaptures of web file %d: %w", t.d.Prefix, file, err)
	}
	return rows, nil
}

// WebURLView returns the URL surt with its domain's name and current
// capture, or nil: one statement.
func (t *Tx) WebURLView(ctx context.Context, surt string) (*shelfmark.WebURLView, error) {
	rows, err := Collect(ctx, t.q, t.d.WebURLView, []any{surt}, ScanWebURLView)
	if err != nil {
		return nil, fmt.Errorf("%sweb url %s: %w", t.d.Prefix, surt, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return rows[0], nil
}

// WebLinkRows reads the inbound page, the outbound page's rows and the
// file's chain: up to three statements, in one round trip where the
// querier is a Batcher.
func (t *Tx) WebLinkRows(ctx context.Context, q shelfmark.WebLinkRowsQuery) (*shelfmark.WebLinkRows, error) {
	out := &shelfmark.WebLinkRows{}
	urls := func(dst *[]*shelfmark.WebURLRow) func(Scanner) error {
		return func(r Scanner) error {
			u, err := ScanWebURL(r)
			*dst = append(*dst, u)
			return err
		}
	}
	qs := []Batch{{Query: t.d.WebInbound, Args: []any{q.Dst, q.InboundAfter, q.InboundLimit}, Each: urls(&out.Inbound)}}
	if len(q.Outbound) > 0 {
		qs = append(qs, Batch{Query: t.d.WebURLRows, Args: []any{t.d.Int64s(q.Outbound)}, Each: urls(&out.Outbound)})
	}
	if q.File != 0 {
		scan := t.d.ResourceScanner()
		qs = append(qs, Batch{Query: t.d.Resources.Chain, Args: []any{q.File, shelfmark.MaxChain}, Each: func(r Scanner) error {
			row, err := scan(r)
			out.FileChain = append(out.FileChain, row)
			return err
		}})
	}
	if err := RunBatch(ctx, t.q, qs); err != nil {
		return nil, fmt.Errorf("%slinks of web url %d: %w", t.d.Prefix, q.Dst, err)
	}
	return out, nil
}

// WebInbound returns up to limit pages linking to dst with ids above
// after, ascending: one range of the web_links key.
func (t *Tx) WebInbound(ctx context.Context, dst, after int64, limit int) ([]*shelfmark.WebURLRow, error) {
	out, err := WebURLs(ctx, t.q, t.d.WebInbound, dst, after, limit)
	if err != nil {
		return nil, fmt.Errorf("%sinbound links of web url %d: %w", t.d.Prefix, dst, err)
	}
	return out, nil
}

// WebLinkLogged reports whether web_link_log has a row: one read of its
// first key.
func (t *Tx) WebLinkLogged(ctx context.Context) (bool, error) {
	n, err := Int64s(ctx, t.q, `SELECT 1 FROM web_link_log LIMIT 1`)
	if err != nil {
		return false, fmt.Errorf("%sweb link log: %w", t.d.Prefix, err)
	}
	return len(n) > 0, nil
}

// WebTopURLs returns the n URLs of domain with the most inbound links:
// the first n entries of the domain's range of a partial index.
func (t *Tx) WebTopURLs(ctx context.Context, domain string, n int) ([]*shelfmark.WebURLRow, error) {
	rows, err := WebURLs(ctx, t.q, t.d.WebTopURLs, domain, n)
	if err != nil {
		return nil, fmt.Errorf("%stop urls of web domain %q: %w", t.d.Prefix, domain, err)
	}
	return rows, nil
}

// WebTopDomains returns the n domains with the most inbound links: the
// first n entries of a partial index.
func (t *Tx) WebTopDomains(ctx context.Context, n int) ([]*shelfmark.WebDomainRow, error) {
	rows, err := WebDomains(ctx, t.q, t.d.WebTopDomains, n)
	if err != nil {
		return nil, fmt.Errorf("%stop web domains: %w", t.d.Prefix, err)
	}
	return rows, nil
}

// WebURLCaptures returns up to limit captures of url after (at, id) by
// (time, id), or before it, descending, when desc is set: one statement.
func (t *Tx) WebURLCaptures(ctx context.Context, url int64, at time.Time, id int64, desc bool, limit int) ([]*shelfmark.CaptureRow, error) {
	stmt := t.d.WebURLCaptures
	if desc {
		stmt = t.d.WebURLCapturesDesc
	}
	rows, err := Captures(ctx, t.q, stmt, url, CursorNanos(at, desc), id, limit)
	if err != nil {
		return nil, fmt.Errorf("%scaptures of web url %d: %w", t.d.Prefix, url, err)
	}
	return rows, nil
}

// LockWebFile returns a file's index state, or nil, locked until the
// transaction ends: one statement.
func (w *WriteTx) LockWebFile(ctx context.Context, file int64) (*shelfmark.WebFileRow, error) {
	out, err := WebFile(ctx, w.q, w.d.LockWebFile, file)
	if err != nil {
		return nil, fmt.Errorf("%slock web file %d: %w", w.d.Prefix, file, err)
	}
	return out, nil
}

// LockWebURLs returns the rows of ids that exist, by id, locked until the
// transaction ends: one statement.
func (w *WriteTx) LockWebURLs(ctx context.Context, ids []int64) ([]*shelfmark.WebURLRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := WebURLs(ctx, w.q, w.d.LockWebURLs, w.d.Int64s(ids))
	if err != nil {
		return nil, fmt.Errorf("%slock %d web urls: %w", w.d.Prefix, len(ids), err)
	}
	return rows, nil
}

// WebCaptures scans captures by SURT range in (SURT, time, id) order: at
// most two statements (the rest of the After capture's URL, then the URLs
// after it).
func (t *Tx) WebCaptures(ctx context.Context, q shelfmark.CaptureScan) ([]*shelfmark.CaptureRow, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	lo, hi := TimeBounds(q.Since, q.Until)
	var out []*shelfmark.CaptureRow
	from, strict := q.From, false
	// an After before the range: the scan starts at From
	if a := q.After; a != nil && a.SURT >= q.From {
		if q.To == "" || a.SURT < q.To {
			// the rest of its URL, from the cursor's time (or from Since)
			ns := WebNanos(a.Time)
			rows, err := Captures(ctx, t.q, t.d.CapturesRestOfURL, a.SURT, max(lo, ns), hi, ns, a.ID, q.Limit)
			if err != nil {
				return nil, fmt.Errorf("%sweb captures after %s: %w", t.d.Prefix, a.SURT, err)
			}
			out = rows
		}
		from, strict = a.SURT, true
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
		stmt, args = t.d.CapturesAfter, []any{from, q.To, lo, hi, n}
	case strict:
		stmt, args = t.d.CapturesAfterOpen, []any{from, lo, hi, n}
	case q.To != "":
		stmt, args = t.d.CapturesFrom, []any{from, q.To, lo, hi, n}
	default:
		stmt, args = t.d.CapturesFromOpen, []any{from, lo, hi, n}
	}
	rows, err := Captures(ctx, t.q, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("%sweb captures from %s: %w", t.d.Prefix, from, err)
	}
	return append(out, rows...), nil
}
