package shelfmark

import (
	"context"
	"time"
)

// The text of a page is indexed under its file set, and a search shows it
// while the page's work is in public view (the query looks the work up).
// A file set can be more hidden than its work; its text must then not be
// found. So the text of a file set that is not itself public is not kept
// in the index: the job that extracts it leaves it out, a file set that
// becomes hidden has its text dropped in the same transaction, and one
// that becomes public again has its text extracted anew.

// pageDocs returns the docs to index: none when the file set they belong
// to (or anything between it and its work) is not public now.
func pageDocs(ctx context.Context, tx ReadTx, docs []SearchDoc, now time.Time) ([]SearchDoc, error) {
	out := docs[:0:0]
	hidden := map[int64]bool{}
	for _, d := range docs {
		if d.Key == d.Work {
			out = append(out, d)
			continue
		}
		h, ok := hidden[d.Key]
		if !ok {
			var err error
			if h, err = hiddenBelowWork(ctx, tx, d.Key, now); err != nil {
				return nil, err
			}
			hidden[d.Key] = h
		}
		if !h {
			out = append(out, d)
		}
	}
	return out, nil
}

// hiddenBelowWork reports whether key, or a parent of it below its first
// work, is not public at now.
func hiddenBelowWork(ctx context.Context, tx ReadTx, key int64, now time.Time) (bool, error) {
	for i := 0; key != 0 && i < maxChain; i++ {
		row, err := tx.Resource(ctx, key)
		if err != nil || row == nil {
			return row == nil, err
		}
		if row.Kind == KindWork || row.Kind == KindCollection {
			return false, nil
		}
		if row.VisibilityAt(now) != Public {
			return true, nil
		}
		key = row.Parent
	}
	return false, nil
}

// pageAccessChanged keeps the index in step when a file set's own access
// changes from before to row's (at now): its text is dropped when it
// becomes hidden, and its files' text is extracted again when it becomes
// public.
func pageAccessChanged(ctx context.Context, tx WriteTx, before Visibility, row *ResourceRow, now time.Time) error {
	if row.Kind != KindFileSet {
		return nil
	}
	after := row.VisibilityAt(now)
	switch {
	case before == Public && after != Public:
		return tx.DeleteSearchDocs(ctx, []int64{row.Key})
	case before != Public && after == Public:
		files, err := tx.Children(ctx, row.Key, 0, MaxPageSize)
		if err != nil {
			return err
		}
		var jobs []NewJob
		for _, f := range files {
			if f.Kind == KindFile && f.Deleted == nil {
				jobs = append(jobs, NewJob{Queue: QueueText, Resource: f.Key})
			}
		}
		if len(jobs) > 0 {
			return tx.EnqueueJobs(ctx, jobs, now)
		}
	}
	return nil
}
