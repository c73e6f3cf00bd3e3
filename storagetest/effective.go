package storagetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// accessTree is a small repository of every shape effective access must
// follow: a work holding a work, file sets, originals and derivatives made
// by the pipeline, and a source record.
type accessTree struct {
	parent, child, sibling *shelfmark.Resource
	fileset, hidden        *shelfmark.Resource // file sets of child
	image, record          *shelfmark.Resource // files of fileset: an original and a source record
	derived                []*shelfmark.Resource
	all                    []shelfmark.ID
}

// buildAccessTree makes the tree with everything public, the derivatives
// of image made by a finished job.
func buildAccessTree(t *testing.T, e *env, now time.Time) *accessTree {
	t.Helper()
	ctx := context.Background()
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource { return rs(t)(e.repo.CreateResource(ctx, nr)) }
	var a accessTree
	a.parent = mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	a.child = mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: a.parent.ID})
	a.sibling = mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: a.parent.ID})
	a.fileset = mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: a.child.ID})
	a.hidden = mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: a.child.ID})
	a.image = mk(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: a.fileset.ID,
		File: &shelfmark.File{Name: "p1.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(71), Use: shelfmark.UseOriginal}})
	a.record = mk(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: a.fileset.ID,
		File: &shelfmark.File{Name: "r.mrc", MediaType: "application/marc", Size: 1, SHA256: sha(72), Use: shelfmark.UseSource}})
	for _, j := range claim(t, e, shelfmark.QueueCharacterize, "w", 10, now) {
		res := &shelfmark.JobResult{}
		if j.Resource == keyOf(t, a.image.ID) {
			res.Derivatives = []*shelfmark.File{
				{Name: "p1.thumbnail.jpg", MediaType: "image/jpeg", Size: 1, SHA256: sha(73), Use: shelfmark.UseThumbnail},
				{Name: "p1.ocr.html", MediaType: "text/html", Size: 1, SHA256: sha(74), Use: shelfmark.UseOCR},
			}
		}
		if err := e.repo.FinishJob(ctx, j, res); err != nil {
			t.Fatal(err)
		}
	}
	files, err := e.repo.ChildFiles(ctx, a.child.ID, []shelfmark.ID{a.fileset.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range files[a.fileset.ID] {
		if it.File != nil && it.File.Use != shelfmark.UseOriginal && it.File.Use != shelfmark.UseSource {
			a.derived = append(a.derived, it)
		}
	}
	if len(a.derived) != 2 {
		t.Fatalf("%d derivatives, want 2", len(a.derived))
	}
	a.all = []shelfmark.ID{a.parent.ID, a.child.ID, a.sibling.ID, a.fileset.ID, a.hidden.ID, a.image.ID, a.record.ID, a.derived[0].ID, a.derived[1].ID}
	return &a
}

// expectedAccess computes the effective access of key the long way, apart
// from the engine: its own access narrowed by that of every row up its
// parent chain and, for a derivative, by its source's expected access.
func expectedAccess(ctx context.Context, tx shelfmark.ReadTx, key int64) (shelfmark.Access, error) {
	row, err := tx.Resource(ctx, key)
	if err != nil || row == nil {
		return shelfmark.Access{}, fmt.Errorf("row %d: %v", key, err)
	}
	a := row.Own()
	for p := row.Parent; p != 0; {
		pr, err := tx.Resource(ctx, p)
		if err != nil || pr == nil {
			return shelfmark.Access{}, fmt.Errorf("parent %d: %v", p, err)
		}
		a = a.Narrow(pr.Own())
		p = pr.Parent
	}
	if row.Source != 0 {
		s, err := expectedAccess(ctx, tx, row.Source)
		if err != nil {
			return shelfmark.Access{}, err
		}
		a = a.Narrow(s)
	}
	return a, nil
}

// checkEffective fails unless every row of ids stores the effective access
// the long way gives.
func checkEffective(t *testing.T, e *env, what string, ids []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, id := range ids {
			k := keyOf(t, id)
			want, err := expectedAccess(ctx, tx, k)
			if err != nil {
				return err
			}
			row, err := tx.Resource(ctx, k)
			if err != nil {
				return err
			}
			if !row.Effective.Equal(want) {
				t.Fatalf("%s: %s (%s) stores effective access %s, want %s", what, id, row.Kind, fmtAccess(row.Effective), fmtAccess(want))
			}
		}
		return nil
	})
}

func fmtAccess(a shelfmark.Access) string {
	s := string(a.Visibility)
	if a.Embargo != nil {
		s += " embargo " + a.Embargo.UTC().Format(time.RFC3339)
	}
	if a.Lease != nil {
		s += " lease " + a.Lease.UTC().Format(time.RFC3339)
	}
	return s
}

// testEffectiveAccess: the effective access every row stores is its own
// access narrowed by its parent chain's and, for a derivative, its source
// file's (computed here apart from the engine), after creation and after
// every one of a run of random changes of access anywhere in the tree; a
// change gives the rows whose effective access it changed its sequence
// number (so that the indexes following the changes see them); an
// anonymous caller reads exactly what is public now; and deleting a file
// deletes what was made from it.
func testEffectiveAccess(t *testing.T, open Opener) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	a := buildAccessTree(t, e, now)
	checkEffective(t, e, "created", a.all)
	// every derivative records its source
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, d := range a.derived {
			row, err := tx.Resource(ctx, keyOf(t, d.ID))
			if err != nil || row.Source != keyOf(t, a.image.ID) {
				t.Fatalf("derivative %s: source %d, want %d (%v)", d.ID, row.Source, keyOf(t, a.image.ID), err)
			}
		}
		return nil
	})

	rng := rand.New(rand.NewPCG(1, 2))
	vis := []shelfmark.Visibility{shelfmark.Public, shelfmark.Authenticated, shelfmark.Private}
	anon := as(shelfmark.Anonymous())
	for step := 0; step < 60; step++ {
		id := a.all[rng.IntN(len(a.all))]
		var u shelfmark.ResourceUpdate
		switch rng.IntN(4) {
		case 0, 1:
			v := vis[rng.IntN(len(vis))]
			u.Visibility = &v
		case 2:
			var d *time.Time
			if rng.IntN(2) == 0 {
				x := now.Add(time.Duration(1+rng.IntN(48)) * time.Hour)
				d = &x
			}
			u.Embargo, u.Lease = &d, new(*time.Time)
		case 3:
			var d *time.Time
			if rng.IntN(2) == 0 {
				x := now.Add(time.Duration(1+rng.IntN(48)) * time.Hour)
				d = &x
			}
			u.Lease, u.Embargo = &d, new(*time.Time)
		}
		var before int64
		view(t, e, func(tx shelfmark.ReadTx) (err error) { before, err = tx.Counter(ctx, "seq"); return err })
		olds := effectiveOf(t, e, a.all)
		rs(t)(e.repo.UpdateResource(ctx, id, u))
		what := fmt.Sprintf("step %d (%s of %s)", step, describe(u), id)
		checkEffective(t, e, what, a.all)
		// the rows whose effective access changed carry the change's seq
		view(t, e, func(tx shelfmark.ReadTx) error {
			for i, x := range a.all {
				row, err := tx.Resource(ctx, keyOf(t, x))
				if err != nil {
					return err
				}
				if !row.Effective.Equal(olds[i]) && row.Seq <= before {
					t.Fatalf("%s: %s's effective access changed but its seq %d is not after %d", what, x, row.Seq, before)
				}
			}
			return nil
		})
		// what anonymous callers read is what is public now
		for _, x := range a.all {
			var want bool
			view(t, e, func(tx shelfmark.ReadTx) error {
				row, err := tx.Resource(ctx, keyOf(t, x))
				want = err == nil && row.EffectiveAt(now) == shelfmark.Public
				return err
			})
			_, err := e.repo.FindResource(anon, x)
			if got := err == nil; got != want {
				t.Fatalf("%s: anonymous read of %s: %v, want readable %v", what, x, err, want)
			}
		}
	}

	// deleting the image deletes what was made from it, not the record
	public := shelfmark.Public
	for _, x := range a.all {
		rs(t)(e.repo.UpdateResource(ctx, x, shelfmark.ResourceUpdate{Visibility: &public, Embargo: new(*time.Time), Lease: new(*time.Time)}))
	}
	if err := e.repo.DeleteResource(ctx, a.image.ID, 0); err != nil {
		t.Fatal(err)
	}
	for _, d := range a.derived {
		if _, err := e.repo.FindResource(ctx, d.ID); shelfmark.ErrorCode(err) != shelfmark.EGONE {
			t.Fatalf("derivative %s of a deleted file: %v, want it deleted too", d.ID, err)
		}
	}
	rs(t)(e.repo.FindResource(ctx, a.record.ID))
}

// effectiveOf reads the stored effective access of ids.
func effectiveOf(t *testing.T, e *env, ids []shelfmark.ID) []shelfmark.Access {
	t.Helper()
	out := make([]shelfmark.Access, len(ids))
	view(t, e, func(tx shelfmark.ReadTx) error {
		for i, id := range ids {
			row, err := tx.Resource(context.Background(), keyOf(t, id))
			if err != nil {
				return err
			}
			out[i] = row.Effective
		}
		return nil
	})
	return out
}

func describe(u shelfmark.ResourceUpdate) string {
	switch {
	case u.Visibility != nil:
		return "visibility " + string(*u.Visibility)
	case u.Embargo != nil && *u.Embargo != nil:
		return "embargo"
	case u.Lease != nil && *u.Lease != nil:
		return "lease"
	}
	return "no dates"
}

// testCostEffectiveAccess: making a book private rewrites the effective
// access of its pages and files in a number of statements that does not
// depend on the number of pages (rule R15: a change of visibility of a
// book is not one write per page).
func testCostEffectiveAccess(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	private, public := shelfmark.Private, shelfmark.Public
	run := func(pages int) []call {
		book, _ := bookWithFiles(t, e, pages)
		return e.rec.capture(func() {
			rs(t)(e.repo.UpdateResource(ctx, book.ID, shelfmark.ResourceUpdate{Visibility: &private}))
			rs(t)(e.repo.UpdateResource(ctx, book.ID, shelfmark.ResourceUpdate{Visibility: &public}))
		})
	}
	small, large := run(3), run(40)
	queries := func(cs []call) []string {
		var out []string
		for _, c := range withoutKeyBlocks(cs) {
			out = append(out, c.query)
		}
		return out
	}
	if !slices.Equal(queries(small), queries(large)) {
		t.Fatalf("making a book private and public again: the statements grew with its pages.\n3 pages:\n%s\n40 pages:\n%s", dump(small), dump(large))
	}
	// and every page and file of the large book was reached (3 rows a
	// page, twice)
	if rows := rowsOf(large) - rowsOf(small); rows < 2*3*37 {
		t.Fatalf("the statements touched %d more rows for 37 more pages", rows)
	}
	t.Logf("making a book private and public again: %d statements at both sizes", len(queries(small)))
}
