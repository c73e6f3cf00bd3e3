package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// BookConfig configures the book scenario (docs/design.md): one work with Pages
// page images stored files first, then ordered in one step, then one field
// of the book edited.
type BookConfig struct {
	Pages     int // default 1,200
	PageBytes int // bytes of each page image (default 64 KiB)
	Edits     int // how many single-field edits to time (default 50)
	Seed      uint64
	// Page returns page i's bytes; nil uses deterministic pseudo-random
	// bytes of PageBytes.
	Page func(i int) []byte
	// OCFLDir, when set, is a directory for a preservation copy: the book
	// is preserved once stored and ordered (version 1) and again after each
	// edit, and what each version writes is measured.
	OCFLDir string
}

// BookResult holds the book scenario's own figures beside its report.
type BookResult struct {
	Report     *Report
	PageMS     []float64 // time to store each page, in order
	FirstLast  float64   // mean of the last 100 pages over the first 100 (target ≤ 1.1)
	OrderMS    float64   // ordering all pages in one request (target ≤ 50 ms)
	EditMS     Latency   // editing one field of the book (target ≤ 5 ms)
	RawWriteMS float64   // plain write + fsync of one page's bytes, the raw limit
	// OCFLBytes are the bytes each version of the book's preservation
	// object added to the storage root, version 1 first (with OCFLDir).
	OCFLBytes []int64
}

// RunBook stores a book page by page through the repository and the blob
// store, as the API does for each upload: the bytes, then a file set and a
// file.
func RunBook(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c BookConfig) (*BookResult, error) {
	if c.Pages <= 0 {
		c.Pages = 1200
	}
	if c.PageBytes <= 0 {
		c.PageBytes = 64 << 10
	}
	if c.Edits <= 0 {
		c.Edits = 50
	}
	if c.Page == nil {
		c.Page = func(i int) []byte { return pseudoRandom(c.Seed, i, c.PageBytes) }
	}
	res := &BookResult{Report: &Report{Scenario: "book", Backend: repo.Storage().Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"pages": c.Pages, "page_bytes": c.PageBytes}}}
	start := time.Now()
	book, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork,
		Metadata: patentStatements(c.Seed, 0, 54)})
	if err != nil {
		return nil, err
	}
	pages := make([]shelfmark.ID, c.Pages)
	for i := 0; i < c.Pages; i++ {
		t0 := time.Now()
		data := c.Page(i)
		blob, err := blobs.Put(ctx, bytes.NewReader(data), shelfmark.PutOptions{})
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		ids, err := repo.MintIDs(ctx, 2)
		if err != nil {
			return nil, err
		}
		_, errs := repo.CreateResources(ctx, []*shelfmark.NewResource{
			{ID: ids[0], Kind: shelfmark.KindFileSet, Parent: book.ID, Metadata: []shelfmark.Statement{
				{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Page %d", i+1))}}},
			{ID: ids[1], Kind: shelfmark.KindFile, Parent: ids[0], File: &shelfmark.File{Name: fmt.Sprintf("page_%04d.tif", i+1),
				MediaType: "image/tiff", Size: blob.Size, SHA256: blob.Digests[shelfmark.SHA256], Use: "original"}},
		})
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
		pages[i] = ids[0]
		res.PageMS = append(res.PageMS, ms(time.Since(t0)))
	}
	// order all pages in one request (reverse order, so every position changes)
	slices.Reverse(pages)
	t0 := time.Now()
	if _, err := repo.SetOrder(ctx, book.ID, pages, 0); err != nil {
		return nil, fmt.Errorf("order: %w", err)
	}
	res.OrderMS = ms(time.Since(t0))
	var keep func() error
	if c.OCFLDir != "" {
		if keep, err = bookKeeper(ctx, repo, blobs, c.OCFLDir, res); err != nil {
			return nil, err
		}
		if err := keep(); err != nil {
			return nil, err
		}
	}
	// edit one field of the book, many times
	var edits []time.Duration
	for i := 0; i < c.Edits; i++ {
		t0 := time.Now()
		// replace the book's edition statement: one field, one value
		u := shelfmark.ResourceUpdate{Add: []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "bibliographicCitation", Object: shelfmark.NewLiteral(fmt.Sprint("edition ", i+1))}}}
		if i > 0 {
			u.Remove = []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "bibliographicCitation", Object: shelfmark.NewLiteral(fmt.Sprint("edition ", i))}}
		}
		_, err := repo.UpdateResource(ctx, book.ID, u)
		if err != nil {
			return nil, fmt.Errorf("edit: %w", err)
		}
		edits = append(edits, time.Since(t0))
		if keep != nil {
			if err := keep(); err != nil {
				return nil, err
			}
		}
	}
	res.EditMS = *percentiles(edits)
	res.RawWriteMS, err = rawWriteMS(c.Page(0), 20)
	if err != nil {
		return nil, err
	}
	n := min(100, c.Pages/2)
	res.FirstLast = mean(res.PageMS[len(res.PageMS)-n:]) / mean(res.PageMS[:n])
	r := res.Report
	r.Items, r.Seconds = int64(c.Pages), time.Since(start).Seconds()
	r.RatePerS = float64(c.Pages) / sum(res.PageMS) * 1000
	r.Flatness = 1 / res.FirstLast // rate, not cost: last tenth over first tenth
	r.RawLimitPerS = 1000 / res.RawWriteMS
	r.RawLimitWhat = "plain write + fsync of one page's bytes to a new file"
	r.FractionLimit = r.RatePerS / r.RawLimitPerS
	lat := make([]time.Duration, len(res.PageMS))
	for i, v := range res.PageMS {
		lat[i] = time.Duration(v * float64(time.Millisecond))
	}
	r.LatencyMS = *percentiles(lat)
	for b := 0; b < c.Pages; b += 100 {
		chunk := res.PageMS[b:min(b+100, c.Pages)]
		r.Steps = append(r.Steps, Step{Items: int64(len(chunk)), Seconds: sum(chunk) / 1000, RatePerS: float64(len(chunk)) / sum(chunk) * 1000})
	}
	r.Params["order_ms"], r.Params["edit_p50_ms"], r.Params["edit_p99_ms"], r.Params["last100_over_first100"] = res.OrderMS, res.EditMS.P50, res.EditMS.P99, res.FirstLast
	if n := len(res.OCFLBytes); n > 1 {
		r.Params["ocfl_version1_bytes"], r.Params["ocfl_first_edit_bytes"], r.Params["ocfl_last_edit_bytes"] = res.OCFLBytes[0], res.OCFLBytes[1], res.OCFLBytes[n-1]
	}
	return res, nil
}

// bookKeeper returns the step that preserves the book into a storage root
// in dir and appends to res.OCFLBytes what the step added to the root.
// Its clock runs an hour ahead, so that every change is due at once.
func bookKeeper(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, dir string, res *BookResult) (func() error, error) {
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return nil, err
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		return nil, err
	}
	p := preserve.New(repo.Storage(), blobs, root, repo.IDs(), preserve.Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	return func() error {
		before, err := dirBytes(dir)
		if err != nil {
			return err
		}
		if _, _, err := p.CatchUp(ctx); err != nil {
			return err
		}
		after, err := dirBytes(dir)
		res.OCFLBytes = append(res.OCFLBytes, after-before)
		return err
	}, nil
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sum(v []float64) (s float64) {
	for _, x := range v {
		s += x
	}
	return s
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return sum(v) / float64(len(v))
}

// rawWriteMS is the mean time of a plain write + fsync of data to a new
// file, n times: what storing a page costs at least.
func rawWriteMS(data []byte, n int) (float64, error) {
	dir, err := os.MkdirTemp("", "shelfmark-raw-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	for i := 0; i < n; i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			return 0, err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return 0, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return 0, err
		}
		f.Close()
	}
	return ms(time.Since(start)) / float64(n), nil
}

// pseudoRandom returns n deterministic bytes for (seed, i).
func pseudoRandom(seed uint64, i, n int) []byte {
	b := make([]byte, n)
	x := seed*0x9E3779B97F4A7C15 + uint64(i)*0xBF58476D1CE4E5B9 + 1
	for j := 0; j < n; j += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		for k := 0; k < 8 && j+k < n; k++ {
			b[j+k] = byte(x >> (8 * k))
		}
	}
	return b
}
