package backup

import (
	"context"
	"io"
	"sync"
)

// DefaultParallel is how many files a backup copies at once: each is
// synced to disk (or sent to S3) before it counts, so a few at once hide
// that latency.
const DefaultParallel = 4

// copier copies files into the pool with a few workers. A digest the pool
// holds, or that a worker is copying, is not copied again. The first
// error stops it: Wait returns it.
type copier struct {
	p      *pool
	ctx    context.Context
	cancel context.CancelFunc
	jobs   chan copyJob
	wg     sync.WaitGroup

	mu       sync.Mutex
	err      error
	inflight map[string]bool
	files    int64
	bytes    int64
}

// copyJob is one file to copy: open opens its source; fail, when set,
// turns an error of open into the job's outcome (nil: skip the file).
type copyJob struct {
	alg, d string
	open   func(ctx context.Context) (io.ReadCloser, error)
	fail   func(err error) error
	done   func() // called once the file is in the pool
}

func newCopier(ctx context.Context, p *pool, parallel int) *copier {
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &copier{p: p, ctx: ctx, cancel: cancel, jobs: make(chan copyJob), inflight: map[string]bool{}}
	for range parallel {
		c.wg.Add(1)
		go c.work()
	}
	return c
}

// submit copies the file of j unless the pool holds it or it is being
// copied; it returns whether it was queued, or the copier's error.
func (c *copier) submit(j copyJob) (bool, error) {
	have, err := c.p.has(c.ctx, j.alg, j.d)
	if err != nil {
		return false, err
	}
	key := j.alg + j.d
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return false, err
	}
	if have || c.inflight[key] {
		c.mu.Unlock()
		return false, nil
	}
	c.inflight[key] = true
	c.mu.Unlock()
	select {
	case c.jobs <- j:
		return true, nil
	case <-c.ctx.Done():
		return false, c.wait()
	}
}

func (c *copier) work() {
	defer c.wg.Done()
	for j := range c.jobs {
		if c.ctx.Err() != nil {
			continue
		}
		n, err := c.copy(j)
		c.mu.Lock()
		if err != nil && c.err == nil {
			c.err = err
			c.cancel()
		}
		if err == nil && n >= 0 {
			c.files++
			c.bytes += n
		}
		c.mu.Unlock()
	}
}

// copy copies one file and returns its size, -1 when it was skipped.
func (c *copier) copy(j copyJob) (int64, error) {
	rc, err := j.open(c.ctx)
	if err != nil {
		if j.fail != nil {
			if err = j.fail(err); err == nil {
				return -1, nil
			}
		}
		return 0, err
	}
	defer rc.Close()
	n, err := c.p.put(c.ctx, j.alg, j.d, rc)
	if err != nil {
		return 0, err
	}
	if j.done != nil {
		j.done()
	}
	return n, nil
}

// counts returns the files copied so far and their bytes.
func (c *copier) counts() (int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.files, c.bytes
}

// wait ends the copier once its queued files are copied and returns its
// first error.
func (c *copier) wait() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.ctx.Err()
}

// close stops taking files, waits for the workers, and returns the first
// error.
func (c *copier) close() error {
	close(c.jobs)
	c.wg.Wait()
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
