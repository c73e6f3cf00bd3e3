package storagetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testAuthFailures checks the brute-force limiter's shared failures:
// counting (also by concurrent callers), forgetting, blocking, clearing
// and pruning.
func testAuthFailures(t *testing.T, open Opener) {
	s := open(t, nil)
	defer s.Close()
	af, ok := s.(shelfmark.AuthFailures)
	if !ok {
		t.Fatalf("the %s backend does not implement shelfmark.AuthFailures", s.Backend())
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const forget = 15 * time.Minute
	add := func(key string, at time.Time) int {
		t.Helper()
		n, err := af.AddAuthFailure(ctx, key, at, forget)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	blocked := func(at time.Time, limit int) []shelfmark.AuthFailure {
		t.Helper()
		fs, err := af.BlockedAuthKeys(ctx, at, limit)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	for i := 1; i <= 3; i++ {
		if n := add("ip:192.0.2.1", now.Add(time.Duration(i)*time.Second)); n != i {
			t.Fatalf("failure %d counted as %d", i, n)
		}
	}
	if n := add("user:admin", now); n != 1 {
		t.Fatalf("another key starts at %d", n)
	}
	if fs := blocked(now, 10); len(fs) != 0 {
		t.Fatalf("blocked before any block: %+v", fs)
	}
	until := now.Add(time.Minute)
	if err := af.BlockAuthKey(ctx, "ip:192.0.2.1", until); err != nil {
		t.Fatal(err)
	}
	if err := af.BlockAuthKey(ctx, "ip:192.0.2.1", now.Add(time.Second)); err != nil { // an earlier time: the later stays
		t.Fatal(err)
	}
	if err := af.BlockAuthKey(ctx, "user:admin", now.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	fs := blocked(now.Add(5*time.Second), 10)
	if len(fs) != 2 || fs[0].Key != "ip:192.0.2.1" || fs[0].Count != 3 || !fs[0].Until.Equal(until) ||
		!fs[0].Last.Equal(now.Add(3*time.Second)) || fs[1].Key != "user:admin" {
		t.Fatalf("blocked keys %+v", fs)
	}
	if fs := blocked(now.Add(5*time.Second), 1); len(fs) != 1 || fs[0].Key != "ip:192.0.2.1" {
		t.Fatalf("blocked keys, limit 1: %+v", fs)
	}
	if fs := blocked(now.Add(45*time.Second), 10); len(fs) != 1 || fs[0].Key != "ip:192.0.2.1" {
		t.Fatalf("blocked keys after the shorter wait: %+v", fs)
	}
	if fs := blocked(until, 10); len(fs) != 0 {
		t.Fatalf("blocked keys after every wait: %+v", fs)
	}
	// clearing waits for the block to end
	if err := af.ClearAuthFailures(ctx, "ip:192.0.2.1", now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := add("ip:192.0.2.1", now.Add(11*time.Second)); n != 4 {
		t.Fatalf("a blocked key was cleared: count %d", n)
	}
	if err := af.ClearAuthFailures(ctx, "ip:192.0.2.1", until); err != nil {
		t.Fatal(err)
	}
	if n := add("ip:192.0.2.1", until); n != 1 {
		t.Fatalf("after clearing, the count is %d", n)
	}
	// clearing a principal's key forgets its failures only: those of
	// the address it signed in from go on counting
	for i := 1; i <= 2; i++ {
		add("ip:203.0.113.9", until.Add(time.Duration(i)*time.Second))
		add("user:ann", until.Add(time.Duration(i)*time.Second))
	}
	if err := af.ClearAuthFailures(ctx, "user:ann", until.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if n := add("ip:203.0.113.9", until.Add(4*time.Second)); n != 3 {
		t.Fatalf("clearing user:ann changed the count of its address: %d, want 3", n)
	}
	if n := add("user:ann", until.Add(4*time.Second)); n != 1 {
		t.Fatalf("after clearing user:ann, its count is %d", n)
	}
	// a failure long after the last starts again
	if n := add("ip:192.0.2.1", until.Add(forget+time.Second)); n != 1 {
		t.Fatalf("after %s without failures, the count is %d", forget, n)
	}
	// pruning forgets old keys that need not wait
	if err := af.BlockAuthKey(ctx, "user:admin", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	pruned, err := af.PruneAuthFailures(ctx, now.Add(time.Minute), now.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if pruned != 0 { // user:admin waits; the address failed since
		t.Fatalf("pruned %d keys, want 0", pruned)
	}
	pruned, err = af.PruneAuthFailures(ctx, now.Add(time.Minute), now.Add(2*time.Hour))
	if err != nil || pruned != 1 {
		t.Fatalf("pruned %d keys (%v), want 1", pruned, err)
	}
	if n := add("user:admin", now.Add(2*time.Hour)); n != 1 {
		t.Fatalf("a pruned key counts %d", n)
	}
	// concurrent failures (several servers) are all counted
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := af.AddAuthFailure(ctx, "ip:198.51.100.7", now, forget); err != nil {
				errs <- fmt.Errorf("failure %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := add("ip:198.51.100.7", now); n != 21 {
		t.Fatalf("21 concurrent and serial failures counted as %d", n)
	}
}
