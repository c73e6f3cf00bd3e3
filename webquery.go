package shelfmark

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The read side of the web index. Captures obey the access policy of the
// WARC file that holds them: a caller sees the captures of the files it
// may read, and nothing else, not even their count. The link index is one
// repository-wide set of counters over every crawl, so it cannot be cut to
// each caller's crawls: it is shown to the callers who hold a role on the
// whole repository (and administrators), or to everyone when the
// repository declares its link index public (RepositoryOptions.WebLinksPublic).

// Capture is one WARC record of the web index as a caller sees it.
type Capture struct {
	ID       int64     `json:"id"`
	URL      string    `json:"url"`
	SURT     string    `json:"urlkey"`
	Time     time.Time `json:"timestamp"`
	Type     string    `json:"type"`
	MIME     string    `json:"mime,omitempty"`
	Status   int       `json:"status,omitempty"`
	Digest   string    `json:"digest,omitempty"`
	RecordID string    `json:"record_id,omitempty"`
	Offset   int64     `json:"offset"`
	Length   int64     `json:"length"`
	// File is the WARC file resource, Work the work holding it.
	File ID `json:"file"`
	Work ID `json:"work"`
	// HasLinks reports whether the record told the page's links.
	HasLinks bool `json:"has_links"`
	// Links is the number of distinct outbound links it told.
	Links int `json:"links"`
}

// Match kinds of a capture lookup (as pywb and the Wayback CDX server
// name them).
const (
	MatchExact  = "exact"
	MatchPrefix = "prefix"
	MatchHost   = "host"
	MatchDomain = "domain"
)

// WebCaptureQuery selects captures.
type WebCaptureQuery struct {
	// SURT is the key of the URL looked up (see WebURL).
	SURT string
	// Match is MatchExact (default), MatchPrefix (every URL starting with
	// it), MatchHost (every URL of its host) or MatchDomain (its host and
	// every subdomain).
	Match string
	// Since and Until bound the capture time: Since <= t < Until.
	Since, Until time.Time
	// After is the cursor of the previous page ("" for the first).
	After string
	// Limit is the page size (default 100, at most 10,000).
	Limit int
}

// WebCapturePage is one page of captures in (SURT, time) order.
type WebCapturePage struct {
	Captures []*Capture
	// Next is the cursor of the next page; "" after the last.
	Next string
}

// Limits of web index reads.
const (
	DefaultWebLimit = 100
	MaxWebLimit     = 10000
	MaxWebTop       = 1000
)

// surtRange is the SURT range a match covers.
func surtRange(surt, match string) (from, to string, err error) {
	host := surt
	if i := strings.IndexByte(surt, ')'); i >= 0 {
		host = surt[:i]
	}
	switch match {
	case "", MatchExact:
		// "\x01", not "\x00": PostgreSQL text cannot hold NUL, and no SURT
		// holds a control character (they are percent-encoded)
		return surt, surt + "\x01", nil
	case MatchPrefix:
		return surt, prefixEnd(surt), nil
	case MatchHost:
		return host + ")", host + "*", nil
	case MatchDomain:
		// "com,example)" and "com,example,sub)": ')' and ',' sort between
		// ')' and '-', and no host character lies between them
		return host + ")", host + "-", nil
	}
	return "", "", Errorf(EINVALID, "Unknown match %q: use exact, prefix, host or domain.", match)
}

// prefixEnd is the least string above every string starting with p.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// fileReader answers, per WARC file, whether the caller may read it,
// asking the policy once per file.
type fileReader struct {
	g     *guard
	files map[int64]*access
	seen  map[int64]bool
}

func (r *Repository) fileReader(tx ReadTx, c *Caller) *fileReader {
	return &fileReader{g: r.guard(tx, c), files: map[int64]*access{}, seen: map[int64]bool{}}
}

func (f *fileReader) readable(ctx context.Context, file int64) (*access, error) {
	if f.seen[file] {
		return f.files[file], nil
	}
	a, err := f.g.readable(ctx, file)
	return f.remember(file, a, err)
}

// readableChain is readable with the file's chain already read
// (ReadTx.ResourceChain).
func (f *fileReader) readableChain(ctx context.Context, file int64, chain []*ResourceRow) (*access, error) {
	if f.seen[file] {
		return f.files[file], nil
	}
	a, err := f.g.readableChain(ctx, file, chain)
	return f.remember(file, a, err)
}

// remember keeps the answer for file: its access, or nil for a file the
// caller may not read or that is gone.
func (f *fileReader) remember(file int64, a *access, err error) (*access, error) {
	switch ErrorCode(err) {
	case "":
	case ENOTFOUND, EGONE:
		a, err = nil, nil
	default:
		return nil, err
	}
	f.seen[file], f.files[file] = true, a
	return a, nil
}

// capture makes what a caller sees of a row it may read.
func (r *Repository) capture(c *CaptureRow, a *access) *Capture {
	return &Capture{
		ID: c.ID, URL: c.Target, SURT: c.SURT, Time: c.Time, Type: c.Type, MIME: c.MIME, Status: c.Status,
		Digest: c.Digest, RecordID: c.RecordID, Offset: c.Offset, Length: c.Length,
		File: r.ids.Encode(c.File), Work: r.ids.Encode(a.root().Key), HasLinks: c.HasLinks, Links: len(c.Links),
	}
}

// WebCaptures lists the captures the caller may read that q selects, a
// page at a time. A page reads at most its limit plus MaxListScan rows.
func (r *Repository) WebCaptures(ctx context.Context, q WebCaptureQuery) (*WebCapturePage, error) {
	if q.SURT == "" {
		return nil, Errorf(EINVALID, "Say which URL to look up.")
	}
	from, to, err := surtRange(q.SURT, q.Match)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultWebLimit
	} else if limit > MaxWebLimit {
		limit = MaxWebLimit
	}
	page := &WebCapturePage{}
	err = r.store.View(ctx, func(tx ReadTx) error {
		scan := CaptureScan{From: from, To: to, Since: q.Since, Until: q.Until}
		if q.After != "" {
			key, err := r.hidden.Key(ID(q.After))
			if err != nil {
				return Errorf(EINVALID, "The cursor %q is not one this server gave, or it has expired: start the listing again.", q.After)
			}
			rows, err := tx.WebCaptureRows(ctx, []int64{key})
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				return Errorf(EINVALID, "The cursor %q names a capture that was removed: start the listing again.", q.After)
			}
			scan.After = rows[0]
		}
		fr := r.fileReader(tx, CallerFrom(ctx))
		scanned := 0
		for len(page.Captures) < limit {
			scan.Limit = min(limit-len(page.Captures)+1, MaxWebLimit+1)
			rows, err := tx.WebCaptures(ctx, scan)
			if err != nil {
				return err
			}
			for _, c := range rows {
				scanned++
				if len(page.Captures) == limit {
					page.Next = string(r.hidden.Encode(scan.After.ID))
					return nil
				}
				scan.After = c
				a, err := fr.readable(ctx, c.File)
				if err != nil {
					return err
				}
				if a != nil {
					page.Captures = append(page.Captures, r.capture(c, a))
				}
				if scanned > limit+r.maxScan && len(page.Captures) < limit {
					// many hidden rows: end the page early, after them
					page.Next = string(r.hidden.Encode(c.ID))
					return nil
				}
			}
			if len(rows) < scan.Limit {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web captures of %s: %w", q.SURT, err)
	}
	return page, nil
}

// WebCapture returns one capture the caller may read.
func (r *Repository) WebCapture(ctx context.Context, id int64) (*Capture, error) {
	var out *Capture
	err := r.store.View(ctx, func(tx ReadTx) error {
		rows, err := tx.WebCaptureRows(ctx, []int64{id})
		if err != nil {
			return err
		}
		if len(rows) == 1 {
			a, err := r.fileReader(tx, CallerFrom(ctx)).readable(ctx, rows[0].File)
			if err != nil {
				return err
			}
			if a != nil {
				out = r.capture(rows[0], a)
			}
		}
		if out == nil {
			return Errorf(ENOTFOUND, "No capture has the id %d.", id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web capture %d: %w", id, err)
	}
	return out, nil
}

// replayable reports whether a record of type t holds a payload to replay.
func replayable(t string) bool { return t == "response" || t == "resource" || t == "revisit" }

// WebNearest returns the capture of the URL with key surt nearest to at
// that holds a payload (a response, resource or revisit record) and that
// the caller may read.
func (r *Repository) WebNearest(ctx context.Context, surt string, at time.Time) (*Capture, error) {
	var out *Capture
	err := r.store.View(ctx, func(tx ReadTx) error {
		us, err := tx.WebURLsBySURT(ctx, []string{surt})
		if err != nil {
			return err
		}
		u := us[surt]
		if u == nil {
			return Errorf(ENOTFOUND, "No capture of %s is in the web index.", surt)
		}
		fr := r.fileReader(tx, CallerFrom(ctx))
		// the first readable payload on each side of at
		side := func(desc bool) (*Capture, error) {
			t, id := at, int64(0)
			if desc {
				id = 1<<63 - 1
			}
			for scanned := 0; scanned <= r.maxScan; {
				rows, err := tx.WebURLCaptures(ctx, u.ID, t, id, desc, 64)
				if err != nil {
					return nil, err
				}
				for _, c := range rows {
					scanned++
					if !replayable(c.Type) {
						continue
					}
					a, err := fr.readable(ctx, c.File)
					if err != nil || a != nil {
						if a == nil {
							return nil, err
						}
						return r.capture(c, a), nil
					}
				}
				if len(rows) < 64 {
					return nil, nil
				}
				t, id = rows[len(rows)-1].Time, rows[len(rows)-1].ID
			}
			return nil, nil
		}
		after, err := side(false)
		if err != nil {
			return err
		}
		before, err := side(true)
		if err != nil {
			return err
		}
		switch {
		case before == nil:
			out = after
		case after == nil:
			out = before
		case at.Sub(before.Time) <= after.Time.Sub(at):
			out = before
		default:
			out = after
		}
		if out == nil {
			return Errorf(ENOTFOUND, "No capture of %s is in the web index.", surt)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("nearest capture of %s: %w", surt, err)
	}
	return out, nil
}

// WebLinkInfo is what the link index knows of one URL.
type WebLinkInfo struct {
	URL    string `json:"url"`
	SURT   string `json:"urlkey"`
	Domain string `json:"domain"`
	// InboundCount is the number of pages whose current links hold it.
	InboundCount int64 `json:"inbound_count"`
	// Inbound is a page of those pages (by key), NextInbound the cursor
	// of the next page.
	Inbound     []string `json:"inbound"`
	NextInbound string   `json:"next_inbound,omitempty"`
	// Outbound is a page of the URL's current outbound links, when it was
	// captured with links; NextOutbound the cursor of the next page.
	Outbound     []string `json:"outbound"`
	OutboundKnow bool     `json:"outbound_known"`
	NextOutbound string   `json:"next_outbound,omitempty"`
	// Current is the capture the outbound links come from, when the
	// caller may read it.
	Current *Capture `json:"current,omitempty"`
}

// WebLinkQuery selects a URL's links.
type WebLinkQuery struct {
	SURT string
	// InboundAfter and OutboundAfter are the cursors of the pages.
	InboundAfter, OutboundAfter string
	// Limit is the page size of each list (default 100, at most 10,000).
	Limit int
}

// mayReadLinks applies the link index's access rule.
func (r *Repository) mayReadLinks(ctx context.Context, tx ReadTx) error {
	if r.webLinksPublic {
		return nil
	}
	c := CallerFrom(ctx)
	role, err := r.guard(tx, c).repositoryRole(ctx)
	if err != nil {
		return err
	}
	if !role.Includes(RoleViewer) {
		return Errorf(ENOTFOUND, "The link index is not open to you: it spans every crawl, so it is shown to readers of the whole repository.")
	}
	return nil
}

// MayReadWebLinks reports whether the caller on ctx may read the link
// index.
func (r *Repository) MayReadWebLinks(ctx context.Context) (bool, error) {
	var ok bool
	err := r.store.View(ctx, func(tx ReadTx) error {
		err := r.mayReadLinks(ctx, tx)
		ok = err == nil
		if ErrorCode(err) == ENOTFOUND {
			err = nil
		}
		return err
	})
	return ok, err
}

func linkCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, Errorf(EINVALID, "The cursor %q is not a cursor of this list.", s)
	}
	return n, nil
}

// WebLinks returns what the link index knows of one URL: its inbound
// count, a page of the pages linking to it, and a page of its own current
// outbound links.
func (r *Repository) WebLinks(ctx context.Context, q WebLinkQuery) (*WebLinkInfo, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultWebLimit
	} else if limit > MaxWebLimit {
		limit = MaxWebLimit
	}
	inAfter, err := linkCursor(q.InboundAfter)
	if err != nil {
		return nil, err
	}
	outAfter, err := linkCursor(q.OutboundAfter)
	if err != nil {
		return nil, err
	}
	var out *WebLinkInfo
	err = r.store.View(ctx, func(tx ReadTx) error {
		if err := r.mayReadLinks(ctx, tx); err != nil {
			return err
		}
		u, err := tx.WebURLView(ctx, q.SURT)
		if err != nil {
			return err
		}
		if u == nil {
			return Errorf(ENOTFOUND, "The link index does not know %s.", q.SURT)
		}
		out = &WebLinkInfo{URL: u.URL, SURT: u.SURT, Domain: u.DomainName, InboundCount: u.Inbound, Inbound: []string{}, Outbound: []string{}}
		lq := WebLinkRowsQuery{Dst: u.ID, InboundAfter: inAfter, InboundLimit: limit + 1}
		c := u.Capture
		if c != nil {
			out.OutboundKnow = true
			for _, id := range c.Links {
				if id > outAfter {
					lq.Outbound = append(lq.Outbound, id)
				}
			}
			if len(lq.Outbound) > limit {
				lq.Outbound = lq.Outbound[:limit]
				out.NextOutbound = strconv.FormatInt(lq.Outbound[limit-1], 10)
			}
			lq.File = c.File
		}
		// the rest in one round trip on a server
		rows, err := tx.WebLinkRows(ctx, lq)
		if err != nil {
			return err
		}
		in := rows.Inbound
		if len(in) > limit {
			in = in[:limit]
			out.NextInbound = strconv.FormatInt(in[limit-1].ID, 10)
		}
		for _, s := range in {
			out.Inbound = append(out.Inbound, s.URL)
		}
		if c == nil {
			return nil
		}
		a, err := r.fileReader(tx, CallerFrom(ctx)).readableChain(ctx, c.File, rows.FileChain)
		if err != nil {
			return err
		}
		if a != nil {
			out.Current = r.capture(c, a)
		}
		names := make(map[int64]string, len(rows.Outbound))
		for _, o := range rows.Outbound {
			names[o.ID] = o.URL
		}
		for _, id := range lq.Outbound {
			out.Outbound = append(out.Outbound, names[id])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("links of %s: %w", q.SURT, err)
	}
	return out, nil
}

// WebCount is one entry of a top list.
type WebCount struct {
	// Name is the URL (top pages) or the domain (top domains).
	Name string `json:"name"`
	// SURT is the URL's key (top pages only).
	SURT string `json:"urlkey,omitempty"`
	// Inbound is the inbound-link count.
	Inbound int64 `json:"inbound_count"`
	// URLs is the number of URLs the index knows in the domain (top
	// domains only).
	URLs int64 `json:"urls,omitempty"`
}

// WebTop returns the n pages of domain with the most inbound links, or,
// when domain is "", the n domains with the most.
func (r *Repository) WebTop(ctx context.Context, domain string, n int) ([]WebCount, error) {
	if n <= 0 {
		n = 10
	} else if n > MaxWebTop {
		return nil, Errorf(EINVALID, "n is at most %d.", MaxWebTop)
	}
	out := []WebCount{}
	err := r.store.View(ctx, func(tx ReadTx) error {
		if err := r.mayReadLinks(ctx, tx); err != nil {
			return err
		}
		if domain == "" {
			ds, err := tx.WebTopDomains(ctx, n)
			for _, d := range ds {
				out = append(out, WebCount{Name: d.Name, Inbound: d.Inbound, URLs: d.URLs})
			}
			return err
		}
		us, err := tx.WebTopURLs(ctx, domain, n)
		for _, u := range us {
			out = append(out, WebCount{Name: u.URL, SURT: u.SURT, Inbound: u.Inbound})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("top of %q: %w", domain, err)
	}
	return out, nil
}

// WebFileState returns the index state of a WARC file the caller may read
// (nil when it was never indexed).
func (r *Repository) WebFileState(ctx context.Context, file ID) (*WebFileRow, error) {
	key, err := r.ids.Key(file)
	if err != nil {
		return nil, Errorf(ENOTFOUND, "No resource has the id %s.", file)
	}
	var out *WebFileRow
	err = r.store.View(ctx, func(tx ReadTx) error {
		if _, err := r.guard(tx, CallerFrom(ctx)).readable(ctx, key); err != nil {
			return err
		}
		out, err = tx.WebFile(ctx, key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("web state of %s: %w", file, err)
	}
	return out, nil
}

// WebFileCaptures lists the captures of one WARC file the caller may
// read, in the order they were indexed (by capture id), a page at a time:
// after is the Next of the previous page ("" for the first), limit the
// page size (default 100, at most MaxWebLimit). Every capture of a file
// is read as the file is, so a page reads at most limit+1 rows. A file
// the caller may not read is ENOTFOUND, as a missing one; a file the web
// index does not hold (not a WARC file, or never indexed) is ENOTFOUND
// too, saying so.
func (r *Repository) WebFileCaptures(ctx context.Context, file ID, after string, limit int) (*WebCapturePage, error) {
	key, err := r.ids.Key(file)
	if err != nil {
		return nil, Errorf(ENOTFOUND, "No resource has the id %s.", file)
	}
	if limit <= 0 {
		limit = DefaultWebLimit
	} else if limit > MaxWebLimit {
		limit = MaxWebLimit
	}
	var from int64
	if after != "" {
		if from, err = r.hidden.Key(ID(after)); err != nil {
			return nil, Errorf(EINVALID, "The cursor %q is not one this server gave, or it has expired: start the listing again.", after)
		}
	}
	page := &WebCapturePage{}
	err = r.store.View(ctx, func(tx ReadTx) error {
		a, err := r.guard(tx, CallerFrom(ctx)).readable(ctx, key)
		if err != nil {
			return err
		}
		state, err := tx.WebFile(ctx, key)
		if err != nil {
			return err
		}
		if state == nil {
			return Errorf(ENOTFOUND, "%s is not a WARC file of the web index.", file)
		}
		rows, err := tx.WebFileCaptures(ctx, key, from, limit+1)
		if err != nil {
			return err
		}
		if len(rows) > limit {
			rows = rows[:limit]
			page.Next = string(r.hidden.Encode(rows[limit-1].ID))
		}
		for _, c := range rows {
			page.Captures = append(page.Captures, r.capture(c, a))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web captures of file %s: %w", file, err)
	}
	return page, nil
}
