package shelfmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// Web archives: WARC files kept as the preservation copy of a work in a
// crawl collection, every record of them indexed for lookup (a capture),
// and an incremental index of the links between the captured pages.
//
// A page's outbound links are those of its newest capture that carries
// link information (an HTML response, or a WAT metadata record): newest by
// capture time, then by WARC-Record-ID, so the index is the same whatever
// order files arrive in. Links are a set per page: a link repeated on a
// page counts once and a link to the page itself does not count. A URL's
// inbound count is the number of pages whose current links hold it; a
// domain's inbound count is the sum over its URLs.

// WebURL is a URL as the web index keys it.
type WebURL struct {
	// URL is the absolute URL as found (fragment removed).
	URL string
	// SURT is its Sort-friendly URI Reordering Transform, the index key
	// ("com,example)/path?a=1").
	SURT string
	// Domain is its registered domain ("example.com", "example.co.uk"),
	// or the host when it has none (an IP address, "localhost").
	Domain string
}

// WebRecord is one WARC record as an ingest reads it.
type WebRecord struct {
	// Offset and Length locate the record in its file: for a gzipped
	// file, the gzip member that holds it.
	Offset, Length int64
	// Type is the WARC-Type (response, resource, revisit, request,
	// metadata, warcinfo, conversion, continuation).
	Type string
	// Target is the record's WARC-Target-URI, canonicalised.
	Target WebURL
	// Time is the WARC-Date.
	Time time.Time
	// RecordID is the WARC-Record-ID.
	RecordID string
	// MIME is the payload's media type (the HTTP Content-Type for an HTTP
	// response, the record's Content-Type otherwise), without parameters.
	MIME string
	// Status is the HTTP status of a response; 0 when there is none.
	Status int
	// Digest is the WARC-Payload-Digest as written ("sha1:...").
	Digest string
	// HasLinks reports whether the record tells the page's outbound
	// links (an HTML response, a WAT metadata record); Links are then
	// those links, absolute and canonicalised, perhaps repeated.
	HasLinks bool
	Links    []WebURL
}

// WebFileRow is the index state of one WARC file.
type WebFileRow struct {
	// File is the key of the file resource that holds the WARC bytes;
	// Work is the key of the work that holds the file.
	File, Work int64
	// Offset is where indexing stopped: every record before it is in the
	// index, in the same transaction that set it.
	Offset int64
	// Records and Errors count the records indexed and the bad ones
	// skipped.
	Records, Errors int64
	// Done is set once the whole file is indexed.
	Done bool
	// Removed is set once the file's captures and links have left the
	// index (its work was deleted).
	Removed bool
}

// WebDomainRow is a domain of the link index.
type WebDomainRow struct {
	ID   int64
	Name string
	// URLs counts the distinct URLs of the domain the index knows
	// (captured or linked to); Inbound sums their inbound counts.
	URLs, Inbound int64
	// New is set by InternWebDomains when the row was made by that call.
	New bool
}

// WebURLRow is a URL of the link index.
type WebURLRow struct {
	ID     int64
	SURT   string
	URL    string
	Domain int64
	// Inbound is the number of pages whose current links hold the URL.
	Inbound int64
	// Current is the capture whose links are the page's outbound links
	// (0 when the URL has no capture with links).
	Current int64
	// New is set by InternWebURLs when the row was made by that call.
	New bool
}

// WebURLView is a URL's row with its domain's name and the capture its
// outbound links come from.
type WebURLView struct {
	WebURLRow
	DomainName string
	// Capture is the row of Current (nil when the URL has none).
	Capture *CaptureRow
}

// WebLinkRowsQuery names the rows of a page of a URL's links.
type WebLinkRowsQuery struct {
	// Dst is the URL; its inbound page is up to InboundLimit pages with
	// ids above InboundAfter, as WebInbound reads them.
	Dst, InboundAfter int64
	InboundLimit      int
	// Outbound are the ids of the outbound page, whose rows are read as
	// WebURLRows reads them (none: no statement).
	Outbound []int64
	// File is the WARC file of the URL's current capture, whose chain is
	// read as ResourceChain reads it, MaxChain rows at most (0: no
	// statement).
	File int64
}

// WebLinkRows are the rows WebLinkRowsQuery names.
type WebLinkRows struct {
	Inbound   []*WebURLRow
	Outbound  []*WebURLRow // those that exist, in any order
	FileChain []*ResourceRow
}

// CaptureRow is one indexed WARC record.
type CaptureRow struct {
	ID   int64
	URL  int64 // the WebURLRow of the target
	File int64 // the WARC file resource
	// Offset and Length locate the record in the file (see WebRecord).
	Offset, Length int64
	Time           time.Time
	Type           string
	MIME           string
	Status         int
	Digest         string
	RecordID       string
	// HasLinks reports whether the record tells the page's links; Links
	// are then the distinct target URL ids, ascending, without the page
	// itself.
	HasLinks bool
	Links    []int64
	// SURT is the key of the capture's URL, filled by reads. Target is
	// the capture's URL (its WARC-Target-URI, canonicalised), filled by
	// reads. On insert it is set, and stored, only when the URL row
	// names another URL of the same key (the row keeps the first URL the
	// index met for its key: a redirect from http://host/a to
	// https://www.host/a/ is one key), so the usual capture stores none.
	SURT, Target string
}

// Newer reports whether c is a later capture than d for choosing a page's
// current links: later time, then greater record id.
func (c *CaptureRow) Newer(d *CaptureRow) bool {
	if !c.Time.Equal(d.Time) {
		return c.Time.After(d.Time)
	}
	return c.RecordID > d.RecordID
}

// WebLink is one current link, from the page Src to the URL Dst.
type WebLink struct {
	Dst, Src int64
}

// WebLinkChange is a logged change of one link: Delta +1 adds it, -1
// removes it, 0 (added and removed again before a merge) leaves it.
type WebLinkChange struct {
	WebLink
	Delta int64
}

// CaptureScan selects captures by SURT range, in (SURT, time, id) order.
type CaptureScan struct {
	// From and To bound the SURT: From <= SURT < To; To "" is no bound.
	From, To string
	// Since and Until bound the time: Since <= time < Until; zero is no
	// bound.
	Since, Until time.Time
	// After continues a scan after this capture (keyset paging).
	After *CaptureRow
	// Limit caps the rows returned.
	Limit int
}

// WebReadTx reads the web index.
type WebReadTx interface {
	// WebFile returns the state of a WARC file, or (nil, nil).
	WebFile(ctx context.Context, file int64) (*WebFileRow, error)
	// WebFiles returns up to limit files whose keys are above after, by key.
	WebFiles(ctx context.Context, after int64, limit int) ([]*WebFileRow, error)
	// WebURLsBySURT returns the URL rows of the SURTs that are known.
	WebURLsBySURT(ctx context.Context, surts []string) (map[string]*WebURLRow, error)
	// WebURLRows returns the URL rows of ids that exist, in any order.
	WebURLRows(ctx context.Context, ids []int64) ([]*WebURLRow, error)
	// WebDomainRows returns the domain rows of ids that exist.
	WebDomainRows(ctx context.Context, ids []int64) ([]*WebDomainRow, error)
	// WebCaptureRows returns the captures of ids that exist, with SURT
	// and Target filled.
	WebCaptureRows(ctx context.Context, ids []int64) ([]*CaptureRow, error)
	// WebCaptures scans captures by SURT range (see CaptureScan), with
	// SURT and Target filled.
	WebCaptures(ctx context.Context, q CaptureScan) ([]*CaptureRow, error)
	// WebURLCaptures returns up to limit captures of one URL ordered by
	// (time, id): after (at, id) ascending, or before it descending when
	// desc is set. SURT and Target are filled.
	WebURLCaptures(ctx context.Context, url int64, at time.Time, id int64, desc bool, limit int) ([]*CaptureRow, error)
	// WebFileCaptures returns up to limit captures of a file with ids
	// above after, by id.
	WebFileCaptures(ctx context.Context, file, after int64, limit int) ([]*CaptureRow, error)
	// WebURLView returns what a page of the links of the URL surt shows
	// beside them, or (nil, nil) when the index does not know it: one
	// statement.
	WebURLView(ctx context.Context, surt string) (*WebURLView, error)
	// WebLinkRows reads what a page of a URL's links needs once the URL
	// is known (see WebLinkRowsQuery): up to three statements that do
	// not depend on each other, sent in one round trip on a server.
	WebLinkRows(ctx context.Context, q WebLinkRowsQuery) (*WebLinkRows, error)
	// WebInbound returns up to limit pages (their URL rows) that link to
	// dst, with ids above after, ascending by id: one range of the links'
	// key, and a primary-key read of each page's row.
	WebInbound(ctx context.Context, dst, after int64, limit int) ([]*WebURLRow, error)
	// WebLinkLogged reports whether the link log holds a change not yet
	// merged: one read of its first key.
	WebLinkLogged(ctx context.Context) (bool, error)
	// WebTopURLs returns the n URLs of the domain named domain with the
	// most inbound links (ties by id), with at least one; none for a
	// domain the index does not know. One statement finds the domain and
	// its top: a query on a server is as many round trips as statements.
	WebTopURLs(ctx context.Context, domain string, n int) ([]*WebURLRow, error)
	// WebTopDomains returns the n domains with the most inbound links
	// (ties by id), with at least one.
	WebTopDomains(ctx context.Context, n int) ([]*WebDomainRow, error)
}

// WebWriteTx writes the web index. Each method costs a number of
// statements that does not grow with the index.
type WebWriteTx interface {
	WebReadTx
	// LockWebFile returns a file's state, or (nil, nil), locked against
	// other writers until the transaction ends, so two ingests of one
	// file never index the same batch.
	LockWebFile(ctx context.Context, file int64) (*WebFileRow, error)
	// PutWebFile inserts or replaces a file's state.
	PutWebFile(ctx context.Context, row *WebFileRow) error
	// InternWebDomains sets each row's ID to that of the domain of its
	// Name, inserting the unknown ones (with URLs and Inbound 0) and
	// setting New on those. Safe against concurrent writers.
	InternWebDomains(ctx context.Context, rows []*WebDomainRow) error
	// InternWebURLs does the same for URLs by SURT (URL and Domain are
	// stored for new rows; Inbound 0, Current 0).
	InternWebURLs(ctx context.Context, rows []*WebURLRow) error
	// LockWebURLs returns the rows of ids, locked against other writers
	// until the transaction ends (taken in id order).
	LockWebURLs(ctx context.Context, ids []int64) ([]*WebURLRow, error)
	// InsertWebCaptures inserts captures and sets their IDs.
	InsertWebCaptures(ctx context.Context, rows []*CaptureRow) error
	// DeleteWebCaptures removes captures.
	DeleteWebCaptures(ctx context.Context, ids []int64) error
	// SetWebCurrent sets the current capture of URLs (0: none).
	SetWebCurrent(ctx context.Context, current map[int64]int64) error
	// AddWebLinks inserts current links; DeleteWebLinks removes them.
	AddWebLinks(ctx context.Context, links []WebLink) error
	DeleteWebLinks(ctx context.Context, links []WebLink) error
	// AddWebCounts adds deltas to URLs' inbound counts, domains' inbound
	// counts and domains' URL counts, in id order.
	AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error
	// AddWebInbound adds deltas to URLs' inbound counts and the sum of
	// each domain's to the domain's, in two statements: the domains are
	// those of the URLs' count rows.
	AddWebInbound(ctx context.Context, urlInbound map[int64]int64) error
	// LogWebLinks adds changes (distinct links) to the link log, summing
	// the deltas of a link logged before: one statement, in key order.
	LogWebLinks(ctx context.Context, changes []WebLinkChange) error
	// WebLinkLogAt returns the key of the log's row skip rows from the
	// first at or after from, in key order, and false when there is none:
	// one range of the log's key.
	WebLinkLogAt(ctx context.Context, from WebLink, skip int) (WebLink, bool, error)
	// TakeWebLinkLog removes from the log and returns its rows with keys
	// from <= (dst, src) < to, in key order: one statement.
	TakeWebLinkLog(ctx context.Context, from, to WebLink) ([]WebLinkChange, error)
	// LockWebMerge makes merges take turns: it writes the one row every
	// merge transaction writes first.
	LockWebMerge(ctx context.Context) error
}

// EncodeLinkIDs packs ascending ids as varint deltas, the form both
// backends store a capture's links in.
func EncodeLinkIDs(ids []int64) []byte {
	b := make([]byte, 0, len(ids)*3)
	var prev int64
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	return b
}

// DecodeLinkIDs unpacks EncodeLinkIDs.
func DecodeLinkIDs(b []byte) ([]int64, error) {
	ids := make([]int64, 0, len(b)/2)
	var prev int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("link ids: bad varint at byte %d", len(b))
		}
		prev += int64(d)
		ids = append(ids, prev)
		b = b[n:]
	}
	return ids, nil
}

// sortedUnique sorts ids and drops repeats and drop.
func sortedUnique(ids []int64, drop int64) []int64 {
	slices.Sort(ids)
	out := ids[:0]
	for i, id := range ids {
		if id == drop || (i > 0 && id == ids[i-1]) {
			continue
		}
		out = append(out, id)
	}
	return out
}
