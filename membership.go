package shelfmark

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// MaxCollectionNesting is how deep collections may nest: a collection has
// at most this many levels of collections above it (a chain of 33
// collections). Writes that would nest one deeper are refused, which keeps
// every walk up the collections short, and makes the cycle check complete:
// a collection is either found among the ancestors within this many levels,
// or is not one of them.
const MaxCollectionNesting = 32

// AddMembers puts works and collections into a collection. Each edge is one
// row stored with the member (rule R1): the collection's row is not touched,
// so the millionth member costs what the first did. The members' versions
// change, the collection's does not.
func (r *Repository) AddMembers(ctx context.Context, collection ID, members []ID) error {
	return r.changeMembers(ctx, collection, members, true)
}

// RemoveMembers takes resources out of a collection.
func (r *Repository) RemoveMembers(ctx context.Context, collection ID, members []ID) error {
	return r.changeMembers(ctx, collection, members, false)
}

func (r *Repository) changeMembers(ctx context.Context, collection ID, members []ID, add bool) error {
	ckey, err := r.ids.Key(collection)
	if err != nil {
		return err
	}
	if len(members) == 0 {
		return Errorf(EINVALID, "members: name at least one member.")
	}
	if len(members) > MaxPageSize {
		return Errorf(EINVALID, "members: at most %d per request.", MaxPageSize)
	}
	keys := make([]int64, 0, len(members))
	seen := map[int64]bool{}
	for _, id := range members {
		k, err := r.refKey(id, "members")
		if err != nil {
			return err
		}
		if k == ckey {
			return Errorf(EINVALID, "members: a collection cannot be a member of itself.")
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	var rows []*ResourceRow
	o := &op{}
	*o = op{
		check: func(tx WriteTx) error {
			ctx := context.Background()
			g := r.guard(tx, CallerFrom(o.ctx))
			ca, err := g.readable(ctx, ckey)
			if err != nil {
				return err
			}
			if c := ca.row; c.Kind != KindCollection {
				return Errorf(EINVALID, "%s is a %s, not a collection: only collections have members.", collection, c.Kind)
			}
			if rows, err = tx.Resources(ctx, keys); err != nil {
				return err
			}
			byKey := make(map[int64]*ResourceRow, len(rows))
			for _, row := range rows {
				byKey[row.Key] = row
			}
			if err := g.memberRights(ctx, ca, keys, byKey, add); err != nil {
				return err
			}
			for _, k := range keys {
				row := byKey[k]
				switch {
				case row == nil || row.Deleted != nil:
					return Errorf(EINVALID, "members: no live resource has the id %s.", r.ids.Encode(k))
				case row.Kind != KindWork && row.Kind != KindCollection:
					return Errorf(EINVALID, "members: %s is a %s; only works and collections can be members.", r.ids.Encode(k), row.Kind)
				case add && row.Kind == KindCollection:
					if err := r.checkNesting(ctx, tx, "members", ckey, k); err != nil {
						return err
					}
				}
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			ms := make([]Membership, len(keys))
			for i, k := range keys {
				ms[i] = Membership{Collection: ckey, Member: k}
			}
			var err error
			if add {
				err = tx.InsertMemberships(ctx, ms)
			} else {
				err = tx.DeleteMemberships(ctx, ms)
			}
			if err != nil {
				return err
			}
			action := "members.remove"
			if add {
				action = "members.add"
			}
			detail := "collection " + string(collection) // the id of ckey
			for _, row := range rows {
				e := auditEntry(o.ctx, action, row.Key, nil)
				e.Detail = detail
				o.audit = append(o.audit, e)
				row.Version++
				row.Seq, row.Modified = seq, now
				if err := tx.UpdateResource(ctx, row); err != nil {
					return err
				}
			}
			return nil
		},
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "members", ckey, err)
		return fmt.Errorf("members of %s: %w", collection, err)
	}
	return nil
}

// checkNesting fails if putting member (a collection; 0 for a collection
// being created) into collection would make collections contain themselves
// (member is collection or one of its ancestors) or nest deeper than
// MaxCollectionNesting (collection has that many levels above it already).
// It walks up from collection a level at a time, keeping each level's
// collections once (a collection reached by a longer path is counted at its
// deeper level, so the walk measures the longest chain), and stops after
// MaxCollectionNesting levels: its cost is bounded by the number of
// collections above collection, never by the size of any.
// field names the request's field in the message.
func (r *Repository) checkNesting(ctx context.Context, tx ReadTx, field string, collection, member int64) error {
	frontier := []int64{collection}
	for depth := 0; len(frontier) > 0; depth++ {
		if depth == MaxCollectionNesting {
			return Errorf(EINVALID, "%s: %s is nested %d collections deep already; collections nest at most %d deep.",
				field, r.ids.Encode(collection), MaxCollectionNesting, MaxCollectionNesting)
		}
		var next []int64
		seen := map[int64]bool{}
		for _, k := range frontier {
			up, err := tx.MemberOf(ctx, k)
			if err != nil {
				return err
			}
			for _, u := range up {
				if u == member {
					return Errorf(EINVALID, "%s: %s contains %s already; collections cannot contain themselves.", field, r.ids.Encode(member), r.ids.Encode(collection))
				}
				if !seen[u] {
					seen[u] = true
					next = append(next, u)
				}
			}
		}
		frontier = next
	}
	return nil
}

// checkNestingUnder fails if a new collection in colls would nest deeper
// than MaxCollectionNesting.
func (r *Repository) checkNestingUnder(ctx context.Context, tx ReadTx, colls []int64) error {
	for _, c := range colls {
		if err := r.checkNesting(ctx, tx, "memberOf", c, 0); err != nil {
			return err
		}
	}
	return nil
}

// ListMembers pages through a collection's live members by key, with a
// keyset cursor: a page at any depth costs what the first does.
func (r *Repository) ListMembers(ctx context.Context, collection ID, p PageRequest) (*Page, error) {
	ckey, err := r.ids.Key(collection)
	if err != nil {
		return nil, err
	}
	var after int64
	if p.After != "" {
		// a cursor is the id of the last member shown, or "~" and a key in
		// base 36 where a page ended among members the caller may not see
		if s, ok := strings.CutPrefix(string(p.After), "~"); ok {
			if after, err = r.hidden.Key(ID(s)); err != nil {
				return nil, Errorf(EINVALID, "after: %q is not a cursor this list gave out.", p.After)
			}
		} else if after, err = r.ids.Key(ID(p.After)); err != nil {
			return nil, Errorf(EINVALID, "after: %q is not a cursor this list gave out.", p.After)
		}
	}
	limit := clampLimit(p.Limit)
	var page Page
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		ca, err := g.readable(ctx, ckey)
		if err != nil {
			return err
		}
		if c := ca.row; c.Kind != KindCollection {
			return Errorf(EINVALID, "%s is a %s, not a collection.", collection, c.Kind)
		}
		keep, err := g.memberFilter(ctx, ca)
		if err != nil {
			return err
		}
		fetch := func(after int64, n int) ([]*ResourceRow, error) { return tx.Members(ctx, ckey, after, n) }
		rows, more, last, err := visiblePage(limit, r.maxScan, fetch, func(row *ResourceRow) int64 { return row.Key }, keep, after)
		if err != nil {
			return err
		}
		page = r.pageOf(rows)
		for i, it := range page.Items {
			if err := g.hideUnseen(ctx, it, rows[i], nil, nil); err != nil {
				return err
			}
		}
		if p.Metadata {
			if err := r.pageMetadata(ctx, tx, &page, rows); err != nil {
				return err
			}
		}
		if more {
			if len(rows) > 0 && rows[len(rows)-1].Key == last {
				page.Next = Cursor(r.ids.Encode(last))
			} else {
				page.Next = Cursor("~" + string(r.hidden.Encode(last)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("members of %s: %w", collection, err)
	}
	return &page, nil
}

func clampLimit(n int) int {
	if n <= 0 {
		return 100
	}
	return min(n, MaxPageSize)
}

// pageOf turns rows into the items of a page (the caller sets its cursor).
func (r *Repository) pageOf(rows []*ResourceRow) Page { return r.pageInto(rows, nil) }

// pageInto is pageOf with the items in buf's memory when buf is not nil.
func (r *Repository) pageInto(rows []*ResourceRow, buf *PageBuffer) Page {
	var (
		p     Page
		items []Resource
	)
	if buf != nil {
		if cap(buf.items) < len(rows) {
			buf.items = make([]Resource, len(rows))
			buf.itemPtrs = make([]*Resource, len(rows))
		}
		items, p.Items = buf.items[:len(rows)], buf.itemPtrs[:len(rows)]
	} else {
		p.Items = make([]*Resource, len(rows))
		items = make([]Resource, len(rows)) // one object for the collector, not one an item
	}
	var (
		parentKey int64
		parent    ID
	)
	for i, row := range rows {
		if row.Parent != parentKey { // the rows of a listing mostly share one
			parentKey, parent = row.Parent, ""
			if row.Parent != 0 {
				parent = r.ids.Encode(row.Parent)
			}
		}
		r.fillResource(&items[i], row, parent)
		p.Items[i] = &items[i]
	}
	return p
}
