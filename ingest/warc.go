package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/warc"
)

// Web archives. Each WARC file is one work of a crawl collection, holding
// the file as it came (its bytes are the preservation copy); then every
// record of it is indexed, a batch per transaction, each batch moving the
// file's resume offset in the same transaction. A re-run skips the files
// stored and indexed before and resumes a file whose indexing was cut off
// where it stopped, so a killed ingest loses nothing and repeats nothing.

// WebRepository is what a WARC ingest needs of the repository engine.
type WebRepository interface {
	Repository
	ListChildren(ctx context.Context, parent shelfmark.ID, p shelfmark.PageRequest) (*shelfmark.Page, error)
	ChildFiles(ctx context.Context, parent shelfmark.ID, children []shelfmark.ID) (map[shelfmark.ID][]*shelfmark.Resource, error)
	StartWebFile(ctx context.Context, file shelfmark.ID) (*shelfmark.WebFileRow, error)
	IndexWebBatch(ctx context.Context, b *shelfmark.WebBatch) (bool, error)
}

// WARCWriteCache is the page cache of SQLite's write connection that
// "shelfmark ingest" opens the store with for web archives, unless told
// otherwise: 1 GiB. The link index's writes land on keys spread over
// tables that outgrow the default cache by far once a crawl holds
// millions of pages, and a page the writer no longer holds is read back
// from the operating system's cache each time it changes. The cache
// fills only as the database grows.
const WARCWriteCache = 1 << 30

// WARCMergeLinks is the link log's size at which a web ingest merges
// (shelfmark.RepositoryOptions.WebMergeLinks) that "shelfmark ingest"
// gives a SQLite store beside WARCWriteCache: 4,000,000 changes, four
// times the library's default. The log's rows (about 20 bytes each, some
// 80 MB) then stay in the writer's cache, and a merge writes each page of
// the large link tables once for four times as many changes; the link
// queries trail the ingest by that many changes at most. A file's last
// batch merges too, whatever the log's size.
const WARCMergeLinks = 4_000_000

// WARCCheckpointEvery is how much write-ahead log "shelfmark ingest" lets
// a SQLite store gather for web archives before it copies the log into
// the database file (setup.StoreTuning.CheckpointEvery), where every
// other command copies it after each commit: 1 GiB. The link index's
// transactions each change pages spread over its large tables, and many
// change the same pages again (the inbound-count index above all); copied
// after every commit, each such page is written to the database file once
// per transaction, copied at 1 GiB, once per gigabyte of log. The log
// file then takes up to 1 GiB of disk while the ingest runs.
const WARCCheckpointEvery = 1 << 30

// WARCOptions control a WARC ingest.
type WARCOptions struct {
	// Crawl names the crawl collection the files go to; it is made on
	// first use and found again by name (source key "crawl:" + name).
	// Default: the name of the directory given, or of the first file
	// without its extensions.
	Crawl string
	// Collection, when set, is an existing collection to use instead.
	Collection shelfmark.ID
	// Batch is how many records the reader hands over at a time (default
	// 1000).
	Batch int
	// Merge is how many batches waiting for the database one transaction
	// may take together (default 16; 1: one batch per transaction). While
	// the database keeps up, each batch is its own transaction; when it
	// falls behind, the waiting batches go in one, so a transaction's
	// fixed cost (the pages it dirties, the commit) is shared by more
	// records just when that matters.
	Merge int
	// Rate caps records per second (0: no cap, rule R9).
	Rate float64
	// Reader configures the WARC reader.
	Reader warc.Options
	// Progress, when set, is called after each batch.
	Progress func(WARCStats)
}

// WARCStats counts a WARC ingest.
type WARCStats struct {
	Files, FilesSkipped, FilesFailed int64
	Records, Errors, Links           int64
	// Bytes counts the WARC bytes indexed in this run.
	Bytes int64
	// Failures lists bad records and files: the file's path and the
	// offset in Key, the reason in Reason. At most maxFailures are kept.
	Failures []Failure
}

// maxFailures caps the failures a run keeps in memory; the rest are
// counted.
const maxFailures = 1000

// IsWARC reports whether a file name is a WARC (or WAT) file.
func IsWARC(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".warc") || strings.HasSuffix(n, ".warc.gz") ||
		strings.HasSuffix(n, ".wat") || strings.HasSuffix(n, ".wat.gz")
}

// WARCFiles lists the WARC files of path: the file itself, or the WARC
// files of a directory (not its subdirectories), in natural order.
func WARCFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && IsWARC(e.Name()) && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	sort.Slice(out, func(i, j int) bool { return NaturalCompare(filepath.Base(out[i]), filepath.Base(out[j])) < 0 })
	return out, nil
}

// CrawlName is the default crawl name for an ingest of path.
func CrawlName(path string) string {
	base := filepath.Base(filepath.Clean(path))
	for _, ext := range []string{".gz", ".warc", ".wat"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// warcRun is one WARC ingest.
type warcRun struct {
	repo  WebRepository
	blobs shelfmark.BlobStore
	opts  WARCOptions
	mu    sync.Mutex
	stats WARCStats
	links atomic.Int64
}

func (w *warcRun) fail(key, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.Errors++
	if len(w.stats.Failures) < maxFailures {
		w.stats.Failures = append(w.stats.Failures, Failure{Key: key, Reason: reason})
	}
}

func (w *warcRun) snapshot() WARCStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Links = w.links.Load()
	s.Failures = s.Failures[:len(s.Failures):len(s.Failures)]
	return s
}

// IngestWARC stores and indexes the WARC files of paths (files or
// directories of them) into one crawl collection.
func IngestWARC(ctx context.Context, repo WebRepository, blobs shelfmark.BlobStore, paths []string, opts WARCOptions) (*WARCStats, error) {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	var files []string
	for _, p := range paths {
		fs, err := WARCFiles(p)
		if err != nil {
			return nil, fmt.Errorf("warc ingest: %w", err)
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "No WARC files (.warc, .warc.gz, .wat, .wat.gz) in %s.", strings.Join(paths, ", "))
	}
	w := &warcRun{repo: repo, blobs: blobs, opts: opts}
	coll := opts.Collection
	if coll == "" {
		name := opts.Crawl
		if name == "" {
			name = CrawlName(paths[0])
		}
		var err error
		if coll, err = w.crawl(ctx, name); err != nil {
			return nil, fmt.Errorf("warc ingest: crawl %q: %w", name, err)
		}
	}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			s := w.snapshot()
			return &s, err
		}
		if err := w.file(ctx, coll, path); err != nil {
			if ctx.Err() != nil {
				s := w.snapshot()
				return &s, ctx.Err()
			}
			w.mu.Lock()
			w.stats.FilesFailed++
			w.mu.Unlock()
			w.fail(path, shelfmark.ErrorMessage(err))
		}
	}
	s := w.snapshot()
	return &s, nil
}

// crawl finds or makes the crawl collection name.
func (w *warcRun) crawl(ctx context.Context, name string) (shelfmark.ID, error) {
	key := "crawl:" + name
	for range 2 {
		found, err := w.repo.FindSources(ctx, []string{key})
		if err != nil {
			return "", err
		}
		if id, ok := found[key]; ok {
			return id, nil
		}
		_, errs := w.repo.CreateGroups(ctx, []*shelfmark.NewGroup{{SourceKey: key, Resources: []*shelfmark.NewResource{{
			Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{
				{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(name)},
				{Predicate: shelfmark.NSDC + "type", Object: shelfmark.NewLiteral("web archive")},
			},
		}}}})
		if errs[0] != nil && shelfmark.ErrorCode(errs[0]) != shelfmark.ECONFLICT {
			return "", errs[0]
		}
	}
	return "", fmt.Errorf("crawl collection %q vanished while being made", name)
}

// file stores (unless stored before) and indexes one WARC file.
func (w *warcRun) file(ctx context.Context, coll shelfmark.ID, path string) error {
	key := "warc:" + filepath.Base(path)
	found, err := w.repo.FindSources(ctx, []string{key})
	if err != nil {
		return err
	}
	var fileID shelfmark.ID
	if work, ok := found[key]; ok {
		if fileID, err = w.fileOf(ctx, work); err != nil {
			return err
		}
	} else if fileID, err = w.store(ctx, coll, key, path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return unwrapPathError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	indexed, err := indexWARC(ctx, w.repo, f, fi.Size(), fileID, w.opts, w.progressFor(path))
	if err != nil {
		return err
	}
	w.mu.Lock()
	if indexed {
		w.stats.Files++
	} else {
		w.stats.FilesSkipped++
	}
	w.mu.Unlock()
	return nil
}

// fileOf finds the WARC file resource of a work stored before.
func (w *warcRun) fileOf(ctx context.Context, work shelfmark.ID) (shelfmark.ID, error) {
	page, err := w.repo.ListChildren(ctx, work, shelfmark.PageRequest{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(page.Items) == 0 {
		return "", fmt.Errorf("the work %s stored before holds no file", work)
	}
	fs := page.Items[0].ID
	files, err := w.repo.ChildFiles(ctx, work, []shelfmark.ID{fs})
	if err != nil {
		return "", err
	}
	for _, f := range files[fs] {
		if f.File != nil && f.File.Use == "original" {
			return f.ID, nil
		}
	}
	return "", fmt.Errorf("the work %s stored before holds no original file", work)
}

// store puts the file's bytes in the content store and makes its work.
func (w *warcRun) store(ctx context.Context, coll shelfmark.ID, key, path string) (shelfmark.ID, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", unwrapPathError(err)
	}
	defer f.Close()
	blob, err := w.blobs.Put(ctx, f, shelfmark.PutOptions{})
	if err != nil {
		return "", err
	}
	ids, err := w.repo.MintIDs(ctx, 3)
	if err != nil {
		return "", err
	}
	name := filepath.Base(path)
	mt := "application/warc"
	if strings.HasSuffix(strings.ToLower(name), ".gz") {
		mt = "application/gzip"
	}
	title := []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(name)}}
	g := &shelfmark.NewGroup{SourceKey: key, Order: []shelfmark.ID{ids[1]}, Resources: []*shelfmark.NewResource{
		{ID: ids[0], Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}, Metadata: append(title,
			shelfmark.Statement{Predicate: shelfmark.NSDC + "format", Object: shelfmark.NewLiteral("application/warc")})},
		{ID: ids[1], Kind: shelfmark.KindFileSet, Parent: ids[0], Metadata: title},
		{ID: ids[2], Kind: shelfmark.KindFile, Parent: ids[1], File: &shelfmark.File{
			Name: name, MediaType: mt, Size: blob.Size, SHA256: blob.Digests[shelfmark.SHA256], Use: "original"}},
	}}
	_, errs := w.repo.CreateGroups(ctx, []*shelfmark.NewGroup{g})
	if errs[0] != nil {
		if shelfmark.ErrorCode(errs[0]) == shelfmark.ECONFLICT {
			// stored meanwhile by another run
			found, err := w.repo.FindSources(ctx, []string{key})
			if err != nil {
				return "", err
			}
			if work, ok := found[key]; ok {
				return w.fileOf(ctx, work)
			}
		}
		return "", errs[0]
	}
	return ids[2], nil
}

func (w *warcRun) progressFor(path string) *indexRun {
	return &indexRun{
		path: path,
		onBatch: func(records, errs, links, bytes int64) {
			w.mu.Lock()
			w.stats.Records += records
			w.stats.Bytes += bytes
			w.mu.Unlock()
			w.links.Add(links)
			if w.opts.Progress != nil {
				w.opts.Progress(w.snapshot())
			}
		},
		onError: w.fail,
	}
}

// indexRun reports one file's indexing.
type indexRun struct {
	path    string
	onBatch func(records, errs, links, bytes int64)
	onError func(key, reason string)
}

// IndexWARC indexes (or resumes indexing) the stored WARC file resource
// file from r, which holds its bytes. It returns false when the file was
// indexed completely before.
func IndexWARC(ctx context.Context, repo WebRepository, r io.ReaderAt, size int64, file shelfmark.ID, opts WARCOptions) (bool, *WARCStats, error) {
	w := &warcRun{repo: repo, opts: opts}
	if w.opts.Batch <= 0 {
		w.opts.Batch = 1000
	}
	done, err := indexWARC(ctx, repo, r, size, file, w.opts, w.progressFor(string(file)))
	s := w.snapshot()
	return done, &s, err
}

// batchOut is one batch on its way from the reader to the writer.
type batchOut struct {
	b     *shelfmark.WebBatch
	links int64
}

// indexWARC reads the records of r from the file's resume offset and
// indexes them a batch at a time: one goroutine reads and parses while
// another writes. It returns false when nothing was left to index.
func indexWARC(ctx context.Context, repo WebRepository, r io.ReaderAt, size int64, file shelfmark.ID, opts WARCOptions, run *indexRun) (bool, error) {
	state, err := repo.StartWebFile(ctx, file)
	if err != nil {
		return false, err
	}
	if state.Done {
		return false, nil
	}
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if opts.Merge <= 0 {
		opts.Merge = 16
	}
	batches := make(chan batchOut, opts.Merge)
	var readErr error
	go func() {
		defer close(batches)
		readErr = readBatches(ctx, r, size, file, state.Offset, opts, run, batches)
		if readErr != nil {
			cancel(readErr)
		}
	}()
	for first := range batches {
		out := mergeWaiting(first, batches, opts.Merge)
		applied, err := repo.IndexWebBatch(context.WithoutCancel(ctx), out.b)
		if err != nil {
			cancel(err)
			for range batches {
			}
			return false, err
		}
		if !applied {
			cancel(errors.New("indexed elsewhere"))
			for range batches {
			}
			return false, fmt.Errorf("%s: the file is being indexed by another run (its offset moved past %d)", run.path, out.b.From)
		}
		if run.onBatch != nil {
			run.onBatch(int64(len(out.b.Records)), out.b.Errors, out.links, out.b.Next-out.b.From)
		}
	}
	if readErr != nil {
		return false, readErr
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return false, err
	}
	return true, ctx.Err()
}

// mergeWaiting joins to first the batches already waiting in batches, up
// to max batches in all. Batches follow each other in the file, so the
// merged batch runs from the first's From to the last's Next.
func mergeWaiting(first batchOut, batches <-chan batchOut, max int) batchOut {
	out := first
	for n := 1; n < max; n++ {
		select {
		case b, ok := <-batches:
			if !ok {
				return out
			}
			if n == 1 {
				// a copy, so the first batch's records are not aliased
				m := *out.b
				m.Records = append(make([]*shelfmark.WebRecord, 0, len(out.b.Records)*max), out.b.Records...)
				out.b = &m
			}
			out.b.Records = append(out.b.Records, b.b.Records...)
			out.b.Errors += b.b.Errors
			out.b.Next, out.b.Done = b.b.Next, b.b.Done
			out.links += b.links
		default:
			return out
		}
	}
	return out
}

// readBatches reads records from offset and sends them in batches; the
// last batch is marked Done.
func readBatches(ctx context.Context, r io.ReaderAt, size int64, file shelfmark.ID, offset int64, opts WARCOptions, run *indexRun, out chan<- batchOut) error {
	rd := warc.NewReader(r, size, offset, opts.Reader)
	var tick *time.Ticker
	if opts.Rate > 0 {
		tick = time.NewTicker(time.Duration(float64(time.Second) / opts.Rate))
		defer tick.Stop()
	}
	cur := batchOut{b: &shelfmark.WebBatch{File: file, From: offset}}
	send := func(done bool) bool {
		cur.b.Next, cur.b.Done = rd.Offset(), done
		select {
		case out <- cur:
		case <-ctx.Done():
			return false
		}
		cur = batchOut{b: &shelfmark.WebBatch{File: file, From: cur.b.Next}}
		return true
	}
	for {
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return nil
			}
		}
		rec, err := rd.Next(ctx)
		// While the channel has room the reader never blocks, so it would
		// keep its core until the scheduler preempts it (up to 10 ms),
		// and a request to a server that indexes while it answers would
		// wait that long. One yield a record (tens of microseconds of
		// parsing) bounds that wait.
		runtime.Gosched()
		var re *warc.RecordError
		switch {
		case errors.Is(err, io.EOF):
			send(true)
			return nil
		case errors.As(err, &re):
			cur.b.Errors++
			if run.onError != nil {
				run.onError(fmt.Sprintf("%s@%d", run.path, re.Offset), re.Reason)
			}
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%s at offset %d: %w", run.path, rd.Offset(), err)
		case rec.Target.SURT == "":
			// warcinfo and the like: counted in the offset only
		default:
			cur.b.Records = append(cur.b.Records, rec)
			cur.links += int64(len(rec.Links))
		}
		if len(cur.b.Records)+int(cur.b.Errors) >= opts.Batch {
			if !send(false) {
				return nil
			}
		}
	}
}
