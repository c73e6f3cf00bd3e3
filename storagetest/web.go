package storagetest

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The web index (shelfmark.WebReadTx, shelfmark.WebWriteTx), driven
// directly through transactions: the engine's rules (which capture is
// current, link diffs) are tested in the root package.

func webUpdate(t testing.TB, s shelfmark.Storage, fn func(shelfmark.WriteTx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func webView(t testing.TB, s shelfmark.Storage, fn func(shelfmark.ReadTx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// internDomains interns names and returns their ids.
func internDomains(t testing.TB, s shelfmark.Storage, names ...string) []int64 {
	t.Helper()
	rows := make([]*shelfmark.WebDomainRow, len(names))
	for i, n := range names {
		rows[i] = &shelfmark.WebDomainRow{Name: n}
	}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebDomains(context.Background(), rows) })
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// webURL is a URL row for surt in domain.
func webURL(surt string, domain int64) *shelfmark.WebURLRow {
	return &shelfmark.WebURLRow{SURT: surt, URL: "http://" + surt, Domain: domain}
}

// internURLs interns URLs of domain by SURT and returns their ids.
func internURLs(t testing.TB, s shelfmark.Storage, domain int64, surts ...string) []int64 {
	t.Helper()
	rows := make([]*shelfmark.WebURLRow, len(surts))
	for i, su := range surts {
		rows[i] = webURL(su, domain)
	}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebURLs(context.Background(), rows) })
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// testWebIntern: interning gives one id per name or SURT, the same on
// every call; New marks the first row of a name the call inserted, only.
func testWebIntern(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store

	doms := []*shelfmark.WebDomainRow{{Name: "example.com"}, {Name: "example.org"}, {Name: "example.com"}}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebDomains(ctx, doms) })
	if doms[0].ID == 0 || doms[0].ID != doms[2].ID || doms[1].ID == doms[0].ID {
		t.Fatalf("domain ids %d %d %d", doms[0].ID, doms[1].ID, doms[2].ID)
	}
	if !doms[0].New || !doms[1].New || doms[2].New {
		t.Fatalf("New: %v %v %v, want true true false", doms[0].New, doms[1].New, doms[2].New)
	}
	again := []*shelfmark.WebDomainRow{{Name: "example.org"}, {Name: "example.net"}, {Name: "example.com"}}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebDomains(ctx, again) })
	if again[0].ID != doms[1].ID || again[2].ID != doms[0].ID || again[0].New || again[2].New || !again[1].New {
		t.Fatalf("second intern: %+v %+v %+v", *again[0], *again[1], *again[2])
	}
	webView(t, s, func(tx shelfmark.ReadTx) error {
		org, err := tx.WebDomainRows(ctx, []int64{doms[1].ID})
		if err != nil {
			return err
		}
		if len(org) != 1 || org[0].Name != "example.org" || org[0].URLs != 0 || org[0].Inbound != 0 {
			t.Fatalf("example.org read back: %+v", org)
		}
		ds, err := tx.WebDomainRows(ctx, []int64{again[1].ID, doms[0].ID, 1 << 40})
		if err != nil {
			return err
		}
		if len(ds) != 2 {
			t.Fatalf("WebDomainRows: %d rows", len(ds))
		}
		return nil
	})

	dom := doms[0].ID
	urls := []*shelfmark.WebURLRow{webURL("com,example)/b", dom), webURL("com,example)/a", dom), webURL("com,example)/b", dom)}
	urls[0].URL = "http://example.com/b"
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebURLs(ctx, urls) })
	if urls[0].ID == 0 || urls[0].ID != urls[2].ID || urls[1].ID == urls[0].ID || !urls[0].New || !urls[1].New || urls[2].New {
		t.Fatalf("urls: %+v %+v %+v", *urls[0], *urls[1], *urls[2])
	}
	more := []*shelfmark.WebURLRow{webURL("com,example)/a", dom), webURL("com,example)/c", dom)}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { return tx.InternWebURLs(ctx, more) })
	if more[0].ID != urls[1].ID || more[0].New || !more[1].New || more[1].ID == urls[0].ID || more[1].ID == urls[1].ID {
		t.Fatalf("second intern: %+v %+v", *more[0], *more[1])
	}
	webView(t, s, func(tx shelfmark.ReadTx) error {
		m, err := tx.WebURLsBySURT(ctx, []string{"com,example)/b", "com,example)/zzz", "com,example)/c"})
		if err != nil {
			return err
		}
		want := &shelfmark.WebURLRow{ID: urls[0].ID, SURT: "com,example)/b", URL: "http://example.com/b", Domain: dom}
		if len(m) != 2 || !reflect.DeepEqual(m["com,example)/b"], want) || m["com,example)/c"].ID != more[1].ID {
			t.Fatalf("WebURLsBySURT: %v", m)
		}
		rows, err := tx.WebURLRows(ctx, []int64{more[1].ID, urls[0].ID, 1 << 40})
		if err != nil {
			return err
		}
		if len(rows) != 2 {
			t.Fatalf("WebURLRows: %d rows", len(rows))
		}
		if m, err := tx.WebURLsBySURT(ctx, nil); err != nil || len(m) != 0 {
			t.Fatalf("no surts: %v %v", m, err)
		}
		return nil
	})
	// an empty call does nothing
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		if err := tx.InternWebURLs(ctx, nil); err != nil {
			return err
		}
		return tx.InternWebDomains(ctx, nil)
	})
}

// testWebInternConcurrent: writers interning overlapping URLs at once (in
// queue transactions, which PostgreSQL runs side by side) agree on one row
// per SURT, and exactly one of them sees it as new.
func testWebInternConcurrent(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	dom := internDomains(t, e.store, "example.com")[0]
	const writers, each = 6, 300
	results := make([][]*shelfmark.WebURLRow, writers)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rows := make([]*shelfmark.WebURLRow, each)
			for i := range rows {
				// writer w takes surts w*each/2 … : each overlaps its neighbours
				rows[i] = webURL(fmt.Sprintf("com,example)/%05d", w*each/2+i), dom)
			}
			rand.New(rand.NewSource(int64(w))).Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
			err := e.store.UpdateQueue(ctx, func(tx shelfmark.WriteTx) error {
				for _, r := range rows {
					r.ID, r.New = 0, false // a retried transaction starts afresh
				}
				return tx.InternWebURLs(ctx, rows)
			})
			if err != nil {
				t.Error(err)
			}
			results[w] = rows
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ids := map[string]int64{}
	news := map[string]int{}
	for _, rows := range results {
		for _, r := range rows {
			if r.ID == 0 {
				t.Fatalf("%s has no id", r.SURT)
			}
			if id, ok := ids[r.SURT]; ok && id != r.ID {
				t.Fatalf("%s got ids %d and %d", r.SURT, id, r.ID)
			}
			ids[r.SURT] = r.ID
			if r.New {
				news[r.SURT]++
			}
		}
	}
	byID := map[int64]string{}
	for surt, id := range ids {
		if other, ok := byID[id]; ok {
			t.Fatalf("%s and %s share id %d", surt, other, id)
		}
		byID[id] = surt
		if news[surt] != 1 {
			t.Fatalf("%s was new to %d writers", surt, news[surt])
		}
	}
	surts := make([]string, 0, len(ids))
	for s := range ids {
		surts = append(surts, s)
	}
	webView(t, e.store, func(tx shelfmark.ReadTx) error {
		m, err := tx.WebURLsBySURT(ctx, surts)
		if err != nil {
			return err
		}
		for s, id := range ids {
			if m[s] == nil || m[s].ID != id {
				t.Fatalf("%s: stored %+v, interned as %d", s, m[s], id)
			}
		}
		return nil
	})
}

// testWebFiles: PutWebFile inserts and replaces; WebFiles pages by key.
func testWebFiles(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	for _, k := range []int64{30, 10, 20, 40} {
		webUpdate(t, s, func(tx shelfmark.WriteTx) error {
			return tx.PutWebFile(ctx, &shelfmark.WebFileRow{File: k, Work: k + 1, Offset: 7})
		})
	}
	want := shelfmark.WebFileRow{File: 20, Work: 99, Offset: 1 << 40, Records: 12345, Errors: 3, Done: true, Removed: true}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error { w := want; return tx.PutWebFile(ctx, &w) })
	webView(t, s, func(tx shelfmark.ReadTx) error {
		got, err := tx.WebFile(ctx, 20)
		if err != nil {
			return err
		}
		if got == nil || *got != want {
			t.Fatalf("WebFile(20) = %+v, want %+v", got, want)
		}
		if got, err := tx.WebFile(ctx, 25); err != nil || got != nil {
			t.Fatalf("WebFile(25) = %+v, %v", got, err)
		}
		var keys []int64
		after := int64(0)
		for {
			page, err := tx.WebFiles(ctx, after, 3)
			if err != nil {
				return err
			}
			for _, f := range page {
				keys = append(keys, f.File)
			}
			if len(page) < 3 {
				break
			}
			after = page[len(page)-1].File
		}
		if !slices.Equal(keys, []int64{10, 20, 30, 40}) {
			t.Fatalf("WebFiles: %v", keys)
		}
		return nil
	})
}

// webCaptureFixture is a small index: URLs under three domains, with
// captures of several files, times (some equal) and link lists.
type webCaptureFixture struct {
	urls     map[string]int64 // by SURT
	captures []*shelfmark.CaptureRow
}

var webFixtureSURTs = []string{"com,example)/", "com,example)/a", "com,example)/a/b", "com,example,www)/", "org,archive)/", "org,archive)/x?y=1"}

func newWebCaptureFixture(t *testing.T, s shelfmark.Storage) *webCaptureFixture {
	ctx := context.Background()
	f := &webCaptureFixture{urls: map[string]int64{}}
	dom := internDomains(t, s, "example.com")[0]
	ids := internURLs(t, s, dom, webFixtureSURTs...)
	for i, su := range webFixtureSURTs {
		f.urls[su] = ids[i]
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)
	n := 0
	for i, su := range webFixtureSURTs {
		// captures per URL: 1, 2, 3, …; the root of example.com 9, many
		// at one time so that ties are broken by id
		k := i + 1
		if i == 0 {
			k = 9
		}
		for j := 0; j < k; j++ {
			at := base.Add(time.Duration((j*7)%5) * time.Hour).Add(time.Duration(j) * time.Nanosecond)
			if i == 0 {
				at = base.Add(time.Duration(j/3) * time.Hour)
			}
			n++
			c := &shelfmark.CaptureRow{
				URL: f.urls[su], File: int64(100 + n%2), Offset: int64(n) * 1000, Length: int64(n) + 17, Time: at,
				Type: "response", MIME: "text/html", Status: 200, Digest: fmt.Sprintf("sha1:%032d", n), RecordID: fmt.Sprintf("<urn:uuid:%04d>", n),
			}
			switch n % 3 {
			case 0: // a record without link information
				c.Type, c.MIME, c.Status = "request", "application/http", 0
			case 1: // a page without links
				c.HasLinks = true
			case 2:
				c.HasLinks, c.Links = true, []int64{ids[1], ids[3], ids[5] + 1000}
			}
			f.captures = append(f.captures, c)
		}
	}
	// inserted in two calls of different sizes, out of URL order
	rand.New(rand.NewSource(1)).Shuffle(len(f.captures), func(i, j int) { f.captures[i], f.captures[j] = f.captures[j], f.captures[i] })
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertWebCaptures(ctx, f.captures[:5]); err != nil {
			return err
		}
		return tx.InsertWebCaptures(ctx, f.captures[5:])
	})
	surtOf := map[int64]string{}
	for su, id := range f.urls {
		surtOf[id] = su
	}
	seen := map[int64]bool{}
	for _, c := range f.captures {
		if c.ID == 0 || seen[c.ID] {
			t.Fatalf("capture id %d (zero or repeated)", c.ID)
		}
		seen[c.ID] = true
		c.SURT, c.Target = surtOf[c.URL], "http://"+surtOf[c.URL]
	}
	return f
}

// sameCapture fails unless got is want, time to the nanosecond.
func sameCapture(t *testing.T, got, want *shelfmark.CaptureRow) {
	t.Helper()
	if got.Time.UnixNano() != want.Time.UnixNano() || !got.Time.Equal(want.Time) {
		t.Fatalf("capture %d: time %v, want %v", want.ID, got.Time, want.Time)
	}
	g, w := *got, *want
	g.Time, w.Time = time.Time{}, time.Time{}
	if len(g.Links) == 0 && len(w.Links) == 0 {
		g.Links, w.Links = nil, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("capture:\n got %+v\nwant %+v", g, w)
	}
}

func sameCaptures(t *testing.T, what string, got, want []*shelfmark.CaptureRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d captures, want %d:\n got %s\nwant %s", what, len(got), len(want), captureIDs(got), captureIDs(want))
	}
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Fatalf("%s: captures\n got %s\nwant %s", what, captureIDs(got), captureIDs(want))
		}
		sameCapture(t, got[i], want[i])
	}
}

func captureIDs(cs []*shelfmark.CaptureRow) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, " %s@%d#%d", c.SURT, c.Time.UnixNano()%1e12, c.ID)
	}
	return b.String()
}

// scanOrder sorts captures by (SURT, time, id).
func scanOrder(cs []*shelfmark.CaptureRow) []*shelfmark.CaptureRow {
	cs = slices.Clone(cs)
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.SURT != b.SURT {
			return a.SURT < b.SURT
		}
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		return a.ID < b.ID
	})
	return cs
}

// testWebCaptures: captures round-trip (time to the nanosecond, no link
// information vs no links); a scan pages by keyset through every row once,
// in order, within SURT and time bounds; a URL's captures page both ways;
// a file's by id; deleted captures are gone.
func testWebCaptures(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	f := newWebCaptureFixture(t, s)
	all := scanOrder(f.captures)

	webView(t, s, func(tx shelfmark.ReadTx) error {
		ids := make([]int64, 0, len(f.captures)+1)
		for _, c := range f.captures {
			ids = append(ids, c.ID)
		}
		got, err := tx.WebCaptureRows(ctx, append(ids, 1<<40))
		if err != nil {
			return err
		}
		byID := map[int64]*shelfmark.CaptureRow{}
		for _, c := range got {
			byID[c.ID] = c
		}
		if len(got) != len(f.captures) {
			t.Fatalf("WebCaptureRows: %d of %d", len(got), len(f.captures))
		}
		kinds := map[string]int{}
		for _, c := range f.captures {
			g := byID[c.ID]
			sameCapture(t, g, c)
			switch {
			case !g.HasLinks:
				kinds["no information"]++
			case len(g.Links) == 0:
				kinds["no links"]++
			default:
				kinds["links"]++
			}
		}
		if len(kinds) != 3 {
			t.Fatalf("the fixture lacks a kind of capture: %v", kinds)
		}

		for _, c := range []struct {
			name string
			q    shelfmark.CaptureScan
			want func(c *shelfmark.CaptureRow) bool
		}{
			{"everything", shelfmark.CaptureScan{}, func(*shelfmark.CaptureRow) bool { return true }},
			{"a prefix", shelfmark.CaptureScan{From: "com,example)/a", To: "com,example)/b"},
				func(c *shelfmark.CaptureRow) bool { return strings.HasPrefix(c.SURT, "com,example)/a") }},
			{"a domain", shelfmark.CaptureScan{From: "com,example)", To: "com,example*"},
				func(c *shelfmark.CaptureRow) bool { return strings.HasPrefix(c.SURT, "com,example)") }},
			{"from, open-ended", shelfmark.CaptureScan{From: "com,example,www)/"},
				func(c *shelfmark.CaptureRow) bool { return c.SURT >= "com,example,www)/" }},
			{"one URL", shelfmark.CaptureScan{From: "com,example)/", To: "com,example)/\x01"},
				func(c *shelfmark.CaptureRow) bool { return c.SURT == "com,example)/" }},
			{"an empty range", shelfmark.CaptureScan{From: "net,", To: "net,zzz"}, func(*shelfmark.CaptureRow) bool { return false }},
			{"since", shelfmark.CaptureScan{Since: all[0].Time.Add(time.Hour)},
				func(c *shelfmark.CaptureRow) bool { return !c.Time.Before(all[0].Time.Add(time.Hour)) }},
			{"since and until, to the nanosecond", shelfmark.CaptureScan{From: "com,", To: "com-", Since: all[0].Time.Add(time.Hour + 1), Until: all[0].Time.Add(3 * time.Hour)},
				func(c *shelfmark.CaptureRow) bool {
					return strings.HasPrefix(c.SURT, "com,") && !c.Time.Before(all[0].Time.Add(time.Hour+1)) && c.Time.Before(all[0].Time.Add(3*time.Hour))
				}},
		} {
			var want []*shelfmark.CaptureRow
			for _, r := range all {
				if c.want(r) {
					want = append(want, r)
				}
			}
			q := c.q
			q.Limit = 1000
			got, err := tx.WebCaptures(ctx, q)
			if err != nil {
				return err
			}
			sameCaptures(t, c.name+" in one page", got, want)
			for _, size := range []int{1, 2, 4} {
				var paged []*shelfmark.CaptureRow
				q := c.q
				q.Limit = size
				for i := 0; i < 100; i++ {
					page, err := tx.WebCaptures(ctx, q)
					if err != nil {
						return err
					}
					if len(page) > size {
						t.Fatalf("%s: page of %d for limit %d", c.name, len(page), size)
					}
					paged = append(paged, page...)
					if len(page) < size {
						break
					}
					q.After = page[len(page)-1]
				}
				sameCaptures(t, fmt.Sprintf("%s in pages of %d", c.name, size), paged, want)
			}
		}
		// a cursor before the range starts at From
		got, err = tx.WebCaptures(ctx, shelfmark.CaptureScan{From: "org,", After: all[0], Limit: 1000})
		if err != nil {
			return err
		}
		var want []*shelfmark.CaptureRow
		for _, r := range all {
			if r.SURT >= "org," {
				want = append(want, r)
			}
		}
		sameCaptures(t, "a cursor before From", got, want)

		// one URL's captures, both ways, from the ends and from a cursor
		root := f.urls["com,example)/"]
		var ofRoot []*shelfmark.CaptureRow
		for _, r := range all {
			if r.URL == root {
				ofRoot = append(ofRoot, r)
			}
		}
		asc, err := tx.WebURLCaptures(ctx, root, time.Time{}, 0, false, 100)
		if err != nil {
			return err
		}
		sameCaptures(t, "a URL's captures", asc, ofRoot)
		desc, err := tx.WebURLCaptures(ctx, root, time.Time{}, 0, true, 100)
		if err != nil {
			return err
		}
		sameCaptures(t, "a URL's captures, descending", desc, reversed(ofRoot))
		mid := ofRoot[4]
		asc, err = tx.WebURLCaptures(ctx, root, mid.Time, mid.ID, false, 3)
		if err != nil {
			return err
		}
		sameCaptures(t, "after a capture", asc, ofRoot[5:8])
		desc, err = tx.WebURLCaptures(ctx, root, mid.Time, mid.ID, true, 3)
		if err != nil {
			return err
		}
		sameCaptures(t, "before a capture", desc, reversed(ofRoot[1:4]))
		// nearest to a time: the first at or after it, the last before it
		asc, err = tx.WebURLCaptures(ctx, root, mid.Time, 0, false, 1)
		if err != nil {
			return err
		}
		desc, err = tx.WebURLCaptures(ctx, root, mid.Time, 1<<62, true, 1)
		if err != nil {
			return err
		}
		if len(asc) != 1 || !asc[0].Time.Equal(mid.Time) || len(desc) != 1 || !desc[0].Time.Equal(mid.Time) {
			t.Fatalf("captures at %v: %s / %s", mid.Time, captureIDs(asc), captureIDs(desc))
		}

		// a file's captures by id, paged
		for _, file := range []int64{100, 101} {
			var want []*shelfmark.CaptureRow
			for _, c := range f.captures {
				if c.File == file {
					want = append(want, c)
				}
			}
			sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
			var got []*shelfmark.CaptureRow
			after := int64(0)
			for {
				page, err := tx.WebFileCaptures(ctx, file, after, 2)
				if err != nil {
					return err
				}
				got = append(got, page...)
				if len(page) < 2 {
					break
				}
				after = page[len(page)-1].ID
			}
			sameCaptures(t, fmt.Sprintf("file %d", file), got, want)
		}
		return nil
	})

	// delete the captures of file 100
	var gone, kept []*shelfmark.CaptureRow
	for _, c := range all {
		if c.File == 100 {
			gone = append(gone, c)
		} else {
			kept = append(kept, c)
		}
	}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		ids := make([]int64, len(gone))
		for i, c := range gone {
			ids[i] = c.ID
		}
		if err := tx.DeleteWebCaptures(ctx, ids); err != nil {
			return err
		}
		return tx.DeleteWebCaptures(ctx, nil)
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		got, err := tx.WebCaptures(ctx, shelfmark.CaptureScan{Limit: 1000})
		if err != nil {
			return err
		}
		sameCaptures(t, "after the delete", got, kept)
		rows, err := tx.WebCaptureRows(ctx, []int64{gone[0].ID})
		if err != nil || len(rows) != 0 {
			t.Fatalf("a deleted capture: %v, %v", rows, err)
		}
		page, err := tx.WebFileCaptures(ctx, 100, 0, 10)
		if err != nil || len(page) != 0 {
			t.Fatalf("the deleted file's captures: %v, %v", page, err)
		}
		return nil
	})
}

func reversed(cs []*shelfmark.CaptureRow) []*shelfmark.CaptureRow {
	cs = slices.Clone(cs)
	slices.Reverse(cs)
	return cs
}

// testWebLinks: links page by source; deleted links leave; current
// captures are set; counts add up; the top queries order by inbound count
// and then id and leave out what has none.
func testWebLinks(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	doms := internDomains(t, s, "a.example", "b.example", "c.example")
	var surts []string
	for i := 0; i < 12; i++ {
		surts = append(surts, fmt.Sprintf("example,a)/%02d", i))
	}
	ua := internURLs(t, s, doms[0], surts...)
	ub := internURLs(t, s, doms[1], "example,b)/", "example,b)/1")

	// every page of a links to ua[0]; pages 0..5 link to ub[0]
	var links []shelfmark.WebLink
	for _, src := range ua {
		links = append(links, shelfmark.WebLink{Dst: ua[0], Src: src})
	}
	for _, src := range ua[:6] {
		links = append(links, shelfmark.WebLink{Dst: ub[0], Src: src})
	}
	rand.New(rand.NewSource(2)).Shuffle(len(links), func(i, j int) { links[i], links[j] = links[j], links[i] })
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		if err := tx.AddWebLinks(ctx, links[:3]); err != nil {
			return err
		}
		if err := tx.AddWebLinks(ctx, links[3:]); err != nil {
			return err
		}
		return tx.AddWebLinks(ctx, nil)
	})
	inbound := func(tx shelfmark.ReadTx, dst int64, size int) []int64 {
		var out []int64
		after := int64(0)
		for i := 0; i < 100; i++ {
			page, err := tx.WebInbound(ctx, dst, after, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range page {
				if u.URL == "" || u.SURT == "" {
					t.Fatalf("inbound of %d: row %+v without its URL", dst, u)
				}
				out = append(out, u.ID)
			}
			if len(page) < size {
				break
			}
			after = page[len(page)-1].ID
		}
		return out
	}
	webView(t, s, func(tx shelfmark.ReadTx) error {
		for _, size := range []int{1, 5, 100} {
			if got := inbound(tx, ua[0], size); !slices.Equal(got, ua) {
				t.Fatalf("inbound of %d in pages of %d: %v, want %v", ua[0], size, got, ua)
			}
		}
		if got := inbound(tx, ub[0], 4); !slices.Equal(got, ua[:6]) {
			t.Fatalf("inbound of %d: %v, want %v", ub[0], got, ua[:6])
		}
		if got := inbound(tx, ub[1], 4); len(got) != 0 {
			t.Fatalf("inbound of %d: %v", ub[1], got)
		}
		return nil
	})
	// adding a link that exists fails
	err := s.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.AddWebLinks(ctx, []shelfmark.WebLink{{Dst: ua[0], Src: ua[3]}})
	})
	if err == nil {
		t.Fatal("adding an existing link succeeded")
	}
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		return tx.DeleteWebLinks(ctx, []shelfmark.WebLink{{Dst: ua[0], Src: ua[3]}, {Dst: ub[0], Src: ua[0]}, {Dst: ub[1], Src: ua[0]}})
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		want := slices.Delete(slices.Clone(ua), 3, 4)
		if got := inbound(tx, ua[0], 5); !slices.Equal(got, want) {
			t.Fatalf("after the delete: %v, want %v", got, want)
		}
		if got := inbound(tx, ub[0], 5); !slices.Equal(got, ua[1:6]) {
			t.Fatalf("after the delete: %v, want %v", got, ua[1:6])
		}
		return nil
	})

	// current captures
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		if err := tx.SetWebCurrent(ctx, map[int64]int64{ua[1]: 77, ua[2]: 78}); err != nil {
			return err
		}
		return tx.SetWebCurrent(ctx, map[int64]int64{ua[2]: 0, ua[3]: 79})
	})
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		rows, err := tx.LockWebURLs(ctx, []int64{ua[3], ua[1], ua[2], 1 << 40})
		if err != nil {
			return err
		}
		var got [][2]int64
		for _, r := range rows {
			got = append(got, [2]int64{r.ID, r.Current})
		}
		want := [][2]int64{{ua[1], 77}, {ua[2], 0}, {ua[3], 79}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("LockWebURLs: %v, want %v", got, want)
		}
		return nil
	})

	// counts: URLs of a with 5, 3, 3, 0, -0, 1 inbound; of b 5
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		if err := tx.AddWebCounts(ctx, map[int64]int64{ua[4]: 3, ua[2]: 3, ua[7]: 2, ua[9]: 1, ua[10]: 0},
			map[int64]int64{doms[0]: 9, doms[2]: 0}, map[int64]int64{doms[0]: 12, doms[1]: 2}); err != nil {
			return err
		}
		if err := tx.AddWebCounts(ctx, map[int64]int64{ua[7]: 3, ub[0]: 5, ua[11]: 2}, map[int64]int64{doms[0]: 5, doms[1]: 5},
			map[int64]int64{doms[2]: 1}); err != nil {
			return err
		}
		if err := tx.AddWebCounts(ctx, map[int64]int64{ua[11]: -2}, map[int64]int64{doms[0]: -2}, nil); err != nil {
			return err
		}
		return tx.AddWebCounts(ctx, nil, nil, nil)
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		top, err := tx.WebTopURLs(ctx, "a.example", 10)
		if err != nil {
			return err
		}
		var got [][2]int64
		for _, u := range top {
			got = append(got, [2]int64{u.ID, u.Inbound})
		}
		// ties (ua[2] and ua[4] with 3) by id; ua[10] and ua[11] have none
		want := [][2]int64{{ua[7], 5}, {ua[2], 3}, {ua[4], 3}, {ua[9], 1}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("top urls: %v, want %v", got, want)
		}
		if top[0].SURT != surts[7] || top[0].Domain != doms[0] || top[1].Current != 0 {
			t.Fatalf("top url row: %+v %+v", *top[0], *top[1])
		}
		top, err = tx.WebTopURLs(ctx, "a.example", 2)
		if err != nil {
			return err
		}
		if len(top) != 2 || top[1].ID != ua[2] {
			t.Fatalf("top 2 urls: %v", top)
		}
		if top, err := tx.WebTopURLs(ctx, "c.example", 10); err != nil || len(top) != 0 {
			t.Fatalf("top urls of a domain without links: %v %v", top, err)
		}
		if top, err := tx.WebTopURLs(ctx, "unknown.example", 10); err != nil || len(top) != 0 {
			t.Fatalf("top urls of a domain the index does not know: %v %v", top, err)
		}
		tops, err := tx.WebTopDomains(ctx, 10)
		if err != nil {
			return err
		}
		var gotd [][3]int64
		for _, d := range tops {
			gotd = append(gotd, [3]int64{d.ID, d.Inbound, d.URLs})
		}
		wantd := [][3]int64{{doms[0], 12, 12}, {doms[1], 5, 2}}
		if !reflect.DeepEqual(gotd, wantd) {
			t.Fatalf("top domains: %v, want %v", gotd, wantd)
		}
		// a tie: b catches up with a, and comes after it by id
		return nil
	})
	webUpdate(t, s, func(tx shelfmark.WriteTx) error {
		return tx.AddWebCounts(ctx, nil, map[int64]int64{doms[1]: 7, doms[2]: 12}, nil)
	})
	webView(t, s, func(tx shelfmark.ReadTx) error {
		tops, err := tx.WebTopDomains(ctx, 2)
		if err != nil {
			return err
		}
		if len(tops) != 2 || tops[0].ID != doms[0] || tops[1].ID != doms[1] || tops[1].Inbound != 12 {
			t.Fatalf("top domains with a tie: %+v %+v", *tops[0], *tops[1])
		}
		ds, err := tx.WebDomainRows(ctx, []int64{doms[2]})
		if err != nil {
			return err
		}
		if len(ds) != 1 || ds[0].Inbound != 12 || ds[0].URLs != 1 || ds[0].Name != "c.example" {
			t.Fatalf("domain c: %+v", ds)
		}
		return nil
	})
}

// webBatch is one batch of an ingest as the engine writes it: pages new
// to the index, each linking to links URLs drawn from a skewed
// distribution over targets URLs (a few popular ones, a long tail).
type webBatch struct {
	domains []*shelfmark.WebDomainRow
	urls    []*shelfmark.WebURLRow
	pages   []int // index in urls of each page
	targets [][]int
}

func newWebBatch(rnd *rand.Rand, first, pages, links, targets int) *webBatch {
	b := &webBatch{}
	z := rand.NewZipf(rnd, 1.1, 1, uint64(targets-1))
	// 50 URLs a domain, by rank: the popular URLs make popular domains
	domainOf := func(n int) string { return fmt.Sprintf("d%d.example", n/50) }
	index := map[string]int{}
	add := func(surt, domain string) int {
		if i, ok := index[surt]; ok {
			return i
		}
		index[surt] = len(b.urls)
		b.urls = append(b.urls, &shelfmark.WebURLRow{SURT: surt, URL: "http://" + surt, Domain: int64(len(b.domains))})
		b.domains = append(b.domains, &shelfmark.WebDomainRow{Name: domain})
		return len(b.urls) - 1
	}
	for p := 0; p < pages; p++ {
		page := add(fmt.Sprintf("example,page)/%09d", first+p), "page.example")
		b.pages = append(b.pages, page)
		var ts []int
		for l := 0; l < links; l++ {
			n := int(z.Uint64())
			ts = append(ts, add(fmt.Sprintf("example,%s)/%09d", domainOf(n), n), domainOf(n)))
		}
		b.targets = append(b.targets, ts)
	}
	return b
}

// write writes the batch as the engine would: domains, URLs, captures,
// current captures, links and counts, and returns the number of links.
func (b *webBatch) write(ctx context.Context, tx shelfmark.WriteTx, file int64) (int, error) {
	return b.writeTimed(ctx, tx, file, nil)
}

// webStages sums the time of each method over the batches of a benchmark.
type webStages struct {
	names []string
	took  map[string]time.Duration
	last  time.Time
}

// lap adds the time since the last lap to stage name.
func (s *webStages) lap(name string) {
	if s == nil {
		return
	}
	now := time.Now()
	if _, ok := s.took[name]; !ok {
		s.names = append(s.names, name)
	}
	s.took[name] += now.Sub(s.last)
	s.last = now
}

// writeTimed is write, adding the time of each call to stages (when not
// nil).
func (b *webBatch) writeTimed(ctx context.Context, tx shelfmark.WriteTx, file int64, stages *webStages) (int, error) {
	if stages != nil {
		stages.last = time.Now()
	}
	doms := make([]*shelfmark.WebDomainRow, len(b.domains))
	for i, d := range b.domains {
		doms[i] = &shelfmark.WebDomainRow{Name: d.Name}
	}
	if err := tx.InternWebDomains(ctx, doms); err != nil {
		return 0, err
	}
	stages.lap("domains")
	urls := make([]*shelfmark.WebURLRow, len(b.urls))
	for i, u := range b.urls {
		urls[i] = &shelfmark.WebURLRow{SURT: u.SURT, URL: u.URL, Domain: doms[i].ID}
	}
	if err := tx.InternWebURLs(ctx, urls); err != nil {
		return 0, err
	}
	stages.lap("urls")
	domainURLs := map[int64]int64{}
	for i, u := range urls {
		if u.New {
			domainURLs[doms[i].ID]++
		}
	}
	caps := make([]*shelfmark.CaptureRow, len(b.pages))
	var links []shelfmark.WebLink
	urlInbound, domainInbound := map[int64]int64{}, map[int64]int64{}
	for i, p := range b.pages {
		ids := make([]int64, 0, len(b.targets[i]))
		for _, ti := range b.targets[i] {
			ids = append(ids, urls[ti].ID)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		ids = slices.DeleteFunc(ids, func(id int64) bool { return id == urls[p].ID })
		caps[i] = &shelfmark.CaptureRow{URL: urls[p].ID, File: file, Offset: int64(i) * 5000, Length: 5000,
			Time: time.Unix(1700000000, int64(i)), Type: "response", MIME: "text/html", Status: 200,
			Digest: "sha1:AAAA", RecordID: fmt.Sprintf("<urn:uuid:%d-%d>", file, i), HasLinks: true, Links: ids}
		for _, id := range ids {
			links = append(links, shelfmark.WebLink{Dst: id, Src: urls[p].ID})
			urlInbound[id]++
		}
	}
	seen := map[int64]bool{}
	for i, u := range urls {
		if !seen[u.ID] {
			seen[u.ID] = true
			domainInbound[doms[i].ID] += urlInbound[u.ID]
		}
	}
	stages.lap("go")
	if _, err := tx.LockWebURLs(ctx, pageIDs(urls, b.pages)); err != nil {
		return 0, err
	}
	stages.lap("lock")
	if err := tx.InsertWebCaptures(ctx, caps); err != nil {
		return 0, err
	}
	stages.lap("captures")
	current := map[int64]int64{}
	for _, c := range caps {
		current[c.URL] = c.ID
	}
	if err := tx.SetWebCurrent(ctx, current); err != nil {
		return 0, err
	}
	stages.lap("current")
	if err := tx.AddWebLinks(ctx, links); err != nil {
		return 0, err
	}
	stages.lap("links")
	err := tx.AddWebCounts(ctx, urlInbound, domainInbound, domainURLs)
	stages.lap("counts")
	return len(links), err
}

func pageIDs(urls []*shelfmark.WebURLRow, pages []int) []int64 {
	ids := make([]int64, len(pages))
	for i, p := range pages {
		ids[i] = urls[p].ID
	}
	return ids
}

// testCostWeb: the statements of the engine's calls for a batch, and the
// rows they touch, do not grow with the index: the same batch shape costs
// the same against an index of 200 pages as against one of 6,000; so do
// the top queries and a page of inbound links of the most linked URL.
func testCostWeb(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	s := e.store
	rnd := rand.New(rand.NewSource(3))
	pages := 0
	write := func(n int) {
		b := newWebBatch(rnd, pages, n, 13, 20000)
		pages += n
		webUpdate(t, s, func(tx shelfmark.WriteTx) error { _, err := b.write(ctx, tx, int64(pages)); return err })
	}
	// the measured batch: 50 new pages linking to 10 URLs known and 3 new
	// each, so that both sizes see the same new and known rows
	var anchors []string
	for i := 0; i < 10; i++ {
		anchors = append(anchors, fmt.Sprintf("example,anchor)/%d", i))
	}
	measured := func() []call {
		b := &webBatch{}
		for _, a := range anchors {
			b.urls = append(b.urls, &shelfmark.WebURLRow{SURT: a, URL: "x"})
			b.domains = append(b.domains, &shelfmark.WebDomainRow{Name: "measured.example"})
		}
		for i := 0; i < 50; i++ {
			b.urls = append(b.urls, &shelfmark.WebURLRow{SURT: fmt.Sprintf("example,measured)/%d/%d", pages, i), URL: "x"})
			b.domains = append(b.domains, &shelfmark.WebDomainRow{Name: "measured.example"})
			b.pages = append(b.pages, len(b.urls)-1)
		}
		for i := 0; i < 50; i++ {
			var ts []int
			for j := range anchors {
				ts = append(ts, j)
			}
			for j := 0; j < 3; j++ {
				b.urls = append(b.urls, &shelfmark.WebURLRow{SURT: fmt.Sprintf("example,new)/%d/%d/%d", pages, i, j), URL: "x"})
				b.domains = append(b.domains, &shelfmark.WebDomainRow{Name: fmt.Sprintf("new%d.example", j)})
				ts = append(ts, len(b.urls)-1)
			}
			b.targets = append(b.targets, ts)
		}
		pages++
		return e.rec.capture(func() {
			webUpdate(t, s, func(tx shelfmark.WriteTx) error { _, err := b.write(ctx, tx, int64(pages)); return err })
		})
	}
	write(200)
	// the new domains exist at both sizes
	internURLs(t, s, internDomains(t, s, "measured.example", "new0.example", "new1.example", "new2.example")[0], anchors...)
	small := measured()
	for pages < 6000 {
		write(1000)
	}
	large := measured()
	sameWork(t, "write a batch of 50 pages and 650 links (index of 200 pages vs 6,000)", small, large)

	var popular int64
	var popularSURT string
	webView(t, s, func(tx shelfmark.ReadTx) error {
		top, err := tx.WebTopURLs(ctx, "d0.example", 1)
		if err != nil {
			return err
		}
		popular, popularSURT = top[0].ID, top[0].SURT
		return nil
	})
	query := func() []call {
		return e.rec.capture(func() {
			webView(t, s, func(tx shelfmark.ReadTx) error {
				if _, err := tx.WebTopDomains(ctx, 10); err != nil {
					return err
				}
				if _, err := tx.WebTopURLs(ctx, "d0.example", 10); err != nil {
					return err
				}
				if _, err := tx.WebURLView(ctx, popularSURT); err != nil {
					return err
				}
				_, err := tx.WebInbound(ctx, popular, 0, 20)
				return err
			})
		})
	}
	// small vs large: compare against a copy of the queries on a fresh,
	// small index in a second store
	e2 := newEnv(t, open, shelfmark.RepositoryOptions{})
	rnd2 := rand.New(rand.NewSource(3))
	b := newWebBatch(rnd2, 0, 200, 13, 20000)
	webUpdate(t, e2.store, func(tx shelfmark.WriteTx) error { _, err := b.write(ctx, tx, 1); return err })
	var popular2 int64
	var popular2SURT string
	webView(t, e2.store, func(tx shelfmark.ReadTx) error {
		top, err := tx.WebTopURLs(ctx, "d0.example", 1)
		if err != nil {
			return err
		}
		popular2, popular2SURT = top[0].ID, top[0].SURT
		return nil
	})
	smallQ := e2.rec.capture(func() {
		webView(t, e2.store, func(tx shelfmark.ReadTx) error {
			if _, err := tx.WebTopDomains(ctx, 10); err != nil {
				return err
			}
			if _, err := tx.WebTopURLs(ctx, "d0.example", 10); err != nil {
				return err
			}
			if _, err := tx.WebURLView(ctx, popular2SURT); err != nil {
				return err
			}
			_, err := tx.WebInbound(ctx, popular2, 0, 20)
			return err
		})
	})
	sameWork(t, "top domains, top pages of a domain, a page of inbound links (200 pages vs 6,000)", smallQ, query())
}

// BenchWebBatch writes batches of pages new pages with 13 links each (to
// URLs drawn from a Zipf distribution over 2,000,000 targets, as a crawl's
// links are: a few very popular URLs and domains, a long tail), one batch
// per write transaction as the engine writes them, b.N batches, and
// reports links/s, and the milliseconds per batch of each call (and of
// the commit). It measures the storage alone, not WARC reading or link
// extraction.
func BenchWebBatch(b *testing.B, s shelfmark.Storage, pages int) {
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(1))
	const links = 13
	batches := make([]*webBatch, b.N)
	for i := range batches {
		batches[i] = newWebBatch(rnd, i*pages, pages, links, 2000000)
	}
	stages := &webStages{took: map[string]time.Duration{}}
	b.ResetTimer()
	total := 0
	for i, batch := range batches {
		if err := s.Update(ctx, func(tx shelfmark.WriteTx) error {
			n, err := batch.writeTimed(ctx, tx, int64(i+1), stages)
			total += n
			return err
		}); err != nil {
			b.Fatal(err)
		}
		stages.lap("commit")
	}
	b.StopTimer()
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "links/s")
	b.ReportMetric(float64(b.N*pages)/b.Elapsed().Seconds(), "pages/s")
	for _, name := range stages.names {
		b.ReportMetric(float64(stages.took[name].Microseconds())/1000/float64(b.N), name+"-ms/batch")
	}
}
