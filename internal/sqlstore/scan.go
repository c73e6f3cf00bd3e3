package sqlstore

import (
	"context"
	"errors"
	"fmt"
)

// Scanner is one row of a result. *sql.Rows and pgx.Rows both implement
// it; passing either as a Scanner costs no allocation.
type Scanner interface {
	Scan(dest ...any) error
}

// Querier runs statements inside one transaction. Both backends'
// transactions implement it over their own prepared-statement caches,
// tracing and error mapping.
type Querier interface {
	// EachRow runs query with args and calls each for every row,
	// stopping at the first error, which it returns wrapped.
	EachRow(ctx context.Context, query string, args []any, each func(Scanner) error) error
}

// Collect runs query and returns the value scan builds from each row, in
// order: one slice grown by append, no other allocation than scan's.
func Collect[T any](ctx context.Context, q Querier, query string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	err := q.EachRow(ctx, query, args, func(r Scanner) error {
		v, err := scan(r)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// Int64s runs a query of one integer column and returns its values in
// order.
func Int64s(ctx context.Context, q Querier, query string, args ...any) ([]int64, error) {
	return Collect(ctx, q, query, args, func(r Scanner) (int64, error) {
		var v int64
		err := r.Scan(&v)
		return v, err
	})
}

// errNotOne is Row's error when a query returns no row or several.
var errNotOne = errors.New("expected one row")

// Row runs a query that returns exactly one row and scans it into dest.
func Row(ctx context.Context, q Querier, query string, args []any, dest ...any) error {
	n := 0
	err := q.EachRow(ctx, query, args, func(r Scanner) error {
		n++
		return r.Scan(dest...)
	})
	if err == nil && n != 1 {
		err = fmt.Errorf("%w, got %d", errNotOne, n)
	}
	return err
}

// Batch is one statement of RunBatch, with the function its rows go to.
type Batch struct {
	Query string
	Args  []any
	Each  func(Scanner) error
}

// Batcher is a Querier that sends several statements in one round trip
// and hands their rows back in order (PostgreSQL's pipeline). Each
// statement runs as it would alone; an error ends the batch.
type Batcher interface {
	EachRowOf(ctx context.Context, qs []Batch) error
}

// RunBatch runs statements that do not depend on each other's rows: in one
// round trip where q is a Batcher, else one after another. It is how a
// read that knows its next statements up front saves the round trips
// between them on a server.
func RunBatch(ctx context.Context, q Querier, qs []Batch) error {
	if b, ok := q.(Batcher); ok && len(qs) > 1 {
		return b.EachRowOf(ctx, qs)
	}
	for _, s := range qs {
		if err := q.EachRow(ctx, s.Query, s.Args, s.Each); err != nil {
			return err
		}
	}
	return nil
}
