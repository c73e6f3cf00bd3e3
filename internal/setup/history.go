package setup

import (
	"github.com/shelfmark/shelfmark/preserve"
)

// history is what the server serves as versions (Memento) when the
// preservation copy is on: the history of the copy the preserver writes,
// on the same storage root, with the default bounds per request. Without
// a copy (nil keeper) it is nil, and the versions routes answer 404.
func history(keeper *preserve.Preserver) *preserve.History {
	if keeper == nil {
		return nil
	}
	return keeper.History(preserve.HistoryOptions{})
}
