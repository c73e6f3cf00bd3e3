package kit

import (
	"time"

	"github.com/shelfmark/shelfmark"
)

// VisibilityAt is who may see res at now, as the engine's access policy
// decides it (shelfmark.Access.At): private under an embargo still ahead
// or after a lease has ended (before the access sweep writes it down),
// and for an unknown visibility. A face asks this instead of judging the
// dates itself. It allocates nothing.
func VisibilityAt(res *shelfmark.Resource, now time.Time) shelfmark.Visibility {
	return shelfmark.Access{Visibility: res.Visibility, Embargo: res.Embargo, Lease: res.Lease}.At(now)
}
