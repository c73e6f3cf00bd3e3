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
	// naming the existing root (when the caller may see it), so a re-run
	// of an ingest skips it.
	SourceKey string
	// FormerKey, when set with SourceKey, is the key an earlier version of
	// the item's source reader gave it, which may have named a different
	// input. A live work stored under it that the caller may see counts as
	// this group stored before only when it holds the same content (the
	// root's metadata, and in order each child's original files by
	// SHA-256): the group then fails with ECONFLICT naming it (Details
	// "former_key"), and SourceKey is recorded for that work, so a later
	// run finds it by SourceKey alone. Otherwise the group is stored. The
	// comparison reads at most as many children and files as the group
	// has.
	FormerKey string
	// StoreAnyway stores the group even though SourceKey was stored
	// before. SourceKey keeps naming the work first stored under it; the
	// new root is recorded under "anyway:" + the SHA-256 of the group's
	// content + ":" + SourceKey, so that the same content stored anyway
	// again fails with ECONFLICT naming that root (Details "anyway": true)
	// and a re-run that stores anyway skips what it stored. A group whose
	// SourceKey is new is stored under it as without StoreAnyway.
	StoreAnyway bool
	Resources   []*NewResource
	Order       []ID
}

// CreateGroups stores groups, each atomically, sharing group commits; it
// returns each group's root or its error.
func (r *Repository) CreateGroups(ctx context.Context, gs []*NewGroup) ([]*Resource, []error) {
	roots := make([]*Resource, len(gs))
	errs := make([]error, len(gs))
	ops := make([]*op, 0, len(gs))
	idx := make([]int, 0, len(gs))
	outs := make([]*groupOutcome, 0, len(gs))
	for i, g := range gs {
		o, root, out, err := r.groupOp(ctx, g)
		if err != nil {
			errs[i] = err
			continue
		}
		roots[i] = root
		ops = append(ops, o)
		idx = append(idx, i)
		outs = append(outs, out)
	}
	if err := r.matchFormer(ctx, outs); err != nil {
		for _, i := range idx {
			roots[i], errs[i] = nil, err
		}
		return roots, errs
	}
	if err := r.commit.submit(ctx, ops...); err != nil {
		for _, i := range idx {
			roots[i], errs[i] = nil, err
		}
		return roots, errs
	}
	for j, o := range ops {
		switch {
		case o.err != nil:
			roots[idx[j]], errs[idx[j]] = nil, o.err
		case outs[j].adopted:
			roots[idx[j]], errs[idx[j]] = nil, outs[j].adoptedError(r)
		}
	}
	return roots, errs
}

// groupOutcome carries what a group's op found besides storing it: the
// content and ids it was built with, the work stored under its former key
// that holds the same content (found before the op is committed), and
// whether the commit recorded the group's source key for that work instead
// of storing the group.
type groupOutcome struct {
	group   *NewGroup
	ids     []ID
	former  int64 // key of the matching work under FormerKey, 0 if none
	adopted bool
}

// adoptedError is the answer for a group found stored under its former key.
func (out *groupOutcome) adoptedError(r *Repository) error {
	g := out.group
	id := r.ids.Encode(out.former)
	return &Error{Code: ECONFLICT,
		Message: fmt.Sprintf("The source item %q was stored before, as %s: found by its former key %q, with the same files and metadata.", g.SourceKey, id, g.FormerKey),
		Details: map[string]any{"id": string(id), "source_key": g.SourceKey, "former_key": g.FormerKey}}
}

// matchFormer looks, in one read transaction, for the works stored under
// the former keys of groups whose own source key is new, and keeps in each
// outcome the one that holds the group's content. It reads at most as many
// children and files of each such work as its group has.
func (r *Repository) matchFormer(ctx context.Context, outs []*groupOutcome) error {
	var keys []string
	for _, out := range outs {
		if g := out.group; g.FormerKey != "" && g.SourceKey != "" && g.FormerKey != g.SourceKey && !g.StoreAnyway {
			keys = append(keys, g.SourceKey, g.FormerKey)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	err := r.store.View(ctx, func(tx ReadTx) error {
		found, err := tx.Sources(ctx, keys)
		if err != nil {
			return err
		}
		for _, out := range outs {
			g := out.group
			k, ok := found[g.FormerKey]
			if _, known := found[g.SourceKey]; !ok || known || g.StoreAnyway || g.FormerKey == g.SourceKey {
				continue
			}
			want := contentOf(g, out.ids)
			got, err := storedContent(ctx, tx, k, want)
			if err != nil {
				return err
			}
			if got != nil && got.digest() == want.digest() {
				out.former = k
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("find former source keys: %w", err)
	}
	return nil
}

// storedBefore is the answer for a group whose key (SourceKey, or the key
// it is stored anyway under) names the stored root k: the root is named
// only to a caller who may see it.
func (r *Repository) storedBefore(ctx context.Context, tx ReadTx, c *Caller, sourceKey string, k int64, anyway bool) error {
	what := "was stored before"
	if anyway {
		what = "was stored anyway before, with the same content"
	}
	if _, err := r.guard(tx, c).readable(ctx, k); ErrorCode(err) == ENOTFOUND {
		return &Error{Code: ECONFLICT, Message: fmt.Sprintf("The source item %q %s.", sourceKey, what), Details: map[string]any{"source_key": sourceKey}}
	} else if err != nil && ErrorCode(err) != EGONE {
		return err
	}
	details := map[string]any{"id": string(r.ids.Encode(k)), "source_key": sourceKey}
	if anyway {
		details["anyway"] = true
	}
	return &Error{Code: ECONFLICT, Message: fmt.Sprintf("The source item %q %s, as %s.", sourceKey, what, r.ids.Encode(k)), Details: details}
}

// groupOp validates a group in memory and returns one op that stores all of
// it: its check only looks up the source keys; its apply runs each member's
// own check and apply in turn, so any failure rolls the whole group back.
// When the outcome's former work (set by matchFormer before the op is
// submitted) is still the one under FormerKey and SourceKey is still new,
// the op records SourceKey for that work instead and stores nothing else.
func (r *Repository) groupOp(ctx context.Context, g *NewGroup) (*op, *Resource, *groupOutcome, error) {
	if g == nil || len(g.Resources) == 0 {
		return nil, nil, nil, Errorf(EINVALID, "A group needs at least one resource.")
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
			return nil, nil, nil, err
		}
	}
	ids := make([]ID, len(g.Resources))
	for i, nr := range g.Resources {
		if nr == nil {
			return nil, nil, nil, Errorf(EINVALID, "resource %d of the group is empty.", i+1)
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
			return nil, nil, nil, Errorf(EINVALID, "order: %s is named twice.", id)
		}
		position[id] = int64(i + 1)
	}
	for id := range position {
		j := slices.Index(ids, id)
		if j <= 0 || g.Resources[j].Parent != ids[0] {
			return nil, nil, nil, Errorf(EINVALID, "order: %s is not a child of the group's root made in this group.", id)
		}
	}
	members := make([]*op, len(g.Resources))
	groupKeys := map[int64]bool{}
	var root *Resource
	var rootKey int64
	for i, nr := range g.Resources {
		key, err := r.refKey(ids[i], "id")
		if err != nil {
			return nil, nil, nil, err
		}
		o, res, err := r.createOp(nr, ids[i], key, position[ids[i]])
		if err != nil {
			return nil, nil, nil, fmt.Errorf("resource %d of the group: %w", i+1, err)
		}
		members[i] = o
		o.group = groupKeys
		groupKeys[key] = true
		if i == 0 {
			root, rootKey = res, key
		}
	}
	out := &groupOutcome{group: g, ids: ids}
	var anyway string
	if g.StoreAnyway && g.SourceKey != "" {
		anyway = anywayKey(g.SourceKey, contentOf(g, ids))
	}
	record := "" // the key the root is recorded under, decided by check
	o := &op{}
	*o = op{
		// new rows under keys of their own; two groups storing one source
		// key at once meet at the sources table's key (see ParallelStorage)
		parallel: true,
		check: func(tx WriteTx) error {
			ctx := context.Background()
			record, out.adopted = "", false
			if g.SourceKey == "" {
				return nil
			}
			// who may not create the group learns nothing of its source
			// key: the root's rights are checked first (and again with
			// the others when the group is applied)
			members[0].ctx = o.ctx
			if err := members[0].check(tx); err != nil {
				return err
			}
			keys := []string{g.SourceKey}
			if out.former != 0 {
				keys = append(keys, g.FormerKey)
			}
			found, err := tx.Sources(ctx, keys)
			if err != nil {
				return err
			}
			c := CallerFrom(o.ctx)
			if k, ok := found[g.SourceKey]; ok {
				if anyway == "" {
					return r.storedBefore(ctx, tx, c, g.SourceKey, k, false)
				}
				again, err := tx.Sources(ctx, []string{anyway})
				if err != nil {
					return err
				}
				if k, ok := again[anyway]; ok {
					return r.storedBefore(ctx, tx, c, g.SourceKey, k, true)
				}
				record = anyway
				return nil
			}
			record = g.SourceKey
			if k, ok := found[g.FormerKey]; ok && out.former != 0 && k == out.former {
				// the work matched by content is adopted if the caller may
				// see it; otherwise the group is stored as new
				if _, err := r.guard(tx, c).readable(ctx, k); err == nil {
					out.adopted = true
				} else if code := ErrorCode(err); code != ENOTFOUND && code != EGONE {
					return err
				}
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			o.uploads = nil
			if out.adopted {
				return tx.InsertSources(ctx, []string{g.SourceKey}, []int64{out.former})
			}
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
			if record != "" {
				return tx.InsertSources(ctx, []string{record}, []int64{rootKey})
			}
			return nil
		},
	}
	return o, root, out, nil
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
