package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testUsageStore: counts added twice sum; a read gives a resource's
// counts in a range of months, by resource, metric and month; the most
// used of a month and metric come highest first, without the
// repository's own row.
func testUsageStore(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	store, ok := e.store.(shelfmark.UsageStore)
	if !ok {
		t.Fatal("the storage keeps no usage counts")
	}
	inv := shelfmark.TotalInvestigations
	add := func(cs ...shelfmark.UsageCount) {
		t.Helper()
		if err := store.AddUsage(ctx, cs); err != nil {
			t.Fatal(err)
		}
	}
	add(shelfmark.UsageCount{Resource: 7, Month: 202610, Metric: inv, N: 2}, shelfmark.UsageCount{Resource: 7, Month: 202611, Metric: inv, N: 1},
		shelfmark.UsageCount{Resource: 8, Month: 202611, Metric: inv, N: 5}, shelfmark.UsageCount{Resource: 0, Month: 202611, Metric: inv, N: 9})
	add(shelfmark.UsageCount{Resource: 7, Month: 202611, Metric: inv, N: 3}, shelfmark.UsageCount{Resource: 7, Month: 202611, Metric: shelfmark.TotalRequests, N: 1})
	add()
	got, err := store.Usage(ctx, []int64{7, 9}, 202601, 202612)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[{7 202610 Total_Item_Investigations 2} {7 202611 Total_Item_Investigations 4} {7 202611 Total_Item_Requests 1}]" {
		t.Errorf("the usage of 7: %v", got)
	}
	if got, _ := store.Usage(ctx, []int64{7}, 202611, 202611); len(got) != 2 {
		t.Errorf("November's usage of 7: %v", got)
	}
	top, err := store.TopUsage(ctx, 202611, inv, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(top) != "[{8 202611 Total_Item_Investigations 5} {7 202611 Total_Item_Investigations 4}]" {
		t.Errorf("November's most looked at: %v", top)
	}
	if top, _ := store.TopUsage(ctx, 202611, inv, 1); len(top) != 1 || top[0].Resource != 8 {
		t.Errorf("the most looked at: %v", top)
	}
}

// testUsageCounter: COUNTER's rules — a second look within 30 seconds
// counts once, a look after counts again but is unique once a
// session-hour, a request counts as an investigation too, another
// session counts anew; a file's bytes count for its work when the file
// is an original (not a thumbnail); each count goes to the work, its
// collections and the repository; ids of nothing are dropped; a flush
// costs the same statements for one work and for forty.
func testUsageCounter(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(ctx, nr))
	}
	coll := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	book := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})
	page := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID})
	orig := mk(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: page.ID, File: &shelfmark.File{Name: "p1.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(41), Use: shelfmark.UseOriginal}})
	thumb := mk(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: page.ID, File: &shelfmark.File{Name: "p1.jpg", MediaType: "image/jpeg", Size: 1, SHA256: sha(42), Use: shelfmark.UseThumbnail}})
	u, err := e.repo.NewUsageCounter()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ev := func(id shelfmark.ID, request bool, session string, after time.Duration) {
		u.Record(shelfmark.UsageEvent{ID: id, Request: request, Session: session, At: at.Add(after)})
	}
	ev(book.ID, false, "a", 0)
	ev(book.ID, false, "a", 10*time.Second)         // a double click
	ev(book.ID, false, "a", 35*time.Second)         // 25 s after the last click: a double click too
	ev(book.ID, false, "b", 36*time.Second)         // another session
	ev(orig.ID, true, "a", time.Minute)             // the book's bytes: a request and an investigation (not unique)
	ev(orig.ID, true, "a", time.Minute+time.Second) // a double click
	ev(thumb.ID, true, "a", 2*time.Minute)          // a thumbnail: no request of the book
	ev("nothingatall", false, "a", 0)
	ev(book.ID, false, "a", 2*time.Hour) // a new hour: unique again
	if err := u.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	store := e.store.(shelfmark.UsageStore)
	want := func(key int64, tii, uii, tir, uir int64) {
		t.Helper()
		got, err := store.Usage(ctx, []int64{key}, 202611, 202611)
		if err != nil {
			t.Fatal(err)
		}
		n := map[shelfmark.UsageMetric]int64{}
		for _, c := range got {
			n[c.Metric] += c.N
		}
		if n[shelfmark.TotalInvestigations] != tii || n[shelfmark.UniqueInvestigations] != uii || n[shelfmark.TotalRequests] != tir || n[shelfmark.UniqueRequests] != uir {
			t.Errorf("counts of %d: %v, want %d %d %d %d", key, n, tii, uii, tir, uir)
		}
	}
	want(keyOf(t, book.ID), 4, 3, 1, 1)
	want(keyOf(t, coll.ID), 4, 3, 1, 1)
	want(shelfmark.UsageRepository, 4, 3, 1, 1)
	want(keyOf(t, orig.ID), 0, 0, 0, 0)
	if err := u.Flush(ctx); err != nil { // nothing waits: nothing written
		t.Fatal(err)
	}
	want(keyOf(t, book.ID), 4, 3, 1, 1)
	// the same session and hour after a flush: a total, no unique again
	ev(book.ID, false, "b", 20*time.Minute)
	if err := u.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want(keyOf(t, book.ID), 5, 3, 1, 1)

	// a flush's statements do not grow with its works
	flush := func(works []*shelfmark.Resource) []call {
		for i, w := range works {
			ev(w.ID, true, fmt.Sprint("s", i), 3*time.Hour)
		}
		return e.rec.capture(func() {
			if err := u.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
	var many []*shelfmark.Resource
	for range 40 {
		many = append(many, mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	}
	one, forty := flush(many[:1]), flush(many)
	if len(one) != len(forty) || len(one) > 8 {
		t.Errorf("a flush of one work ran %d statements, of forty %d:\n%s\n%s", len(one), len(forty), dump(one), dump(forty))
	}
	// the reports (the book and forty works, one of them twice within
	// the double-click window): a work's month by month, the repository's to
	// administrators, the most used works (not collections)
	anon := as(shelfmark.Anonymous())
	rep, err := e.repo.UsageReport(anon, book.ID, 202610, 202612)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Months) != "[{202610 {0 0 0 0}} {202611 {5 3 1 1}} {202612 {0 0 0 0}}]" || rep.Total.Investigations != 5 {
		t.Errorf("the book's report: %v %+v", rep.Months, rep.Total)
	}
	if tot, err := e.repo.UsageTotalsOf(anon, coll.ID); err != nil || tot.Investigations != 45 || tot.Requests != 41 {
		t.Errorf("the collection's totals: %+v %v", tot, err)
	}
	if _, err := e.repo.UsageReport(anon, "", 202611, 202611); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
		t.Errorf("the repository's report to anonymous: %v", err)
	}
	if rep, err := e.repo.UsageReport(ctx, "", 202611, 202611); err != nil || rep.Total.Requests != 41 {
		t.Errorf("the repository's report: %+v %v", rep, err)
	}
	hidden := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
	for name, c := range map[string]struct {
		ctx      context.Context
		id       shelfmark.ID
		from, to int
		code     string
	}{
		"a private work": {anon, hidden.ID, 202611, 202611, shelfmark.ENOTFOUND},
		"a page":         {ctx, page.ID, 202611, 202611, shelfmark.EINVALID},
		"month 13":       {ctx, book.ID, 202613, 202613, shelfmark.EINVALID},
		"backwards":      {ctx, book.ID, 202611, 202610, shelfmark.EINVALID},
		"eleven years":   {ctx, book.ID, 201501, 202612, shelfmark.EINVALID},
	} {
		if _, err := e.repo.UsageReport(c.ctx, c.id, c.from, c.to); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", name, err, c.code)
		}
	}
	items, err := e.repo.UsageTop(ctx, 202611, shelfmark.TotalInvestigations, 2)
	if err != nil || len(items) != 2 || items[0].ID != book.ID {
		t.Errorf("the most looked-at works: %+v %v", items, err)
	}
	if _, err := e.repo.UsageTop(anon, 202611, shelfmark.TotalInvestigations, 2); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
		t.Errorf("the most used to anonymous: %v", err)
	}
	if top, _ := store.TopUsage(ctx, 202611, shelfmark.TotalInvestigations, 3); len(top) != 3 || top[0].Resource != keyOf(t, coll.ID) ||
		!slices.ContainsFunc(top, func(c shelfmark.UsageCount) bool { return c.Resource == keyOf(t, book.ID) }) {
		t.Errorf("the most looked at: %v", top)
	}
}
