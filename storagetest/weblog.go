package storagetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The link log (shelfmark.WebWriteTx's LogWebLinks, WebLinkLogAt,
// TakeWebLinkLog) and its merge (Repository.MergeWebLinks).

// webLogEnd is past every key of the log.
var webLogEnd = shelfmark.WebLink{Dst: 1<<63 - 1, Src: 1<<63 - 1}

// change is a logged link change.
func change(dst, src, delta int64) shelfmark.WebLinkChange {
	return shelfmark.WebLinkChange{WebLink: shelfmark.WebLink{Dst: dst, Src: src}, Delta: delta}
}

// testWebLinkLog: the log sums a link's deltas across transactions, is
// read in key order from any key and skip, and gives up exactly the rows
// of a key range; AddWebInbound moves URL and domain counts together.
func testWebLinkLog(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	doms := internDomains(t, s, "a.example", "b.example")
	ua := internURLs(t, s, doms[0], "example,a)/0", "example,a)/1", "example,a)/2")
	ub := internURLs(t, s, doms[1], "example,b)/0")
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		return tx.LogWebLinks(ctx, []shelfmark.WebLinkChange{change(ub[0], ua[1], 1), change(ua[0], ua[1], 1), change(ua[0], ua[2], 1)})
	})
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		return tx.LogWebLinks(ctx, []shelfmark.WebLinkChange{change(ua[0], ua[1], -1), change(ua[1], ua[0], -1)})
	})
	// key order: (ua0, ua1) 0, (ua0, ua2) +1, (ua1, ua0) -1, (ub0, ua1) +1
	want := []shelfmark.WebLinkChange{change(ua[0], ua[1], 0), change(ua[0], ua[2], 1), change(ua[1], ua[0], -1), change(ub[0], ua[1], 1)}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		for skip := range len(want) + 1 {
			at, ok, err := tx.WebLinkLogAt(ctx, shelfmark.WebLink{}, skip)
			if err != nil {
				return err
			}
			if skip == len(want) {
				if ok {
					t.Errorf("log at skip %d: %v, want none", skip, at)
				}
				continue
			}
			if !ok || at != want[skip].WebLink {
				t.Errorf("log at skip %d: %v %v, want %v", skip, at, ok, want[skip].WebLink)
			}
		}
		// from a key between rows
		at, ok, err := tx.WebLinkLogAt(ctx, shelfmark.WebLink{Dst: ua[0], Src: ua[1] + 1}, 1)
		if err != nil || !ok || at != want[2].WebLink {
			t.Errorf("log at (ua0, ua1+1) + 1: %v %v %v, want %v", at, ok, err, want[2].WebLink)
		}
		got, err := tx.TakeWebLinkLog(ctx, want[1].WebLink, want[3].WebLink)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want[1:3]) {
			t.Errorf("take [1, 3): %v, want %v", got, want[1:3])
		}
		if got, err = tx.TakeWebLinkLog(ctx, shelfmark.WebLink{}, webLogEnd); err != nil {
			return err
		}
		if !slices.Equal(got, []shelfmark.WebLinkChange{want[0], want[3]}) {
			t.Errorf("take the rest: %v, want %v", got, []shelfmark.WebLinkChange{want[0], want[3]})
		}
		if _, ok, err := tx.WebLinkLogAt(ctx, shelfmark.WebLink{}, 0); err != nil || ok {
			t.Errorf("log after taking all: %v %v", ok, err)
		}
		return tx.AddWebInbound(ctx, map[int64]int64{ua[0]: 3, ua[1]: 2, ub[0]: 1, ua[2]: 0})
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		if logged, err := tx.WebLinkLogged(ctx); err != nil || logged {
			t.Errorf("an empty log is logged: %v %v", logged, err)
		}
		urls, err := tx.WebURLRows(ctx, append(slices.Clone(ua), ub...))
		if err != nil {
			return err
		}
		got := map[int64]int64{}
		for _, u := range urls {
			got[u.ID] = u.Inbound
		}
		if w := map[int64]int64{ua[0]: 3, ua[1]: 2, ua[2]: 0, ub[0]: 1}; !maps.Equal(got, w) {
			t.Errorf("url counts %v, want %v", got, w)
		}
		ds, err := tx.WebDomainRows(ctx, doms)
		if err != nil {
			return err
		}
		if len(ds) != 2 || ds[0].Inbound != 5 || ds[1].Inbound != 1 {
			t.Errorf("domain counts %+v, want 5 and 1", ds)
		}
		return nil
	})
}

// testWebMerge: links changed by many transactions, some merged in
// between, end as the model says after a merge whose transactions split
// the log anywhere (three changes each), a merge of an empty log does
// nothing, merges run side by side end as one would, and a log left
// behind is merged by the sweep and by a re-run of an indexed file.
func testWebMerge(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{WebMergeChunk: 3})
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	s := e.store
	doms := internDomains(t, s, "a.example", "b.example", "c.example")
	var urls []int64
	domOf := map[int64]int{}
	for d := range doms {
		var surts []string
		for i := range 8 {
			surts = append(surts, fmt.Sprintf("example,%c)/%d", 'a'+d, i))
		}
		for _, id := range internURLs(t, s, doms[d], surts...) {
			urls = append(urls, id)
			domOf[id] = d
		}
	}
	model := map[shelfmark.WebLink]bool{}
	rnd := rand.New(rand.NewSource(11))
	var merged int64
	logRound := func() {
		var changes []shelfmark.WebLinkChange
		seen := map[shelfmark.WebLink]bool{}
		for range 15 {
			l := shelfmark.WebLink{Dst: urls[rnd.Intn(len(urls))], Src: urls[rnd.Intn(len(urls))]}
			if seen[l] {
				continue
			}
			seen[l] = true
			delta := int64(1)
			if model[l] {
				delta = -1
			}
			model[l] = !model[l]
			changes = append(changes, shelfmark.WebLinkChange{WebLink: l, Delta: delta})
		}
		webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.LogWebLinks(ctx, changes) })
	}
	for round := range 12 {
		logRound()
		if round%4 == 3 {
			n, err := e.repo.MergeWebLinks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			merged += n
		}
	}
	n, err := e.repo.MergeWebLinks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	merged += n
	if merged == 0 {
		t.Fatal("the merges moved nothing")
	}
	checkLinks := func(what string) {
		t.Helper()
		inbound := map[int64]int64{}
		domains := make([]int64, len(doms))
		wantSrc := map[int64][]int64{}
		for l, on := range model {
			if on {
				inbound[l.Dst]++
				domains[domOf[l.Dst]]++
				wantSrc[l.Dst] = append(wantSrc[l.Dst], l.Src)
			}
		}
		webView(t, s, func(tx shelfmark.ReadTx) error {
			if logged, err := tx.WebLinkLogged(ctx); err != nil || logged {
				t.Errorf("%s: the log holds changes after a merge (%v)", what, err)
			}
			for _, dst := range urls {
				rows, err := tx.WebInbound(ctx, dst, 0, 1000)
				if err != nil {
					return err
				}
				var got []int64
				for _, u := range rows {
					got = append(got, u.ID)
				}
				want := wantSrc[dst]
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s: inbound of %d: %v, want %v", what, dst, got, want)
				}
			}
			rows, err := tx.WebURLRows(ctx, urls)
			if err != nil {
				return err
			}
			for _, u := range rows {
				if u.Inbound != inbound[u.ID] {
					t.Errorf("%s: url %d counts %d, want %d", what, u.ID, u.Inbound, inbound[u.ID])
				}
			}
			ds, err := tx.WebDomainRows(ctx, doms)
			if err != nil {
				return err
			}
			for i, d := range ds {
				if d.Inbound != domains[i] {
					t.Errorf("%s: domain %s counts %d, want %d", what, d.Name, d.Inbound, domains[i])
				}
			}
			return nil
		})
	}
	checkLinks("merged")
	if n, err := e.repo.MergeWebLinks(ctx); err != nil || n != 0 {
		t.Fatalf("merge of an empty log: %d, %v", n, err)
	}

	// merges side by side take turns by transaction and end as one
	// merge would
	for range 6 {
		logRound()
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	moved := make([]int64, 4)
	for i := range errs {
		wg.Go(func() { moved[i], errs[i] = e.repo.MergeWebLinks(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if moved[0]+moved[1]+moved[2]+moved[3] == 0 {
		t.Fatal("the merges side by side moved nothing")
	}
	checkLinks("merged side by side")

	// a log left behind (an ingest killed before its merge) is merged by
	// the sweep
	flip := func() {
		l := shelfmark.WebLink{Dst: urls[0], Src: urls[len(urls)-1]}
		delta := int64(1)
		if model[l] {
			delta = -1
		}
		model[l] = !model[l]
		webUpdate(t, s, func(tx shelfmark.WriteTx) error {
			return tx.LogWebLinks(ctx, []shelfmark.WebLinkChange{{WebLink: l, Delta: delta}})
		})
	}
	flip()
	if _, err := e.repo.SweepWebFiles(ctx); err != nil {
		t.Fatal(err)
	}
	checkLinks("swept")

	// and by StartWebFile of a file indexed before
	file := newWARCFile(t, e)
	if _, err := e.repo.StartWebFile(ctx, file); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.repo.IndexWebBatch(ctx, &shelfmark.WebBatch{File: file, From: 0, Next: 10, Done: true}); err != nil || !ok {
		t.Fatalf("index an empty file: %v %v", ok, err)
	}
	flip()
	if _, err := e.repo.StartWebFile(ctx, file); err != nil {
		t.Fatal(err)
	}
	checkLinks("started again")
}

// newWARCFile makes a work holding one file a WARC can be indexed from.
func newWARCFile(t *testing.T, e *env) shelfmark.ID {
	t.Helper()
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	work, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	if err != nil {
		t.Fatal(err)
	}
	file, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "a.warc", Size: 100, SHA256: fmt.Sprintf("%064x", 1), MediaType: "application/warc"}})
	if err != nil {
		t.Fatal(err)
	}
	return file.ID
}

// testWebMergeTrails: a batch's links show once merged: not after a batch
// while the log is below WebMergeLinks, at once after the file's last
// batch; a batch that fills the log merges it.
func testWebMergeTrails(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{WebMergeLinks: 3})
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	file := newWARCFile(t, e)
	if _, err := e.repo.StartWebFile(ctx, file); err != nil {
		t.Fatal(err)
	}
	page := func(i int, links ...int) *shelfmark.WebRecord {
		u := func(i int) shelfmark.WebURL {
			return shelfmark.WebURL{URL: fmt.Sprintf("http://a.example/%d", i), SURT: fmt.Sprintf("example,a)/%d", i), Domain: "a.example"}
		}
		r := &shelfmark.WebRecord{Offset: int64(i), Length: 1, Type: "response", Target: u(i), HasLinks: true,
			Time: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC), RecordID: fmt.Sprintf("<urn:x:%d>", i), MIME: "text/html", Status: 200}
		for _, l := range links {
			r.Links = append(r.Links, u(l))
		}
		return r
	}
	inbound := func(i int) int64 {
		t.Helper()
		got, err := e.repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: fmt.Sprintf("example,a)/%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		return got.InboundCount
	}
	batch := func(from int64, done bool, recs ...*shelfmark.WebRecord) {
		t.Helper()
		ok, err := e.repo.IndexWebBatch(ctx, &shelfmark.WebBatch{File: file, From: from, Next: from + 1, Records: recs, Done: done})
		if err != nil || !ok {
			t.Fatalf("batch at %d: %v %v", from, ok, err)
		}
	}
	batch(0, false, page(1, 9), page(2, 9)) // 2 changes logged, below 3
	if n := inbound(9); n != 0 {
		t.Fatalf("inbound of 9 before a merge: %d, want 0 (the log trails)", n)
	}
	batch(1, false, page(3, 9)) // 3 logged: merged
	if n := inbound(9); n != 3 {
		t.Fatalf("inbound of 9 after the log filled: %d, want 3", n)
	}
	batch(2, true, page(4, 9)) // the last batch: merged
	if n := inbound(9); n != 4 {
		t.Fatalf("inbound of 9 after the file ended: %d, want 4", n)
	}
}
