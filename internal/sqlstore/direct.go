package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// Direct implements, once for both backends, the Storage methods that run
// outside any caller's transaction: the brute-force limiter's counters
// (AuthFailures), ReferencedBlobs and AllocateKeys. Each runs its
// statements by the backend's own rule, the with function it was made
// with: on SQLite a write in a write transaction of its own and a read in
// a read transaction; on PostgreSQL a statement on the pool, its own
// transaction, outside the writer lock and committed synchronously. Both
// DB types embed it.
type Direct struct {
	AuthFailures
}

var (
	_ shelfmark.AuthFailures   = (*Direct)(nil)
	_ shelfmark.BlobReferences = (*Direct)(nil)
)

// NewDirect returns the Direct that runs d's statements on what with
// passes to fn (write tells whether fn writes).
func NewDirect(d *Dialect, with func(ctx context.Context, write bool, fn func(Execer) error) error) Direct {
	return Direct{AuthFailures{d: d, with: with}}
}

// ReferencedBlobs reports which of shas a file or an upload holds, in one
// statement through the indexes on files (sha256) and uploads (sha256).
func (x *Direct) ReferencedBlobs(ctx context.Context, shas []string) (map[string]bool, error) {
	out := make(map[string]bool)
	if len(shas) == 0 {
		return out, nil
	}
	err := x.with(ctx, false, func(q Execer) error {
		return q.EachRow(ctx, x.d.ReferencedBlobs, []any{x.d.Strings(shas)}, func(r Scanner) error {
			var sha string
			if err := r.Scan(&sha); err != nil {
				return err
			}
			out[sha] = true
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%sreferenced blobs: %w", x.d.Prefix, err)
	}
	return out, nil
}

// AllocateKeys reserves n consecutive resource keys and returns the
// first, in one statement of its own that is always durable when it
// returns: a block lost in a crash would be handed out again while its
// first holder still uses it. The counter's row lock makes concurrent
// callers (in any process) queue, so blocks never overlap.
func (x *Direct) AllocateKeys(ctx context.Context, n int) (int64, error) {
	if n < 1 {
		return 0, fmt.Errorf("%sallocate %d keys: n must be at least 1", x.d.Prefix, n)
	}
	var last int64
	err := x.with(ctx, true, func(q Execer) error {
		return Row(ctx, q, x.d.AllocateKeys, []any{int64(n)}, &last)
	})
	if err != nil {
		return 0, fmt.Errorf("%sallocate %d keys: %w", x.d.Prefix, n, err)
	}
	return last - int64(n) + 1, nil
}
