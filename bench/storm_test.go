package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/sqlite"
)

// stormServer stores a storm archive of works works and a book of pages
// pages and serves it as serve does behind a trusted proxy 127.0.0.1, on
// a loopback port.
func stormServer(t *testing.T, works, pages int) (string, *StormArchive) {
	t.Helper()
	ctx := context.Background()
	data := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	a, err := LoadStormArchive(ctx, repo, blobs, works, pages, 1)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Logger: logger})
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: store, Accounts: acc, Jobs: repo, Logger: logger,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln, srv) }()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = srv.Shutdown(sctx)
		cancel()
		repo.Close()
		blobs.Close()
		store.Close()
	})
	return "http://" + ln.Addr().String(), a
}

// TestStormArchive: the archive holds its works in its collection, the
// book's text is found by search inside it, the works by the search
// page, and no job is left for a server to run.
func TestStormArchive(t *testing.T) {
	base, a := stormServer(t, 4, 3)
	if len(a.Works) != 4 || a.Book == "" || a.Collection == "" || a.BookPages != 3 || len(a.Words) == 0 {
		t.Fatalf("archive %+v", a)
	}
	n := 0
	get := func(path string) []byte {
		t.Helper()
		// each from an address of its own: the checks ask faster than
		// one client's rate share of searches
		n++
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.7.%d.%d", n/250, n%250+1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v: %.300s", path, resp.StatusCode, err, b)
		}
		return b
	}
	hits := 0
	for _, w := range a.Words {
		var d struct {
			Within struct {
				Total int `json:"total"`
			} `json:"within"`
		}
		if err := json.Unmarshal(get("/iiif/"+a.Book+"/search/1?q="+url.QueryEscape(w)), &d); err != nil {
			t.Fatal(err)
		}
		hits += d.Within.Total
	}
	// 3 pages of 72 words each: every word found is a hit
	if hits != 3*72 {
		t.Errorf("search inside the book found %d hits of its words, want %d", hits, 3*72)
	}
	found := 0
	for _, w := range a.Words {
		var d struct {
			Total int `json:"total"`
		}
		if err := json.Unmarshal(get("/api/v1/search?q="+url.QueryEscape(w)), &d); err != nil {
			t.Fatal(err)
		}
		found += d.Total
	}
	if found == 0 {
		t.Error("the search finds none of the archive's words")
	}
	var members struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(get("/api/v1/resources/"+a.Collection+"/members"), &members); err != nil {
		t.Fatal(err)
	}
	if len(members.Items) != 5 { // the works and the book
		t.Errorf("the collection has %d members, want 5", len(members.Items))
	}
}

// TestStorm: a storm's counts add up, every kind of request was asked,
// and every request was a valid one (no status but 200, 429 or 503);
// Stop is idempotent.
func TestStorm(t *testing.T) {
	base, a := stormServer(t, 3, 2)
	s, err := StartStorm(context.Background(), StormConfig{Base: base, Targets: a.Targets(), Conns: 6, Addrs: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	c := s.Stop()
	if c.Requests < int64(len(stormKinds)) {
		t.Fatalf("only %d requests: %+v", c.Requests, c)
	}
	if sum := c.OK + c.TooMany + c.Unavailable + c.Other + c.Timeouts + c.ConnErrors; sum != c.Requests {
		t.Errorf("the counts sum to %d, not the %d requests: %+v", sum, c.Requests, c)
	}
	if c.Other != 0 || c.Timeouts != 0 || c.ConnErrors != 0 {
		t.Errorf("requests that were not valid, or not answered: %+v", c)
	}
	for _, k := range stormKinds {
		if c.ByKind[k] == 0 {
			t.Errorf("no request of kind %s: %v", k, c.ByKind)
		}
	}
	if c.Seconds <= 0 || c.RatePerS <= 0 || c.Conns != 6 || c.Addrs != 3 {
		t.Errorf("counts %+v", c)
	}
	if again := s.Stop(); again.Requests != c.Requests {
		t.Errorf("Stop again: %d requests, first %d", again.Requests, c.Requests)
	}
	if _, err := StartStorm(context.Background(), StormConfig{Base: base, Targets: a.Targets()}); err == nil {
		t.Error("a storm of no connections started")
	}
}

// TestParseServerTiming reads the admission wait and the handler's time
// of a Server-Timing header, in any order and beside other metrics, and
// says when either is missing or unreadable.
func TestParseServerTiming(t *testing.T) {
	for _, c := range []struct {
		h          string
		admit, app float64
		ok         bool
	}{
		{"admit;dur=0.012, app;dur=3.400", 0.012, 3.4, true},
		{`db;desc="query";dur=2, app;dur=5.5,admit;dur=1`, 1, 5.5, true},
		{"app;dur=5.5", 0, 5.5, false},
		{"admit;dur=x, app;dur=1", 0, 1, false},
		{"", 0, 0, false},
	} {
		admit, app, ok := parseServerTiming(c.h)
		if admit != c.admit || app != c.app || ok != c.ok {
			t.Errorf("%q: %v %v %v, want %v %v %v", c.h, admit, app, ok, c.admit, c.app, c.ok)
		}
	}
}

// TestStormTargets: every kind of request names the archive's words, and
// a prefix search ends in *; the addresses of the storm's clients are
// distinct.
func TestStormTargets(t *testing.T) {
	a := &StormArchive{Words: []string{"harbour"}, Collection: "c1", Book: "b1"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		for _, k := range stormKinds {
			u, err := url.Parse(a.Targets().target(k, r))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query().Get("q")
			switch k {
			case "prefix":
				if q != "h*" && q != "ha*" {
					t.Errorf("prefix search %s", u)
				}
			case "book":
				if !slices.Contains([]string{"/iiif/b1/search/1", "/iiif/b1/search/2"}, u.Path) {
					t.Errorf("search inside the book %s", u)
				}
			case "facet":
				if u.Query().Get("collection") != "c1" && u.Query().Get("kind") != "work" {
					t.Errorf("facet %s", u)
				}
			}
		}
	}
	seen := map[string]bool{}
	for k := range 300 {
		seen[StormAddr(k)] = true
	}
	if len(seen) != 300 {
		t.Errorf("%d distinct addresses of 300", len(seen))
	}
}

// TestKeepSample: the sample holds at most stormSamples, each of a long
// sequence with the same chance: about half the sample of 2×stormSamples
// values is from their first half.
func TestKeepSample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var s []time.Duration
	n := 2 * stormSamples
	for i := 1; i <= n; i++ {
		s = keepSample(s, int64(i), time.Duration(i), r)
	}
	if len(s) != stormSamples {
		t.Fatalf("%d kept", len(s))
	}
	first := 0
	for _, d := range s {
		if d <= time.Duration(n/2) {
			first++
		}
	}
	// binomial(4096, 0.5): a standard deviation of 32
	if first < stormSamples/2-200 || first > stormSamples/2+200 {
		t.Errorf("%d of %d from the first half", first, stormSamples)
	}
}
