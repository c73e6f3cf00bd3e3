package shelfmark

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxOrderSize caps the children one order may name.
const MaxOrderSize = 100000

// SetOrder orders a work's children in one step (rule R2): named children
// get positions 1..n in bulk statements whose count does not depend on n;
// children not named follow, unordered. The work's version changes.
func (r *Repository) SetOrder(ctx context.Context, parent ID, children []ID, ifMatch int64) (*Resource, error) {
	pkey, err := r.ids.Key(parent)
	if err != nil {
		return nil, err
	}
	if len(children) > MaxOrderSize {
		return nil, Errorf(EINVALID, "children: at most %d in one order.", MaxOrderSize)
	}
	keys := make([]int64, len(children))
	pos := make(map[int64]int, len(children))
	for i, id := range children {
		k, err := r.refKey(id, "children")
		if err != nil {
			return nil, err
		}
		if j, dup := pos[k]; dup {
			return nil, &Error{Code: EINVALID, Message: fmt.Sprintf("children: %s is named twice (positions %d and %d).", id, j+1, i+1),
				Details: map[string]any{"id": string(id)}}
		}
		pos[k] = i
		keys[i] = k
	}
	var prow *ResourceRow
	o := &op{}
	*o = op{
		check: func(tx WriteTx) error {
			ctx := context.Background()
			var err error
			prow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), pkey, "order the children of", "only works have ordered children", ifMatch)
			if err != nil {
				return err
			}
			rows, err := tx.Resources(ctx, keys)
			if err != nil {
				return err
			}
			ok := make(map[int64]bool, len(rows))
			for _, row := range rows {
				if row.Parent == pkey && row.Deleted == nil {
					ok[row.Key] = true
				}
			}
			for _, k := range keys {
				if !ok[k] {
					return &Error{Code: EINVALID, Message: fmt.Sprintf("children: %s is not a child of %s.", r.ids.Encode(k), parent),
						Details: map[string]any{"id": string(r.ids.Encode(k))}}
				}
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			if err := tx.SetPositions(ctx, pkey, keys); err != nil {
				return err
			}
			prow.Version++
			prow.Seq, prow.Modified = seq, now
			o.audit = append(o.audit, auditEntry(o.ctx, "order", pkey, nil))
			return tx.UpdateResource(ctx, prow)
		},
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "order", pkey, err)
		return nil, fmt.Errorf("order %s: %w", parent, err)
	}
	return r.rowResource(prow), nil
}

// ListChildren pages through a resource's live children: ordered ones by
// position, then unordered ones by creation.
func (r *Repository) ListChildren(ctx context.Context, parent ID, p PageRequest) (*Page, error) {
	pkey, err := r.ids.Key(parent)
	if err != nil {
		return nil, err
	}
	var after int64
	if p.After != "" {
		s, ok := strings.CutPrefix(string(p.After), "p")
		if after, err = strconv.ParseInt(s, 36, 64); !ok || err != nil || after < 0 {
			return nil, Errorf(EINVALID, "after: %q is not a cursor this list gave out.", p.After)
		}
	}
	limit := clampLimit(p.Limit)
	var page Page
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		pa, err := g.readable(ctx, pkey)
		if err != nil {
			return err
		}
		keep, err := g.childFilter(ctx, pa)
		if err != nil {
			return err
		}
		fetch := func(after int64, n int) ([]*ResourceRow, error) { return tx.Children(ctx, pkey, after, n) }
		rows, more, last, err := visiblePage(limit, r.maxScan, fetch, func(row *ResourceRow) int64 { return row.Position }, keep, after)
		if err != nil {
			return err
		}
		page = r.pageOf(rows)
		for i, it := range page.Items {
			// a child is as hidden as its parent
			if v := g.childAccess(pa, rows[i]).vis; visRank(v) > visRank(it.Visibility) {
				it.Visibility = v
			}
		}
		if p.Metadata {
			if err := r.pageMetadata(ctx, tx, &page, rows); err != nil {
				return err
			}
		}
		if more {
			page.Next = Cursor("p" + strconv.FormatInt(last, 36))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", parent, err)
	}
	return &page, nil
}

// ChildCursor returns the cursor from which ListChildren of child's parent
// starts at child (a resource FindResource returned), so that a page of a
// book can be shown among its neighbours, at any depth, for the cost of
// the first page.
func (r *Repository) ChildCursor(child *Resource) (Cursor, error) {
	pos := int64(child.Position)
	if pos == 0 { // unordered: after the ordered ones, by key
		key, err := r.ids.Key(child.ID)
		if err != nil {
			return "", err
		}
		pos = UnorderedBase + key
	}
	return Cursor("p" + strconv.FormatInt(pos-1, 36)), nil
}
