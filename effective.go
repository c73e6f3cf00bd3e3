package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// Effective access (rule R14). Who may see a resource depends on more than
// its own visibility: a resource is as hidden as everything that holds it
// (its parent, the parent's parent, … up to its root work or collection),
// and a derivative (a thumbnail, an access copy, tiles, OCR, extracted
// text) is as hidden as the file it was made from. The engine computes
// this once, in effectiveOf, and stores it on every row (ResourceRow's
// Effective), so that the access policy and every index (search, the
// OAI-PMH view and the sitemap made from it, IIIF) decide from the same
// value, in the statement that reads the row, without walking a chain.
//
// The stored value is kept current as the tree changes: a new row takes
// its parent's and its source's effective access at creation, and a change
// of a resource's access rewrites the effective access of everything
// below it and of its derivatives (propagateAccess), in the same
// transaction, giving the rows it changes the change's sequence number so
// that the indexes that follow the change sequence re-project them.
//
// Dates stay dates: the effective access of a child of an embargoed work
// carries the embargo's end, and a reader compares it with the time of the
// read, so an embargo that ends needs no write to take effect.

// Access is a visibility with the dates that change it: an embargo keeps
// it private until its date, a lease keeps it as it is until its date and
// private after.
type Access struct {
	Visibility Visibility
	Embargo    *time.Time
	Lease      *time.Time
}

// At is the visibility in force at now: private under a running embargo,
// after a lease ended, or for an unknown (or missing) visibility.
func (a Access) At(now time.Time) Visibility {
	if a.Embargo != nil && now.Before(*a.Embargo) {
		return Private
	}
	if a.Lease != nil && !now.Before(*a.Lease) {
		return Private
	}
	if !a.Visibility.Valid() {
		return Private
	}
	return a.Visibility
}

// Narrow returns the access that hides whatever either of a and b hides:
// the more restrictive visibility, the later embargo and the earlier
// lease. It is what a resource held by (or made from) another gets.
func (a Access) Narrow(b Access) Access {
	out := a
	if visRank(b.Visibility) > visRank(out.Visibility) {
		out.Visibility = b.Visibility
	}
	if b.Embargo != nil && (out.Embargo == nil || b.Embargo.After(*out.Embargo)) {
		out.Embargo = b.Embargo
	}
	if b.Lease != nil && (out.Lease == nil || b.Lease.Before(*out.Lease)) {
		out.Lease = b.Lease
	}
	return out
}

// Equal reports whether a and b are the same access.
func (a Access) Equal(b Access) bool {
	return a.Visibility == b.Visibility && sameTime(a.Embargo, b.Embargo) && sameTime(a.Lease, b.Lease)
}

// Own is the row's own access: its visibility, embargo and lease.
func (row *ResourceRow) Own() Access {
	return Access{Visibility: row.Visibility, Embargo: row.Embargo, Lease: row.Lease}
}

// EffectiveAt is who may see the row at now, everything that holds it and
// the file it was made from taken into account.
func (row *ResourceRow) EffectiveAt(now time.Time) Visibility { return row.Effective.At(now) }

// effectiveOf is the one computation of effective access: the row's own
// access narrowed by its parent's effective access and, for a derivative,
// by its source file's. parent and source are nil when the row has none.
func effectiveOf(row, parent, source *ResourceRow) Access {
	a := row.Own()
	if parent != nil {
		a = a.Narrow(parent.Effective)
	}
	if source != nil {
		a = a.Narrow(source.Effective)
	}
	return a
}

// refreshEffective recomputes the effective access of row (whose own
// access may just have changed) from its stored parent and source, and
// reports whether it changed.
func refreshEffective(ctx context.Context, tx ReadTx, row *ResourceRow) (bool, error) {
	var parent, source *ResourceRow
	var keys []int64
	if row.Parent != 0 {
		keys = append(keys, row.Parent)
	}
	if row.Source != 0 {
		keys = append(keys, row.Source)
	}
	if len(keys) > 0 {
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return false, fmt.Errorf("effective access of %d: %w", row.Key, err)
		}
		for _, r := range rows {
			if r.Key == row.Parent {
				parent = r
			}
			if r.Key == row.Source {
				source = r
			}
		}
	}
	eff := effectiveOf(row, parent, source)
	if eff.Equal(row.Effective) {
		return false, nil
	}
	row.Effective = eff
	return true, nil
}

// writeAccessChange writes row (UpdateResource) after a change that may
// have changed its own access (accessChanged), with its effective access
// recomputed, and then that of everything depending on it. row.Seq is the
// change's sequence number.
func writeAccessChange(ctx context.Context, tx WriteTx, row *ResourceRow, accessChanged bool) error {
	changed := false
	if accessChanged {
		var err error
		if changed, err = refreshEffective(ctx, tx, row); err != nil {
			return err
		}
	}
	if err := tx.UpdateResource(ctx, row); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	return propagateAccess(ctx, tx, []*ResourceRow{row}, row.Seq)
}

// propagateAccess rewrites the effective access of what depends on the
// rows in changed, whose own effective access was just written: their
// children and derivatives, and theirs in turn, level by level, one read
// and at most one write per level whatever the number of rows. Only rows
// whose effective access changes are written (with seq, so that the
// indexes following the change sequence see them) and descended into.
// The cost follows the number of resources below the changed ones: a
// book of 1,200 pages is a few thousand rows, read and written in bulk.
func propagateAccess(ctx context.Context, tx WriteTx, changed []*ResourceRow, seq int64) error {
	known := map[int64]*ResourceRow{}
	for _, r := range changed {
		known[r.Key] = r
	}
	frontier := changed
	for depth := 0; len(frontier) > 0; depth++ {
		if depth > 2*maxChain {
			return fmt.Errorf("effective access: resources nested deeper than %d levels below %d", 2*maxChain, changed[0].Key)
		}
		keys := make([]int64, len(frontier))
		for i, r := range frontier {
			keys[i] = r.Key
		}
		deps, err := tx.AccessDependents(ctx, keys)
		if err != nil {
			return fmt.Errorf("effective access: dependents of %d resources: %w", len(keys), err)
		}
		// the parents and sources the new values are computed from: those
		// rewritten already, or else as stored
		var missing []int64
		for _, d := range deps {
			for _, k := range []int64{d.Parent, d.Source} {
				if k != 0 && known[k] == nil {
					missing = append(missing, k)
				}
			}
		}
		if len(missing) > 0 {
			rows, err := tx.Resources(ctx, missing)
			if err != nil {
				return fmt.Errorf("effective access: %w", err)
			}
			for _, r := range rows {
				if known[r.Key] == nil {
					known[r.Key] = r
				}
			}
		}
		// a derivative can be a sibling of its source (both in one file
		// set): compute sources before what was made from them
		pending := map[int64]*ResourceRow{}
		for _, d := range deps {
			pending[d.Key] = d
		}
		var next []*ResourceRow
		for len(pending) > 0 {
			progress := false
			for k, d := range pending {
				if d.Source != 0 && pending[d.Source] != nil {
					continue
				}
				delete(pending, k)
				progress = true
				eff := effectiveOf(d, known[d.Parent], known[d.Source])
				known[d.Key] = d
				if eff.Equal(d.Effective) {
					continue
				}
				d.Effective, d.Seq = eff, seq
				next = append(next, d)
			}
			if !progress {
				return fmt.Errorf("effective access: derivatives made from each other below %d", changed[0].Key)
			}
		}
		if len(next) > 0 {
			if err := tx.SetEffectiveAccess(ctx, next); err != nil {
				return fmt.Errorf("effective access: write %d resources: %w", len(next), err)
			}
		}
		frontier = next
	}
	return nil
}
