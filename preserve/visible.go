package preserve

import (
	"context"

	"github.com/shelfmark/shelfmark"
)

// Visible is the timeline of id with only the versions the caller on ctx
// may read, as pc (the repository's access policy) decides: ENOTFOUND,
// exactly as for a missing resource, when the caller may not read the
// resource now, whatever the copy holds (the access decision is answered
// before anything the copy says); without edit rights, the versions
// whose recorded access hides them from the caller are left out. Cost:
// Timeline's, and one access decision.
func (h *History) Visible(ctx context.Context, pc shelfmark.PastChecker, id shelfmark.ID) (*Timeline, error) {
	if err := id.Check(); err != nil {
		return nil, err
	}
	tl, terr := h.Timeline(ctx, id)
	var recorded []shelfmark.Access
	if tl != nil {
		for _, v := range tl.Versions {
			recorded = append(recorded, v.Access)
		}
	}
	_, readable, err := pc.CheckPast(ctx, id, recorded)
	if err != nil {
		return nil, err
	}
	if terr != nil {
		return nil, terr
	}
	kept := tl.Versions[:0]
	for i, v := range tl.Versions {
		if readable[i] {
			kept = append(kept, v)
		}
	}
	tl.Versions = kept
	return tl, nil
}

// VisibleMemento is the memento of id at version n if the caller on ctx
// may read it, as pc decides (ENOTFOUND otherwise, as for a missing
// version). Cost: Memento's, and one access decision.
func (h *History) VisibleMemento(ctx context.Context, pc shelfmark.PastChecker, id shelfmark.ID, n int) (*Memento, error) {
	if err := id.Check(); err != nil {
		return nil, err
	}
	m, merr := h.Memento(ctx, id, n)
	var recorded []shelfmark.Access
	if m != nil {
		recorded = []shelfmark.Access{m.Version.Access}
	}
	_, readable, err := pc.CheckPast(ctx, id, recorded)
	if err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, merr
	}
	if !readable[0] {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "The preservation copy holds no version %d of %s.", n, id)
	}
	return m, nil
}
