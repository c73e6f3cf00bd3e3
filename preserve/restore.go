package preserve

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// timeString is t as the API writes times (RFC 3339, UTC).
func timeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Restore makes the resource id equal to the memento m through the
// ordinary writes of rs, as the caller on ctx (who must be allowed to
// make them): its metadata, visibility, embargo and lease (an embargo or
// lease whose date has passed since is written as its effect: no embargo,
// or private for an ended lease), and for a work the order of its file
// sets that still exist, followed by the children added since in their
// order. It returns the resource as it now is and what it did not bring
// back. ifMatch, when non-zero, must be the resource's current version.
func Restore(ctx context.Context, rs shelfmark.ResourceService, id shelfmark.ID, m *Memento, ifMatch int64, now time.Time) (*shelfmark.Resource, []string, error) {
	if m.Resource.Deleted != nil {
		return nil, nil, shelfmark.Errorf(shelfmark.ECONFLICT, "Version %d records the deletion of %s; there is nothing to restore from it.", m.Version.Num, id)
	}
	notRestored := []string{
		"memberships in collections",
		"roles granted on the resource",
		"files' bytes: a file replaced since keeps its new bytes (the old ones stay readable at the version)",
	}
	rec := m.Resource
	meta := m.Metadata
	if meta == nil {
		meta = []shelfmark.Statement{}
	}
	vis := shelfmark.Visibility(rec.Visibility)
	u := shelfmark.ResourceUpdate{IfMatch: ifMatch, Replace: &meta, Visibility: &vis}
	embargo, lease := rec.Embargo, rec.Lease
	if embargo != nil && !embargo.After(now) {
		notRestored = append(notRestored, "the embargo (it ended on "+timeString(*embargo)+"; the visibility it led to is restored)")
		embargo = nil
	}
	if lease != nil && !lease.After(now) {
		notRestored = append(notRestored, "the lease (it ended on "+timeString(*lease)+"; the resource is private, as the lease's end made it)")
		lease, vis = nil, shelfmark.Private
	}
	u.Embargo, u.Lease = &embargo, &lease
	res, err := rs.UpdateResource(ctx, id, u)
	if err != nil {
		return nil, nil, err
	}
	if rec.Kind != string(shelfmark.KindWork) {
		return res, notRestored, nil
	}
	// the order of the file sets that still exist: the record lists them
	// in the order they were shown (the ordered ones, then the others)
	var want []shelfmark.ID
	for _, c := range m.Children {
		if c.Kind == string(shelfmark.KindFileSet) {
			want = append(want, shelfmark.ID(c.ID))
		}
	}
	// what still exists: the work's children now (those the caller may
	// read, which for a curator of the work are all of them)
	current, err := allChildren(ctx, rs, id)
	if err != nil {
		return nil, nil, err
	}
	alive := make(map[shelfmark.ID]bool, len(current))
	for _, c := range current {
		alive[c] = true
	}
	order := make([]shelfmark.ID, 0, len(current))
	gone := 0
	for _, c := range want {
		if alive[c] {
			order = append(order, c)
		} else {
			gone++
		}
	}
	if gone > 0 {
		notRestored = append(notRestored, fmt.Sprintf("%d file sets deleted since version %d (they stay deleted)", gone, m.Version.Num))
	}
	named := map[shelfmark.ID]bool{}
	for _, c := range order {
		named[c] = true
	}
	for _, c := range current {
		if !named[c] {
			order = append(order, c) // added since: after the restored ones, in their order
		}
	}
	if len(order) > shelfmark.MaxOrderSize {
		notRestored = append(notRestored, fmt.Sprintf("the order of the file sets (the work has more than %d children)", shelfmark.MaxOrderSize))
		return res, notRestored, nil
	}
	if slices.Equal(order, current) {
		return res, notRestored, nil
	}
	if _, err = rs.SetOrder(ctx, id, order, 0); err != nil {
		return nil, nil, err
	}
	// read again: SetOrder answers without the metadata
	if res, err = rs.FindResource(ctx, id); err != nil {
		return nil, nil, err
	}
	return res, notRestored, nil
}

// allChildren lists the children of a work in their order, at most
// MaxOrderSize+1 of them.
func allChildren(ctx context.Context, rs shelfmark.ResourceService, id shelfmark.ID) ([]shelfmark.ID, error) {
	var out []shelfmark.ID
	p := shelfmark.PageRequest{Limit: shelfmark.MaxPageSize}
	for {
		page, err := rs.ListChildren(ctx, id, p)
		if err != nil {
			return nil, err
		}
		for _, c := range page.Items {
			out = append(out, c.ID)
		}
		if page.Next == "" || len(out) > shelfmark.MaxOrderSize {
			return out, nil
		}
		p.After = page.Next
	}
}
