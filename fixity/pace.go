package fixity

import (
	"context"
	"io"
	"time"
)

// pacer keeps reads at or below a rate: each read moves a due time
// forward by its size over the rate, and waits when the due time is
// ahead of the clock. A rate of 0 never waits.
type pacer struct {
	rate  int64 // bytes a second; 0: unlimited
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	due   time.Time
}

// take accounts for n bytes read, waiting as the rate asks.
func (p *pacer) take(ctx context.Context, n int) error {
	if p.rate <= 0 || n <= 0 {
		return nil
	}
	now := p.now()
	if p.due.Before(now) {
		p.due = now
	}
	p.due = p.due.Add(time.Duration(float64(n) / float64(p.rate) * float64(time.Second)))
	if wait := p.due.Sub(now); wait > 10*time.Millisecond {
		return p.sleep(ctx, wait)
	}
	return nil
}

// pacedReader reads through a pacer.
type pacedReader struct {
	ctx context.Context
	r   io.Reader
	p   *pacer
	n   int64 // bytes read
}

func (r *pacedReader) Read(b []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(b)
	r.n += int64(n)
	if perr := r.p.take(r.ctx, n); perr != nil && err == nil {
		err = perr
	}
	return n, err
}
