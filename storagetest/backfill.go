package storagetest

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Exec runs SQL statements on a store's database, as a migration does.
type Exec func(t *testing.T, store shelfmark.Storage, sql string)

// RunEffectiveBackfill checks the backend's migration that introduced
// effective access (its text is migration): on a repository of every
// shape (accessTree, with a search document of a page), the derivatives'
// sources, the effective access of every row and the rows search
// documents follow are forgotten, as in a store made before the
// migration, and the migration's backfilling statements (its UPDATEs)
// must restore exactly what the engine stores.
func RunEffectiveBackfill(t *testing.T, open Opener, exec Exec, migration string) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	a := buildAccessTree(t, e, now)
	private, authenticated := shelfmark.Private, shelfmark.Authenticated
	until := now.Add(24 * time.Hour)
	untilp := &until
	rs(t)(e.repo.UpdateResource(ctx, a.parent.ID, shelfmark.ResourceUpdate{Visibility: &authenticated}))
	rs(t)(e.repo.UpdateResource(ctx, a.child.ID, shelfmark.ResourceUpdate{Embargo: &untilp}))
	rs(t)(e.repo.UpdateResource(ctx, a.hidden.ID, shelfmark.ResourceUpdate{Visibility: &private}))
	rs(t)(e.repo.UpdateResource(ctx, a.image.ID, shelfmark.ResourceUpdate{Visibility: &private}))
	docKey := keyOf(t, a.fileset.ID)
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{
			{Key: keyOf(t, a.child.ID), Work: keyOf(t, a.child.ID), Kind: shelfmark.KindWork, Title: "child"},
			{Key: docKey, Work: keyOf(t, a.child.ID), Access: keyOf(t, a.image.ID), Kind: shelfmark.KindFileSet, Body: "page text"},
		})
	})
	type state struct {
		source int64
		eff    shelfmark.Access
	}
	read := func() (map[shelfmark.ID]state, [2]int64) {
		out := map[shelfmark.ID]state{}
		var access [2]int64
		view(t, e, func(tx shelfmark.ReadTx) error {
			for _, id := range a.all {
				row, err := tx.Resource(ctx, keyOf(t, id))
				if err != nil {
					return err
				}
				out[id] = state{row.Source, row.Effective}
			}
			for i, k := range []int64{keyOf(t, a.child.ID), docKey} {
				d, err := tx.SearchDoc(ctx, k)
				if err != nil || d == nil {
					t.Fatalf("search document %d: %v", k, err)
				}
				access[i] = d.AccessKey()
			}
			return nil
		})
		return out, access
	}
	want, wantDocs := read()
	exec(t, e.store, `UPDATE resources SET source = NULL, eff_visibility = 'private', eff_embargo = NULL, eff_lease = NULL`)
	exec(t, e.store, `UPDATE search_docs SET access = NULL`)
	if got, _ := read(); got[a.parent.ID].eff.Visibility != shelfmark.Private {
		t.Fatal("the effective access was not forgotten")
	}
	n := 0
	// statements end with ";" at the end of a line (a comment may follow)
	for _, stmt := range regexp.MustCompile(`;[ \t]*(--[^\n]*)?\n`).Split(migration, -1) {
		var lines []string
		for _, l := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		body := strings.TrimSpace(strings.Join(lines, "\n"))
		if strings.HasPrefix(body, "UPDATE") || strings.HasPrefix(body, "WITH") {
			exec(t, e.store, body)
			n++
		}
	}
	if n < 4 {
		t.Fatalf("the migration has %d backfilling statements", n)
	}
	got, gotDocs := read()
	for _, id := range a.all {
		if g, w := got[id], want[id]; g.source != w.source || !g.eff.Equal(w.eff) {
			t.Errorf("%s after the backfill: source %d, effective %s; the engine stored source %d, effective %s",
				id, g.source, fmtAccess(g.eff), w.source, fmtAccess(w.eff))
		}
	}
	if gotDocs != wantDocs {
		t.Errorf("search documents follow %v after the backfill, %v before", gotDocs, wantDocs)
	}
}
