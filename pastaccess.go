package shelfmark

import (
	"context"
)

// Past states (the versions of the preservation copy, served over HTTP as
// mementos) obey the access policy twice: the caller must be allowed to
// read the resource as it is now, and a caller who may not edit it must
// also be allowed to read the past state under the access that state
// recorded (its own visibility, embargo and lease, narrowed by those of
// what held it then), evaluated at the time of the read. So a work made
// public keeps its private drafts hidden from the public, and an embargo
// recorded in an old version hides that version until its date.

// CheckPast decides whether the caller on ctx may read the past states of
// the resource id whose recorded accesses are recorded. It answers
// ENOTFOUND, exactly as for a missing resource, when the caller may not
// read the resource now; a deleted resource counts as it was when deleted
// (its past stays readable to whoever could read it then). Otherwise
// readable[i] reports whether the caller may read the state that recorded
// recorded[i]: always for a caller who may edit the resource (editor),
// else when the recorded access, evaluated now, lets the caller read it.
//
// Cost: the reads of one access decision (the parent chain and, for a
// caller with grants, the collections above it), whatever the number of
// states.
func (r *Repository) CheckPast(ctx context.Context, id ID, recorded []Access) (editor bool, readable []bool, err error) {
	key, err := r.ids.Key(id)
	if err != nil {
		return false, nil, err
	}
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		row, err := tx.Resource(ctx, key)
		if err != nil {
			return err
		}
		a, err := g.readableEver(ctx, key, row)
		if err != nil {
			return err
		}
		if editor, err = g.canEdit(ctx, a); err != nil {
			return err
		}
		readable = make([]bool, len(recorded))
		for i, rec := range recorded {
			if editor {
				readable[i] = true
				continue
			}
			then := *a // the caller's role on a is worked out once
			then.vis = rec.At(g.now)
			if readable[i], err = g.canRead(ctx, &then); err != nil {
				return err
			}
			a.role, a.roleBy = then.role, then.roleBy
		}
		return nil
	})
	if err != nil {
		return false, nil, err
	}
	return editor, readable, nil
}

// CheckCurator answers nil when the caller on ctx holds the curator role
// (or a stronger one) on the live resource id with a credential that
// allows writes, and otherwise the error a change would get: ENOTFOUND
// when the caller may not see it, EUNAUTHORIZED or EFORBIDDEN when it may
// see but not curate it. Restoring a past state asks it: a depositor may
// edit the works they deposited but not bring back what a curator
// changed. Cost: as CheckEdit.
func (r *Repository) CheckCurator(ctx context.Context, id ID) error {
	key, err := r.ids.Key(id)
	if err != nil {
		return err
	}
	return r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		a, err := g.readable(ctx, key)
		if err != nil {
			return err
		}
		if ok, err := g.canHoldRole(ctx, a, RoleCurator); err != nil {
			return err
		} else if !ok {
			return g.refused("restore", key)
		}
		return nil
	})
}

// PastChecker is the part of the repository that decides access to past
// states; *Repository implements it.
type PastChecker interface {
	CheckPast(ctx context.Context, id ID, recorded []Access) (editor bool, readable []bool, err error)
	CheckCurator(ctx context.Context, id ID) error
}

var _ PastChecker = (*Repository)(nil)
