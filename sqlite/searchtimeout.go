package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// A search runs under a deadline (Options.SearchTimeout): its statements
// get a context that ends at it, and mattn/go-sqlite3 calls
// sqlite3_interrupt on the connection when a statement's context ends.
// SQLite checks for the interrupt at every step of its program and
// whenever FTS5 reads a page of the index (FTS5 reads through incremental
// blob handles, whose seeks run a program of their own), so a statement
// stops within a page read of the deadline, however many documents its
// words occur in, and the connection goes back to the pool unharmed: an
// interrupted read leaves nothing to undo, and the interrupt is cleared
// when the connection's next statement begins.

// errSearchDeadline is the cause of a search context that reached its
// deadline.
var errSearchDeadline = errors.New("sqlite: search deadline")

// searchContext returns ctx bounded by the search timeout, and the cancel
// function to call once the search's statements are done.
func (db *DB) searchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if db.searchTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, db.searchTimeout, errSearchDeadline)
}

// searchError returns err of a search statement run with ctx (from
// searchContext): shelfmark.SearchTimeoutError, wrapping err, when ctx
// ended at the search's deadline; err otherwise (an end of the caller's
// own context stays what it was).
func (db *DB) searchError(ctx context.Context, err error) error {
	if err == nil || !errors.Is(context.Cause(ctx), errSearchDeadline) {
		return err
	}
	return fmt.Errorf("%w: %w", shelfmark.SearchTimeoutError(db.searchTimeout), err)
}
