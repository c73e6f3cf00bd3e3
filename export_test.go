package shelfmark

// Hooks for the package's external tests (package shelfmark_test), which
// may open real stores (sqlite/, postgres/) where this package's own tests
// may not import them.

// BufferedTx is the group commit's write buffer (buffer.go).
type BufferedTx = bufferedTx

// NewBufferedTx wraps tx in the group commit's write buffer.
func NewBufferedTx(tx WriteTx) *BufferedTx { return newBufferedTx(tx) }

// Pending reports whether the buffer holds writes back.
func (b *bufferedTx) Pending() bool { return b.pending() }

// QueuedOps is how many write operations wait in r's committer queue.
func QueuedOps(r *Repository) int { return int(r.commit.queued.Load()) }
