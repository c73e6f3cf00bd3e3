package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// isWrite reports whether q writes: a statement that begins with a write,
// or a WITH whose parts write (a recursive read such as
// ReadTx.ResourceChain's does not).
func isWrite(q string) bool {
	q = strings.ToUpper(strings.TrimSpace(q))
	for _, w := range []string{"INSERT", "UPDATE", "DELETE", "COPY"} {
		if strings.HasPrefix(q, w) {
			return true
		}
	}
	if strings.HasPrefix(q, "WITH") {
		for _, w := range []string{"INSERT INTO", "UPDATE ", "DELETE FROM"} {
			if strings.Contains(q, w) {
				return true
			}
		}
	}
	return false
}

// countCalls is how many of calls ran a statement holding part.
func countCalls(calls []call, part string) int {
	n := 0
	for _, c := range calls {
		if strings.Contains(c.query, part) {
			n++
		}
	}
	return n
}

func isCounter(q string) bool { return strings.Contains(q, "counters") }

// sameWork fails unless two traces ran the same statements touching the
// same numbers of rows.
//
// Reserving a block of keys (one statement per RepositoryOptions.MintBlock
// resources) is amortised over the block and left out of the comparison.
func sameWork(t *testing.T, what string, small, large []call) {
	t.Helper()
	small, large = withoutKeyBlocks(small), withoutKeyBlocks(large)
	if !reflect.DeepEqual(small, large) {
		t.Fatalf("%s: the work grew with size.\nsmall (%d statements):\n%s\nlarge (%d statements):\n%s",
			what, len(small), dump(small), len(large), dump(large))
	}
	t.Logf("%s: %d statements, %d rows, at both sizes", what, len(small), rowsOf(small))
}

func withoutKeyBlocks(cs []call) []call {
	var out []call
	for _, c := range cs {
		if !strings.Contains(c.query, "name = 'key'") {
			out = append(out, c)
		}
	}
	return out
}

func dump(cs []call) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %4d rows  %s\n", c.rows, c.query)
	}
	return b.String()
}

func rowsOf(cs []call) (n int64) {
	for _, c := range cs {
		n += c.rows
	}
	return n
}

// fill creates n works in a collection, in batches.
func fill(t *testing.T, e *env, coll shelfmark.ID, n int) {
	t.Helper()
	for done := 0; done < n; {
		b := min(500, n-done)
		nrs := make([]*shelfmark.NewResource, b)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}, Metadata: sampleMetadata(3)}
		}
		_, errs := e.repo.CreateResources(context.Background(), nrs)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		done += b
	}
}

// testCostMembership (rule R1): adding a member to a collection of 5,000
// runs the same statements, touching the same rows, as adding one to a
// collection of 10; so does listing a page deep in it.
func testCostMembership(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	small := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	large := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	fill(t, e, small.ID, 10)
	fill(t, e, large.ID, 5000)

	create := func(coll shelfmark.ID) []call {
		return e.rec.capture(func() {
			rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}, Metadata: sampleMetadata(54)}))
		})
	}
	sameWork(t, "create a work in a collection", create(small.ID), create(large.ID))

	add := func(coll shelfmark.ID) []call {
		w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
		return e.rec.capture(func() {
			if err := e.repo.AddMembers(ctx, coll, []shelfmark.ID{w.ID}); err != nil {
				t.Fatal(err)
			}
		})
	}
	sameWork(t, "add an existing work to a collection", add(small.ID), add(large.ID))

	// a page at the start and one deep into the large collection
	first := pg(t)(e.repo.ListMembers(ctx, large.ID, shelfmark.PageRequest{Limit: 10}))
	var deepCursor shelfmark.Cursor
	p := first
	for i := 0; i < 450; i++ {
		p = pg(t)(e.repo.ListMembers(ctx, large.ID, shelfmark.PageRequest{After: p.Next, Limit: 10}))
	}
	deepCursor = p.Next
	list := func(after shelfmark.Cursor) []call {
		return e.rec.capture(func() { pg(t)(e.repo.ListMembers(ctx, large.ID, shelfmark.PageRequest{After: after, Limit: 10})) })
	}
	sameWork(t, "list a page of members (page 1 vs page 451)", list(""), list(deepCursor))
}

// testCostPages (rule R2): adding page 1,000 to a book runs the same
// statements as adding page 10, and ordering a book runs the same number of
// statements whatever its length.
func testCostPages(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	book := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	var pages []shelfmark.ID
	var early, late []call
	for i := 1; i <= 1000; i++ {
		nr := &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID, Metadata: []shelfmark.Statement{title(fmt.Sprintf("page %04d", i))}}
		var r *shelfmark.Resource
		c := e.rec.capture(func() { r = rs(t)(e.repo.CreateResource(ctx, nr)) })
		if i == 10 {
			early = c
		} else if i == 1000 {
			late = c
		}
		pages = append(pages, r.ID)
	}
	sameWork(t, "add a page to a book (page 10 vs page 1000)", early, late)

	short := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	var shortPages []shelfmark.ID
	for i := 0; i < 10; i++ {
		shortPages = append(shortPages, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: short.ID})).ID)
	}
	statements := func(parent shelfmark.ID, kids []shelfmark.ID) []string {
		var qs []string
		for _, c := range e.rec.capture(func() { rs(t)(e.repo.SetOrder(ctx, parent, kids, 0)) }) {
			qs = append(qs, c.query)
		}
		return qs
	}
	s, l := statements(short.ID, shortPages), statements(book.ID, pages)
	if !reflect.DeepEqual(s, l) {
		t.Fatalf("ordering 10 vs 1000 pages ran different statements:\n%v\n%v", s, l)
	}
	t.Logf("order a book: %d statements for 10 pages and for 1000", len(s))
}

// testCostEdit (rule R3): changing one field of a 1,000-statement book
// with 1,200 pages touches the rows of that field and the book's own row,
// exactly as it does for a one-page, four-statement work.
func testCostEdit(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	small := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: sampleMetadata(4)}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: small.ID}))
	big := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: sampleMetadata(1000)}))
	nrs := make([]*shelfmark.NewResource, 1200)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: big.ID}
	}
	if _, errs := e.repo.CreateResources(ctx, nrs); errs[0] != nil {
		t.Fatal(errs[0])
	}
	edit := func(id shelfmark.ID) []call {
		var writes []call
		for _, c := range e.rec.capture(func() {
			rs(t)(e.repo.UpdateResource(ctx, id, shelfmark.ResourceUpdate{
				Remove: []shelfmark.Statement{title("A history of shelfmarks")},
				Add:    []shelfmark.Statement{title("A better title")},
			}))
		}) {
			writes = append(writes, c)
			if strings.HasPrefix(c.query, "UPDATE resources") {
				break
			}
		}
		return writes
	}
	sameWork(t, "edit one field (4-statement work vs 1,000-statement book of 1,200 pages)", edit(small.ID), edit(big.ID))
}
