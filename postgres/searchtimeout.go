package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shelfmark/shelfmark"
)

// A search runs under a deadline (Options.SearchTimeout) kept by the
// server: before its statements, the search sets statement_timeout for
// the rest of its transaction (set_config(…, true), which SET LOCAL is),
// and puts the previous value back after them. The server cancels a
// statement still running at the timeout (SQLSTATE 57014) wherever it is,
// in the GIN index, in the ranking or in the headlines, and the search
// answers shelfmark.SearchTimeoutError. The cancellation ends the
// statement, not the connection: the transaction is rolled back and the
// connection goes back to its pool, ready for the next. It holds on the
// read replica too, whose read transactions run the same code.
//
// A deadline on the context would not do: pgx answers a context's end by
// closing the connection, and the server goes on with the statement until
// it next writes to the client.

// setSearchTimeout sets statement_timeout ($1, in milliseconds) for the
// rest of the transaction and returns the value it had; the materialized
// CTE reads the old value before the new one is set.
const setSearchTimeout = `WITH old AS MATERIALIZED (SELECT current_setting('statement_timeout') AS v)
SELECT v, set_config('statement_timeout', $1, true) FROM old`

// restoreTimeout puts statement_timeout back to $1 for the rest of the
// transaction.
const restoreTimeout = `SELECT set_config('statement_timeout', $1, true)`

// startSearch sets the search's statement_timeout and returns the function
// that puts the previous one back once the search's statements succeeded
// (after a failed one the transaction is over anyway). Without a search
// timeout both do nothing.
func (r runner) startSearch(ctx context.Context) (restore func() error, err error) {
	if r.searchTimeout <= 0 {
		return func() error { return nil }, nil
	}
	ms := strconv.FormatInt(max(r.searchTimeout.Milliseconds(), 1), 10)
	var old, set string
	if err := r.queryRow(ctx, setSearchTimeout, []any{ms}, &old, &set); err != nil {
		return nil, fmt.Errorf("postgres: set the search timeout: %w", err)
	}
	return func() error {
		if _, err := r.exec(ctx, restoreTimeout, old); err != nil {
			return fmt.Errorf("postgres: restore statement_timeout after a search: %w", err)
		}
		return nil
	}, nil
}

// searchError returns err of a search statement: shelfmark.SearchTimeoutError,
// wrapping err, when the server cancelled the statement (57014) while the
// caller's context was still live; err otherwise.
func (r runner) searchError(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	if err == nil || ctx.Err() != nil || !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		return err
	}
	return fmt.Errorf("%w: %w", shelfmark.SearchTimeoutError(r.searchTimeout), err)
}
