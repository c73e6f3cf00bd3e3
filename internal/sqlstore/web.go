package sqlstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The web index (web.go in the root package, migration 0010_web.sql):
// its columns, row scanners and the ordering rules both backends follow.

// WebNanos is t as stored: Unix nanoseconds.
func WebNanos(t time.Time) int64 { return t.UnixNano() }

// FromWebNanos is the time of a stored capture time, in UTC.
func FromWebNanos(v int64) time.Time { return time.Unix(0, v).UTC() }

// CursorNanos is the time of a WebURLCaptures cursor: a zero time starts
// before the first capture, or, descending, after the last.
func CursorNanos(at time.Time, desc bool) int64 {
	switch {
	case !at.IsZero():
		return WebNanos(at)
	case desc:
		return math.MaxInt64
	}
	return math.MinInt64
}

// TimeBounds returns the capture time range of a scan: since <= time <
// until, the zero times meaning no bound.
func TimeBounds(since, until time.Time) (lo, hi int64) {
	lo, hi = math.MinInt64, math.MaxInt64
	if !since.IsZero() {
		lo = WebNanos(since)
	}
	if !until.IsZero() {
		hi = WebNanos(until)
	}
	return lo, hi
}

// WebURLCols are the columns ScanWebURL reads, from WebURLsFrom: a URL u
// and its count n.
const (
	WebURLCols  = `u.id, u.surt, u.url, u.domain, n.inbound, u.current`
	WebURLsFrom = ` FROM web_urls u JOIN web_url_counts n ON n.id = u.id`
)

// ScanWebURL reads a row of WebURLCols.
func ScanWebURL(r Scanner) (*shelfmark.WebURLRow, error) {
	var u shelfmark.WebURLRow
	err := r.Scan(&u.ID, &u.SURT, &u.URL, &u.Domain, &u.Inbound, &u.Current)
	return &u, err
}

// WebDomainCols are the columns ScanWebDomain reads, from web_domains.
const WebDomainCols = `id, name, urls, inbound`

// ScanWebDomain reads a row of WebDomainCols.
func ScanWebDomain(r Scanner) (*shelfmark.WebDomainRow, error) {
	var d shelfmark.WebDomainRow
	err := r.Scan(&d.ID, &d.Name, &d.URLs, &d.Inbound)
	return &d, err
}

// WebFileCols are the columns ScanWebFile reads, from web_files.
const WebFileCols = `file, work, byte_offset, records, errors, done, removed`

// ScanWebFile reads a row of WebFileCols.
func ScanWebFile(r Scanner) (*shelfmark.WebFileRow, error) {
	var f shelfmark.WebFileRow
	err := r.Scan(&f.File, &f.Work, &f.Offset, &f.Records, &f.Errors, &f.Done, &f.Removed)
	return &f, err
}

// CaptureCols are the columns ScanCapture reads: a capture c joined with
// its URL u; the capture's URL is its own when it has one (see
// migration 0014_capture_target.sql), else its key's.
const CaptureCols = `c.id, c.url, c.file, c.byte_offset, c.byte_length, c.time, c.type, c.mime, c.status, c.digest, c.record_id, c.links, u.surt, COALESCE(c.target, u.url)`

// CapturesFrom follows SELECT CaptureCols when the statement starts from
// the captures.
const CapturesFrom = ` FROM web_captures c JOIN web_urls u ON u.id = c.url`

// ScanCapture reads a row of CaptureCols. The links are NULL (none
// recorded), or a BLOB that SQLite may return as text when empty.
func ScanCapture(r Scanner) (*shelfmark.CaptureRow, error) {
	var (
		c     shelfmark.CaptureRow
		ns    int64
		links any
	)
	if err := r.Scan(&c.ID, &c.URL, &c.File, &c.Offset, &c.Length, &ns, &c.Type, &c.MIME, &c.Status,
		&c.Digest, &c.RecordID, &links, &c.SURT, &c.Target); err != nil {
		return nil, err
	}
	c.Time = FromWebNanos(ns)
	if err := scanLinks(&c, links); err != nil {
		return nil, err
	}
	return &c, nil
}

// scanLinks decodes the links column into c: NULL (none recorded), or a
// BLOB that SQLite may return as text when empty.
func scanLinks(c *shelfmark.CaptureRow, links any) error {
	var b []byte
	switch v := links.(type) {
	case nil:
		return nil
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return fmt.Errorf("capture %d: links of type %T", c.ID, links)
	}
	ids, err := shelfmark.DecodeLinkIDs(b)
	if err != nil {
		return fmt.Errorf("capture %d: %w", c.ID, err)
	}
	c.HasLinks, c.Links = true, ids
	return nil
}

// WebURLViewSQL is Web.WebURLView of both dialects: the URL by its unique
// SURT, its count and domain by primary key, and its current capture, if
// any, by primary key (the capture's columns are zero without one).
const WebURLViewSQL = `SELECT ` + WebURLCols + `, COALESCE(d.name, ''),
    COALESCE(c.id, 0), COALESCE(c.url, 0), COALESCE(c.file, 0), COALESCE(c.byte_offset, 0), COALESCE(c.byte_length, 0),
    COALESCE(c.time, 0), COALESCE(c.type, ''), COALESCE(c.mime, ''), COALESCE(c.status, 0), COALESCE(c.digest, ''),
    COALESCE(c.record_id, ''), c.links, u.surt, COALESCE(c.target, u.url)` + WebURLsFrom + `
LEFT JOIN web_domains d ON d.id = u.domain LEFT JOIN web_captures c ON c.id = u.current
WHERE u.surt = $1`

// WebInboundSQL is Web.WebInbound of both dialects: a range of the key of
// web_links, each source's row by primary key.
const WebInboundSQL = `SELECT ` + WebURLCols + ` FROM web_links l JOIN web_urls u ON u.id = l.src JOIN web_url_counts n ON n.id = u.id
WHERE l.dst = $1 AND l.src > $2 ORDER BY l.src LIMIT $3`

// ScanWebURLView reads a row of WebURLViewSQL.
func ScanWebURLView(r Scanner) (*shelfmark.WebURLView, error) {
	var (
		v     shelfmark.WebURLView
		c     shelfmark.CaptureRow
		ns    int64
		links any
	)
	u := &v.WebURLRow
	if err := r.Scan(&u.ID, &u.SURT, &u.URL, &u.Domain, &u.Inbound, &u.Current, &v.DomainName,
		&c.ID, &c.URL, &c.File, &c.Offset, &c.Length, &ns, &c.Type, &c.MIME, &c.Status,
		&c.Digest, &c.RecordID, &links, &c.SURT, &c.Target); err != nil {
		return nil, err
	}
	if c.ID == 0 {
		return &v, nil
	}
	c.Time = FromWebNanos(ns)
	if err := scanLinks(&c, links); err != nil {
		return nil, err
	}
	v.Capture = &c
	return &v, nil
}

// WebURLs runs a query of WebURLCols rows.
func WebURLs(ctx context.Context, q Querier, query string, args ...any) ([]*shelfmark.WebURLRow, error) {
	return Collect(ctx, q, query, args, ScanWebURL)
}

// WebDomains runs a query of WebDomainCols rows.
func WebDomains(ctx context.Context, q Querier, query string, args ...any) ([]*shelfmark.WebDomainRow, error) {
	return Collect(ctx, q, query, args, ScanWebDomain)
}

// Captures runs a query of CaptureCols rows.
func Captures(ctx context.Context, q Querier, query string, args ...any) ([]*shelfmark.CaptureRow, error) {
	return Collect(ctx, q, query, args, ScanCapture)
}

// WebFile runs a query of at most one WebFileCols row and returns it, or
// nil.
func WebFile(ctx context.Context, q Querier, query string, args ...any) (*shelfmark.WebFileRow, error) {
	rows, err := Collect(ctx, q, query, args, ScanWebFile)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

// FirstOf returns the distinct keys of n rows in ascending order and, for
// each, the index of the first row that has it.
func FirstOf(n int, key func(i int) string) (keys []string, first map[string]int) {
	first = make(map[string]int, n)
	for i := range n {
		k := key(i)
		if _, ok := first[k]; !ok {
			first[k] = i
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, first
}

// SortedPairs returns m's keys in order and their values, leaving out
// zero values when skipZero is set.
func SortedPairs(m map[int64]int64, skipZero bool) (keys, vals []int64) {
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

// SortLinks returns a sorted copy of links, by (dst, src): the order of
// the web_links key, in which writers visit (and lock) its pages.
func SortLinks(links []shelfmark.WebLink) []shelfmark.WebLink {
	links = slices.Clone(links)
	slices.SortFunc(links, compareLinks)
	return links
}

// ChangedDomains returns, ascending and once each, the domains whose
// inbound or URL count changes by a non-zero delta.
func ChangedDomains(inbound, urls map[int64]int64) []int64 {
	ids := make([]int64, 0, len(inbound)+len(urls))
	for id, v := range inbound {
		if v != 0 {
			ids = append(ids, id)
		}
	}
	for id, v := range urls {
		if v != 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
