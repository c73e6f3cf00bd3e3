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

// SweepGrants deletes the grants that requests for access gave once they
// have ended (the access policy ignores them from their expiry on; the
// sweep keeps the table, and what a reader's every request reads of it,
// to the grants in force), sweepBatch a transaction, each audited as
// "access.expire" on its work. It returns how many it deleted.
func (r *Repository) SweepGrants(ctx context.Context) (int, error) {
	ctx = WithCaller(ctx, SystemCaller("access"))
	total := 0
	for {
		var gone []Grant
		err := r.store.Update(ctx, func(tx WriteTx) error {
			var err error
			now := r.now()
			if gone, err = tx.PruneGrants(ctx, now, sweepBatch); err != nil || len(gone) == 0 {
				return err
			}
			entries := make([]*AuditEntry, len(gone))
			for i, g := range gone {
				e := auditEntry(ctx, "access.expire", g.Resource, nil)
				e.At = now
				e.Detail = fmt.Sprintf("the %s role of %s ended on %s", g.Role, g.Principal, g.Expires.UTC().Format(time.RFC3339))
				entries[i] = e
			}
			return tx.InsertAudit(ctx, entries)
		})
		if err != nil {
			return total, fmt.Errorf("grant sweep: %w", err)
		}
		total += len(gone)
		if len(gone) < sweepBatch {
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

// AccessSweeper runs SweepAccess, SweepGrants, then SweepWebFiles (which takes the
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
		if _, err := s.Repo.SweepGrants(ctx); err != nil && ctx.Err() == nil && s.OnError != nil {
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
