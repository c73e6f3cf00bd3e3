package preserve

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestRestore: restoring a version writes back its metadata, its
// embargo, and the order of its file sets that still exist (a deleted one
// is named as not restored, one added since follows); a lease that has
// ended since is written as its effect (private, no lease) and said so; a
// version recording a deletion cannot be restored from.
func TestRestore(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		h := s.p.History(HistoryOptions{})
		embargo := s.clock.Now().Add(365 * 24 * time.Hour)
		work, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: titled("Old"), Embargo: &embargo})
		if err != nil {
			t.Fatal(err)
		}
		a, b, c := s.page(t, work.ID, "a"), s.page(t, work.ID, "b"), s.page(t, work.ID, "c")
		s.catchUp(t) // v1: Old, embargoed, a b c

		var none *time.Time
		if _, err := s.repo.UpdateResource(s.ctx, work.ID, shelfmark.ResourceUpdate{Replace: ptr(titled("New")), Embargo: &none}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.repo.SetOrder(s.ctx, work.ID, []shelfmark.ID{c, b, a}, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.repo.DeleteResource(s.ctx, b, 0); err != nil {
			t.Fatal(err)
		}
		d := s.page(t, work.ID, "d")
		s.catchUp(t) // v2

		m, err := h.Memento(s.ctx, work.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		res, notRestored, err := Restore(s.ctx, s.repo, work.ID, m, 0, s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if res.Embargo == nil || !res.Embargo.Equal(embargo) || res.Metadata[0].Object.Value != "Old" {
			t.Fatalf("restored: embargo %v, metadata %v", res.Embargo, res.Metadata)
		}
		if !slices.ContainsFunc(notRestored, func(s string) bool { return strings.Contains(s, "1 file sets deleted since version 1") }) {
			t.Fatalf("not restored: %q", notRestored)
		}
		page, err := s.repo.ListChildren(s.ctx, work.ID, shelfmark.PageRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []shelfmark.ID
		for _, it := range page.Items {
			got = append(got, it.ID)
		}
		if want := []shelfmark.ID{a, c, d}; !slices.Equal(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}

		// a lease that ended since: private, and said
		lease := s.clock.Now().Add(time.Hour)
		leased, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: titled("Leased"), Lease: &lease})
		if err != nil {
			t.Fatal(err)
		}
		s.catchUp(t)
		s.clock.Add(2 * time.Hour)
		m, err = h.Memento(s.ctx, leased.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		res, notRestored, err = Restore(s.ctx, s.repo, leased.ID, m, 0, s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if res.Lease != nil || res.Visibility != shelfmark.Private || !strings.Contains(strings.Join(notRestored, "|"), "the lease") {
			t.Fatalf("restored a lease that ended: lease %v, visibility %s, %q", res.Lease, res.Visibility, notRestored)
		}

		// a tombstone's version
		if err := s.repo.DeleteResource(s.ctx, leased.ID, 0); err != nil {
			t.Fatal(err)
		}
		s.catchUp(t)
		tl, err := h.Timeline(s.ctx, leased.ID)
		if err != nil || len(tl.Versions) != 2 || !tl.Versions[1].Deleted {
			t.Fatalf("deleted work's timeline: %+v %v", tl, err)
		}
		m, err = h.Memento(s.ctx, leased.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Restore(s.ctx, s.repo, leased.ID, m, 0, s.clock.Now()); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
			t.Fatalf("restore from a tombstone: %v", err)
		}
	})
}
