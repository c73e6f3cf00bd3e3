package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// UpdateResource changes a resource's metadata and access fields, writing
// only what differs (rule R3), and returns its new state.
func (r *Repository) UpdateResource(ctx context.Context, id ID, u ResourceUpdate) (*Resource, error) {
	key, err := keyOf(id)
	if err != nil {
		return nil, err
	}
	for field, stmts := range map[string][]Statement{"add": u.Add, "remove": u.Remove} {
		if err := validateStatements(field, stmts); err != nil {
			return nil, err
		}
	}
	if u.Replace != nil {
		if err := validateStatements("metadata", *u.Replace); err != nil {
			return nil, err
		}
	}
	if u.Visibility != nil && !u.Visibility.Valid() {
		return nil, Errorf(EINVALID, "visibility %q is not one of public, restricted, private.", *u.Visibility)
	}
	var (
		row           *ResourceRow
		add, remove   []Statement
		fieldsChanged bool
	)
	o := &op{
		check: func(tx WriteTx) error {
			ctx := context.Background()
			var err error
			if row, err = live(ctx, tx, key); err != nil {
				return err
			}
			if err := checkVersion(row, u.IfMatch); err != nil {
				return err
			}
			add, remove, err = metadataDiff(ctx, tx, key, u)
			if err != nil {
				return err
			}
			fieldsChanged = false
			if u.Visibility != nil && *u.Visibility != row.Visibility {
				row.Visibility, fieldsChanged = *u.Visibility, true
			}
			if u.Embargo != nil && !sameTime(*u.Embargo, row.Embargo) {
				row.Embargo, fieldsChanged = *u.Embargo, true
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			if len(add) == 0 && len(remove) == 0 && !fieldsChanged {
				return nil // nothing changed: nothing is written
			}
			ctx := context.Background()
			if err := tx.DeleteStatements(ctx, key, remove); err != nil {
				return err
			}
			if len(add) > 0 {
				keys := make([]int64, len(add))
				for i := range keys {
					keys[i] = key
				}
				if err := tx.InsertStatements(ctx, keys, add); err != nil {
					return err
				}
			}
			row.Version++
			row.Seq, row.Modified = seq, now
			return tx.UpdateResource(ctx, row)
		},
	}
	if err := r.commit.submit(ctx, o); err != nil {
		return nil, err
	} else if o.err != nil {
		return nil, fmt.Errorf("update %s: %w", id, o.err)
	}
	return r.FindResource(ctx, id)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// metadataDiff reads only the statements the update can touch (all of them
// for a replacement, those of the patched predicates otherwise) and returns
// what to add and what to remove.
func metadataDiff(ctx context.Context, tx ReadTx, key int64, u ResourceUpdate) (add, remove []Statement, err error) {
	if u.Replace == nil && len(u.Add) == 0 && len(u.Remove) == 0 {
		return nil, nil, nil
	}
	var cur []Statement
	if u.Replace != nil {
		cur, err = tx.Statements(ctx, key)
	} else {
		preds := map[string]bool{}
		var list []string
		for _, s := range append(append([]Statement(nil), u.Add...), u.Remove...) {
			if !preds[s.Predicate] {
				preds[s.Predicate] = true
				list = append(list, s.Predicate)
			}
		}
		cur, err = tx.Statements(ctx, key, list...)
	}
	if err != nil {
		return nil, nil, err
	}
	final := cur
	if u.Replace != nil {
		final = *u.Replace
	}
	final = append(append([]Statement(nil), final...), u.Add...)
	drop := make(map[Statement]bool, len(u.Remove))
	for _, s := range u.Remove {
		drop[s] = true
	}
	want := make(map[Statement]bool, len(final))
	for _, s := range DedupeStatements(final) {
		if !drop[s] {
			want[s] = true
		}
	}
	have := make(map[Statement]bool, len(cur))
	for _, s := range cur {
		have[s] = true
		if !want[s] {
			remove = append(remove, s)
		}
	}
	for _, s := range DedupeStatements(final) {
		if want[s] && !have[s] {
			add = append(add, s)
		}
	}
	return add, remove, nil
}

// DeleteResource tombstones a resource and its descendants. Their metadata
// is removed; the tombstones keep id, kind and the time of deletion so
// harvesters learn of it.
func (r *Repository) DeleteResource(ctx context.Context, id ID, ifMatch int64) error {
	key, err := keyOf(id)
	if err != nil {
		return err
	}
	o := &op{
		check: func(tx WriteTx) error {
			row, err := live(context.Background(), tx, key)
			if err != nil {
				return err
			}
			return checkVersion(row, ifMatch)
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			_, err := tx.Tombstone(context.Background(), key, seq, now)
			return err
		},
	}
	if err := r.commit.submit(ctx, o); err != nil {
		return err
	} else if o.err != nil {
		return fmt.Errorf("delete %s: %w", id, o.err)
	}
	return nil
}
