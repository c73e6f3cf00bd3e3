package storagetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testPageLabels: a depositor labels the pages of its work in one step
// (SetPageLabels); the labels read back as the pages' titles, the pages
// and the work take a new version and sequence number, a label already
// set writes nothing, and a page of another work, a stale version or a
// caller who may not change the work is refused with nothing written.
// One label costs the statements a hundred do, a bulk write counting as
// one (bulkSteps).
func testPageLabels(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	other := e.user(t, "other", shelfmark.ScopeWrite)
	e.grant(t, coll, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	e.grant(t, coll, shelfmark.UserPrincipal("other"), shelfmark.RoleDepositor)
	book := rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	nrs := make([]*shelfmark.NewResource, 100)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID}
	}
	nrs[2].Metadata = []shelfmark.Statement{title("old label")}
	nrs[3].Metadata = []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "title", Object: shelfmark.NewLiteral("f. 2r")}}
	var pages []shelfmark.ID
	made, errs := e.repo.CreateResources(ctx, nrs)
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, made[i].ID)
	}
	book = rs(t)(e.repo.FindResource(ctx, book.ID))

	titles := func(id shelfmark.ID) (dc, dcterms []string) {
		t.Helper()
		res := rs(t)(e.repo.FindResource(ctx, id))
		for _, s := range res.Metadata {
			switch s.Predicate {
			case shelfmark.NSDC + "title":
				dc = append(dc, s.Object.Value)
			case shelfmark.NSDCTerms + "title":
				dcterms = append(dcterms, s.Object.Value)
			}
		}
		return dc, dcterms
	}
	want := func(id shelfmark.ID, dc string) {
		t.Helper()
		got, terms := titles(id)
		if strings.Join(got, "|") != dc || len(terms) > 0 {
			t.Fatalf("%s: dc:title %q dcterms:title %q, want dc:title %q alone", id, got, terms, dc)
		}
	}

	// set: a new label, one replaced, one removed, a dcterms:title replaced
	labels := []shelfmark.PageLabel{{Page: pages[0], Label: " Title page "}, {Page: pages[1], Label: "p. 1"},
		{Page: pages[2], Label: ""}, {Page: pages[3], Label: "f. 2v"}, {Page: pages[4], Label: ""}}
	res := rs(t)(e.repo.SetPageLabels(as(dep), book.ID, labels, book.Version))
	if res.Version != book.Version+1 || res.Seq <= book.Seq {
		t.Fatalf("work after labels: version %d seq %d, was %d and %d", res.Version, res.Seq, book.Version, book.Seq)
	}
	want(pages[0], "Title page")
	want(pages[1], "p. 1")
	want(pages[2], "")
	want(pages[3], "f. 2v")
	for _, id := range []shelfmark.ID{pages[0], pages[2], pages[3]} {
		if p := rs(t)(e.repo.FindResource(ctx, id)); p.Version != 2 || p.Seq != res.Seq {
			t.Fatalf("changed page %s: version %d seq %d, want 2 and the work's %d", id, p.Version, p.Seq, res.Seq)
		}
	}
	if p := rs(t)(e.repo.FindResource(ctx, pages[4])); p.Version != 1 {
		t.Fatalf("page %s without a label before or after: version %d", pages[4], p.Version)
	}

	wkey, err := e.repo.IDs().Key(book.ID)
	if err != nil {
		t.Fatal(err)
	}
	var trail []*shelfmark.AuditEntry
	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		trail, err = tx.Audit(ctx, shelfmark.AuditQuery{Resource: wkey, Limit: 10})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(trail) == 0 || trail[0].Action != "labels" || trail[0].Actor != "dep" || trail[0].Detail != "4 pages" {
		t.Fatalf("audit of the labels: %+v", trail)
	}

	// the same labels again: nothing is written
	writes := func(calls []call) (out []call) {
		for _, c := range calls {
			if isWrite(c.query) && !isCounter(c.query) {
				out = append(out, c)
			}
		}
		return out
	}
	var again *shelfmark.Resource
	calls := e.rec.capture(func() { again = rs(t)(e.repo.SetPageLabels(as(dep), book.ID, labels, res.Version)) })
	if w := writes(calls); len(w) > 0 || again.Version != res.Version {
		t.Fatalf("unchanged labels: work version %d (was %d), writes:\n%s", again.Version, res.Version, dump(w))
	}

	// refusals leave everything as it was
	stranger := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet,
		Parent: rs(t)(e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})).ID}))
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		labels []shelfmark.PageLabel
		match  int64
		code   string
	}{
		{"a page of another work", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}, {Page: stranger.ID, Label: "y"}}, 0, shelfmark.EINVALID},
		{"the work itself", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}, {Page: book.ID, Label: "y"}}, 0, shelfmark.EINVALID},
		{"a page named twice", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}, {Page: pages[0], Label: "y"}}, 0, shelfmark.EINVALID},
		{"a NUL", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x\x00"}}, 0, shelfmark.EINVALID},
		{"not UTF-8", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x\xff"}}, 0, shelfmark.EINVALID},
		{"too long", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: strings.Repeat("x", shelfmark.MaxLiteralBytes+1)}}, 0, shelfmark.EINVALID},
		{"a stale version", as(dep), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}}, book.Version, shelfmark.EPRECONDITION},
		{"another depositor", as(other), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}}, 0, shelfmark.EFORBIDDEN},
		{"anonymous", as(shelfmark.Anonymous()), []shelfmark.PageLabel{{Page: pages[0], Label: "x"}}, 0, shelfmark.EUNAUTHORIZED},
	} {
		_, err := e.repo.SetPageLabels(tc.ctx, book.ID, tc.labels, tc.match)
		if shelfmark.ErrorCode(err) != tc.code {
			t.Fatalf("%s: error %v, want code %s", tc.name, err, tc.code)
		}
	}
	want(pages[0], "Title page")
	if now := rs(t)(e.repo.FindResource(ctx, book.ID)); now.Version != res.Version {
		t.Fatalf("refusals changed the work: version %d, was %d", now.Version, res.Version)
	}
	if dc, _ := titles(stranger.ID); len(dc) > 0 {
		t.Fatalf("the refused page of another work got a title: %q", dc)
	}

	// cost: one label and a hundred run the same number of statements
	set := func(n int, text string) []call {
		t.Helper()
		ls := make([]shelfmark.PageLabel, n)
		for i := range ls {
			ls[i] = shelfmark.PageLabel{Page: pages[i], Label: fmt.Sprintf("%s %d", text, i)}
		}
		return withoutKeyBlocks(e.rec.capture(func() { rs(t)(e.repo.SetPageLabels(as(dep), book.ID, ls, 0)) }))
	}
	one, hundred := bulkSteps(set(1, "one")), bulkSteps(set(100, "hundred"))
	if len(one) != len(hundred) {
		t.Fatalf("labels: %d statements for 1 label, %d for 100.\n1 label:\n%s\n100 labels:\n%s", len(one), len(hundred), dump(one), dump(hundred))
	}
	want(pages[99], "hundred 99")
	t.Logf("labelling pages: %d statements for 1 label and for 100", len(one))
}

// bulkSteps folds each bulk write into one step: the chunks of rows that
// SQLite sends as consecutive INSERTs, and PostgreSQL's COPY with its
// savepoint and the INSERT that follows a COPY undone on a collision, are
// one "bulk write into TABLE", their rows summed.
func bulkSteps(cs []call) []call {
	var out []call
	for _, c := range cs {
		q := c.query
		switch {
		case strings.HasPrefix(q, "SAVEPOINT"), strings.HasPrefix(q, "ROLLBACK TO SAVEPOINT"), strings.HasPrefix(q, "RELEASE SAVEPOINT"):
			continue
		case strings.HasPrefix(q, "INSERT INTO "), strings.HasPrefix(q, "COPY "):
			f := strings.Fields(q)
			table := f[1]
			if f[0] == "INSERT" {
				table = f[2]
			}
			q = "bulk write into " + table
			if n := len(out); n > 0 && out[n-1].query == q {
				out[n-1].rows += c.rows
				continue
			}
		}
		out = append(out, call{q, c.rows})
	}
	return out
}
