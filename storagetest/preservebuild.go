package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/preserve"
)

// testPreserveBuildAll: the preserver's shared read of many objects'
// states (preserve.BuildAll) gives each object the state Build reads for
// it alone (a collection with grants, a depositor's work with memberships
// and source keys, a book of pages, a work
// with a child work, a deleted work, works without children), gives none
// to a key the database does not hold, stops taking objects once their
// resources reach its bound, and reads twenty childless works in as many
// statements as two.
func testPreserveBuildAll(t *testing.T, open Opener) {
	s := newPreserved(t, open)
	ctx := context.Background()
	sys := s.sys
	asAlice := s.user(t, "alice")
	key := func(id shelfmark.ID) int64 {
		t.Helper()
		k, err := s.ids.Key(id)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	create := func(ctx context.Context, nr *shelfmark.NewResource) shelfmark.ID {
		t.Helper()
		return rs(t)(s.repo.CreateResource(ctx, nr)).ID
	}
	coll := create(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("Books")}})
	other := create(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.SetGrants(ctx, key(coll), []shelfmark.Grant{{Resource: key(coll), Principal: "user:alice", Role: shelfmark.RoleDepositor},
			{Resource: key(coll), Principal: "group:staff", Role: shelfmark.RoleViewer}}); err != nil {
			return err
		}
		return tx.SetGrants(ctx, key(other), []shelfmark.Grant{{Resource: key(other), Principal: "user:alice", Role: shelfmark.RoleDepositor},
			{Resource: key(other), Principal: "group:readers", Role: shelfmark.RoleViewer}})
	}); err != nil {
		t.Fatal(err)
	}
	book := create(asAlice, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}, Metadata: []shelfmark.Statement{title("A book")}})
	for _, p := range []string{"one", "two", "three"} {
		s.page(t, sys, book, p)
	}
	if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertSources(ctx, []string{"marc:001"}, []int64{key(book)})
	}); err != nil {
		t.Fatal(err)
	}
	parent := create(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Volumes")}})
	create(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: parent, Metadata: []shelfmark.Statement{title("Volume 1")}})
	gone := create(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}})
	s.page(t, sys, gone, "gone")
	if err := s.repo.DeleteResource(sys, gone, 0); err != nil {
		t.Fatal(err)
	}
	var plain []int64
	for i := range 20 {
		plain = append(plain, key(create(asAlice, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{other},
			Metadata: []shelfmark.Statement{title(fmt.Sprintf("Work %d", i))}})))
	}
	absent := plain[len(plain)-1] + 1000
	keys := append([]int64{key(coll), key(other), key(book), key(parent), key(gone), absent}, plain...)

	buildAll := func(keys []int64, maxRows int) (states map[int64]*preserve.State, n int) {
		t.Helper()
		if err := s.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			states, n, err = preserve.BuildAll(ctx, tx, s.ids, keys, maxRows)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return states, n
	}
	all, n := buildAll(keys, 0)
	if n != len(keys) || len(all) != len(keys)-1 || all[absent] != nil {
		t.Fatalf("took %d of %d keys, %d states (the absent key's: %v)", n, len(keys), len(all), all[absent] != nil)
	}
	for _, k := range keys {
		if k == absent {
			continue
		}
		var one *preserve.State
		if err := s.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			one, err = preserve.Build(ctx, tx, s.ids, k)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(all[k], one) {
			t.Fatalf("object %d read with others:\n%+v\nalone:\n%+v", k, all[k].Record, one.Record)
		}
	}
	if st := all[key(book)]; len(st.Record.Resources) != 7 || len(st.Originals) != 3 || st.Record.Resources[0].Depositor != "alice" ||
		len(st.Record.Resources[0].SourceKeys) != 1 || len(st.Record.Resources[0].MemberOf) != 1 {
		t.Fatalf("the book's state: %+v, %d originals", st.Record.Resources, len(st.Originals))
	}
	if g := all[key(coll)].Record.Resources[0].Grants; len(g) != 2 || g[0].Principal != "group:staff" {
		t.Fatalf("the collection's grants: %+v", g)
	}
	if g := all[key(other)].Record.Resources[0].Grants; len(g) != 2 || g[0].Principal != "group:readers" || g[1].Principal != "user:alice" {
		t.Fatalf("the other collection's grants: %+v", g)
	}
	if st := all[key(gone)]; len(st.Record.Resources) != 1 || st.Record.Resources[0].Deleted == nil {
		t.Fatalf("the deleted work's state: %+v", st.Record.Resources)
	}

	// the bound: the book's seven resources reach 5, the collections' two
	// do not
	if states, n := buildAll(keys, 5); n != 3 || len(states) != 3 || states[key(book)] == nil {
		t.Fatalf("with a bound of 5 resources: took %d keys, %d states", n, len(states))
	}

	// the statements do not grow with the number of works
	count := func(keys []int64) int {
		return len(s.rec.capture(func() { buildAll(keys, 0) }))
	}
	few, many := count(plain[:2]), count(plain)
	if few != many {
		t.Fatalf("%d childless works read in %d statements, 2 in %d", len(plain), many, few)
	}
	t.Logf("%d childless works in %d statements; the keys above in %d", len(plain), many, count(keys))
}
