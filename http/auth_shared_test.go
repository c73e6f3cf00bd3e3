package http

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// sharedServers returns two servers on the environment's database that
// share their brute-force limiter's failures through it, as two servers
// behind a load balancer would, with one frozen clock (so that no wait
// ends while a slow machine runs the test); the returned function moves
// the clock on.
func sharedServers(t *testing.T, e *testEnv) (a, b *httptest.Server, sa, sb *Server, advance func(time.Duration)) {
	t.Helper()
	var mu sync.Mutex
	at := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	servers := make([]*Server, 2)
	tss := make([]*httptest.Server, 2)
	for i := range servers {
		opts := e.srv.opts
		opts.AuthFailures = e.db
		servers[i] = NewServer(opts)
		servers[i].limiter.now = now
		tss[i] = httptest.NewServer(servers[i])
		t.Cleanup(tss[i].Close)
	}
	return tss[0], tss[1], servers[0], servers[1], func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
}

// status sends a GET with a bearer token (none when "") and returns the
// status.
func status(t *testing.T, ts *httptest.Server, path, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSharedLimiterBlocksEverywhere: a client that failed too often on
// one server is refused on the other, which learns of it from the
// database, though the client never failed there, and though it sends a
// good token (the answer must not tell good guesses from bad).
func TestSharedLimiterBlocksEverywhere(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 3})
	a, b, _, sb, advance := sharedServers(t, e)
	bad := shelfmark.TokenPrefix + "guess"
	for i := 0; i < 4; i++ {
		if got := status(t, a, "/api/v1/search?q=x", bad); got != http.StatusUnauthorized {
			t.Fatalf("failure %d on server A: %d", i+1, got)
		}
	}
	if got := status(t, a, "/api/v1/search?q=x", bad); got != http.StatusTooManyRequests {
		t.Fatalf("server A after 4 failures: %d, want 429", got)
	}
	// server B reads the waiting keys in the background at the first
	// request with a credential; poll (generously) until it refuses
	deadline := time.Now().Add(time.Minute)
	for {
		got := status(t, b, "/api/v1/search?q=x", e.admin)
		if got == http.StatusTooManyRequests {
			break
		}
		if got != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("server B: %d, want 200 until it learns of the block, then 429", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := sb.limiter.shared.reads.Load(); n != 1 {
		t.Errorf("server B read the blocked keys %d times, want 1 (the clock stands still)", n)
	}
	// once the wait is over, the good token works on both
	advance(time.Second)
	for name, ts := range map[string]*httptest.Server{"A": a, "B": b} {
		if got := status(t, ts, "/api/v1/search?q=x", e.admin); got != http.StatusOK {
			t.Errorf("server %s after the wait: %d", name, got)
		}
	}
}

// TestSharedLimiterCountsEverywhere: failures spread over two servers
// add up, so an attacker gets no more guesses from several servers than
// from one; a sign-in counts against the user name too.
func TestSharedLimiterCountsEverywhere(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 3})
	a, b, sa, _, _ := sharedServers(t, e)
	login := func(ts *httptest.Server, password string) int {
		resp, err := ts.Client().Post(ts.URL+"/api/v1/login", "application/json",
			strings.NewReader(`{"name": "admin", "password": "`+password+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// two failures on each: 4 in all, one more than the limit
	for i, ts := range []*httptest.Server{a, b, a, b} {
		if got := login(ts, "guess"); got != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, got)
		}
	}
	// B counted the 4th itself and blocks at once
	if got := login(b, adminPassword); got != http.StatusTooManyRequests {
		t.Fatalf("server B after 4 failures on two servers: %d, want 429", got)
	}
	// A knows only its own 2 failures until it reads the database; then
	// it refuses too
	deadline := time.Now().Add(time.Minute)
	for sa.limiter.shared.reads.Load() == 0 || sa.limiter.blocked(clientKey(&http.Request{RemoteAddr: "127.0.0.1:1"})) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("server A never learnt of the block")
		}
		sa.limiter.shared.next.Store(0) // the clock stands still: make a read due
		sa.limiter.sync()
		time.Sleep(10 * time.Millisecond)
	}
	if got := login(a, adminPassword); got != http.StatusTooManyRequests {
		t.Fatalf("server A: %d, want 429", got)
	}
}

// TestSharedLimiterGoodPathNoQuery: with the shared failures on, a
// request with a good credential and no failure on record runs no
// statement of the limiter; only a read of the waiting keys (and now and
// then a prune of forgotten ones) runs in the background, at most every
// authSyncEvery, whatever the number of requests.
func TestSharedLimiterGoodPathNoQuery(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 3})
	a, _, sa, _, advance := sharedServers(t, e)
	limiterStatements := func(n int) int {
		t.Helper()
		mark := e.tr.mark()
		for i := 0; i < n; i++ {
			if got := status(t, a, "/api/v1/search?q=x", e.admin); got != http.StatusOK {
				t.Fatalf("request %d: %d", i, got)
			}
		}
		deadline := time.Now().Add(time.Minute)
		for sa.limiter.shared.busy.Load() { // let a background read end
			if time.Now().After(deadline) {
				t.Fatal("the read of the waiting keys never ended")
			}
			time.Sleep(10 * time.Millisecond)
		}
		k := 0
		for _, q := range e.tr.since(mark) {
			if strings.Contains(q, "auth_failures") {
				k++
			}
		}
		return k
	}
	if n := limiterStatements(1); n == 0 || n > 2 {
		t.Fatalf("the first request started %d statements on auth_failures, want the background read (and prune)", n)
	}
	if n := limiterStatements(20); n != 0 {
		t.Fatalf("20 good requests ran %d statements on auth_failures, want none", n)
	}
	advance(authSyncEvery)
	if n := limiterStatements(20); n != 1 {
		t.Fatalf("20 good requests %s later ran %d statements on auth_failures, want the one read", authSyncEvery, n)
	}
	if r := sa.limiter.shared.reads.Load(); r != 2 {
		t.Fatalf("%d reads of the waiting keys, want 2", r)
	}
}
