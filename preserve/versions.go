package preserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

var _ shelfmark.PreservedVersions = (*Preserver)(nil)

// Root is the storage root the preserver writes to.
func (p *Preserver) Root() *ocfl.Root { return p.root }

// ObjectVersions implements shelfmark.PreservedVersions: the versions of
// the object of id, read from its root inventory (none when it has no
// object yet). It does not check access: the caller has read the
// resource. Cost: one read of the root inventory and a listing of the
// object root.
func (p *Preserver) ObjectVersions(ctx context.Context, id shelfmark.ID) ([]shelfmark.ObjectVersion, error) {
	obj, err := p.root.View(ctx, ObjectID(id))
	if errors.Is(err, ocfl.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", id, err)
	}
	var out []shelfmark.ObjectVersion
	for _, v := range obj.Versions() {
		ov := shelfmark.ObjectVersion{Num: v.Num, Created: v.Created, Message: v.Message}
		if v.User != nil {
			ov.User = v.User.Name
		}
		out = append(out, ov)
	}
	return out, nil
}
