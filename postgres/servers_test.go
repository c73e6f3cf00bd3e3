package postgres

import (
	"context"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestTwoServers: two engines, each with its own pool on one database, as
// two `shelfmark serve` processes would be, create works in one collection
// at the same time. Every id is distinct, each engine reads what the other
// wrote, the collection lists every member once, and sequence numbers never
// repeat.
func TestTwoServers(t *testing.T) {
	dsn, _ := testSchema(t)
	ctx := context.Background()
	var repos [2]*shelfmark.Repository
	for i := range repos {
		db, err := Open(ctx, dsn, Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		repos[i] = shelfmark.NewRepository(db, shelfmark.RepositoryOptions{MintBlock: 50})
		t.Cleanup(func() { repos[i].Close(); db.Close() })
	}
	coll, err := repos[0].CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 40
	var mu sync.Mutex
	made := map[shelfmark.ID]int{} // id -> engine that made it
	seqs := map[int64]bool{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			repo := repos[w%2]
			for i := 0; i < each; i++ {
				r, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID},
					Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("w")}}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if _, dup := made[r.ID]; dup || seqs[r.Seq] {
					t.Errorf("id %s or seq %d handed out twice", r.ID, r.Seq)
				}
				made[r.ID], seqs[r.Seq] = w%2, true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(made) != writers*each {
		t.Fatalf("%d works made", len(made))
	}
	for id, by := range made {
		if _, err := repos[1-by].FindResource(ctx, id); err != nil {
			t.Fatalf("engine %d cannot read %s made by engine %d: %v", 1-by, id, by, err)
		}
	}
	listed := 0
	var cursor shelfmark.Cursor
	for {
		p, err := repos[1].ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: cursor, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		listed += len(p.Items)
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if listed != writers*each {
		t.Fatalf("collection lists %d members, want %d", listed, writers*each)
	}
}
