package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestSearchTimeoutConformance runs the search deadline's conformance
// test on SQLite.
func TestSearchTimeoutConformance(t *testing.T) {
	storagetest.RunSearchTimeout(t, func(t *testing.T, timeout time.Duration) shelfmark.Storage {
		db, err := Open(context.Background(), filepath.Join(t.TempDir(), "shelfmark.db"), Options{Relaxed: true, SearchTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

// TestSearchTimeoutStopsFTS5: the deadline stops FTS5 inside its own work.
// The attacker's statement, a phrase of 14,000 words "the" over 3,000
// documents full of "the" (built here without the parser, which now
// refuses it; tens of seconds of FTS5 phrase matching unless stopped), is
// interrupted at a 100 ms deadline and answers the search timeout; the one
// read connection then answers the next statements, a match among them.
func TestSearchTimeoutStopsFTS5(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{Relaxed: true, ReadConns: 1, SearchTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	res, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	work, _ := repo.IDs().Key(res.ID)
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, storagetest.ExpensiveSearchDocs(work, 3000))
	}); err != nil {
		t.Fatal(err)
	}
	phrase := []shelfmark.SearchTerm{{Text: strings.TrimSpace(strings.Repeat("the ", 14000))}}
	q := shelfmark.SearchQuery{Facets: true, Now: time.Now()}
	err = db.View(ctx, func(rtx shelfmark.ReadTx) error {
		t := rtx.(*readTx)
		sctx, cancel := t.db.searchContext(ctx)
		defer cancel()
		stmt, args := dialect.SearchSQL(&q, ftsMatchOf(phrase), 0, nil, shelfmark.DefaultSearchLimit+1, true)
		return t.db.searchError(sctx, t.query(sctx, stmt, args, func(sqlstore.Scanner) error { return nil }))
	})
	if !shelfmark.IsSearchTimeout(err) || shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
		t.Fatalf("the 14,000-word phrase: %v, want the search timeout", err)
	}
	// the same (only) read connection answers: a read, and a full-text
	// match (without a deadline, which a busy machine might reach)
	for range 3 {
		err = db.View(ctx, func(rtx shelfmark.ReadTx) error {
			if row, err := rtx.Resource(ctx, work); err != nil || row == nil {
				return fmt.Errorf("read the work: %v %v", row, err)
			}
			var n int64
			if err := rtx.(*readTx).queryRow(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH '"page" "7"'`, nil, &n); err != nil || n != 1 {
				return fmt.Errorf("match: %d, %v", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("after the timeout: %v", err)
		}
	}
}
