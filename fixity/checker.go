package fixity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// Defaults of Options.
const (
	// DefaultCycle is the time between the starts of two passes.
	DefaultCycle = 720 * time.Hour
	// DefaultRate is how many bytes a second a pass reads at most: 16
	// MiB/s reads 40 TB in a 720-hour cycle, and leaves a disk most of
	// its time for readers.
	DefaultRate = 16 << 20
	// DefaultPage is how many originals one statement reads.
	DefaultPage = 200
	// bufSize is the size of the buffer a check reads with.
	bufSize = 1 << 20
)

// Options configure a Checker. The zero value gives the defaults.
type Options struct {
	// Cycle is the time between the starts of two passes (DefaultCycle).
	Cycle time.Duration
	// Rate is how many bytes a second a pass reads at most (DefaultRate);
	// negative: as fast as the disks go.
	Rate int64
	// Page is how many originals one statement reads (DefaultPage).
	Page int
	// Now is the clock (time.Now); Sleep waits (a timer).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger gets failures, repairs and damage (slog.Default()).
	Logger *slog.Logger
	// Progress, when set, is told the pass's counts after each page of
	// originals and each object.
	Progress func(Summary)
}

// Summary counts the checks of a pass or of a run over some resources.
type Summary struct {
	Checked  int64 // copies checked
	Bytes    int64 // bytes read
	OK       int64
	Repaired int64
	Damaged  int64
	// Resumed is set when the pass went on from a saved cursor.
	Resumed bool
}

// Checker runs fixity passes over a repository's content store and
// preservation copy. It runs one pass at a time.
type Checker struct {
	store shelfmark.Storage
	pe    shelfmark.PreservationEvents
	blobs shelfmark.BlobStore
	root  *ocfl.Root // nil without a preservation copy
	ids   *shelfmark.IDCodec
	opts  Options

	mu    sync.Mutex // one pass at a time
	pace  pacer
	buf   []byte
	bytes atomic.Int64 // read since the process started
	fails atomic.Int64
}

// New returns the checker of store's originals in blobs and of the
// preservation copy root (nil when there is none). The storage must keep
// preservation events (both backends do).
func New(store shelfmark.Storage, blobs shelfmark.BlobStore, root *ocfl.Root, ids *shelfmark.IDCodec, opts Options) (*Checker, error) {
	pe, ok := store.(shelfmark.PreservationEvents)
	if !ok {
		return nil, fmt.Errorf("fixity: the %s storage keeps no preservation events", store.Backend())
	}
	if opts.Cycle <= 0 {
		opts.Cycle = DefaultCycle
	}
	if opts.Rate == 0 {
		opts.Rate = DefaultRate
	}
	if opts.Page <= 0 {
		opts.Page = DefaultPage
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = shelfmark.Sleep
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &Checker{store: store, pe: pe, blobs: blobs, root: root, ids: ids, opts: opts, buf: make([]byte, bufSize)}
	c.pace = pacer{rate: max(opts.Rate, 0), now: opts.Now, sleep: opts.Sleep}
	return c, nil
}

// Stats are the checker's counts since the process started.
type Stats struct {
	Bytes    int64 // bytes read by checks
	Failures int64 // passes that stopped on an error (each resumed)
}

// Stats reports the checker's counts.
func (c *Checker) Stats() Stats { return Stats{Bytes: c.bytes.Load(), Failures: c.fails.Load()} }

// Pass runs a pass, or the rest of one a crash or a shutdown stopped, to
// its end, saving its cursor as it goes; it returns what it checked in
// this call. Cost: see the package documentation.
func (c *Checker) Pass(ctx context.Context) (Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.pe.FixityPass(ctx)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	if p.Started.IsZero() || !p.Finished.IsZero() {
		p = shelfmark.FixityPass{Started: c.opts.Now()}
		if err := c.pe.SaveFixityPass(ctx, p); err != nil {
			return sum, err
		}
	} else {
		sum.Resumed = true
	}
	save := func(b *batch, cursor string) error {
		if err := c.flush(ctx, b); err != nil {
			return err
		}
		p.Cursor = cursor
		p.Files += b.sum.Checked
		p.Bytes += b.sum.Bytes
		p.Damaged += b.sum.Damaged
		p.Repaired += b.sum.Repaired
		sum.add(b.sum)
		if err := c.pe.SaveFixityPass(ctx, p); err != nil {
			return err
		}
		if c.opts.Progress != nil {
			c.opts.Progress(sum)
		}
		return nil
	}
	if !strings.HasPrefix(p.Cursor, "ocfl:") {
		after, _ := strconv.ParseInt(strings.TrimPrefix(p.Cursor, "store:"), 10, 64)
		for {
			files, err := c.pe.OriginalFiles(ctx, after, c.opts.Page)
			if err != nil {
				return sum, err
			}
			b := &batch{}
			for _, f := range files {
				if err := c.checkBlob(ctx, f, b); err != nil {
					return sum, err
				}
				after = f.Key
			}
			if err := save(b, "store:"+strconv.FormatInt(after, 10)); err != nil {
				return sum, err
			}
			if len(files) < c.opts.Page {
				break
			}
		}
	}
	if c.root != nil {
		from := strings.TrimPrefix(p.Cursor, "ocfl:")
		if !strings.HasPrefix(p.Cursor, "ocfl:") {
			from = ""
		}
		// the checks of several objects are written at once, with the
		// cursor past the last of them
		b, last := &batch{}, ""
		err := c.root.Objects(ctx, func(id string, err error) error {
			if err != nil {
				// an object root whose inventory cannot be read: reported;
				// its files are checked in the content store
				c.opts.Logger.Error("fixity: an object of the preservation copy cannot be read", "err", err)
				b.sum.Damaged++
				return nil
			}
			dir := ocfl.ObjectPath(id)
			if from != "" && dir <= from {
				return nil
			}
			if err := c.checkObject(ctx, id, b); err != nil {
				return err
			}
			last = dir
			if len(b.states) < c.opts.Page {
				return nil
			}
			err = save(b, "ocfl:"+dir)
			b = &batch{}
			return err
		})
		if err == nil && (last != "" || b.sum != (Summary{})) {
			if last == "" {
				last = from
			}
			err = save(b, "ocfl:"+last)
		}
		if err != nil {
			return sum, err
		}
	}
	p.Finished, p.Cursor = c.opts.Now(), ""
	return sum, c.pe.SaveFixityPass(ctx, p)
}

// Run runs a pass whenever one is due (the last one started a Cycle ago,
// or stopped before its end) until ctx ends; the elected loop "fixity".
// It looks again at least once a minute, as another server may have run
// a pass meanwhile.
func (c *Checker) Run(ctx context.Context) error {
	for {
		p, err := c.pe.FixityPass(ctx)
		wait := time.Minute
		if err == nil {
			next := p.Started.Add(c.opts.Cycle)
			if p.Started.IsZero() || p.Finished.IsZero() || !c.opts.Now().Before(next) {
				sum, perr := c.Pass(ctx)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				err = perr
				if err == nil {
					c.opts.Logger.Info("fixity pass done", "checked", sum.Checked, "bytes", sum.Bytes, "repaired", sum.Repaired, "damaged", sum.Damaged)
					continue
				}
			} else {
				wait = min(wait, next.Sub(c.opts.Now()))
			}
		}
		if err != nil {
			c.fails.Add(1)
			c.opts.Logger.Warn("fixity pass stopped; it resumes where it stopped", "err", err)
		}
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// CheckIDs checks the resources named now, outside any pass: a file's
// original in the content store and in its work's object; a work's or
// collection's originals and every content file of its object (a file
// set stands for its work).
func (c *Checker) CheckIDs(ctx context.Context, ids []shelfmark.ID) (Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum Summary
	for _, id := range ids {
		key, err := c.ids.Key(id)
		if err != nil {
			return sum, fmt.Errorf("fixity: %q is not an id of this repository", id)
		}
		var files []shelfmark.StoredFile
		object := ""
		err = c.store.View(ctx, func(tx shelfmark.ReadTx) error {
			row, err := tx.Resource(ctx, key)
			if err != nil {
				return err
			}
			if row == nil {
				return shelfmark.Errorf(shelfmark.ENOTFOUND, "No resource has the id %s.", id)
			}
			work := row.Key
			switch row.Kind {
			case shelfmark.KindFile:
				f, err := tx.File(ctx, key)
				if err != nil {
					return err
				}
				if keep(f) {
					files = append(files, shelfmark.StoredFile{Key: key, FileSet: row.Parent, SHA256: f.SHA256, SHA512: f.SHA512, Size: f.Size})
				}
				if work, err = parentOf(ctx, tx, row.Parent); err != nil {
					return err
				}
			case shelfmark.KindFileSet:
				work = row.Parent
			}
			if work == 0 {
				return nil
			}
			object = ObjectID(c.ids.Encode(work))
			if row.Kind == shelfmark.KindFile {
				return nil
			}
			sets, err := tx.Children(ctx, work, 0, shelfmark.MaxEventPage)
			if err != nil {
				return err
			}
			keys := make([]int64, 0, len(sets))
			for _, s := range sets {
				if s.Kind == shelfmark.KindFileSet {
					keys = append(keys, s.Key)
				}
			}
			frs, err := tx.ChildFiles(ctx, keys, shelfmark.MaxEventPage)
			for _, fr := range frs {
				if keep(fr.File) && fr.Row.Deleted == nil {
					files = append(files, shelfmark.StoredFile{Key: fr.Row.Key, FileSet: fr.Row.Parent, SHA256: fr.File.SHA256, SHA512: fr.File.SHA512, Size: fr.File.Size})
				}
			}
			return err
		})
		if err != nil {
			return sum, fmt.Errorf("fixity of %s: %w", id, err)
		}
		b := &batch{}
		for _, f := range files {
			if err := c.checkBlob(ctx, f, b); err != nil {
				return sum, err
			}
		}
		if c.root != nil && object != "" {
			if err := c.checkObject(ctx, object, b); err != nil && !errors.Is(err, ocfl.ErrNotFound) {
				return sum, err
			}
		}
		if err := c.flush(ctx, b); err != nil {
			return sum, err
		}
		sum.add(b.sum)
	}
	return sum, nil
}

// keep reports whether the content store keeps f's bytes as an original.
func keep(f *shelfmark.File) bool {
	return f != nil && f.Use == shelfmark.UseOriginal && f.ExternalURL == "" && f.SHA256 != ""
}

// parentOf is the parent of the resource key (0 when none).
func parentOf(ctx context.Context, tx shelfmark.ReadTx, key int64) (int64, error) {
	if key == 0 {
		return 0, nil
	}
	row, err := tx.Resource(ctx, key)
	if err != nil || row == nil {
		return 0, err
	}
	return row.Parent, nil
}

// add adds o's counts to s.
func (s *Summary) add(o Summary) {
	s.Checked += o.Checked
	s.Bytes += o.Bytes
	s.OK += o.OK
	s.Repaired += o.Repaired
	s.Damaged += o.Damaged
}
