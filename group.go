package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// NewGroup is a set of resources stored together or not at all: typically
// one ingest item, a work with its file sets and their files. Resources[0]
// is the root; the others may name earlier members of the group as Parent,
// by ids reserved with MintIDs. Order, when set, orders the root's children
// in the same transaction, after they are stored (rule R2: files first,
// order after).
type NewGroup struct {
	// SourceKey, when set, is the item's stable key in its source. A group
	// whose key was stored before fails with ECONFLICT and Details["id"]
	// naming the existing root, so a re-run of an ingest skips it.
	SourceKey string
	Resources []*NewResource
	Order     []ID
}

// CreateGroups stores groups, each atomically, sharing group commits; it
// returns each group's root or its error.
func (r *Repository) CreateGroups(ctx context.Context, gs []*NewGroup) ([]*Resource, []error) {
	roots := make([]*Resource, len(gs))
	errs := make([]error, len(gs))
	ops := make([]*op, 0, len(gs))
	idx := make([]int, 0, len(gs))
	for i, g := range gs {
		o, root, err := r.groupOp(ctx, g)
		if err != nil {
			errs[i] = err
			continue
		}
		roots[i] = root
		ops = append(ops, o)
		idx = append(idx, i)
	}
	if err := r.commit.submit(ctx, ops...); err != nil {
		for _, i := range idx {
			roots[i], errs[i] = nil, err
		}
		return roots, errs
	}
	for j, o := range ops {
		if o.err != nil {
			roots[idx[j]], errs[idx[j]] = nil, o.err
		}
	}
	return roots, errs
}

// groupOp validates a group in memory and returns one op that stores all of
// it: its check only looks up the source key; its apply runs each member's
// own check and apply in turn, so any failure rolls the whole group back.
func (r *Repository) groupOp(ctx context.Context, g *NewGroup) (*op, *Resource, error) {
	if g == nil || len(g.Resources) == 0 {
		return nil, nil, Errorf(EINVALID, "A group needs at least one resource.")
	}
	missing := 0
	for _, nr := range g.Resources {
		if nr != nil && nr.ID == "" {
			missing++
		}
	}
	var minted []ID
	if missing > 0 {
		var err error
		if minted, err = r.MintIDs(ctx, missing); err != nil {
			return nil, nil, err
		}
	}
	ids := make([]ID, len(g.Resources))
	for i, nr := range g.Resources {
		if nr == nil {
			return nil, nil, Errorf(EINVALID, "resource %d of the group is empty.", i+1)
		}
		ids[i] = nr.ID
		if ids[i] == "" {
			ids[i], minted = minted[0], minted[1:]
		}
	}
	// the order names the root's children among the group's members; they
	// are new rows, so they are inserted at their positions (no update)
	position := map[ID]int64{}
	for i, id := range g.Order {
		if _, dup := position[id]; dup {
			return nil, nil, Errorf(EINVALID, "order: %s is named twice.", id)
		}
		position[id] = int64(i + 1)
	}
	for id := range position {
		j := slices.Index(ids, id)
		if j <= 0 || g.Resources[j].Parent != ids[0] {
			return nil, nil, Errorf(EINVALID, "order: %s is not a child of the group's root made in this group.", id)
		}
	}
	members := make([]*op, len(g.Resources))
	groupKeys := map[int64]bool{}
	var root *Resource
	for i, nr := range g.Resources {
		key, err := r.refKey(ids[i], "id")
		if err != nil {
			return nil, nil, err
		}
		o, res, err := r.createOp(nr, key, position[ids[i]])
		if err != nil {
			return nil, nil, fmt.Errorf("resource %d of the group: %w", i+1, err)
		}
		members[i] = o
		o.group = groupKeys
		groupKeys[key] = true
		if i == 0 {
			root = res
		}
	}
	rootKey, _ := r.ids.Key(root.ID)
	o := &op{}
	*o = op{
		check: func(tx WriteTx) error {
			if g.SourceKey == "" {
				return nil
			}
			found, err := tx.Sources(context.Background(), []string{g.SourceKey})
			if err != nil {
				return err
			}
			if k, ok := found[g.SourceKey]; ok {
				// the root is named only to a caller who may see it
				if _, err := r.guard(tx, CallerFrom(o.ctx)).readable(context.Background(), k); ErrorCode(err) == ENOTFOUND {
					return Errorf(ECONFLICT, "The source item %q was stored before.", g.SourceKey)
				} else if err != nil && ErrorCode(err) != EGONE {
					return err
				}
				return &Error{Code: ECONFLICT, Message: fmt.Sprintf("The source item %q was stored before, as %s.", g.SourceKey, r.ids.Encode(k)),
					Details: map[string]any{"id": string(r.ids.Encode(k)), "source_key": g.SourceKey}}
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			o.uploads = nil
			for _, m := range members {
				m.ctx, m.audit = o.ctx, nil
				if err := m.check(tx); err != nil {
					return err
				}
				if err := m.apply(tx, seq, now); err != nil {
					return err
				}
				o.audit = append(o.audit, m.audit...)
				o.uploads = append(o.uploads, m.uploads...)
			}
			if err := forgetUsed(ctx, tx, o); err != nil {
				return err
			}
			if g.SourceKey != "" {
				return tx.InsertSources(ctx, []string{g.SourceKey}, []int64{rootKey})
			}
			return nil
		},
	}
	return o, root, nil
}

// FindSources returns the root ids of source keys stored before, so an
// ingest can skip them before reading their bytes.
func (r *Repository) FindSources(ctx context.Context, sourceKeys []string) (map[string]ID, error) {
	c := CallerFrom(ctx)
	if err := mayWrite(c, "look up source keys"); err != nil {
		return nil, err
	}
	out := map[string]ID{}
	err := r.store.View(ctx, func(tx ReadTx) error {
		found, err := tx.Sources(ctx, sourceKeys)
		if err != nil {
			return err
		}
		g := r.guard(tx, c)
		for k, v := range found {
			// a source stored as something the caller may not see is not
			// reported (an ingest of it then fails as a conflict)
			if _, err := g.readable(ctx, v); err == nil {
				out[k] = r.ids.Encode(v)
			} else if ErrorCode(err) != ENOTFOUND && ErrorCode(err) != EGONE {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find sources: %w", err)
	}
	return out, nil
}
