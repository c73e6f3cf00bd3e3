package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// TestPipelineSendsInOrder: inside Pipeline, writes are queued and a read
// sends them first, so it sees them; the queue reaches the server when
// Pipeline ends, and the tracer hears of every statement once, with the
// rows it affected.
func TestPipelineSendsInOrder(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	tr.reset() // the migrations
	ctx := context.Background()
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.(shelfmark.Pipeliner).Pipeline(ctx, func() error {
			if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}); err != nil {
				return err
			}
			if tr.count() != 0 {
				t.Errorf("a queued insert was sent at once: %q", tr.calls)
			}
			r, err := tx.Resource(ctx, 1)
			if err != nil || r == nil {
				t.Errorf("a read in the pipeline did not see the write queued before it: %v %v", r, err)
			}
			return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(2, 0, 0), row(3, 0, 0)})
		})
	})
	inserts := 0
	for i, q := range tr.calls {
		if strings.HasPrefix(q, "INSERT INTO resources") {
			inserts++
			if want := int64(inserts); tr.rows[i] != want {
				t.Errorf("insert %d reported %d rows, want %d", inserts, tr.rows[i], want)
			}
		}
	}
	if inserts != 2 {
		t.Errorf("%d inserts traced, want 2: %q", inserts, tr.calls)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		for _, k := range []int64{1, 2, 3} {
			if r, err := tx.Resource(ctx, k); err != nil || r == nil {
				t.Errorf("resource %d after the commit: %v", k, err)
			}
		}
		return nil
	})
}

// TestPipelineFailure: a queued statement that fails is the error of
// Pipeline, naming the statement; a Pipeline whose fn fails sends nothing
// of what it queued; either way the transaction commits nothing.
func TestPipelineFailure(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.(shelfmark.Pipeliner).Pipeline(ctx, func() error {
			if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}); err != nil {
				return err
			}
			return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}) // the same key again
		})
	})
	if err == nil || !strings.Contains(err.Error(), "queued statement 2 of 2 (INSERT INTO resources") {
		t.Fatalf("a queued duplicate: %v", err)
	}
	tr := &tracer{}
	db2, _ := openTest(t, Options{Tracer: tr.trace})
	tr.reset()
	failed := errors.New("fn failed")
	err = db2.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.(shelfmark.Pipeliner).Pipeline(ctx, func() error {
			if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(2, 0, 0)}); err != nil {
				return err
			}
			return failed
		})
	})
	if !errors.Is(err, failed) || tr.count() != 0 {
		t.Fatalf("a failed fn: %v, and %q sent", err, tr.calls)
	}
	for _, d := range []*DB{db, db2} {
		view(t, d, func(tx shelfmark.ReadTx) error {
			if rows, err := tx.Changes(ctx, 0, 10); err != nil || len(rows) != 0 {
				t.Errorf("after a failed pipeline: %d rows committed (%v)", len(rows), err)
			}
			return nil
		})
	}
}

// TestCommitOfFailedTransaction: a transaction in which a statement failed
// and fn went on regardless is not reported committed: COMMIT would only
// roll it back, and its writes are gone.
func TestCommitOfFailedTransaction(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(1, 0, 0)}); err != nil {
			return err
		}
		_, _ = tx.(*writeTx).Exec(ctx, "SELECT 1 / $1::int", 0) // fails; the error is dropped
		return nil
	})
	if !errors.Is(err, pgx.ErrTxCommitRollback) {
		t.Fatalf("the commit of a failed transaction: %v", err)
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		r, err := tx.Resource(ctx, 1)
		if r != nil {
			t.Error("the failed transaction's insert was committed")
		}
		return err
	})
	// the connection went back to the pool out of its transaction
	update(t, db, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, []*shelfmark.ResourceRow{row(2, 0, 0)})
	})
}
