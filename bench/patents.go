package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/ingest"
)

// patentMediaVariants is how many PDF and page-image variants a patent
// source generates once and reuses (by index modulo), so that generating
// them does not dominate the run; the XML full text is unique per work.
const patentMediaVariants = 8

// patentXMLTemplates is how many full texts a patent source generates once;
// each work's XML is one of them with the work's own EP number and title
// written in (gen.PatentXML costs about 150 µs, more than a work's share
// of the ingest the scenario measures).
const patentXMLTemplates = 256

// Page image size of a patent's first page (small: a thumbnail-sized scan).
const patentImageW, patentImageH = 200, 280

// patentSalt keeps the per-work draws (statement count, media) apart from
// patentStatements' own stream for the same seed and index.
const patentSalt = 0x7061_7465_6e74_7321

// patentShape returns, deterministically for (seed, i), how many metadata
// statements work i has (31–69, mean about 54, as the FIZ report's 31–69
// triples, mean 54) and whether it also has a PDF and a page image.
func patentShape(seed uint64, i int) (statements int, media bool) {
	r := rand.New(rand.NewPCG(seed^patentSalt, uint64(i)))
	// 31 + d, d in 0..38: two thirds of the time the larger of two uniform
	// draws (mean ≈ 25.5), otherwise one uniform draw (mean 19): mean ≈ 23.3
	d := r.IntN(39)
	if r.IntN(3) < 2 {
		d = max(d, r.IntN(39))
	}
	return 31 + d, r.IntN(2) == 0
}

// patentSource is an in-memory ingest.Source of generated patents.
type patentSource struct {
	seed    uint64
	n, i    int
	noMedia bool
	scan    int      // bytes of each work's extra unique file (0: none)
	xmls    [][]byte // templates, by i % patentXMLTemplates
	pdfs    [][]byte // variants, by i % patentMediaVariants
	imgs    [][]byte
	gen     time.Duration // time spent in Next, generating items
}

// PatentSource returns an in-memory source of n generated patents (docs/design.md;
// the shape of the FIZ patent corpus): item i has key "patent:EP%07d", 31–69 metadata
// statements (mean about 54), one XML full-text file of about 4 KB unique
// to it (gen.PatentXML for i < 256; beyond, the text of i % 256 carrying
// i's own EP number and title) and, for about half of the items, a PDF and a first-page TIFF
// (drawn from a few variants generated once per source). The same seed
// gives the same items, bytes included.
func PatentSource(seed uint64, n int) ingest.Source {
	s := &patentSource{seed: seed, n: n}
	for v := 0; v < min(n, patentXMLTemplates); v++ {
		s.xmls = append(s.xmls, gen.PatentXML(seed, v))
	}
	for v := 0; v < patentMediaVariants; v++ {
		title := fmt.Sprintf("Apparatus for the storage of shelfmarks, variant %d\n\n", v)
		s.pdfs = append(s.pdfs, gen.PDF(seed, v, title+string(bytes.Repeat([]byte("A device comprising a shelf and a mark. "), 20))))
		s.imgs = append(s.imgs, gen.TIFF(seed, v, patentImageW, patentImageH))
	}
	return s
}

func memFile(name, mediaType string, data []byte) ingest.FileRef {
	return ingest.FileRef{Name: name, MediaType: mediaType, Size: int64(len(data)),
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// Next implements ingest.Source.
func (s *patentSource) Next(ctx context.Context) (*ingest.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.i >= s.n {
		return nil, io.EOF
	}
	t0 := time.Now()
	defer func() { s.gen += time.Since(t0) }()
	i := s.i
	s.i++
	k, media := patentShape(s.seed, i)
	ep := fmt.Sprintf("EP%07d", i)
	it := &ingest.Item{Key: "patent:" + ep, Metadata: patentStatements(s.seed, i, k),
		Files: []ingest.FileRef{memFile(ep+".xml", "application/xml", s.xml(i))}}
	if media && !s.noMedia {
		v := i % patentMediaVariants
		it.Files = append(it.Files, memFile(ep+".pdf", "application/pdf", s.pdfs[v]), memFile(ep+".tif", "image/tiff", s.imgs[v]))
	}
	if s.scan > 0 {
		it.Files = append(it.Files, scanFile(ep+"-scan.bin", s.seed, i, s.scan))
	}
	return it, nil
}

// scanFile is a file of n pseudo-random bytes unique to (seed, i), made
// afresh each time it is opened (the same bytes every time), so that no
// two works share it and the run holds none of them in memory.
func scanFile(name string, seed uint64, i, n int) ingest.FileRef {
	return ingest.FileRef{Name: name, MediaType: "application/octet-stream", Size: int64(n),
		Open: func() (io.ReadCloser, error) {
			r := rand.New(rand.NewPCG(seed^patentSalt^0x5ca2, uint64(i)))
			b := make([]byte, n)
			for k := 0; k < n; k += 8 {
				v := r.Uint64()
				for j := 0; j < 8 && k+j < n; j++ {
					b[k+j] = byte(v >> (8 * j))
				}
			}
			return io.NopCloser(bytes.NewReader(b)), nil
		}}
}

// xml returns work i's full text: its template with i's EP number and
// title in place of the template's own.
func (s *patentSource) xml(i int) []byte {
	v := i % patentXMLTemplates
	x := s.xmls[v]
	if v == i {
		return x
	}
	x = bytes.ReplaceAll(x, fmt.Appendf(nil, "doc-number=\"%07d\"", v), fmt.Appendf(nil, "doc-number=\"%07d\"", i))
	x = bytes.ReplaceAll(x, fmt.Appendf(nil, "<doc-number>%07d<", v), fmt.Appendf(nil, "<doc-number>%07d<", i))
	return bytes.ReplaceAll(x, fmt.Appendf(nil, ", variant %d<", v), fmt.Appendf(nil, ", variant %d<", i))
}

// Close implements ingest.Source.
func (s *patentSource) Close() error { return nil }

// PatentsConfig configures the patents scenario (docs/design.md).
type PatentsConfig struct {
	Works   int // default 1,000,000
	Workers int // ingest workers storing files (default: the number of cores)
	Batch   int // items per engine call (default 64, ingest's default)
	// Creators is how many engine calls are in flight at once (ingest's
	// Options.Creators; 0: its default).
	Creators int
	Buckets  int // wall-time buckets for the rate over time (default 20)
	Seed     uint64
	// First is the number of the first patent (EP number), so that runs
	// over one store can ingest different patents (default 0).
	First int
	// NoMedia leaves out the PDFs and TIFFs, so each work has only its
	// XML full text.
	NoMedia bool
	// ScanBytes, when above 0, gives each work one more file of that many
	// bytes unique to it (the PDFs and TIFFs are drawn from a few variants
	// and the XML texts are small, so without it a content store that
	// keeps each distinct content once, and small files apart, sees few
	// objects).
	ScanBytes int
	// Progress, when set, is told the ingest counts as items finish.
	Progress func(ingest.Stats)
}

// progressSample is the stored count at a time into the run.
type progressSample struct {
	at     time.Duration
	stored int64
}

// RunPatents bulk-ingests c.Works generated patents (PatentSource) through
// the real ingest pipeline and reports the rate overall and per wall-time
// bucket, with its flatness (last tenth of buckets over the first tenth).
// Works whose key is already stored are skipped, as ingest does, so a
// re-run over the same store stores nothing.
func RunPatents(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c PatentsConfig) (*Report, error) {
	rep, err := RunPatentsOn(ctx, []PatentsTarget{{Repo: repo, Blobs: blobs}}, c)
	if rep != nil {
		rep.Backend = repo.Storage().Backend()
	}
	return rep, err
}

// PatentsTarget is where one share of a patents run goes: a repository
// and its content store, in this process or a server's (http.Client).
type PatentsTarget struct {
	Repo  ingest.Repository
	Blobs shelfmark.BlobStore
}

// RunPatentsOn runs the patents scenario with the works split into one
// share per target, in contiguous ranges of EP numbers, each share
// ingested by its own pipeline (c.Workers workers, c.Batch items per
// call) at the same time as the others; the report counts them together.
// With one target it is RunPatents. The report's Backend is left for the
// caller.
func RunPatentsOn(ctx context.Context, targets []PatentsTarget, c PatentsConfig) (*Report, error) {
	if len(targets) == 0 {
		return nil, fmt.Errorf("patents: no target")
	}
	if c.Works <= 0 {
		c.Works = 1000000
	}
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.Buckets <= 0 {
		c.Buckets = 20
	}
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU() // ingest's default, recorded as used
	}
	rep := &Report{Scenario: "patents", Started: time.Now().UTC(),
		Params: map[string]any{"works": c.Works, "workers": c.Workers, "batch": c.Batch}}
	if len(targets) > 1 {
		rep.Params["shares"] = len(targets)
	}
	if c.ScanBytes > 0 {
		rep.Params["scan_bytes"] = c.ScanBytes
	}
	var mu sync.Mutex
	samples := []progressSample{{}}
	stored := make([]int64, len(targets)) // each share's count so far
	var total ingest.Stats
	var firstErr error
	var genTime time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	first := c.First
	for k, t := range targets {
		n := c.Works / len(targets)
		if k < c.Works%len(targets) {
			n++
		}
		src := PatentSource(c.Seed, first+n).(*patentSource)
		src.i, src.noMedia, src.scan = first, c.NoMedia, c.ScanBytes
		first += n
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := ingest.Run(ctx, t.Repo, t.Blobs, src, ingest.Options{Workers: c.Workers, Batch: c.Batch, Creators: c.Creators,
				Progress: func(s ingest.Stats) {
					at := time.Since(start)
					mu.Lock()
					stored[k] = max(stored[k], s.Stored)
					var sum int64
					for _, v := range stored {
						sum += v
					}
					// keep one sample per millisecond at most: enough for 20 buckets
					if last := &samples[len(samples)-1]; at-last.at < time.Millisecond {
						last.stored = max(last.stored, sum)
					} else if sum > last.stored {
						samples = append(samples, progressSample{at, sum})
					}
					s.Stored, s.Skipped, s.Failed = sum, total.Skipped+s.Skipped, total.Failed+s.Failed
					mu.Unlock()
					if c.Progress != nil {
						c.Progress(s)
					}
				}})
			mu.Lock()
			defer mu.Unlock()
			genTime += src.gen
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if st == nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("patents share %d: no result", k+1)
				}
				return
			}
			stored[k] = st.Stored
			total.Stored += st.Stored
			total.Skipped += st.Skipped
			total.Failed += st.Failed
			total.Files += st.Files
			total.Bytes += st.Bytes
			total.Failures = append(total.Failures, st.Failures...)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if total.Stored == 0 && firstErr != nil {
		return nil, firstErr
	}
	st := &total
	rep.Items, rep.Seconds = st.Stored, elapsed.Seconds()
	rep.RatePerS = float64(st.Stored) / rep.Seconds
	rep.Errors = st.Failed
	rep.Params["files"], rep.Params["bytes"], rep.Params["skipped"] = st.Files, st.Bytes, st.Skipped
	rep.Params["generate_seconds"] = genTime.Seconds() // included in the run's time
	if len(st.Failures) > 0 {
		rep.Params["first_failure"] = st.Failures[0].Key + ": " + st.Failures[0].Reason
	}
	samples = append(samples, progressSample{elapsed, st.Stored})
	rep.Steps = bucketSteps(samples, elapsed, c.Buckets)
	rep.Flatness = flatness(rep.Steps)
	return rep, firstErr
}

// bucketSteps splits the run into n equal wall-time buckets and counts the
// items stored in each from samples (ordered by time, stored not falling).
func bucketSteps(samples []progressSample, total time.Duration, n int) []Step {
	storedAt := func(t time.Duration) int64 { // the last count at or before t
		var v int64
		for _, s := range samples {
			if s.at > t {
				break
			}
			v = s.stored
		}
		return v
	}
	steps := make([]Step, 0, n)
	secs := total.Seconds() / float64(n)
	prev := int64(0)
	for b := 1; b <= n; b++ {
		t := total * time.Duration(b) / time.Duration(n)
		if b == n {
			t = total
		}
		cur := storedAt(t)
		s := Step{Items: cur - prev, Seconds: secs}
		if secs > 0 {
			s.RatePerS = float64(s.Items) / secs
		}
		steps = append(steps, s)
		prev = cur
	}
	return steps
}

// flatness is the mean rate of the last tenth of steps over the first
// tenth (at least one step each); 0 when it cannot be computed.
func flatness(steps []Step) float64 {
	if len(steps) < 2 {
		return 0
	}
	first, last := tenthRate(steps, false), tenthRate(steps, true)
	if first == 0 {
		return 0
	}
	return last / first
}

// LastTenthRate is the mean rate of the last tenth of steps (at least one
// step), the part of a run flatness compares with its start; 0 for none.
func LastTenthRate(steps []Step) float64 {
	if len(steps) == 0 {
		return 0
	}
	return tenthRate(steps, true)
}

// tenthRate is the mean rate of the first (or last) tenth of steps, at
// least one step; steps must not be empty.
func tenthRate(steps []Step, last bool) float64 {
	k := max(1, len(steps)/10)
	part := steps[:k]
	if last {
		part = steps[len(steps)-k:]
	}
	sum := 0.0
	for _, s := range part {
		sum += s.RatePerS
	}
	return sum / float64(k)
}

// RawFileLimit measures plain write + fsync of the patents' XML full texts
// (the same bytes, one new file each) in a temporary directory below dir
// for d: the files per second the disk allows without any repository.
func RawFileLimit(dir string, seed uint64, d time.Duration) (float64, error) {
	tmp, err := os.MkdirTemp(dir, "shelfmark-rawfile-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	xmls := make([][]byte, 64) // generated before timing: the limit is the disk's
	for i := range xmls {
		xmls[i] = gen.PatentXML(seed, i)
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		f, err := os.Create(filepath.Join(tmp, fmt.Sprint(n)))
		if err != nil {
			return 0, err
		}
		_, err = f.Write(xmls[n%len(xmls)])
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// RawCreateLimit measures how many file system metadata operations a
// second the disk under dir allows: parallel writers each make a new
// directory three levels deep under hashed names (as an OCFL storage root
// with the 0004 layout does) and write one small file in it, without
// fsync (a batch of versions syncs once). It returns the operations
// (directories made and files created) per second over d.
func RawCreateLimit(dir string, parallel int, d time.Duration) (float64, error) {
	tmp, err := os.MkdirTemp(dir, "shelfmark-rawcreate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	var (
		ops   atomic.Int64
		next  atomic.Int64
		wg    sync.WaitGroup
		first error
		mu    sync.Mutex
	)
	start := time.Now()
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				n := next.Add(1)
				sum := sha256.Sum256([]byte(fmt.Sprint(n)))
				h := hex.EncodeToString(sum[:])
				p := tmp
				for _, part := range []string{h[0:3], h[3:6], h[6:9], h} {
					p = filepath.Join(p, part)
					if err := os.Mkdir(p, 0o755); err == nil {
						ops.Add(1)
					} else if !errors.Is(err, fs.ErrExist) {
						mu.Lock()
						first = err
						mu.Unlock()
						return
					}
				}
				if err := os.WriteFile(filepath.Join(p, "f"), []byte("0=ocfl_object_1.1\n"), 0o644); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(ops.Load()) / time.Since(start).Seconds(), nil
}
