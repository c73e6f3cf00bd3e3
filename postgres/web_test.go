package postgres

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestInternWebURLsRace: a writer interning URLs that another, still open
// transaction has just inserted waits for it, finds its own insert
// skipped (ON CONFLICT DO NOTHING), and reads the other's rows once they
// are committed: same ids, not new, one row per SURT.
func TestInternWebURLsRace(t *testing.T) {
	ctx := context.Background()
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	admin := adminPool(t)
	var dom int64
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		d := []*shelfmark.WebDomainRow{{Name: "example.com"}}
		err := tx.InternWebDomains(ctx, d)
		dom = d[0].ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rows := func(surts ...string) []*shelfmark.WebURLRow {
		var out []*shelfmark.WebURLRow
		for _, s := range surts {
			out = append(out, &shelfmark.WebURLRow{SURT: s, URL: "http://" + s, Domain: dom})
		}
		return out
	}
	a := rows("com,example)/1", "com,example)/2")
	b := rows("com,example)/2", "com,example)/3", "com,example)/1")

	inserted := make(chan int32) // A's backend, once it holds its new rows
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() { // A: inserts, then commits only once B waits for it
		defer wg.Done()
		errA = db.UpdateQueue(ctx, func(tx shelfmark.WriteTx) error {
			if err := tx.InternWebURLs(ctx, a); err != nil {
				return err
			}
			var pid int32
			if err := tx.(*writeTx).r.queryRow(ctx, `SELECT pg_backend_pid()`, nil, &pid); err != nil {
				return err
			}
			inserted <- pid
			deadline := time.Now().Add(2 * time.Minute)
			for {
				var waiting int
				if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid).Scan(&waiting); err != nil {
					return err
				}
				if waiting > 0 {
					return nil
				}
				if time.Now().After(deadline) {
					t.Error("B never waited for A")
					return nil
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}()
	go func() { // B: starts after A's insert, before A commits
		defer wg.Done()
		<-inserted
		tr.mu.Lock()
		tr.calls, tr.rows = nil, nil
		tr.mu.Unlock()
		errB = db.UpdateQueue(ctx, func(tx shelfmark.WriteTx) error { return tx.InternWebURLs(ctx, b) })
	}()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if !a[0].New || !a[1].New {
		t.Fatalf("A's rows are not new: %+v %+v", *a[0], *a[1])
	}
	if b[0].ID != a[1].ID || b[2].ID != a[0].ID || b[0].New || b[2].New || !b[1].New || b[1].ID == a[0].ID || b[1].ID == a[1].ID {
		t.Fatalf("B's rows: %+v %+v %+v (A's ids %d %d)", *b[0], *b[1], *b[2], a[0].ID, a[1].ID)
	}
	finds := 0
	tr.mu.Lock()
	for _, q := range tr.calls {
		if strings.HasPrefix(q, "SELECT id, surt FROM web_urls WHERE surt = ANY") {
			finds++
		}
	}
	tr.mu.Unlock()
	if finds != 2 {
		t.Fatalf("B looked its URLs up %d times, want 2 (before and after its insert)", finds)
	}
	if err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		m, err := tx.WebURLsBySURT(ctx, []string{"com,example)/1", "com,example)/2", "com,example)/3"})
		if err != nil {
			return err
		}
		if len(m) != 3 || m["com,example)/1"].ID != a[0].ID || m["com,example)/3"].ID != b[1].ID {
			t.Fatalf("stored: %v", m)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
