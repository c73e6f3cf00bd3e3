package blob

import (
	"bytes"
	"context"
	"sort"
	"sync"

	"github.com/shelfmark/shelfmark"
)

// pendingMax is how many bytes of deferred small blobs wait in memory
// before a Put writes them without waiting for Sync.
const pendingMax = 32 << 20

// pendingSmall holds the deferred small blobs of a store until its Sync
// writes them, all in one call of write (one transaction of the pack
// database, one statement of the metadata database): the Puts that defer
// them never wait for that write or its sync, so the goroutines that read,
// hash and put an ingest's files go on while a batch's bytes are made
// durable. Each blob stays readable (get) from the time its Put returns.
//
// A write that fails keeps the blobs pending, so the next Sync writes them
// again: a blob whose Put was acknowledged is never dropped. Memory stays
// bounded by pendingMax and what the Puts in flight add, since a Put that
// finds pendingMax reached writes first and, if that fails, fails itself
// without adding its blob.
type pendingSmall struct {
	write func(ctx context.Context, blobs []shelfmark.SmallBlob) error

	// flushMu is held by each flush throughout, so that a Sync whose
	// blobs another goroutine's flush took waits until they are written.
	flushMu sync.Mutex
	mu      sync.Mutex
	blobs   map[string][]byte // by SHA-256 in lower-case hex
	bytes   int
	max     int // pendingMax, less in tests
	// flushing, when set (by tests), is called by a flush before it
	// writes its batch.
	flushing func()
}

// newPendingSmall returns an empty set of pending blobs written by write,
// which stores its blobs durably or returns an error.
func newPendingSmall(write func(ctx context.Context, blobs []shelfmark.SmallBlob) error) *pendingSmall {
	return &pendingSmall{write: write, blobs: map[string][]byte{}, max: pendingMax}
}

// add keeps a copy of data as the blob sha until the next flush. If the
// blobs pending reached pendingMax, it flushes them first, and returns
// that flush's error without keeping data.
func (p *pendingSmall) add(ctx context.Context, sha string, data []byte) error {
	p.mu.Lock()
	full := p.bytes >= p.max
	p.mu.Unlock()
	if full {
		if err := p.flush(ctx); err != nil {
			return err
		}
	}
	owned := bytes.Clone(data) // data is often a pooled buffer
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.blobs[sha]; !ok {
		p.blobs[sha] = owned
		p.bytes += len(owned)
	}
	return nil
}

// get returns the bytes of the pending blob sha, or false.
func (p *pendingSmall) get(sha string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, ok := p.blobs[sha]
	return data, ok
}

// flush writes the pending blobs in one call of write, in order of their
// SHA-256, and only then stops keeping them: until then get finds them,
// and a failed write leaves them for the next flush. It holds flushMu
// throughout, so a concurrent flush returns only once the blobs it must
// see are written. The write does not end with ctx: a batch half given up
// would leave its Puts' callers to guess.
func (p *pendingSmall) flush(ctx context.Context) error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	p.mu.Lock()
	batch := make([]shelfmark.SmallBlob, 0, len(p.blobs))
	for sha, data := range p.blobs {
		batch = append(batch, shelfmark.SmallBlob{SHA256: sha, Data: data})
	}
	p.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	sort.Slice(batch, func(i, j int) bool { return batch[i].SHA256 < batch[j].SHA256 })
	if p.flushing != nil {
		p.flushing()
	}
	if err := p.write(context.WithoutCancel(ctx), batch); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range batch {
		if _, ok := p.blobs[b.SHA256]; ok {
			delete(p.blobs, b.SHA256)
			p.bytes -= len(b.Data)
		}
	}
	return nil
}
