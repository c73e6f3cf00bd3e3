package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// SearchTimeoutOpener opens a fresh, empty Storage whose search
// statements stop at timeout. The suite closes it.
type SearchTimeoutOpener func(t *testing.T, timeout time.Duration) shelfmark.Storage

// searchTimeoutTest is the timeout RunSearchTimeout opens stores with:
// tiny beside what its query costs (some 400 milliseconds on SQLite, 650
// on PostgreSQL, on a 2-core machine), so that the outcome does not depend
// on the machine's speed or load. The suite runs no cheap search under it.
const searchTimeoutTest = 10 * time.Millisecond

// ExpensiveSearchDocs returns n page documents of work (keys from
// searchBase up) whose text is 300 words drawn from a dozen, a quarter of
// them "the", and ExpensiveSearchText is a query within every limit of
// ParseSearchText that costs some 400 milliseconds on them on SQLite and
// 650 on PostgreSQL for n = 3,000 on a 2-core machine: 32
// phrases of two words, each of which matches almost every document.
func ExpensiveSearchDocs(work int64, n int) []shelfmark.SearchDoc {
	words := []string{"the", "the", "the", "of", "and", "a", "to", "in", "ship", "whale", "sea", "north"}
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]shelfmark.SearchDoc, n)
	for i := range docs {
		var b strings.Builder
		for range 300 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		docs[i] = shelfmark.SearchDoc{Key: int64(searchBase + i), Work: work, Kind: shelfmark.KindFileSet, Format: "PDF",
			Title: fmt.Sprint("page ", i+1), Body: b.String()}
	}
	return docs
}

// ExpensiveSearchText: see ExpensiveSearchDocs.
var ExpensiveSearchText = strings.TrimSpace(strings.Repeat(`"the the" `, shelfmark.MaxSearchTerms))

// RunSearchTimeout checks the deadline of search statements on the
// backend open creates: a search whose statement runs past the store's
// search timeout is stopped and answers shelfmark.SearchTimeoutError
// (EUNAVAILABLE, with a retry_after detail), every time; and the store is
// healthy afterwards: every connection of its pool answers reads, alone
// and at once.
func RunSearchTimeout(t *testing.T, open SearchTimeoutOpener) {
	ctx := context.Background()
	store := open(t, searchTimeoutTest)
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	t.Cleanup(func() {
		repo.Close()
		store.Close()
	})
	res, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	work, err := repo.IDs().Key(res.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shelfmark.ParseSearchText(ExpensiveSearchText); err != nil {
		t.Fatalf("the expensive query is past a limit: %v", err)
	}
	if err := store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, ExpensiveSearchDocs(work, 3000))
	}); err != nil {
		t.Fatal(err)
	}
	search := func() error {
		return store.View(ctx, func(tx shelfmark.ReadTx) error {
			_, err := tx.Search(ctx, shelfmark.SearchQuery{Text: ExpensiveSearchText, Facets: true, Now: time.Now()})
			return err
		})
	}
	// a few times, some at once: each stops the same way, none waits for
	// a connection another left busy
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		if i < 3 {
			errs[i] = search()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = search() }()
	}
	wg.Wait()
	for i, err := range errs {
		var e *shelfmark.Error
		if !shelfmark.IsSearchTimeout(err) || shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !errors.As(err, &e) {
			t.Fatalf("search %d: %v, want the search timeout (unavailable)", i, err)
		}
		if secs, ok := e.Details["retry_after"].(int64); !ok || secs < 1 {
			t.Fatalf("search %d: details %v, want retry_after", i, e.Details)
		}
	}
	// the pool is healthy: reads run on every connection, one after
	// another and at once
	read := func() error {
		return store.View(ctx, func(tx shelfmark.ReadTx) error {
			row, err := tx.Resource(ctx, work)
			if err == nil && row == nil {
				err = errors.New("the work is gone")
			}
			if err == nil {
				var d *shelfmark.SearchDoc
				if d, err = tx.SearchDoc(ctx, searchBase); err == nil && d == nil {
					err = errors.New("the document is gone")
				}
			}
			return err
		})
	}
	for i := range 40 {
		if err := read(); err != nil {
			t.Fatalf("read %d after the timeouts: %v", i, err)
		}
	}
	errs = make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = read() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("reads at once after the timeouts: %v", err)
	}
	// and every connection went back to its pool (polled: the engine's
	// own background work may hold one for a moment)
	for deadline := time.Now().Add(30 * time.Second); store.Stats().InUse != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still in use after every request ended", store.Stats().InUse)
		}
	}
}
