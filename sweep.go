package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// sweepBatch is how many resources one sweep transaction changes.
const sweepBatch = 256

// SweepAccess writes the access changes whose dates have passed: a lease
// that ended makes its resource private, an embargo that ended is removed
// (its stated visibility applies). Reads honour the dates already; the
// sweep records the change as a new version, so that OAI-PMH harvesters
// and the search index learn of it, and the audit trail shows it. It
// returns how many resources it changed.
func (r *Repository) SweepAccess(ctx context.Context) (int, error) {
	total := 0
	for {
		var due []*ResourceRow
		err := r.store.View(ctx, func(tx ReadTx) error {
			var err error
			due, err = tx.AccessDue(ctx, r.now(), sweepBatch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("access sweep: %w", err)
		}
		if len(due) == 0 {
			return total, nil
		}
		ops := make([]*op, len(due))
		for i, d := range due {
			ops[i] = r.sweepOp(d.Key)
		}
		if err := r.commit.submit(WithCaller(ctx, SystemCaller("access")), ops...); err != nil {
			return total, fmt.Errorf("access sweep: %w", err)
		}
		for _, o := range ops {
			if o.err != nil {
				return total, fmt.Errorf("access sweep: %w", o.err)
			}
		}
		total += len(due)
		if len(due) < sweepBatch {
			return total, nil
		}
	}
}

// sweepOp ends the lapsed embargo or lease of one resource.
func (r *Repository) sweepOp(key int64) *op {
	o := &op{}
	var row *ResourceRow
	o.check = func(tx WriteTx) error {
		var err error
		row, err = tx.Resource(context.Background(), key)
		return err
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		if row == nil || row.Deleted != nil {
			return nil
		}
		changed := false
		if row.Lease != nil && !now.Before(*row.Lease) {
			row.Lease, row.Visibility, changed = nil, Private, true
		}
		if row.Embargo != nil && !now.Before(*row.Embargo) {
			row.Embargo, changed = nil, true
		}
		if !changed {
			return nil
		}
		row.Version++
		row.Seq, row.Modified = seq, now
		o.audit = append(o.audit, auditEntry(o.ctx, "access.expire", key, []string{"access"}))
		return writeAccessChange(context.Background(), tx, row, true)
	}
	return o
}

// AccessSweeper runs SweepAccess, then SweepWebFiles (which takes the
// WARC files of deleted works out of the web index), every Interval until
// its context ends.
type AccessSweeper struct {
	Repo     *Repository
	Interval time.Duration // default one minute
	// OnError, when set, learns of a failed sweep (the loop goes on).
	OnError func(error)
}

// Run sweeps until ctx ends.
func (s *AccessSweeper) Run(ctx context.Context) error {
	iv := s.Interval
	if iv <= 0 {
		iv = time.Minute
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		if _, err := s.Repo.SweepAccess(ctx); err != nil && ctx.Err() == nil && s.OnError != nil {
			s.OnError(err)
		}
		if _, err := s.Repo.SweepWebFiles(ctx); err != nil && ctx.Err() == nil && s.OnError != nil {
			s.OnError(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
