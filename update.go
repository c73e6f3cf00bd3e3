package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// UpdateResource changes a resource's metadata and access fields, writing
// only what differs (rule R3), and returns its new state.
func (r *Repository) UpdateResource(ctx context.Context, id ID, u ResourceUpdate) (*Resource, error) {
	key, err := r.ids.Key(id)
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
	if u.Visibility != nil {
		v, err := ParseVisibility(string(*u.Visibility))
		if err != nil {
			return nil, err
		}
		u.Visibility = &v
	}
	var (
		row           *ResourceRow
		changes       []Field
		fieldsChanged bool
	)
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		a, err := r.guard(tx, CallerFrom(o.ctx)).editable(ctx, key, "change")
		if err != nil {
			return err
		}
		row = a.row
		oldEmbargo, oldLease := row.Embargo, row.Lease
		if err := r.checkVersion(row, u.IfMatch); err != nil {
			return err
		}
		changes, err = fieldChanges(ctx, tx, key, u)
		if err != nil {
			return err
		}
		if err := r.checkThumbnailPage(ctx, tx, key, changes); err != nil {
			return err
		}
		fieldsChanged = false
		if u.Visibility != nil && *u.Visibility != row.Visibility {
			row.Visibility, fieldsChanged = *u.Visibility, true
		}
		if u.Embargo != nil && !sameTime(*u.Embargo, row.Embargo) {
			row.Embargo, fieldsChanged = *u.Embargo, true
		}
		if u.Lease != nil && !sameTime(*u.Lease, row.Lease) {
			row.Lease, fieldsChanged = *u.Lease, true
		}
		// a date given anew must lie ahead; one kept as it was may have
		// passed already (the sweep has yet to write it down)
		var emb, lease *time.Time
		if u.Embargo != nil && !sameTime(*u.Embargo, oldEmbargo) {
			emb = row.Embargo
		}
		if u.Lease != nil && !sameTime(*u.Lease, oldLease) {
			lease = row.Lease
		}
		if err := r.checkAccessDates(emb, lease); err != nil {
			return err
		}
		if row.Embargo != nil && row.Lease != nil {
			return Errorf(EINVALID, "A resource has an embargo or a lease, not both.")
		}
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		if len(changes) == 0 && !fieldsChanged {
			return nil // nothing changed: nothing is written
		}
		ctx := context.Background()
		if len(changes) > 0 {
			keys := make([]int64, len(changes))
			for i := range keys {
				keys[i] = key
			}
			if err := tx.PutFields(ctx, keys, changes); err != nil {
				return err
			}
		}
		row.Version++
		row.Seq, row.Modified = seq, now
		preds := make([]string, 0, len(changes)+1)
		for _, f := range changes {
			preds = append(preds, f.Predicate)
		}
		if fieldsChanged {
			preds = append(preds, "access")
		}
		o.audit = append(o.audit, auditEntry(o.ctx, "update", key, preds))
		return writeAccessChange(ctx, tx, row, fieldsChanged)
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "update", key, err)
		return nil, fmt.Errorf("update %s: %w", id, err)
	}
	return r.findResource(ctx, key, id)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// fieldChanges reads only the fields the update can touch (all of them for
// a replacement, those of the patched predicates otherwise) and returns the
// fields whose objects change, with their new objects (none: removed).
func fieldChanges(ctx context.Context, tx ReadTx, key int64, u ResourceUpdate) ([]Field, error) {
	if u.Replace == nil && len(u.Add) == 0 && len(u.Remove) == 0 {
		return nil, nil
	}
	var cur []Field
	var err error
	if u.Replace != nil {
		cur, err = tx.Fields(ctx, key)
	} else {
		var preds []string
		seen := map[string]bool{}
		for _, s := range append(append([]Statement(nil), u.Add...), u.Remove...) {
			if !seen[s.Predicate] {
				seen[s.Predicate] = true
				preds = append(preds, s.Predicate)
			}
		}
		cur, err = tx.Fields(ctx, key, preds...)
	}
	if err != nil {
		return nil, err
	}
	have := make(map[string][]Term, len(cur))
	for _, f := range cur {
		have[f.Predicate] = f.Objects
	}
	want := make(map[string][]Term, len(cur))
	if u.Replace != nil {
		for _, f := range FieldsOf(*u.Replace) {
			want[f.Predicate] = f.Objects
		}
	} else {
		for p, objs := range have {
			want[p] = append([]Term(nil), objs...)
		}
	}
	for _, s := range u.Add {
		if !slices.Contains(want[s.Predicate], s.Object) {
			want[s.Predicate] = append(want[s.Predicate], s.Object)
		}
	}
	for _, s := range u.Remove {
		want[s.Predicate] = slices.DeleteFunc(want[s.Predicate], func(t Term) bool { return t == s.Object })
	}
	var changes []Field
	for p, objs := range want {
		if !slices.Equal(objs, have[p]) {
			changes = append(changes, Field{Predicate: p, Objects: objs})
		}
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			changes = append(changes, Field{Predicate: p})
		}
	}
	slices.SortFunc(changes, func(a, b Field) int { return strings.Compare(a.Predicate, b.Predicate) })
	return changes, nil
}

// DeleteResource tombstones a resource and its descendants. Their metadata
// is removed; the tombstones keep id, kind and the time of deletion so
// harvesters learn of it.
func (r *Repository) DeleteResource(ctx context.Context, id ID, ifMatch int64) error {
	key, err := r.ids.Key(id)
	if err != nil {
		return err
	}
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		a, err := r.guard(tx, CallerFrom(o.ctx)).deletable(ctx, key)
		if err != nil {
			return err
		}
		return r.checkVersion(a.row, ifMatch)
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		o.audit = append(o.audit, auditEntry(o.ctx, "delete", key, nil))
		_, err := tx.Tombstone(context.Background(), key, seq, now)
		return err
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "delete", key, err)
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}
