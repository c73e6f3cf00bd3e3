package shelfmark

import (
	"context"
	"fmt"
	"strings"
)

// ListResources pages through the live works without a parent, or the
// live collections that belong to no live collection (the top of the
// collection tree), newest (highest key) first, keeping those the caller
// may read; the web interface's home lists collections and recent works
// with it. A page reads one index range of the kind's roots
// (at most RepositoryOptions.MaxListScan rows past rows the caller may
// not see, in reads that double in size), so it costs the same at any
// depth.
func (r *Repository) ListResources(ctx context.Context, kind Kind, p PageRequest) (*Page, error) {
	if kind != KindCollection && kind != KindWork {
		return nil, Errorf(EINVALID, "kind must be collection or work, not %q.", kind)
	}
	after, err := r.descCursor(p.After)
	if err != nil {
		return nil, err
	}
	limit := clampLimit(p.Limit)
	var page Page
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		nested := map[int64]bool{} // collections in a collection
		keep := func(row *ResourceRow) (bool, error) {
			if nested[row.Key] {
				return false, nil
			}
			return g.canReadRow(ctx, row)
		}
		// past rows the caller may not see (a bulk ingest of private
		// works, newer than any public one), each further read takes twice
		// the rows of the one before: the rows a page reads stay bounded
		// by MaxListScan, and their statements by its logarithm
		size := 0
		fetch := func(after int64, n int) ([]*ResourceRow, error) {
			size = min(max(n, 2*size), max(n, MaxPageSize))
			rows, err := tx.Roots(ctx, kind, -after, size)
			if err != nil || kind != KindCollection || len(rows) == 0 {
				return rows, err
			}
			keys := make([]int64, len(rows))
			for i, row := range rows {
				keys[i] = row.Key
			}
			up, err := tx.MemberOfMany(ctx, keys)
			for k, cs := range up {
				nested[k] = len(cs) > 0
			}
			return rows, err
		}
		rows, more, last, err := visiblePage(limit, r.maxScan, fetch, func(row *ResourceRow) int64 { return -row.Key }, keep, after)
		if err != nil {
			return err
		}
		page = r.pageOf(rows)
		if p.Metadata {
			if err := r.pageMetadata(ctx, tx, &page, rows); err != nil {
				return err
			}
		}
		if more {
			page.Next = r.descNext(rows, last)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", kind, err)
	}
	return &page, nil
}

// pageMetadata gives a page's items (made from rows) their metadata, in
// one statement for the page.
func (r *Repository) pageMetadata(ctx context.Context, tx ReadTx, page *Page, rows []*ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	keys := make([]int64, len(rows))
	for i, row := range rows {
		keys[i] = row.Key
	}
	fields, err := tx.FieldsOf(ctx, keys)
	if err != nil {
		return fmt.Errorf("metadata of a page: %w", err)
	}
	for i, it := range page.Items {
		it.Metadata = StatementsOf(fields[rows[i].Key])
	}
	return nil
}

// descCursor reads the cursor of a list by key, highest first, as
// visiblePage takes it: positions rise there while keys fall, so a row's
// position is its key negated (0, the start, is before every key). A
// cursor is the id of the last row shown, or "~" and the hidden id of the
// last row read when that row was not shown.
func (r *Repository) descCursor(c Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	var key int64
	var err error
	if s, ok := strings.CutPrefix(string(c), "~"); ok {
		key, err = r.hidden.Key(ID(s))
	} else {
		key, err = r.ids.Key(ID(c))
	}
	if err != nil {
		return 0, Errorf(EINVALID, "after: %q is not a cursor this list gave out.", c)
	}
	return -key, nil
}

// descNext is the cursor of the page after rows, whose reading stopped at
// position last (see descCursor).
func (r *Repository) descNext(rows []*ResourceRow, last int64) Cursor {
	if len(rows) > 0 && -rows[len(rows)-1].Key == last {
		return Cursor(r.ids.Encode(-last))
	}
	return Cursor("~" + string(r.hidden.Encode(-last)))
}
