package shelfmark

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
)

// The link log. A batch of web records does not change the current links
// and the inbound counts in place: their keys are spread over the whole
// index, so as the index grows a batch would write a page of the large
// tables for nearly every link it changes. It logs the changes instead
// (web_link_log, keyed like web_links, summed per link), and a merge moves
// them into web_links, web_url_counts and web_domains in key order, a
// range of keys per transaction, writing each page of the large tables
// once for all the batches it takes in.
//
// Readers read the merged index: the links and counts of a batch show
// once a merge has taken them in. An ingest merges when a file ends and
// whenever it has logged WebMergeLinks changes since the last merge, so
// what a file's ingest changed is in the index when the ingest returns,
// and while it runs the index trails it by at most that many changes. A
// log left by an ingest that was killed is merged by the next ingest of
// any file, by a re-run that finds its files indexed, and by the sweep a
// server runs.

// DefaultWebMergeLinks is how many logged link changes start a merge.
// The log's rows take about 20 bytes each, so 1M of them stay in SQLite's
// 64 MiB cache of the write connection; at 40,000 links a second the
// index trails an ingest by about 25 s.
const DefaultWebMergeLinks = 1_000_000

// DefaultWebMergeChunk is how many logged changes one merge transaction
// takes: in the order of a second of the database's time.
const DefaultWebMergeChunk = 100_000

// webMerge is a repository's merge settings and count of changes logged
// since its last merge.
type webMerge struct {
	every   int64
	chunk   int
	pending atomic.Int64
}

// logged counts n changes a batch logged and reports whether the log is
// due for a merge (MergeWebLinks starts the count again).
func (m *webMerge) logged(n int) bool {
	return m.pending.Add(int64(n)) >= m.every
}

// webLogEnd is past every key of the log.
var webLogEnd = WebLink{Dst: math.MaxInt64, Src: math.MaxInt64}

// MergeWebLinks moves every logged link change into the link index, in
// key order, WebMergeChunk changes per transaction, and returns how many
// it moved. Each transaction takes its changes out of the log and applies
// them together, so an interrupted merge loses and repeats nothing; merges
// take turns (LockWebMerge), so the changes of one link are applied in
// the order they were logged. Changes logged meanwhile behind the merge's
// position wait for the next merge. Its cost is one pass over the log and
// over the pages of the index it changes.
func (r *Repository) MergeWebLinks(ctx context.Context) (int64, error) {
	r.web.pending.Store(0)
	var total int64
	from := WebLink{}
	for {
		var (
			to    WebLink
			moved int
		)
		err := r.store.Update(ctx, func(tx WriteTx) error {
			if err := tx.LockWebMerge(ctx); err != nil {
				return err
			}
			end, ok, err := tx.WebLinkLogAt(ctx, from, r.web.chunk)
			if err != nil {
				return err
			}
			to = webLogEnd
			if ok {
				to = end
			}
			changes, err := tx.TakeWebLinkLog(ctx, from, to)
			if err != nil {
				return err
			}
			moved = len(changes)
			return applyWebChanges(ctx, tx, changes)
		})
		if err != nil {
			return total, fmt.Errorf("merge the web link log from (%d, %d): %w", from.Dst, from.Src, err)
		}
		total += int64(moved)
		if to == webLogEnd {
			return total, nil
		}
		from = to
	}
}

// applyWebChanges writes changes taken from the log (in key order) into
// web_links and the inbound counts.
func applyWebChanges(ctx context.Context, wt WebWriteTx, changes []WebLinkChange) error {
	var add, del []WebLink
	inbound := map[int64]int64{}
	for _, c := range changes {
		switch c.Delta {
		case 0:
			continue
		case 1:
			add = append(add, c.WebLink)
		case -1:
			del = append(del, c.WebLink)
		default:
			return fmt.Errorf("the web link log holds delta %d for the link (%d, %d): only -1, 0 and +1 can be", c.Delta, c.Dst, c.Src)
		}
		inbound[c.Dst] += c.Delta
	}
	if err := wt.DeleteWebLinks(ctx, del); err != nil {
		return err
	}
	if err := wt.AddWebLinks(ctx, add); err != nil {
		return err
	}
	return wt.AddWebInbound(ctx, inbound)
}

// mergeWebLinksIfLogged merges when the log holds anything: a log an
// interrupted ingest left behind. Its cost when the log is empty is one
// read of the log's first key.
func (r *Repository) mergeWebLinksIfLogged(ctx context.Context) error {
	var logged bool
	err := r.store.View(ctx, func(tx ReadTx) error {
		var err error
		logged, err = tx.WebLinkLogged(ctx)
		return err
	})
	if err != nil || !logged {
		return err
	}
	_, err = r.MergeWebLinks(ctx)
	return err
}
