package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The write side of the web index: records go in by batches, each batch
// one transaction that also moves the file's resume offset, so a batch is
// indexed exactly once however often an ingest is interrupted and re-run.
// Counters change by the batch's summed deltas (rule R8), never by
// recounting.

// StartWebFile registers the WARC file (a file resource holding the bytes)
// for indexing and returns its state: a new file starts at offset 0; a file
// indexed before returns where it stopped. The caller must be allowed to
// change the file. For a file indexed completely before, it merges the
// link log when the log holds anything: what a killed ingest logged but
// did not merge.
func (r *Repository) StartWebFile(ctx context.Context, file ID) (*WebFileRow, error) {
	key, err := r.ids.Key(file)
	if err != nil {
		return nil, Errorf(ENOTFOUND, "No resource has the id %s.", file)
	}
	var state *WebFileRow
	err = r.store.Update(ctx, func(tx WriteTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		a, err := g.editable(ctx, key, "index this web archive")
		if err != nil {
			return err
		}
		if a.row.Kind != KindFile {
			return Errorf(EINVALID, "%s is a %s, not a file: only a file holds a WARC.", file, a.row.Kind)
		}
		wt := tx
		if state, err = wt.LockWebFile(ctx, key); err != nil || state != nil {
			return err
		}
		state = &WebFileRow{File: key, Work: a.root().Key}
		return wt.PutWebFile(ctx, state)
	})
	if err != nil {
		return nil, fmt.Errorf("start web file %s: %w", file, err)
	}
	if state.Done {
		if err := r.mergeWebLinksIfLogged(ctx); err != nil {
			return nil, fmt.Errorf("start web file %s: %w", file, err)
		}
	}
	return state, nil
}

// WebBatch is one batch of records of a WARC file.
type WebBatch struct {
	// File is the WARC file resource.
	File ID
	// From is the offset the batch starts at: the file's state must
	// stand there (else the batch was indexed before and is skipped).
	From int64
	// Next is the offset after the batch's last record.
	Next int64
	// Records are the good records of the batch (warcinfo records and
	// records without a target are left out by the caller).
	Records []*WebRecord
	// Errors counts the bad records skipped in the batch.
	Errors int64
	// Done marks the batch that ends the file.
	Done bool
}

// IndexWebBatch indexes one batch in one transaction: captures, the
// changes of the current links of the pages it captures again or for the
// first time (logged, see MergeWebLinks), the domains' URL counts, and
// the file's new offset. It returns false when the file's state is not at
// b.From (the batch was indexed already). After the file's last batch, or
// once this repository has logged WebMergeLinks changes, it merges the
// log; a merge that fails returns true with the error, the batch indexed
// and its changes left in the log for the next merge.
func (r *Repository) IndexWebBatch(ctx context.Context, b *WebBatch) (bool, error) {
	key, err := r.ids.Key(b.File)
	if err != nil {
		return false, Errorf(ENOTFOUND, "No resource has the id %s.", b.File)
	}
	applied, logged := false, 0
	err = r.store.Update(ctx, func(tx WriteTx) error {
		wt := tx
		state, err := wt.LockWebFile(ctx, key)
		if err != nil {
			return err
		}
		if state == nil {
			return Errorf(EINVALID, "The file %s is not registered for web indexing.", b.File)
		}
		if state.Removed {
			return Errorf(EGONE, "The web archive %s was deleted.", b.File)
		}
		if state.Done || state.Offset != b.From {
			return nil
		}
		if _, err := r.guard(tx, CallerFrom(ctx)).editable(ctx, state.File, "index this web archive"); err != nil {
			return err
		}
		if logged, err = r.indexRecords(ctx, wt, key, b.Records); err != nil {
			return err
		}
		state.Offset, state.Done = b.Next, b.Done
		state.Records += int64(len(b.Records))
		state.Errors += b.Errors
		applied = true
		return wt.PutWebFile(ctx, state)
	})
	if err != nil {
		return false, fmt.Errorf("index web batch of %s at %d: %w", b.File, b.From, err)
	}
	if !applied {
		return false, nil
	}
	if due := r.web.logged(logged); due || b.Done {
		if _, err := r.MergeWebLinks(ctx); err != nil {
			// the batch stands; the log waits for the next merge
			return true, fmt.Errorf("web batch of %s at %d indexed, but: %w", b.File, b.From, err)
		}
	}
	return true, nil
}

// webDeltas gathers a transaction's link changes and the changes of its
// domains' URL counts.
type webDeltas struct {
	domainURLs map[int64]int64
	changes    []WebLinkChange
}

func newWebDeltas() *webDeltas {
	return &webDeltas{domainURLs: map[int64]int64{}}
}

// relink replaces page src's links old by new (both ascending).
func (d *webDeltas) relink(src int64, old, new []int64) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || (i < len(old) && old[i] < new[j]):
			d.changes = append(d.changes, WebLinkChange{WebLink{Dst: old[i], Src: src}, -1})
			i++
		case i == len(old) || new[j] < old[i]:
			d.changes = append(d.changes, WebLinkChange{WebLink{Dst: new[j], Src: src}, 1})
			j++
		default:
			i++
			j++
		}
	}
}

// apply logs the link changes (which a merge takes into the links and
// inbound counts), then writes the domains' URL counts. It returns how
// many changes it logged. The order is a merge's, log rows before domain
// rows, so that a batch and a merge never wait for each other in a cycle
// where writers run side by side.
func (d *webDeltas) apply(ctx context.Context, wt WebWriteTx) (int, error) {
	if err := wt.LogWebLinks(ctx, d.changes); err != nil {
		return 0, err
	}
	if len(d.domainURLs) > 0 {
		if err := wt.AddWebCounts(ctx, nil, nil, d.domainURLs); err != nil {
			return 0, err
		}
	}
	return len(d.changes), nil
}

// indexRecords stores one batch's captures and logs the changes of the
// current links; it returns how many it logged.
func (r *Repository) indexRecords(ctx context.Context, wt WebWriteTx, file int64, recs []*WebRecord) (int, error) {
	// intern domains and URLs
	domains := map[string]*WebDomainRow{}
	urls := map[string]*WebURLRow{}
	urlDomain := map[string]string{}
	note := func(u *WebURL) {
		if u.SURT == "" {
			return
		}
		if _, ok := urls[u.SURT]; ok {
			return
		}
		urls[u.SURT] = &WebURLRow{SURT: u.SURT, URL: u.URL}
		urlDomain[u.SURT] = u.Domain
		if domains[u.Domain] == nil {
			domains[u.Domain] = &WebDomainRow{Name: u.Domain}
		}
	}
	for _, rec := range recs {
		note(&rec.Target)
		for i := range rec.Links {
			note(&rec.Links[i])
		}
	}
	drows := make([]*WebDomainRow, 0, len(domains))
	for _, d := range domains {
		drows = append(drows, d)
	}
	slices.SortFunc(drows, func(a, b *WebDomainRow) int { return strings.Compare(a.Name, b.Name) })
	if err := wt.InternWebDomains(ctx, drows); err != nil {
		return 0, fmt.Errorf("domains: %w", err)
	}
	urows := make([]*WebURLRow, 0, len(urls))
	for s, u := range urls {
		u.Domain = domains[urlDomain[s]].ID
		urows = append(urows, u)
	}
	slices.SortFunc(urows, func(a, b *WebURLRow) int { return strings.Compare(a.SURT, b.SURT) })
	if err := wt.InternWebURLs(ctx, urows); err != nil {
		return 0, fmt.Errorf("urls: %w", err)
	}
	d := newWebDeltas()
	for _, u := range urows {
		if u.New {
			d.domainURLs[u.Domain]++
		}
	}
	named, err := rowURLs(ctx, wt, recs, urls)
	if err != nil {
		return 0, fmt.Errorf("urls: %w", err)
	}
	// captures
	caps := make([]*CaptureRow, 0, len(recs))
	for _, rec := range recs {
		if rec.Target.SURT == "" {
			continue
		}
		c := &CaptureRow{
			URL: urls[rec.Target.SURT].ID, File: file, Offset: rec.Offset, Length: rec.Length,
			Time: rec.Time, Type: rec.Type, MIME: rec.MIME, Status: rec.Status, Digest: rec.Digest,
			RecordID: rec.RecordID, HasLinks: rec.HasLinks,
		}
		if rec.Target.URL != named[rec.Target.SURT] {
			// its key's row names another URL of the key (a redirect's
			// target, met first as a link): the capture keeps its own
			c.Target = rec.Target.URL
		}
		if rec.HasLinks {
			ids := make([]int64, 0, len(rec.Links))
			for i := range rec.Links {
				if s := rec.Links[i].SURT; s != "" {
					ids = append(ids, urls[s].ID)
				}
			}
			c.Links = sortedUnique(ids, c.URL)
		}
		caps = append(caps, c)
	}
	if len(caps) == 0 {
		return d.apply(ctx, wt)
	}
	if err := wt.InsertWebCaptures(ctx, caps); err != nil {
		return 0, fmt.Errorf("captures: %w", err)
	}
	// current links: the newest capture with links wins
	var srcs []int64
	for _, c := range caps {
		if c.HasLinks {
			srcs = append(srcs, c.URL)
		}
	}
	if len(srcs) == 0 {
		return d.apply(ctx, wt)
	}
	srcs = sortedUnique(srcs, 0)
	cur, err := r.currentCaptures(ctx, wt, srcs)
	if err != nil {
		return 0, err
	}
	orig := make(map[int64][]int64, len(srcs))
	for _, s := range srcs {
		if c := cur[s]; c != nil {
			orig[s] = c.Links
		} else {
			orig[s] = nil
		}
	}
	changed := map[int64]int64{}
	for _, c := range caps {
		if !c.HasLinks {
			continue
		}
		if old := cur[c.URL]; old == nil || c.Newer(old) {
			cur[c.URL] = c
			changed[c.URL] = c.ID
		}
	}
	for _, s := range srcs {
		if _, ok := changed[s]; ok {
			d.relink(s, orig[s], cur[s].Links)
		}
	}
	if err := wt.SetWebCurrent(ctx, changed); err != nil {
		return 0, fmt.Errorf("current captures: %w", err)
	}
	return d.apply(ctx, wt)
}

// rowURLs returns, by SURT, the URL that the row of each record's target
// names: the row keeps the first URL the index met for its key, which
// need not be the record's (URLs that differ in scheme, "www.", a
// trailing slash or query order share a key). The rows this batch made
// name the URL it gave them; the others are read, one statement for the
// batch, by id.
func rowURLs(ctx context.Context, wt WebWriteTx, recs []*WebRecord, urls map[string]*WebURLRow) (map[string]string, error) {
	named := make(map[string]string, len(recs))
	var read []int64
	bySURT := map[int64]string{}
	for _, rec := range recs {
		s := rec.Target.SURT
		if s == "" {
			continue
		}
		if _, ok := named[s]; ok {
			continue
		}
		u := urls[s]
		named[s] = u.URL
		if !u.New {
			read = append(read, u.ID)
			bySURT[u.ID] = s
		}
	}
	if len(read) == 0 {
		return named, nil
	}
	slices.Sort(read)
	rows, err := wt.WebURLRows(ctx, read)
	if err != nil {
		return nil, err
	}
	for _, u := range rows {
		named[bySURT[u.ID]] = u.URL
	}
	return named, nil
}

// currentCaptures locks the URL rows of srcs and returns their current
// captures (absent when none).
func (r *Repository) currentCaptures(ctx context.Context, wt WebWriteTx, srcs []int64) (map[int64]*CaptureRow, error) {
	rows, err := wt.LockWebURLs(ctx, srcs)
	if err != nil {
		return nil, fmt.Errorf("lock pages: %w", err)
	}
	var ids []int64
	for _, u := range rows {
		if u.Current != 0 {
			ids = append(ids, u.Current)
		}
	}
	out := make(map[int64]*CaptureRow, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	caps, err := wt.WebCaptureRows(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("current captures: %w", err)
	}
	for _, c := range caps {
		out[c.URL] = c
	}
	return out, nil
}

// webRemoveChunk is how many captures one removal transaction takes out.
const webRemoveChunk = 1000

// SweepWebFiles takes out of the web index the captures and links of every
// WARC file whose work was deleted, a chunk of captures per transaction;
// the pages whose current links came from a removed capture fall back to
// their newest remaining capture with links. It returns how many files it
// finished. It is idempotent and resumable: an interrupted sweep goes on
// where it stopped. It ends by merging the link log when the log holds
// anything (see MergeWebLinks).
func (r *Repository) SweepWebFiles(ctx context.Context) (int, error) {
	done := 0
	var after int64
	for {
		var files []*WebFileRow
		var gone []int64
		err := r.store.View(ctx, func(tx ReadTx) error {
			var err error
			if files, err = tx.WebFiles(ctx, after, 256); err != nil {
				return err
			}
			for _, f := range files {
				if f.Removed {
					continue
				}
				row, err := tx.Resource(ctx, f.Work)
				if err != nil {
					return err
				}
				if row == nil || row.Deleted != nil {
					gone = append(gone, f.File)
				}
			}
			return nil
		})
		if err != nil {
			return done, fmt.Errorf("web sweep: %w", err)
		}
		for _, f := range gone {
			if err := r.removeWebFile(ctx, f); err != nil {
				return done, fmt.Errorf("web sweep of file %s: %w", r.ids.Encode(f), err)
			}
			done++
		}
		if len(files) < 256 {
			// the removed files' link changes, and any an interrupted
			// ingest left in the log
			if err := r.mergeWebLinksIfLogged(ctx); err != nil {
				return done, fmt.Errorf("web sweep: %w", err)
			}
			return done, nil
		}
		after = files[len(files)-1].File
	}
}

// removeWebFile takes one file's captures out, chunk by chunk.
func (r *Repository) removeWebFile(ctx context.Context, file int64) error {
	for {
		finished := false
		err := r.store.Update(ctx, func(tx WriteTx) error {
			wt := tx
			state, err := wt.LockWebFile(ctx, file)
			if err != nil || state == nil {
				return err
			}
			caps, err := wt.WebFileCaptures(ctx, file, 0, webRemoveChunk)
			if err != nil {
				return err
			}
			if len(caps) == 0 {
				state.Removed, finished = true, true
				return wt.PutWebFile(ctx, state)
			}
			if !state.Removed {
				// from now on, no batch of this file is indexed
				state.Removed = true
				if err := wt.PutWebFile(ctx, state); err != nil {
					return err
				}
			}
			return r.removeCaptures(ctx, wt, file, caps)
		})
		if err != nil || finished {
			return err
		}
	}
}

// removeCaptures deletes caps (all of file) and gives their pages their
// newest remaining capture's links.
func (r *Repository) removeCaptures(ctx context.Context, wt WebWriteTx, file int64, caps []*CaptureRow) error {
	ids := make([]int64, len(caps))
	byID := make(map[int64]*CaptureRow, len(caps))
	var srcs []int64
	for i, c := range caps {
		ids[i] = c.ID
		byID[c.ID] = c
		if c.HasLinks {
			srcs = append(srcs, c.URL)
		}
	}
	d := newWebDeltas()
	changed := map[int64]int64{}
	if len(srcs) > 0 {
		rows, err := wt.LockWebURLs(ctx, sortedUnique(srcs, 0))
		if err != nil {
			return err
		}
		for _, u := range rows {
			old := byID[u.Current]
			if old == nil {
				continue // its current capture is elsewhere
			}
			repl, err := r.newestLinked(ctx, wt, u.ID, file)
			if err != nil {
				return err
			}
			var links []int64
			changed[u.ID] = 0
			if repl != nil {
				links, changed[u.ID] = repl.Links, repl.ID
			}
			d.relink(u.ID, old.Links, links)
		}
	}
	if len(changed) > 0 {
		if err := wt.SetWebCurrent(ctx, changed); err != nil {
			return err
		}
	}
	if err := wt.DeleteWebCaptures(ctx, ids); err != nil {
		return err
	}
	_, err := d.apply(ctx, wt)
	return err
}

// newestLinked is the newest capture with links of URL url outside file.
func (r *Repository) newestLinked(ctx context.Context, wt WebReadTx, url, file int64) (*CaptureRow, error) {
	var best *CaptureRow
	var at int64 = 1<<63 - 1
	atTime := timeFromNanos(at)
	var atID int64 = 1<<63 - 1
	for {
		page, err := wt.WebURLCaptures(ctx, url, atTime, atID, true, 64)
		if err != nil {
			return nil, err
		}
		for _, c := range page {
			if c.File == file || !c.HasLinks {
				continue
			}
			if best == nil || c.Newer(best) {
				best = c
			}
		}
		// captures at one instant may be ordered by id, not record id:
		// keep reading while the time is still the best one's
		if len(page) < 64 || (best != nil && page[len(page)-1].Time.Before(best.Time)) {
			return best, nil
		}
		atTime, atID = page[len(page)-1].Time, page[len(page)-1].ID
	}
}

// timeFromNanos is the time n nanoseconds after the Unix epoch.
func timeFromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
