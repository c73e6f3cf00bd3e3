package preserve

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// Defaults of Options.
const (
	// DefaultWindow is how old a change must be before it is preserved:
	// the changes of a book's ingest within it make one version.
	DefaultWindow = 5 * time.Second
	// DefaultBatch is how many changed rows one step reads.
	DefaultBatch = 1000
	// DefaultParallel is how many objects a step writes at once to a
	// storage root reached over the network (S3), whose writes wait on
	// round trips that overlap.
	DefaultParallel = 8
	// DefaultLocalParallel is how many objects a step writes at once to a
	// storage root in a local directory. There a version's writes wait on
	// nothing (their syncs are one syncfs per step: ocfl.Batch); each is a
	// file system metadata operation, CPU in the kernel, and several
	// writers at once only take CPU and the file system's locks from
	// requests and ingest (rule R5). On 2 cores, creating one work per
	// request from 8 clients, 8 writers held the server to 234–250 works/s
	// where one gave 350–537 (and 315–427 against 347–390 from 1 client).
	DefaultLocalParallel = 1
)

// CounterCheckpoint is the database counter holding the change sequence
// number up to which every change is preserved.
const CounterCheckpoint = "preserve_checkpoint"

// Options configure a Preserver. The zero value gives the defaults.
type Options struct {
	// Window is how old a change must be before it is preserved
	// (DefaultWindow).
	Window time.Duration
	// Batch is how many changed rows a step reads (DefaultBatch); a
	// commit with more rows is read whole.
	Batch int
	// Parallel is how many objects a step writes at once
	// (DefaultLocalParallel for a root on an ocfl.DirFS, else
	// DefaultParallel).
	Parallel int
	// Now is the clock (time.Now).
	Now func() time.Time
	// Agent is the user of the versions written (Shelfmark).
	Agent ocfl.User
	// Logger gets Run's failed steps and its progress (slog.Default()).
	Logger *slog.Logger
}

// Preserver writes a new version of each object whose resources changed,
// following the change sequence from its checkpoint as the OAI-PMH
// projector does. One elected process runs it. Every step is idempotent:
// an object whose state equals its newest version gets no new one, so a
// step repeated after a crash (the versions written, the checkpoint not
// yet advanced) writes nothing twice.
type Preserver struct {
	store shelfmark.Storage
	blobs shelfmark.BlobStore
	root  *ocfl.Root
	ids   *shelfmark.IDCodec
	opts  Options

	versions, failures atomic.Int64
	mu                 sync.Mutex
	lastErr            error // of the last step; nil when it succeeded
	rootChecked        bool  // checkRoot found the storage root the database's
}

// New returns the preserver of store's resources (originals read from
// blobs) into root. ids is the repository's id codec.
func New(store shelfmark.Storage, blobs shelfmark.BlobStore, root *ocfl.Root, ids *shelfmark.IDCodec, opts Options) *Preserver {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
		if _, local := root.FS().(*ocfl.DirFS); local {
			opts.Parallel = DefaultLocalParallel
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Agent.Name == "" {
		// the address names the repository the root preserves (root.go),
		// not a web site outside it
		opts.Agent = ocfl.User{Name: "Shelfmark", Address: RepositoryObject}
	}
	return &Preserver{store: store, blobs: blobs, root: root, ids: ids, opts: opts}
}

// ObjectID is the OCFL identifier of the object of the resource id.
func ObjectID(id shelfmark.ID) string { return SubjectIRI(id) }

// Step preserves the changes of one batch that are at least Window old:
// it writes a version of each object they touch and then advances the
// checkpoint past them. It returns how many changed rows it took (0 when
// none is due) and how many versions it wrote.
//
// Cost: two statements to read the batch and one to map files to their
// works, then the reads of BuildAll (about ten statements for every
// buildObjects objects, plus two per work with file sets or files), and
// per object the object's new bytes.
func (p *Preserver) Step(ctx context.Context) (rows, versions int, err error) {
	var (
		cp, upTo int64
		objects  []int64
		at       map[int64]time.Time
	)
	if err := p.checkRoot(ctx); err != nil {
		return 0, 0, wrap(err)
	}
	cutoff := p.opts.Now().Add(-p.opts.Window)
	err = p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		if cp, err = tx.Counter(ctx, CounterCheckpoint); err != nil {
			return err
		}
		due, err := p.due(ctx, tx, cp, cutoff)
		if err != nil || len(due) == 0 {
			return err
		}
		rows, upTo = len(due), due[len(due)-1].Seq
		objects, at, err = p.objects(ctx, tx, due)
		return err
	})
	if err != nil || rows == 0 {
		return 0, 0, wrap(err)
	}
	if versions, err = p.preserveAll(ctx, objects, at); err != nil {
		return 0, versions, err
	}
	err = shelfmark.UpdateFollower(ctx, p.store, func(tx shelfmark.WriteTx) error {
		v, err := tx.AddCounter(ctx, CounterCheckpoint, upTo-cp)
		if err == nil && v != upTo {
			return fmt.Errorf("checkpoint moved to %d while this step preserved up to %d: another preserver runs", v-(upTo-cp), upTo)
		}
		return err
	})
	return rows, versions, wrap(err)
}

func wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("preserve: %w", err)
}

// due reads the changes after cp that are at least as old as cutoff, cut
// at a change boundary (the rows of one commit share a seq).
func (p *Preserver) due(ctx context.Context, tx shelfmark.ReadTx, cp int64, cutoff time.Time) ([]*shelfmark.ResourceRow, error) {
	limit := p.opts.Batch
	for {
		rows, err := tx.Changes(ctx, cp, limit)
		if err != nil {
			return nil, err
		}
		n := len(rows) // the rows due: those at least as old as cutoff
		for i, r := range rows {
			if r.Modified.After(cutoff) {
				n = i
				break
			}
		}
		full := len(rows) == limit
		if n == len(rows) && !full {
			return rows, nil
		}
		// cut back to a change boundary: the first row not taken (or, for
		// a full page, the next one unread) may share its commit with the
		// last ones taken
		boundary := rows[len(rows)-1].Seq
		if n < len(rows) {
			boundary = rows[n].Seq
		}
		i := n
		for i > 0 && rows[i-1].Seq == boundary {
			i--
		}
		if i > 0 || n < len(rows) {
			return rows[:i], nil
		}
		limit *= 2 // one commit larger than the batch: read all of it
	}
}

// preserveAll preserves objects in one ocfl.Batch: their states are read
// buildObjects at a time, in one read transaction each (BuildAll), and
// each object's new version is written up to its commit point, Parallel
// objects at a time (objects are independent: each has its own lock and
// files), and then all are committed with two synchronisations of the
// storage root in all. It returns how many versions it wrote; on the
// first error it writes none.
func (p *Preserver) preserveAll(ctx context.Context, objects []int64, at map[int64]time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batch := p.root.NewBatch()
	next := make(chan *State)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
			cancel()
		}
		mu.Unlock()
	}
	for range min(p.opts.Parallel, len(objects)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for st := range next {
				if _, err := p.write(ctx, batch, st, at[st.Key]); err != nil {
					fail(err)
				}
			}
		}()
	}
feed:
	for rest := objects; len(rest) > 0; {
		var (
			states map[int64]*State
			n      int
		)
		err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			states, n, err = BuildAll(ctx, tx, p.ids, rest[:min(len(rest), buildObjects)], buildRows)
			return err
		})
		if err != nil {
			fail(err)
			break
		}
		for _, key := range rest[:n] {
			st := states[key]
			if st == nil {
				continue // purged: nothing to keep
			}
			select {
			case next <- st:
			case <-ctx.Done():
				break feed
			}
		}
		rest = rest[n:]
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	if first != nil {
		batch.Abort(ctx)
		return 0, first
	}
	n, err := batch.Commit(ctx)
	p.versions.Add(int64(n))
	if err != nil {
		return n, err
	}
	return n, p.purged(ctx, objects)
}

// buildObjects and buildRows bound one read of preserveAll: the objects
// whose states it reads together, and the resources among them past which
// it takes no more (a book of a thousand pages is read with few others).
const (
	buildObjects = 256
	buildRows    = 20000
)

// purged removes the objects of keys the database no longer holds: a purge
// that ran while their versions were written (a purge removes the rows
// before the objects, so either it removed the version, or this sees the
// rows gone). Cost: one read of the keys' rows.
func (p *Preserver) purged(ctx context.Context, keys []int64) error {
	var held map[int64]bool
	if err := p.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		held, err = shelfmark.Existing(ctx, tx, keys)
		return err
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if !held[k] {
			if err := p.root.Purge(ctx, ObjectID(p.ids.Encode(k))); err != nil {
				return err
			}
		}
	}
	return nil
}

// objects maps changed rows to the objects that hold them (works and
// collections themselves; file sets and files their work), each with the
// newest change time among its rows, in the order first met.
func (p *Preserver) objects(ctx context.Context, tx shelfmark.ReadTx, rows []*shelfmark.ResourceRow) ([]int64, map[int64]time.Time, error) {
	var out []int64
	at := map[int64]time.Time{}
	add := func(key int64, t time.Time) {
		if old, ok := at[key]; !ok {
			out = append(out, key)
			at[key] = t
		} else if t.After(old) {
			at[key] = t
		}
	}
	parents := map[int64]time.Time{} // file sets and works holding changed files and sets
	for _, r := range rows {
		switch r.Kind {
		case shelfmark.KindWork, shelfmark.KindCollection:
			add(r.Key, r.Modified)
		default:
			if r.Parent != 0 && r.Modified.After(parents[r.Parent]) {
				parents[r.Parent] = r.Modified
			}
		}
	}
	// up to two levels: a file's file set, then its work (history.go)
	if err := holders(ctx, tx, parents, add); err != nil {
		return nil, nil, err
	}
	return out, at, nil
}

// Preserve writes a version of the object of key (a work or a
// collection) dated at, unless its state equals its newest version's. It
// reports whether it wrote one. It is a batch of one (see add).
func (p *Preserver) Preserve(ctx context.Context, key int64, at time.Time) (bool, error) {
	batch := p.root.NewBatch()
	added, err := p.add(ctx, batch, key, at)
	if err != nil || !added {
		batch.Abort(ctx)
		return false, err
	}
	n, err := batch.Commit(ctx)
	p.versions.Add(int64(n))
	return n == 1, err
}

// add adds to batch a version of the object of key (a work or a
// collection) dated at, unless its state equals its newest version's. It
// reports whether it added one.
func (p *Preserver) add(ctx context.Context, batch *ocfl.Batch, key int64, at time.Time) (bool, error) {
	var st *State
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		st, err = Build(ctx, tx, p.ids, key)
		return err
	})
	if errors.Is(err, ErrAbsent) {
		return false, nil // purged: nothing to keep
	}
	if err != nil {
		return false, err
	}
	return p.write(ctx, batch, st, at)
}

// write adds to batch a version of the object whose state is st, dated
// at, unless st equals its newest version's. It reports whether it added
// one. The originals' SHA-512 digests are taken from the database, else
// from the object's newest record, else by reading the bytes once; the
// record keeps them.
func (p *Preserver) write(ctx context.Context, batch *ocfl.Batch, st *State, at time.Time) (bool, error) {
	id := ObjectID(p.ids.Encode(st.Key))
	head, old, known, err := p.head(ctx, id)
	if err != nil {
		return false, err
	}
	for _, o := range st.Originals {
		if o.Record.SHA512 == "" {
			if o.Record.SHA512 = known[o.File.SHA256]; o.Record.SHA512 == "" {
				if o.Record.SHA512, err = p.digest(ctx, o.File.SHA256); err != nil {
					return false, err
				}
			}
		}
	}
	contents, err := st.Contents()
	if err != nil {
		return false, err
	}
	state := make(map[string]string, len(contents))
	byDigest := make(map[string]Content, len(contents))
	for _, c := range contents {
		d := c.SHA512
		if c.File == nil {
			sum := sha512.Sum512(c.Bytes)
			d = hex.EncodeToString(sum[:])
		}
		state[c.Path], byDigest[d] = d, c
	}
	if head > 0 && maps.Equal(state, old) {
		return false, nil
	}
	err = batch.Add(ctx, id, head, ocfl.NewVersion{
		State: state,
		Content: func(ctx context.Context, digest string) (io.ReadCloser, error) {
			c, ok := byDigest[digest]
			switch {
			case !ok:
				return nil, fmt.Errorf("no content of digest %s", digest)
			case c.File != nil:
				return p.blobs.Open(ctx, c.File.SHA256)
			}
			return io.NopCloser(bytes.NewReader(c.Bytes)), nil
		},
		Created: at,
		Message: fmt.Sprintf("changes of %s up to sequence number %d", st.Record.ID, maxSeq(st.Record)),
		User:    p.opts.Agent,
	})
	if err != nil {
		return false, fmt.Errorf("preserve %s: %w", st.Record.ID, err)
	}
	return true, nil
}

// maxSeq is the newest change sequence number among rec's resources.
func maxSeq(rec *Record) int64 {
	var n int64
	for _, r := range rec.Resources {
		n = max(n, r.Seq)
	}
	return n
}

// head reads the object id's newest version: its number (0 when there is
// none yet), its state, and the SHA-512 of each original its record
// names, by SHA-256.
func (p *Preserver) head(ctx context.Context, id string) (int, map[string]string, map[string]string, error) {
	obj, err := p.root.Open(ctx, id)
	if errors.Is(err, ocfl.ErrNotFound) {
		return 0, nil, nil, nil
	}
	if err != nil {
		return 0, nil, nil, err
	}
	head := obj.Head()
	state, err := obj.State(head)
	if err != nil {
		return 0, nil, nil, err
	}
	known := map[string]string{}
	if _, ok := state[RecordPath]; ok {
		rc, err := obj.Open(ctx, head, RecordPath)
		if err != nil {
			return 0, nil, nil, err
		}
		var rec Record
		err = json.NewDecoder(rc).Decode(&rec)
		rc.Close()
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%s: read %s of version %d: %w", id, RecordPath, head, err)
		}
		for _, r := range rec.Resources {
			if r.File != nil && r.File.SHA256 != "" && r.File.SHA512 != "" {
				known[r.File.SHA256] = r.File.SHA512
			}
		}
	}
	return head, state, known, nil
}

// digest reads the bytes of the blob sha256 and returns their SHA-512.
func (p *Preserver) digest(ctx context.Context, sha256 string) (string, error) {
	rc, err := p.blobs.Open(ctx, sha256)
	if err != nil {
		return "", fmt.Errorf("read original %s: %w", sha256, err)
	}
	defer rc.Close()
	h := sha512.New()
	if _, err := io.Copy(h, rc); err != nil {
		return "", fmt.Errorf("read original %s: %w", sha256, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CatchUp runs steps until no change is due, and returns how many rows
// and versions they took and wrote.
//
// Its outcome is what Ready reports until the next catch-up: a failure
// (the storage root unreachable or full, say) is counted in Stats and
// makes the copy "behind".
func (p *Preserver) CatchUp(ctx context.Context) (rows, versions int, err error) {
	defer func() {
		if ctx.Err() != nil {
			return // stopped, not failed
		}
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		if err != nil {
			p.failures.Add(1)
		}
	}()
	for {
		r, v, err := p.Step(ctx)
		rows, versions = rows+r, versions+v
		if err != nil || r == 0 {
			return rows, versions, err
		}
	}
}

// Run catches up every Window until ctx ends, and returns ctx's error. A
// failed step is logged and retried at the next tick: nothing is lost,
// since the checkpoint only moves past changes whose versions are written.
func (p *Preserver) Run(ctx context.Context) error {
	t := time.NewTicker(p.opts.Window)
	defer t.Stop()
	for {
		rows, versions, err := p.CatchUp(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			p.opts.Logger.Warn("preservation step failed; retrying", "err", err)
		} else if versions > 0 {
			p.opts.Logger.Debug("preserved", "changes", rows, "versions", versions)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Stats are the preserver's counts since it started in this process.
type Stats struct {
	Versions int64 // versions written
	Failures int64 // failed catch-ups (each retried)
}

// Stats returns the counts of this process's preserver.
func (p *Preserver) Stats() Stats {
	return Stats{Versions: p.versions.Load(), Failures: p.failures.Load()}
}

// Lag returns how old the oldest change not yet preserved is (0 when
// none waits), read from the database: any server can tell, whichever
// runs the preserver. Cost: two reads.
func (p *Preserver) Lag(ctx context.Context) (time.Duration, error) {
	var lag time.Duration
	err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		cp, err := tx.Counter(ctx, CounterCheckpoint)
		if err != nil {
			return err
		}
		rows, err := tx.Changes(ctx, cp, 1)
		if err != nil || len(rows) == 0 {
			return err
		}
		lag = max(0, p.opts.Now().Sub(rows[0].Modified))
		return nil
	})
	return lag, wrap(err)
}

// Bound is the lag past which Ready reports the copy behind: ten windows
// and a minute, time for a catch-up after a burst of ingest.
func (p *Preserver) Bound() time.Duration { return 10*p.opts.Window + time.Minute }

// Ready implements shelfmark.ReadinessChecker: an error when the last
// catch-up of this process failed (the storage root unreachable or full,
// say), or when the oldest change waiting is older than Bound.
func (p *Preserver) Ready(ctx context.Context) error {
	p.mu.Lock()
	last := p.lastErr
	p.mu.Unlock()
	if last != nil {
		return fmt.Errorf("the last preservation step failed (retried every %s): %w", p.opts.Window, last)
	}
	lag, err := p.Lag(ctx)
	if err != nil {
		return err
	}
	if lag > p.Bound() {
		return fmt.Errorf("the oldest change not yet preserved is %s old (bound %s)", lag.Round(time.Second), p.Bound())
	}
	return nil
}
