package preserve

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// Counters a rebuild keeps in the database it fills: the root number it
// rebuilds from (set when it starts: a database holding resources and
// this number is a rebuild in progress, which a new run continues), and
// 1 once it has finished.
const (
	CounterRebuildRoot = "rebuild_root"
	CounterRebuildDone = "rebuild_done"
)

// Defaults of RebuildOptions.
const (
	// DefaultRebuildBatch is how many objects one transaction writes.
	DefaultRebuildBatch = 500
	// DefaultRebuildParallel is how many objects are read at once.
	DefaultRebuildParallel = 8
)

// ErrNotEmpty is the error of a rebuild into a database that holds
// resources already and is not a rebuild of the same root in progress.
var ErrNotEmpty = errors.New("the database is not a new one")

// RebuildOptions configure Rebuild. The zero value gives the defaults.
type RebuildOptions struct {
	// Batch is how many objects one transaction writes
	// (DefaultRebuildBatch).
	Batch int
	// Parallel is how many objects are read, checked and their originals
	// copied into the content store at once (DefaultRebuildParallel).
	Parallel int
	// Now is the clock (time.Now): the time of the users made for
	// depositors and of the pipeline's jobs.
	Now func() time.Time
	// Progress, when set, is called after each batch.
	Progress func(RebuildProgress)
}

// RebuildProgress is how far a rebuild is.
type RebuildProgress struct {
	// Done counts the objects handled so far (written, found written by
	// an earlier run, or skipped) out of Total, the objects listed so far
	// (all of them once Listed is set).
	Done, Total int
	Listed      bool
	// Skipped counts the damaged objects left out so far.
	Skipped int
	// Elapsed is the time since this run started; Listing, once Listed,
	// the time listing the storage root's objects took (while the first
	// batches were read and written).
	Elapsed, Listing time.Duration
}

// SkippedObject is a damaged object a rebuild left out, and why.
type SkippedObject struct {
	ID     string // the OCFL object id, or its directory when no id could be read
	Reason string
}

// RebuildReport is what a rebuild did.
type RebuildReport struct {
	Objects   int // objects in the storage root, the repository object aside
	Written   int // objects written by this run
	Resumed   int // objects an earlier, interrupted run had written
	Skipped   []SkippedObject
	Resources int   // rows written
	Originals int   // originals copied into the content store
	Bytes     int64 // their size
	// Seq is the change sequence number the database continues from (the
	// preserver's checkpoint: the copy holds every change up to it).
	Seq int64
}

// Rebuild fills store and blobs from the storage root alone: every work
// and collection object's newest record and metadata, the tombstones of
// what earlier versions held, the originals' bytes (checked against the
// inventory's SHA-512 and the record's SHA-256), the id secret (so every
// resource keeps its id), depositors (as users without a password),
// grants on collections and source keys. Derivatives are not rebuilt: a
// characterization job per original lets the pipeline make them again.
// The preserver's checkpoint and root number are set so that a server
// on the rebuilt database continues the same copy, writing no object
// again; its search and OAI-PMH indexes build themselves from the
// resources as on any new database.
//
// Objects are written Batch at a time, each batch in one transaction
// (the originals made durable before it commits), so an interrupted
// rebuild run again skips what was written and goes on. A damaged object
// is skipped with its reason (in the report); the others are rebuilt.
// store must be empty, or a rebuild of the same root in progress
// (ErrNotEmpty).
//
// Cost: one listing of the root, then per object the reads of its
// inventory, records (one per version when it has several), metadata and
// originals; per batch about fifteen statements whatever the number of
// its objects and resources, and two or three more per depositor and per
// collection with grants in it. A batch is held in memory while it is
// written: Batch objects, two batches at once.
func Rebuild(ctx context.Context, root *ocfl.Root, store shelfmark.Storage, blobs shelfmark.BlobStore, opts RebuildOptions) (*RebuildReport, error) {
	if opts.Batch <= 0 {
		opts.Batch = DefaultRebuildBatch
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultRebuildParallel
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	start := time.Now()
	repo, _, err := ReadRepository(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("rebuild: %w", err)
	}
	if repo.Root == 0 {
		return nil, fmt.Errorf("rebuild: the storage root has no %s: it is not a Shelfmark preservation copy", RepositoryObject)
	}
	if repo.IDSecret == "" {
		return nil, fmt.Errorf("rebuild: %s holds no id secret (written by an older Shelfmark: run a server with this root once to add it)", RepositoryObject)
	}
	ids, err := codecOf(repo.IDSecret)
	if err != nil {
		return nil, fmt.Errorf("rebuild: %w", err)
	}
	if err := begin(ctx, store, repo); err != nil {
		return nil, err
	}
	rep := &RebuildReport{}
	// three stages at once: listing the objects, reading a batch (and
	// copying its originals), writing the batch before it
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		listed, objects atomic.Int64 // object roots listed; objects found in them
		listing         atomic.Int64 // its duration, once done
		listErr         error
	)
	found := make(chan string, 2*opts.Batch) // object roots
	repoDir := ocfl.ObjectPath(RepositoryObject)
	go func() {
		defer close(found)
		listErr = objectDirs(lctx, root.FS(), ".", 0, func(dir string) error {
			if dir == repoDir {
				return nil
			}
			listed.Add(1)
			select {
			case found <- dir:
				return nil
			case <-lctx.Done():
				return lctx.Err()
			}
		})
		listing.Store(int64(time.Since(start)))
	}()
	loads := make(chan loadedBatch, 1)
	go func() {
		defer close(loads)
		for {
			var batch []string
			for dir := range found {
				if batch = append(batch, dir); len(batch) == opts.Batch {
					break
				}
			}
			if len(batch) == 0 {
				return
			}
			b := loadBatch(lctx, root, store, blobs, ids, batch, opts)
			objects.Add(int64(b.objects))
			select {
			case loads <- b:
			case <-lctx.Done():
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	done := 0
	for b := range loads {
		if b.err == nil {
			b.err = writeBatch(ctx, store, blobs, b, opts, rep)
		}
		if b.err != nil {
			cancel()
			for range loads {
			}
			return rep, b.err
		}
		done += b.size
		if opts.Progress != nil {
			l := time.Duration(listing.Load())
			opts.Progress(RebuildProgress{Done: done, Total: int(listed.Load()), Listed: l > 0,
				Skipped: len(rep.Skipped), Elapsed: time.Since(start), Listing: l})
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if listErr != nil {
		return rep, fmt.Errorf("rebuild: list the objects: %w", listErr)
	}
	rep.Objects = int(objects.Load())
	if err := finish(ctx, store, repo, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// codecOf is the id codec of the setting value secret.
func codecOf(secret string) (*shelfmark.IDCodec, error) {
	if secret == "legacy" {
		return shelfmark.LegacyIDCodec(), nil
	}
	b, err := hex.DecodeString(secret)
	if err != nil || len(b) < 16 {
		return nil, fmt.Errorf("the id secret of %s is not at least 32 hexadecimal digits", RepositoryObject)
	}
	return shelfmark.NewIDCodec(b), nil
}

// begin checks that store is empty, or a rebuild of repo's root in
// progress, and records the id secret and the root being rebuilt.
func begin(ctx context.Context, store shelfmark.Storage, repo RepositoryRecord) error {
	return store.Update(ctx, func(tx shelfmark.WriteTx) error {
		rows, err := tx.Changes(ctx, 0, 1)
		if err != nil {
			return fmt.Errorf("rebuild: read the database: %w", err)
		}
		from, err := tx.Counter(ctx, CounterRebuildRoot)
		if err != nil {
			return fmt.Errorf("rebuild: read the database: %w", err)
		}
		finished, err := tx.Counter(ctx, CounterRebuildDone)
		if err != nil {
			return fmt.Errorf("rebuild: read the database: %w", err)
		}
		switch {
		case from == repo.Root && finished > 0:
			return fmt.Errorf("rebuild: %w: it was rebuilt from this storage root already", ErrNotEmpty)
		case from != 0 && from != repo.Root:
			return fmt.Errorf("rebuild: %w: a rebuild from another storage root (number %d) began in it", ErrNotEmpty, from)
		case len(rows) > 0 && from == 0:
			return fmt.Errorf("rebuild: %w: it holds resources; rebuild into a new database", ErrNotEmpty)
		}
		secret, err := tx.InitSetting(ctx, shelfmark.IDSecretSetting, repo.IDSecret)
		if err != nil {
			return fmt.Errorf("rebuild: store the id secret: %w", err)
		}
		if secret != repo.IDSecret {
			return fmt.Errorf("rebuild: %w: it has an id secret of its own (was a server started on it?); rebuild into a new database", ErrNotEmpty)
		}
		if from == 0 {
			if _, err := tx.AddCounter(ctx, CounterRebuildRoot, repo.Root); err != nil {
				return fmt.Errorf("rebuild: mark the rebuild: %w", err)
			}
		}
		return nil
	})
}

// finish sets the preserver's checkpoint (the copy holds every change up
// to the newest sequence number it names) and root number, and marks the
// rebuild finished.
func finish(ctx context.Context, store shelfmark.Storage, repo RepositoryRecord, rep *RebuildReport) error {
	err := store.Update(ctx, func(tx shelfmark.WriteTx) error {
		seq, err := tx.Counter(ctx, "seq")
		if err != nil {
			return err
		}
		rep.Seq = seq
		for name, want := range map[string]int64{CounterCheckpoint: seq, CounterRoot: repo.Root, CounterRebuildDone: 1} {
			if err := raise(ctx, tx, name, want); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rebuild: finish: %w", err)
	}
	return nil
}

// raise sets counter name to want unless it holds as much already.
func raise(ctx context.Context, tx shelfmark.WriteTx, name string, want int64) error {
	cur, err := tx.Counter(ctx, name)
	if err != nil {
		return fmt.Errorf("read counter %s: %w", name, err)
	}
	if want > cur {
		if _, err := tx.AddCounter(ctx, name, want-cur); err != nil {
			return fmt.Errorf("set counter %s: %w", name, err)
		}
	}
	return nil
}

// loadedBatch is a batch of objects read and checked, their originals
// copied (not yet durable).
type loadedBatch struct {
	size    int // object roots in the batch
	objects int // objects found in them (roots with an inventory)
	good    []*loaded
	skipped []SkippedObject
	resumed int // objects found written by an earlier run
	err     error
}

// loadBatch reads the objects of batch that are not written yet and
// copies their originals, Parallel at a time; a damaged object is put
// among the skipped with its reason.
func loadBatch(ctx context.Context, root *ocfl.Root, store shelfmark.Storage, blobs shelfmark.BlobStore, ids *shelfmark.IDCodec,
	dirs []string, opts RebuildOptions) loadedBatch {
	out := loadedBatch{size: len(dirs)}
	if len(dirs) == 0 {
		return out
	}
	// the ids, from the inventories, many at once
	objIDs := make([]string, len(dirs))
	idErrs := make([]error, len(dirs))
	parallel(len(dirs), opts.Parallel, func(i int) { objIDs[i], idErrs[i] = objectID(ctx, root.FS(), dirs[i]) })
	keys := make([]int64, 0, len(dirs))
	todo := make([]string, 0, len(dirs))
	for i, id := range objIDs {
		err := idErrs[i]
		if errors.Is(err, errNoObject) {
			continue
		}
		if err != nil {
			out.skipped = append(out.skipped, SkippedObject{Reason: err.Error()})
			continue
		}
		out.objects++
		k, err := objectKey(ids, id)
		if err != nil {
			out.skipped = append(out.skipped, SkippedObject{ID: id, Reason: err.Error()})
			continue
		}
		keys = append(keys, k)
		todo = append(todo, id)
	}
	var written map[int64]bool
	if err := store.View(ctx, func(tx shelfmark.ReadTx) error {
		rows, err := tx.Resources(ctx, keys)
		written = make(map[int64]bool, len(rows))
		for _, r := range rows {
			written[r.Key] = true
		}
		return err
	}); err != nil {
		out.err = fmt.Errorf("rebuild: read the database: %w", err)
		return out
	}
	var read []string
	for i, id := range todo {
		if written[keys[i]] {
			out.resumed++
		} else {
			read = append(read, id)
		}
	}
	objs := make([]*loaded, len(read))
	errs := make([]error, len(read))
	parallel(len(read), opts.Parallel, func(i int) { objs[i], errs[i] = loadObject(ctx, root, blobs, ids, read[i]) })
	if err := ctx.Err(); err != nil {
		out.err = err
		return out
	}
	taken := map[int64]string{}
	for i, l := range objs {
		if errs[i] == nil {
			errs[i] = unique(l, taken)
		}
		if errs[i] != nil {
			out.skipped = append(out.skipped, SkippedObject{ID: read[i], Reason: errs[i].Error()})
			continue
		}
		out.good = append(out.good, l)
	}
	return out
}

// writeBatch makes the originals of b durable and writes its objects in
// one transaction.
func writeBatch(ctx context.Context, store shelfmark.Storage, blobs shelfmark.BlobStore, b loadedBatch, opts RebuildOptions, rep *RebuildReport) error {
	rep.Skipped = append(rep.Skipped, b.skipped...)
	rep.Resumed += b.resumed
	if len(b.good) == 0 {
		return nil
	}
	if err := blobs.Sync(ctx); err != nil {
		return fmt.Errorf("rebuild: make the originals durable: %w", err)
	}
	if err := store.Update(ctx, func(tx shelfmark.WriteTx) error { return write(ctx, tx, b.good, opts.Now()) }); err != nil {
		return fmt.Errorf("rebuild: write %d objects from %s on: %w", len(b.good), b.good[0].id, err)
	}
	for _, l := range b.good {
		rep.Written++
		rep.Resources += len(l.rows)
		rep.Originals += len(l.originals)
		rep.Bytes += l.bytes
	}
	return nil
}

// objectKey is the key of the resource of the object id.
func objectKey(ids *shelfmark.IDCodec, id string) (int64, error) {
	const prefix = "urn:shelfmark:"
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, fmt.Errorf("the object id %q is not urn:shelfmark:ID", id)
	}
	return keyOf(ids, id[len(prefix):])
}

// unique checks that no resource of l is in another object of the batch
// (taken), and takes its keys.
func unique(l *loaded, taken map[int64]string) error {
	for _, r := range l.rows {
		if other, ok := taken[r.Key]; ok {
			return fmt.Errorf("its resource %d is in %s too", r.Key, other)
		}
	}
	for _, r := range l.rows {
		taken[r.Key] = l.id
	}
	return nil
}

// loadObject reads object id and copies its originals into blobs (not
// yet durable: the batch syncs them once).
func loadObject(ctx context.Context, root *ocfl.Root, blobs shelfmark.BlobStore, ids *shelfmark.IDCodec, id string) (*loaded, error) {
	l, obj, err := readObject(ctx, root, ids, id)
	if err != nil {
		return nil, err
	}
	for _, o := range l.originals {
		if err := copyOriginal(ctx, obj, blobs, o); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// copyOriginal puts the bytes of o into blobs, checked against the
// inventory's digest as they are read and against the record's SHA-256
// and size as they are stored.
func copyOriginal(ctx context.Context, obj *ocfl.Object, blobs shelfmark.BlobStore, o original) error {
	rc, err := obj.Open(ctx, o.version, o.path)
	if err != nil {
		return fmt.Errorf("original %s: %w", o.path, err)
	}
	defer rc.Close()
	want, _ := hex.DecodeString(o.sha256)
	b, err := blobs.Put(ctx, rc, shelfmark.PutOptions{Deferred: true,
		Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: want}}})
	if err != nil {
		return fmt.Errorf("original %s: %w", o.path, err)
	}
	if b.Size != o.size {
		return fmt.Errorf("original %s: %d bytes, its record says %d", o.path, b.Size, o.size)
	}
	return nil
}

// write writes the objects of a batch in tx: users for the depositors
// and the users granted roles that are not there yet, the rows, metadata,
// memberships, files, source keys, depositors, grants and jobs, and the
// key and sequence counters raised past every key and sequence number
// written.
func write(ctx context.Context, tx shelfmark.WriteTx, objs []*loaded, now time.Time) error {
	var (
		rows        []*shelfmark.ResourceRow
		fieldKeys   []int64
		fields      []shelfmark.Field
		memberships []shelfmark.Membership
		fileKeys    []int64
		files       []*shelfmark.File
		sourceKeys  []string
		sourceRes   []int64
		jobs        []shelfmark.NewJob
		maxKey      int64
		maxSeq      int64
	)
	byUser := map[string][]int64{}
	grants := map[int64][]shelfmark.Grant{}
	users := map[string]bool{}
	for _, l := range objs {
		rows = append(rows, l.rows...)
		fieldKeys, fields = append(fieldKeys, l.fieldKeys...), append(fields, l.fields...)
		memberships = append(memberships, l.memberships...)
		fileKeys, files = append(fileKeys, l.fileKeys...), append(files, l.files...)
		sourceKeys, sourceRes = append(sourceKeys, l.sourceKeys...), append(sourceRes, l.sourceRes...)
		jobs = append(jobs, l.jobs...)
		for k, name := range l.owners {
			byUser[name] = append(byUser[name], k)
			users[name] = true
		}
		for _, g := range l.grants {
			grants[g.Resource] = append(grants[g.Resource], g)
			if name, ok := cutUser(g.Principal); ok {
				users[name] = true
			}
		}
		for _, r := range l.rows {
			maxKey, maxSeq = max(maxKey, r.Key), max(maxSeq, r.Seq)
		}
	}
	keys := make([]int64, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	if there, err := tx.Resources(ctx, keys); err != nil {
		return err
	} else if len(there) > 0 {
		return fmt.Errorf("resource %d is in the database already (in two objects of the copy?)", there[0].Key)
	}
	userKeys, err := ensureUsers(ctx, tx, users, now)
	if err != nil {
		return err
	}
	if err := tx.InsertResources(ctx, rows); err != nil {
		return err
	}
	if err := tx.PutFields(ctx, fieldKeys, fields); err != nil {
		return err
	}
	if len(memberships) > 0 {
		if err := tx.InsertMemberships(ctx, memberships); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		if err := tx.InsertFiles(ctx, fileKeys, files); err != nil {
			return err
		}
	}
	if len(sourceKeys) > 0 {
		if err := tx.InsertSources(ctx, sourceKeys, sourceRes); err != nil {
			return err
		}
	}
	for name, ks := range byUser {
		sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
		if err := tx.SetOwners(ctx, ks, userKeys[name]); err != nil {
			return err
		}
	}
	for res, gs := range grants {
		if err := tx.SetGrants(ctx, res, gs); err != nil {
			return err
		}
	}
	if len(jobs) > 0 {
		if err := tx.EnqueueJobs(ctx, jobs, now); err != nil {
			return err
		}
	}
	if err := raise(ctx, tx, "key", maxKey); err != nil {
		return err
	}
	return raise(ctx, tx, "seq", maxSeq)
}

// ensureUsers returns the key of each user named in names, making those
// not there yet: enabled, not administrators, without a password (an
// administrator sets one, or they sign in through the identity provider).
func ensureUsers(ctx context.Context, tx shelfmark.WriteTx, names map[string]bool, now time.Time) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	for name := range names {
		u, err := tx.UserByName(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("user %q: %w", name, err)
		}
		if u == nil {
			u = &shelfmark.User{Name: name, Created: now.UTC()}
			if err := tx.InsertUser(ctx, u); err != nil {
				return nil, fmt.Errorf("make user %q: %w", name, err)
			}
		}
		out[name] = u.Key
	}
	return out, nil
}

// cutUser is the user name of a principal "user:NAME".
func cutUser(principal string) (string, bool) {
	const prefix = "user:"
	if len(principal) > len(prefix) && principal[:len(prefix)] == prefix {
		return principal[len(prefix):], true
	}
	return "", false
}
