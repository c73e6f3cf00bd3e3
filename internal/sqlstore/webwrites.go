package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/shelfmark/shelfmark"
)

// WebWrites is a dialect's statements of the web index writes of WriteTx,
// and how it binds rows of integers. Their arguments are those named, in
// that order.
type WebWrites struct {
	// Pairs binds rows (a[i], b[i]) as the arguments of one statement.
	Pairs func(a, b []int64) []any
	// Triples binds rows (a[i], b[i], c[i]) as the arguments of one
	// statement.
	Triples           func(a, b, c []int64) []any
	PutWebFile        string // WebFileCols; replaces the row of the file
	DeleteWebCaptures string // ids
	SetWebCurrent     string // Pairs(ids, captures)
	DeleteWebLinks    string // Pairs(dsts, srcs)
	AddURLCounts      string // Pairs(ids, deltas)
	AddDomainCounts   string // Triples(ids, inbound deltas, URL deltas)
}

// PutWebFile inserts or replaces a file's state in one statement.
func (w *WriteTx) PutWebFile(ctx context.Context, f *shelfmark.WebFileRow) error {
	if _, err := w.q.Exec(ctx, w.d.PutWebFile, f.File, f.Work, f.Offset, f.Records, f.Errors, f.Done, f.Removed); err != nil {
		return fmt.Errorf("%sput web file %d: %w", w.d.Prefix, f.File, err)
	}
	return nil
}

// DeleteWebCaptures removes captures in one statement, in id order.
func (w *WriteTx) DeleteWebCaptures(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = slices.Sorted(slices.Values(ids))
	if _, err := w.q.Exec(ctx, w.d.DeleteWebCaptures, w.d.Int64s(ids)); err != nil {
		return fmt.Errorf("%sdelete %d web captures: %w", w.d.Prefix, len(ids), err)
	}
	return nil
}

// SetWebCurrent sets the current capture of URLs in one statement, in id
// order.
func (w *WriteTx) SetWebCurrent(ctx context.Context, current map[int64]int64) error {
	if len(current) == 0 {
		return nil
	}
	keys, vals := SortedPairs(current, false)
	if _, err := w.q.Exec(ctx, w.d.SetWebCurrent, w.d.Pairs(keys, vals)...); err != nil {
		return fmt.Errorf("%sset the current captures of %d web urls: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}

// LinkArrays returns links sorted by (dst, src), the order of the
// web_links key, as two arrays.
func LinkArrays(links []shelfmark.WebLink) (dsts, srcs []int64) {
	links = SortLinks(links)
	dsts, srcs = make([]int64, len(links)), make([]int64, len(links))
	for i, l := range links {
		dsts[i], srcs[i] = l.Dst, l.Src
	}
	return dsts, srcs
}

// DeleteWebLinks removes links in one statement, in key order.
func (w *WriteTx) DeleteWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	if len(links) == 0 {
		return nil
	}
	dsts, srcs := LinkArrays(links)
	if _, err := w.q.Exec(ctx, w.d.DeleteWebLinks, w.d.Pairs(dsts, srcs)...); err != nil {
		return fmt.Errorf("%sdelete %d web links: %w", w.d.Prefix, len(dsts), err)
	}
	return nil
}

// AddWebCounts adds the deltas in id order: one statement for the URLs,
// one for the domains. Zero deltas are left out.
func (w *WriteTx) AddWebCounts(ctx context.Context, urlInbound, domainInbound, domainURLs map[int64]int64) error {
	if keys, vals := SortedPairs(urlInbound, true); len(keys) > 0 {
		if _, err := w.q.Exec(ctx, w.d.AddURLCounts, w.d.Pairs(keys, vals)...); err != nil {
			return fmt.Errorf("%sadd inbound counts of %d web urls: %w", w.d.Prefix, len(keys), err)
		}
	}
	ids := ChangedDomains(domainInbound, domainURLs)
	if len(ids) == 0 {
		return nil
	}
	inbound, urls := make([]int64, len(ids)), make([]int64, len(ids))
	for i, id := range ids {
		inbound[i], urls[i] = domainInbound[id], domainURLs[id]
	}
	if _, err := w.q.Exec(ctx, w.d.AddDomainCounts, w.d.Triples(ids, inbound, urls)...); err != nil {
		return fmt.Errorf("%sadd counts of %d web domains: %w", w.d.Prefix, len(ids), err)
	}
	return nil
}

// AddWebLinks inserts links, sorted by (dst, src) (the order of the
// primary key), in one bulk write; a link that exists already fails it.
func (w *WriteTx) AddWebLinks(ctx context.Context, links []shelfmark.WebLink) error {
	links = SortLinks(links)
	return w.insert(ctx, "add %d web links", "web_links", Rows{Cols: []Col{{"dst", Int64}, {"src", Int64}}, N: len(links),
		Row: func(i int, v []any) { v[0], v[1] = links[i].Dst, links[i].Src }}, "")
}
