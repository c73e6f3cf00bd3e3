package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Repository is what the pipeline needs of the repository engine.
type Repository interface {
	MintIDs(ctx context.Context, n int) ([]shelfmark.ID, error)
	CreateGroups(ctx context.Context, gs []*shelfmark.NewGroup) ([]*shelfmark.Resource, []error)
	FindSources(ctx context.Context, sourceKeys []string) (map[string]shelfmark.ID, error)
}

// DefaultCreators is Options.Creators when unset: with one engine call in
// flight the engine waited for the next batch after each commit.
const DefaultCreators = 4

// Options control an ingest run.
type Options struct {
	// Collection, when set, puts every work in this collection.
	Collection shelfmark.ID
	// Workers store files in parallel (default: the number of cores).
	Workers int
	// Rate caps items per second (0: no cap, rule R9).
	Rate float64
	// Batch is how many items go to the engine in one call (default 64);
	// each item is stored atomically either way.
	Batch int
	// Creators is how many engine calls may be in flight at once
	// (DefaultCreators). While one batch commits, the next ones wait in
	// the engine's queue and join its next group commit, or, where
	// batches of creates commit side by side (PostgreSQL), commit beside
	// it. Batches are then stored in no particular order.
	Creators int
	// FailFast stops at the first bad item instead of going on.
	FailFast bool
	// StoreAnyway stores the items whose key was stored before as new
	// works, beside the works stored before (shelfmark.NewGroup.
	// StoreAnyway): their bytes are read again, and an item whose content
	// was stored anyway before is skipped, naming that work.
	StoreAnyway bool
	// Progress, when set, is called as items finish, one call at a time.
	// Its Stats share the run's list of failures so far (a call costs the
	// same at the millionth failure as at the first): read them, do not
	// change them.
	Progress func(Stats)
	// Uploads, when set, is told of the bytes a run stores for a user: a
	// batch's, once durable and before the batch is committed (an error
	// fails the batch's items), and an item's that was not stored, so
	// that they are removed at once.
	Uploads Uploads
}

// Uploads keeps the account of the bytes a run stores on behalf of a user
// (the web interface's bulk ingest): the engine lets a user name only
// bytes they sent, and a refused item's bytes must not stay.
type Uploads interface {
	// Keep records blobs, stored at storedAt, as sent by the caller on
	// ctx.
	Keep(ctx context.Context, blobs []*shelfmark.Blob, storedAt time.Time) error
	// Discard forgets the caller's uploads of shas and removes the bytes
	// nothing else holds.
	Discard(ctx context.Context, shas []string, storedAt time.Time)
}

// Failure is a bad item and why.
type Failure struct {
	Key string
	// Row is the item's CSV row, or 0.
	Row    int
	Reason string
}

// Skip is an item that was not stored because it was stored before.
type Skip struct {
	// Key is the item's source key; Row its CSV row, or 0.
	Key string
	Row int
	// ID is the root of the work stored before under the key, or "" when
	// the caller may not see it.
	ID shelfmark.ID
	// Anyway is set when ID was stored anyway (Options.StoreAnyway) with
	// the item's content.
	Anyway bool
	// Former is set when the work was found by the item's former key.
	Former bool
}

// MaxSkips is how many skipped items Stats.Skips lists; Stats.Skipped
// counts them all. A re-run of a large ingest skips millions of items,
// which must not all be held in memory.
const MaxSkips = 1000

// Stats counts an ingest run.
type Stats struct {
	Stored, Skipped, Failed int64
	// Anyway counts the stored items that had been stored before
	// (Options.StoreAnyway).
	Anyway       int64
	Files, Bytes int64
	Failures     []Failure
	// Skips are the first MaxSkips items skipped, with the works they
	// were stored as.
	Skips []Skip
}

// Run ingests every item of src: files first (bytes to the content store,
// checked against the digests the source states, made durable together once
// per batch), then each item as one
// atomic group (work, file sets, files, order) with its source key, so an
// item is stored whole or not at all. Items whose key was stored before are
// skipped without reading their bytes, which makes a re-run after a crash
// or Ctrl-C finish the rest. Bad items are reported and skipped (or stop
// the run with FailFast).
func Run(ctx context.Context, repo Repository, blobs shelfmark.BlobStore, src Source, opts Options) (*Stats, error) {
	if opts.Workers <= 0 {
		opts.Workers = runtime.NumCPU()
	}
	if opts.Creators <= 0 {
		opts.Creators = DefaultCreators
	}
	if opts.Batch <= 0 {
		opts.Batch = 64
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p := &pipeline{repo: repo, blobs: blobs, opts: opts, cancel: cancel}

	items := make(chan *Item, opts.Workers*2)
	groups := make(chan *pending, opts.Batch*2)
	var readErr error
	go func() { // read the source, at the configured rate
		defer close(items)
		var tick *time.Ticker
		if opts.Rate > 0 {
			tick = time.NewTicker(time.Duration(float64(time.Second) / opts.Rate))
			defer tick.Stop()
		}
		// Items stored before are looked up a chunk at a time: up to
		// lookupChunk items read within lookupWait of the chunk's first.
		chunk := make([]*Item, 0, lookupChunk)
		var started time.Time
		send := func() bool {
			defer func() { chunk = chunk[:0] }()
			if len(chunk) == 0 {
				return true
			}
			keys := make([]string, len(chunk))
			for i, it := range chunk {
				keys[i] = it.Key
			}
			found, err := repo.FindSources(ctx, keys)
			if err != nil {
				readErr = err
				cancel(err)
				return false
			}
			for _, it := range chunk {
				if id, done := found[it.Key]; done {
					if !opts.StoreAnyway {
						p.skip(Skip{Key: it.Key, Row: it.Row, ID: id})
						continue
					}
					cp := *it
					cp.anyway = true
					it = &cp
				}
				select {
				case items <- it:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		for {
			it, err := src.Next(ctx)
			var ie *ItemError
			switch {
			case errors.Is(err, io.EOF):
				send()
				return
			case errors.As(err, &ie):
				p.fail(ie.Key, ie.Row, ie.Reason)
				continue
			case err != nil:
				if ctx.Err() == nil {
					readErr = err
					cancel(err)
				}
				return
			}
			if tick != nil {
				select {
				case <-tick.C:
				case <-ctx.Done():
					return
				}
			}
			if len(chunk) == 0 {
				started = time.Now()
			}
			chunk = append(chunk, it)
			if tick != nil || len(chunk) == lookupChunk || time.Since(started) > lookupWait {
				if !send() {
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				if g, err := p.prepare(ctx, it); err != nil {
					if ctx.Err() == nil {
						p.fail(it.Key, it.Row, err.Error())
					}
				} else {
					groups <- g
				}
			}
		}()
	}
	go func() { wg.Wait(); close(groups) }()
	p.commit(ctx, groups)
	if readErr != nil {
		return p.snapshot(), fmt.Errorf("read source: %w", readErr)
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return p.snapshot(), err // errFailFast
	}
	return p.snapshot(), ctx.Err()
}

// lookupChunk and lookupWait bound the chunks of items whose source keys
// are looked up at once.
const (
	lookupChunk = 32
	lookupWait  = 20 * time.Millisecond
)

var errFailFast = errors.New("ingest stopped at the first bad item (--fail-fast)")

type pipeline struct {
	repo   Repository
	blobs  shelfmark.BlobStore
	opts   Options
	cancel context.CancelCauseFunc

	stored, skipped, failed, anyway, files, bytes atomic.Int64
	mu                                            sync.Mutex
	pmu                                           sync.Mutex // held for each call of Options.Progress
	failures                                      []Failure
	skips                                         []Skip

	// With Options.Uploads: the items in flight holding each digest, and
	// the uses of refused items' uploads not yet discarded because
	// another item in flight holds the same bytes (see settle).
	umu      sync.Mutex
	inflight map[string]int
	refused  map[string]int
}

// pending is an item ready to commit.
type pending struct {
	key   string
	row   int
	group *shelfmark.NewGroup
	bytes int64
	// files counts the item's files when it states its file sets (a
	// structured item); otherwise each file set holds one file
	files int
	// anyway is set for an item stored before, stored anyway
	anyway bool
	// blobs are the item's stored bytes; kept is when they were recorded
	// as the caller's uploads (Options.Uploads).
	blobs []*shelfmark.Blob
	kept  time.Time
}

func (p *pipeline) fail(key string, row int, reason string) {
	p.failed.Add(1)
	p.mu.Lock()
	p.failures = append(p.failures, Failure{Key: key, Row: row, Reason: reason})
	p.mu.Unlock()
	if p.opts.FailFast {
		p.cancel(errFailFast)
	}
	p.progress()
}

// skip counts an item stored before, keeping the first MaxSkips.
func (p *pipeline) skip(s Skip) {
	p.skipped.Add(1)
	p.mu.Lock()
	if len(p.skips) < MaxSkips {
		p.skips = append(p.skips, s)
	}
	p.mu.Unlock()
	p.progress()
}

func (p *pipeline) progress() {
	if p.opts.Progress != nil {
		// one call at a time, each with counts at least those of the one
		// before
		p.pmu.Lock()
		defer p.pmu.Unlock()
		p.mu.Lock()
		n, k := len(p.failures), len(p.skips)
		st := Stats{Stored: p.stored.Load(), Skipped: p.skipped.Load(), Failed: p.failed.Load(), Anyway: p.anyway.Load(),
			Files: p.files.Load(), Bytes: p.bytes.Load(), Failures: p.failures[:n:n], Skips: p.skips[:k:k]}
		p.mu.Unlock()
		p.opts.Progress(st)
	}
}

func (p *pipeline) snapshot() *Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &Stats{Stored: p.stored.Load(), Skipped: p.skipped.Load(), Failed: p.failed.Load(), Anyway: p.anyway.Load(),
		Files: p.files.Load(), Bytes: p.bytes.Load(), Failures: append([]Failure(nil), p.failures...), Skips: append([]Skip(nil), p.skips...)}
}

// prepare stores an item's bytes and builds its group.
func (p *pipeline) prepare(ctx context.Context, it *Item) (*pending, error) {
	if it.Structured {
		return p.prepareStructured(ctx, it)
	}
	ids, err := p.repo.MintIDs(ctx, 1+2*len(it.Files))
	if err != nil {
		return nil, err
	}
	work := &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork, Metadata: it.Metadata}
	for _, c := range []string{string(p.opts.Collection), it.Collection} {
		if c != "" {
			work.MemberOf = append(work.MemberOf, shelfmark.ID(c))
		}
	}
	g := &pending{key: it.Key, row: it.Row, anyway: it.anyway, group: &shelfmark.NewGroup{SourceKey: it.Key, FormerKey: it.FormerKey,
		StoreAnyway: p.opts.StoreAnyway, Resources: []*shelfmark.NewResource{work}}}
	for i, f := range it.Files {
		blob, err := p.store(ctx, f)
		if err != nil {
			p.settle(ctx, g, false)
			return nil, err
		}
		g.bytes += blob.Size
		g.blobs = append(g.blobs, blob)
		p.track(blob)
		fs, file := ids[1+2*i], ids[2+2*i]
		use := f.Use
		if use == "" {
			use = "original"
		}
		g.group.Resources = append(g.group.Resources,
			&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: work.ID,
				Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(f.Name)}}},
			&shelfmark.NewResource{ID: file, Kind: shelfmark.KindFile, Parent: fs, File: &shelfmark.File{
				Name: shelfmark.BaseFileName(f.Name), MediaType: f.MediaType, Size: blob.Size, SHA256: blob.Digests[shelfmark.SHA256], Use: use}})
		g.group.Order = append(g.group.Order, fs)
	}
	return g, nil
}

// store streams one file into the content store, checking the digest the
// source states.
func (p *pipeline) store(ctx context.Context, f FileRef) (*shelfmark.Blob, error) {
	var r io.ReadCloser
	var err error
	if f.Open != nil {
		r, err = f.Open()
	} else {
		r, err = os.Open(f.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, unwrapPathError(err))
	}
	defer r.Close()
	// Deferred: the batch's bytes are made durable together (one Sync)
	// before the batch is committed, instead of an fsync per file
	opts := shelfmark.PutOptions{Deferred: true}
	if f.SHA256 != "" {
		want, err := hex.DecodeString(f.SHA256)
		if err != nil || len(want) != sha256.Size {
			return nil, fmt.Errorf("%s: stated sha-256 %.80q is not 64 hex digits", f.Name, f.SHA256)
		}
		opts.Expect = []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: want}}
	}
	blob, err := p.blobs.Put(ctx, r, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", f.Name, shelfmark.ErrorMessage(err))
	}
	if f.Size > 0 && blob.Size != f.Size {
		return nil, fmt.Errorf("%s: changed while being read (%d bytes listed, %d read)", f.Name, f.Size, blob.Size)
	}
	return blob, nil
}

// conflictDetail returns a detail of a conflict error, or nil.
func conflictDetail(err error, name string) any {
	var e *shelfmark.Error
	if errors.As(err, &e) {
		return e.Details[name]
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// commit sends ready items to the engine in batches, in two stages that
// overlap: while the engine commits batches (Options.Creators of them in
// flight), the bytes of the next are made durable.
func (p *pipeline) commit(ctx context.Context, groups <-chan *pending) {
	synced := make(chan []*pending, p.opts.Creators)
	var creators sync.WaitGroup
	for range p.opts.Creators {
		creators.Go(func() {
			for batch := range synced {
				p.create(ctx, batch)
			}
		})
	}
	p.batches(ctx, groups, synced)
	close(synced)
	creators.Wait()
}

// batches gathers ready items into batches of up to opts.Batch, makes each
// batch's bytes durable (one Sync) and hands it on. It does not wait for a
// batch to fill: when no item is ready, what is ready goes.
func (p *pipeline) batches(ctx context.Context, groups <-chan *pending, synced chan<- []*pending) {
	batch := make([]*pending, 0, p.opts.Batch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		// the batch's bytes must be durable before anything refers to them
		if err := p.blobs.Sync(context.WithoutCancel(ctx)); err != nil {
			for _, b := range batch {
				p.fail(b.key, b.row, err.Error())
				p.settle(ctx, b, false)
			}
			batch = batch[:0]
			return
		}
		if p.opts.Uploads != nil {
			var blobs []*shelfmark.Blob
			for _, b := range batch {
				blobs = append(blobs, b.blobs...)
			}
			kept := time.Now()
			if err := p.opts.Uploads.Keep(context.WithoutCancel(ctx), blobs, kept); err != nil {
				for _, b := range batch {
					p.fail(b.key, b.row, shelfmark.ErrorMessage(err))
					p.settle(ctx, b, false) // Keep took back what it recorded
				}
				batch = batch[:0]
				return
			}
			for _, b := range batch {
				b.kept = kept
			}
		}
		synced <- batch
		batch = make([]*pending, 0, p.opts.Batch)
	}
	for {
		select {
		case g, ok := <-groups:
			if !ok {
				flush()
				return
			}
			batch = append(batch, g)
			if len(batch) >= p.opts.Batch {
				flush()
			}
		default:
			flush() // nothing waiting: commit what is ready rather than wait
			g, ok := <-groups
			if !ok {
				return
			}
			batch = append(batch, g)
		}
	}
}

// create stores a synced batch, each item as one atomic group.
func (p *pipeline) create(ctx context.Context, batch []*pending) {
	gs := make([]*shelfmark.NewGroup, len(batch))
	for i, b := range batch {
		gs[i] = b.group
	}
	_, errs := p.repo.CreateGroups(context.WithoutCancel(ctx), gs)
	for i, err := range errs {
		switch {
		case err == nil:
			p.stored.Add(1)
			if batch[i].anyway {
				p.anyway.Add(1)
			}
			if batch[i].files > 0 {
				p.files.Add(int64(batch[i].files))
			} else {
				p.files.Add(int64(len(batch[i].group.Order)))
			}
			p.bytes.Add(batch[i].bytes)
			p.progress()
			p.settle(ctx, batch[i], false)
		case shelfmark.ErrorCode(err) == shelfmark.ECONFLICT:
			// stored meanwhile (another run), found by its former key, or
			// stored anyway before
			s := Skip{Key: batch[i].key, Row: batch[i].row, Anyway: conflictDetail(err, "anyway") == true,
				Former: conflictDetail(err, "former_key") != nil}
			if id, ok := conflictDetail(err, "id").(string); ok {
				s.ID = shelfmark.ID(id)
			}
			p.skip(s)
			p.settle(ctx, batch[i], true)
		default:
			p.fail(batch[i].key, batch[i].row, shelfmark.ErrorMessage(err))
			p.settle(ctx, batch[i], true)
		}
	}
}

// track counts an item in flight holding blob, when the run keeps the
// account of its uploads.
func (p *pipeline) track(blob *shelfmark.Blob) {
	if p.opts.Uploads == nil {
		return
	}
	p.umu.Lock()
	defer p.umu.Unlock()
	if p.inflight == nil {
		p.inflight, p.refused = map[string]int{}, map[string]int{}
	}
	p.inflight[blob.Digests[shelfmark.SHA256]]++
}

// settle ends an item's flight, when the run keeps the account of its
// uploads: with refused (an item not stored whose bytes were recorded),
// its uploads are discarded, each as soon as no other item in flight holds
// the same bytes (they would lose them, and their recording fail), so
// that the bytes nothing else holds go at once.
func (p *pipeline) settle(ctx context.Context, b *pending, refused bool) {
	if p.opts.Uploads == nil || len(b.blobs) == 0 {
		return
	}
	refused = refused && !b.kept.IsZero()
	var now []string
	p.umu.Lock()
	for _, bl := range b.blobs {
		sha := bl.Digests[shelfmark.SHA256]
		p.inflight[sha]--
		if refused {
			p.refused[sha]++
		}
	}
	for _, bl := range b.blobs {
		sha := bl.Digests[shelfmark.SHA256]
		if p.inflight[sha] > 0 {
			continue
		}
		for range p.refused[sha] {
			now = append(now, sha)
		}
		delete(p.inflight, sha)
		delete(p.refused, sha)
	}
	p.umu.Unlock()
	if len(now) > 0 {
		p.opts.Uploads.Discard(context.WithoutCancel(ctx), now, time.Now())
	}
}
