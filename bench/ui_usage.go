package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"time"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/http/admission"
)

// uiBookWord is on every page of the scenario's book and nowhere else: its
// search page groups the book's pages under the one work.
const uiBookWord = "harbour"

// uiBookText gives each page of the book the text a text extraction would
// have given it (a search document of the page: the word on every page and
// the page's number), as the background pipeline stores it.
func uiBookText(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, book shelfmark.ID, pages []shelfmark.ID) error {
	codec := repo.IDs()
	bk, err := codec.Key(book)
	if err != nil {
		return err
	}
	docs := make([]shelfmark.SearchDoc, 0, len(pages))
	for i, p := range pages {
		k, err := codec.Key(p)
		if err != nil {
			return err
		}
		docs = append(docs, shelfmark.SearchDoc{Key: k, Work: bk, Kind: shelfmark.KindFileSet, Format: "Plain Text",
			Body: fmt.Sprintf("Chart of the %s and its soundings, sheet %d of the atlas.", uiBookWord, i+1)})
	}
	if err := store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		return fmt.Errorf("the book's page text: %w", err)
	}
	return nil
}

// UIUsage is what counting uses costs readers: the same reader asks for the
// book's work page as fast as it is answered from two servers over the same
// repository, one that counts uses (COUNTER's rules, shelfmark.UsageCounter)
// while UIUsageRate other views a second are recorded beside it and the
// counts are flushed every UIUsageFlush, and one that counts nothing, in
// alternating slices, so that both see the same machine.
type UIUsage struct {
	// Seconds is the time asked of each server; Slices the slices it was
	// cut into.
	Seconds float64 `json:"seconds"`
	Slices  int     `json:"slices"`
	// PlainPerS and CountedPerS are the work pages answered a second by
	// each; Ratio is CountedPerS over PlainPerS (goal ≥ 0.95).
	PlainPerS   float64 `json:"plain_per_s"`
	CountedPerS float64 `json:"counted_per_s"`
	Ratio       float64 `json:"ratio"`
	// Recorded is the views recorded beside the reader's; Flushes the
	// flushes of the counts while the counting server was asked; Stored
	// the views stored for the book's work by the end (the reader's
	// investigations, double clicks left out).
	Recorded int64 `json:"recorded"`
	Flushes  int   `json:"flushes"`
	// FlushSeconds is the time the flushes took, of the counting slices'.
	FlushSeconds float64 `json:"flush_seconds"`
	Errors       int64   `json:"errors"`
}

const (
	// UIUsageRate is the views a second recorded beside the reader's.
	UIUsageRate = 1000
	// UIUsageFlush is how often the counts are written while the counting
	// server is asked (the server flushes every 10 s; more often here, so
	// that the slices see the writes).
	UIUsageFlush = 2 * time.Second
)

// uiUsageCost measures UIUsage over total seconds of asking, in slices of
// slice each, for the work page at path; works are the ids the other views
// are of.
func uiUsageCost(ctx context.Context, repo *shelfmark.Repository, opts shttp.Options, path string, works []shelfmark.ID, total, slice time.Duration) (*UIUsage, error) {
	counter, err := repo.NewUsageCounter()
	if err != nil {
		return nil, err
	}
	plainOpts, countedOpts := opts, opts
	plainOpts.Usage, countedOpts.Usage = nil, counter
	plainOpts.Admission, countedOpts.Admission = admission.Settings{Off: true}, admission.Settings{Off: true}
	serve := func(o shttp.Options) (base string, stop func(), err error) {
		srv := shttp.NewServer(o)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		go func() { _ = srv.Serve(ln, srv) }()
		return "http://" + ln.Addr().String(), func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}, nil
	}
	plainBase, stopPlain, err := serve(plainOpts)
	if err != nil {
		return nil, err
	}
	defer stopPlain()
	countedBase, stopCounted, err := serve(countedOpts)
	if err != nil {
		return nil, err
	}
	defer stopCounted()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: time.Minute}
	out := &UIUsage{}
	ask := func(base string, until time.Time) (n int64, err error) {
		for time.Now().Before(until) {
			req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			if err != nil {
				return n, err
			}
			req.Header.Set("Accept", browserAccept)
			req.Header.Set("Accept-Language", "en")
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) shelfmark-bench reader")
			resp, err := client.Do(req)
			if err != nil {
				return n, err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				return n, err
			}
			if resp.StatusCode != http.StatusOK {
				out.Errors++
			}
			n++
		}
		return n, nil
	}
	// the other views: UIUsageRate a second, each of a random work by a
	// random session, recorded as the counting server would
	sessions := make([]string, 5000)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("bench-session-%d", i)
	}
	others := func(until time.Time, rng *rand.Rand) {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		per := UIUsageRate / 100
		for now := time.Now(); now.Before(until); now = <-tick.C {
			for range per {
				counter.Record(shelfmark.UsageEvent{ID: works[rng.IntN(len(works))], Session: sessions[rng.IntN(len(sessions))], At: now})
				out.Recorded++
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var plainN, countedN int64
	var plainT, countedT time.Duration
	slices := max(1, int(total/slice))
	for i := range 2 * slices {
		counted := i%2 == 1
		start := time.Now()
		until := start.Add(slice)
		var n int64
		if counted {
			done := make(chan struct{})
			go func() { others(until, rng); close(done) }()
			flushed := make(chan int)
			go func() {
				f := 0
				t := time.NewTicker(UIUsageFlush)
				defer t.Stop()
				for {
					select {
					case <-done:
						flushed <- f
						return
					case <-t.C:
						f0 := time.Now()
						if err := counter.Flush(context.WithoutCancel(ctx)); err == nil {
							f++
						}
						out.FlushSeconds += time.Since(f0).Seconds()
					}
				}
			}()
			n, err = ask(countedBase, until)
			<-done
			out.Flushes += <-flushed
			countedN, countedT = countedN+n, countedT+time.Since(start)
		} else {
			n, err = ask(plainBase, until)
			plainN, plainT = plainN+n, plainT+time.Since(start)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := counter.Flush(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("the last flush of the counts: %w", err)
	}
	out.Slices, out.Seconds = slices, (plainT+countedT).Seconds()/2
	if plainT > 0 && countedT > 0 && plainN > 0 {
		out.PlainPerS, out.CountedPerS = float64(plainN)/plainT.Seconds(), float64(countedN)/countedT.Seconds()
		out.Ratio = out.CountedPerS / out.PlainPerS
	}
	return out, nil
}
