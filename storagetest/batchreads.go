package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// bookWithFiles creates a public work of n file sets, each holding an
// original and a thumbnail, and returns the work and its file sets in
// order.
func bookWithFiles(t *testing.T, e *env, n int) (*shelfmark.Resource, []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("book")}}))
	var sets []shelfmark.ID
	for done := 0; done < n; {
		b := min(200, n-done)
		nrs := make([]*shelfmark.NewResource, b)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
		}
		res, errs := e.repo.CreateResources(ctx, nrs)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var files []*shelfmark.NewResource
		for i, fs := range res {
			sets = append(sets, fs.ID)
			for _, use := range []string{shelfmark.UseOriginal, shelfmark.UseThumbnail} {
				files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &shelfmark.File{
					Name: fmt.Sprintf("p%d.%s", done+i, use), MediaType: "image/jpeg", Size: int64(done + i), SHA256: strings.Repeat("b", 64), Use: use}})
			}
		}
		_, errs = e.repo.CreateResources(ctx, files)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		done += b
	}
	return w, sets
}

// testChildFiles: a page of file sets is read with their files (and the
// files' formats) in statements that do not grow with the page or the
// work; hidden file sets and files are left out.
func testChildFiles(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	w, sets := bookWithFiles(t, e.env, 5)

	got, err := e.repo.ChildFiles(ctx, w.ID, sets[1:4])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("files of 3 file sets: got %d", len(got))
	}
	for i, fs := range sets[1:4] {
		fl := got[fs]
		if len(fl) != 2 || fl[0].File == nil || fl[0].File.Use != shelfmark.UseOriginal || fl[1].File.Use != shelfmark.UseThumbnail ||
			fl[0].File.Name != fmt.Sprintf("p%d.original", i+1) || fl[0].Parent != fs || fl[0].Kind != shelfmark.KindFile {
			t.Fatalf("files of %s: %+v", fs, fl)
		}
	}

	// a format found by characterization comes along
	key, _ := e.repo.IDs().Key(got[sets[1]][0].ID)
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetFileFormats(ctx, []int64{key}, []*shelfmark.Format{{PRONOM: "fmt/43", Name: "JPEG File Interchange Format", Version: "1.01", MediaType: "image/jpeg"}})
	}); err != nil {
		t.Fatal(err)
	}
	got, err = e.repo.ChildFiles(ctx, w.ID, sets[1:2])
	if err != nil {
		t.Fatal(err)
	}
	if f := got[sets[1]][0].File.Format; f == nil || f.PRONOM != "fmt/43" || f.Name != "JPEG File Interchange Format" {
		t.Fatalf("format: %+v", f)
	}

	// the files come in their file set's order, not that of their keys,
	// whatever the order of the file sets asked (files are ordered only
	// by storage, as a rebuild from the preservation copy may order them)
	fl := got2(t, e.repo, w.ID, sets[3])
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetPositions(ctx, keyOf(t, sets[3]), []int64{keyOf(t, fl[1].ID), keyOf(t, fl[0].ID)})
	}); err != nil {
		t.Fatal(err)
	}
	got, err = e.repo.ChildFiles(ctx, w.ID, []shelfmark.ID{sets[4], sets[3], sets[2]})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := e.repo.ListPages(ctx, w.ID, shelfmark.PageRequest{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, files := range []map[shelfmark.ID][]*shelfmark.Resource{got, pages.Files} {
		for i, want := range [][]string{2: {shelfmark.UseOriginal, shelfmark.UseThumbnail}, 3: {shelfmark.UseThumbnail, shelfmark.UseOriginal},
			4: {shelfmark.UseOriginal, shelfmark.UseThumbnail}} {
			var uses []string
			for _, f := range files[sets[i]] {
				uses = append(uses, f.File.Use)
			}
			if want != nil && !slices.Equal(uses, want) {
				t.Errorf("the files of file set %d, in order: %v, want %v", i+1, uses, want)
			}
		}
	}

	// not a child of the work: left out; a malformed id: EINVALID
	other, otherSets := bookWithFiles(t, e.env, 1)
	got, err = e.repo.ChildFiles(ctx, w.ID, otherSets)
	if err != nil || len(got) != 0 {
		t.Fatalf("a file set of another work: %v %v", got, err)
	}
	if _, err := e.repo.ChildFiles(ctx, w.ID, []shelfmark.ID{"!"}); err == nil {
		t.Fatal("a malformed id was taken")
	}

	// a private file set, and a private file, are hidden from anonymous
	priv := shelfmark.Private
	rs(t)(e.repo.UpdateResource(ctx, sets[0], shelfmark.ResourceUpdate{Visibility: &priv}))
	rs(t)(e.repo.UpdateResource(ctx, got2(t, e.repo, w.ID, sets[2])[1].ID, shelfmark.ResourceUpdate{Visibility: &priv}))
	anon := as(shelfmark.Anonymous())
	got, err = e.repo.ChildFiles(anon, w.ID, sets[:3])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[sets[0]]; ok || len(got[sets[1]]) != 2 || len(got[sets[2]]) != 1 {
		t.Fatalf("anonymous sees: %v", got)
	}
	// a private work: not found for anonymous
	rs(t)(e.repo.UpdateResource(ctx, other.ID, shelfmark.ResourceUpdate{Visibility: &priv}))
	if _, err := e.repo.ChildFiles(anon, other.ID, otherSets); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("files of a private work, anonymous: %v", err)
	}

	// cost: a page of 10 of a 10-page work and of a 300-page one, and a
	// page of 60 deep in the large one
	small, smallSets := bookWithFiles(t, e.env, 10)
	large, largeSets := bookWithFiles(t, e.env, 300)
	read := func(w shelfmark.ID, ids []shelfmark.ID) []call {
		return e.rec.capture(func() {
			got, err := e.repo.ChildFiles(anon, w, ids)
			if err != nil || len(got) != len(ids) {
				t.Fatalf("files of %d file sets: %d, %v", len(ids), len(got), err)
			}
		})
	}
	sameWork(t, "files of a page of file sets", read(small.ID, smallSets), read(large.ID, largeSets[200:210]))
	a, b := read(large.ID, largeSets[:10]), read(large.ID, largeSets[200:260])
	if len(a) != len(b) {
		t.Fatalf("files of 10 file sets ran %d statements, of 60 ran %d", len(a), len(b))
	}
}

// testChildFilesBound: ChildFiles and PageFiles take the first perParent
// live files of each parent by position, and all of a parent with fewer,
// skipping deleted files and children of another kind.
func testChildFilesBound(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	w, sets := bookWithFiles(t, e.env, 2)
	var extra []*shelfmark.NewResource
	for i := range 4 {
		f := &shelfmark.File{Name: fmt.Sprintf("extra%d.txt", i), MediaType: "text/plain", Size: 1, SHA256: strings.Repeat("c", 64), Use: shelfmark.UseOriginal}
		if i%2 == 1 { // characterized: a row with a format beside rows without
			f.Format = &shelfmark.Format{PRONOM: "x-fmt/111", MediaType: "text/plain", Width: 10 + i, Height: 20, Pages: i}
		}
		extra = append(extra, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: sets[0], File: f})
	}
	made, errs := e.repo.CreateResources(ctx, extra)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// the file set's files by position: p0.original, p0.thumbnail, extra0..3;
	// extra0 deleted, and the order reversed
	if err := e.repo.DeleteResource(ctx, made[0].ID, 0); err != nil {
		t.Fatal(err)
	}
	first := got2(t, e.repo, w.ID, sets[0])
	var reversed []int64
	for i := len(first) - 1; i >= 0; i-- {
		reversed = append(reversed, keyOf(t, first[i].ID))
	}
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetPositions(ctx, keyOf(t, sets[0]), reversed)
	}); err != nil {
		t.Fatal(err)
	}
	names := []string{"extra3.txt", "extra2.txt", "extra1.txt", "p0.thumbnail", "p0.original"}
	parents := []int64{keyOf(t, sets[1]), keyOf(t, sets[0])}
	// a buffer read into before, with more rows than some reads below
	// and fewer than others, and read into again by each
	var buf shelfmark.FileRowBuffer
	for _, per := range []int{32, 1, 6, 3, 5} {
		err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			fresh := func(ctx context.Context, parents []int64, per int) ([]*shelfmark.FileRow, error) {
				return tx.PageFiles(ctx, parents, per, nil)
			}
			reused := func(ctx context.Context, parents []int64, per int) ([]*shelfmark.FileRow, error) {
				return tx.PageFiles(ctx, parents, per, &buf)
			}
			for name, read := range map[string]func(context.Context, []int64, int) ([]*shelfmark.FileRow, error){
				"ChildFiles": tx.ChildFiles, "PageFiles": fresh, "PageFiles into a buffer": reused} {
				rows, err := read(ctx, parents, per)
				if err != nil {
					return err
				}
				var got []string
				for _, r := range rows {
					if r.Row.Parent == parents[1] {
						got = append(got, r.File.Name)
					}
				}
				if want := names[:min(per, len(names))]; !slices.Equal(got, want) {
					t.Errorf("%s, %d a parent: %v, want %v", name, per, got, want)
				}
				if n := len(rows) - len(got); n != min(per, 2) {
					t.Errorf("%s, %d a parent: %d files of the other file set, want %d", name, per, n, min(per, 2))
				}
			}
			// the rows read into the buffer are the fresh read's, field by
			// field: nothing of an earlier read shows through
			want, err := fresh(ctx, parents, per)
			if err != nil {
				return err
			}
			got, err := reused(ctx, parents, per)
			if err != nil {
				return err
			}
			if len(got) != len(want) {
				t.Fatalf("%d a parent: %d rows into a buffer, %d fresh", per, len(got), len(want))
			}
			formats := 0
			for i := range want {
				if want[i].File.Format != nil {
					formats++
				}
				if !reflect.DeepEqual(*got[i].Row, *want[i].Row) || !reflect.DeepEqual(*got[i].File, *want[i].File) {
					t.Errorf("%d a parent, row %d: into a buffer %+v %+v, fresh %+v %+v", per, i, *got[i].Row, *got[i].File, *want[i].Row, *want[i].File)
				}
			}
			if per >= 3 && formats == 0 {
				t.Errorf("%d a parent: no row with a format, so none was read into a buffer's room left by one", per)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// got2 returns the files of one file set, failing on error.
func got2(t *testing.T, repo *shelfmark.Repository, w, fs shelfmark.ID) []*shelfmark.Resource {
	t.Helper()
	m, err := repo.ChildFiles(context.Background(), w, []shelfmark.ID{fs})
	if err != nil {
		t.Fatal(err)
	}
	return m[fs]
}

// testFindResources: several resources are read, as far as the caller may
// see them, in the order asked, with their metadata, in statements that do
// not grow with their number.
func testFindResources(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	mk := func(vis shelfmark.Visibility, name string) shelfmark.ID {
		return rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: vis,
			Metadata: []shelfmark.Statement{title(name)}})).ID
	}
	pub, priv, gone := mk(shelfmark.Public, "public"), mk(shelfmark.Private, "private"), mk(shelfmark.Public, "gone")
	pub2 := mk(shelfmark.Public, "second")
	if err := e.repo.DeleteResource(ctx, gone, 0); err != nil {
		t.Fatal(err)
	}
	missing := e.repo.IDs().Encode(shelfmark.MaxKey - 11)
	names := func(rs []*shelfmark.Resource) string {
		var out []string
		for _, r := range rs {
			v := ""
			for _, st := range r.Metadata {
				v = st.Object.Value
			}
			out = append(out, v)
		}
		return strings.Join(out, ",")
	}
	ask := []shelfmark.ID{pub2, priv, gone, missing, pub, pub2}
	got, err := e.repo.FindResources(ctx, ask)
	if err != nil || names(got) != "second,private,public" {
		t.Fatalf("the system finds %q, %v", names(got), err)
	}
	anon := as(shelfmark.Anonymous())
	got, err = e.repo.FindResources(anon, ask)
	if err != nil || names(got) != "second,public" || got[0].ID != pub2 || got[0].Kind != shelfmark.KindCollection {
		t.Fatalf("anonymous finds %q, %v", names(got), err)
	}
	if _, err := e.repo.FindResources(anon, []shelfmark.ID{"!"}); err == nil {
		t.Fatal("a malformed id was taken")
	}
	// cost: 2 public collections and 40 cost the same statements
	var many []shelfmark.ID
	for i := 0; i < 40; i++ {
		many = append(many, mk(shelfmark.Public, fmt.Sprintf("c%d", i)))
	}
	read := func(ids []shelfmark.ID) []call {
		return e.rec.capture(func() {
			got, err := e.repo.FindResources(anon, ids)
			if err != nil || len(got) != len(ids) {
				t.Fatalf("find %d: %d, %v", len(ids), len(got), err)
			}
		})
	}
	small, large := read(many[:2]), read(many)
	if len(small) != len(large) {
		t.Fatalf("finding 2 resources ran %d statements, 40 ran %d:\n%s\n%s", len(small), len(large), dump(small), dump(large))
	}
}

// testFirstChildren: FirstChildren gives each parent its first live child
// of the kind asked, by position: the first of the order set, an
// unordered child when none is ordered, the next when the first is
// deleted, past children of another kind; a parent without one is
// absent; no parents, no statement's answer but an empty map.
func testFirstChildren(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource { return rs(t)(e.repo.CreateResource(ctx, nr)) }
	k := func(r *shelfmark.Resource) int64 { return keyOf(t, r.ID) }
	ordered := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	var sets []shelfmark.ID
	for range 3 {
		sets = append(sets, mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: ordered.ID}).ID)
	}
	if _, err := e.repo.SetOrder(ctx, ordered.ID, []shelfmark.ID{sets[2], sets[0], sets[1]}, 0); err != nil {
		t.Fatal(err)
	}
	unordered := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	u1 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: unordered.ID})
	mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: unordered.ID})
	deleted := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	d1 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: deleted.ID})
	d2 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: deleted.ID})
	if err := e.repo.DeleteResource(ctx, d1.ID, 0); err != nil {
		t.Fatal(err)
	}
	mixed := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: mixed.ID})
	m2 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: mixed.ID})
	empty := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	view(t, e, func(tx shelfmark.ReadTx) error {
		got, err := tx.FirstChildren(ctx, []int64{k(ordered), k(unordered), k(deleted), k(mixed), k(empty)}, shelfmark.KindFileSet)
		if err != nil {
			return err
		}
		want := map[int64]int64{k(ordered): keyOf(t, sets[2]), k(unordered): k(u1), k(deleted): k(d2), k(mixed): k(m2)}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("first file sets: %v, want %v", got, want)
		}
		if got, err := tx.FirstChildren(ctx, nil, shelfmark.KindFileSet); err != nil || len(got) != 0 {
			t.Errorf("no parents: %v, %v", got, err)
		}
		return nil
	})
}

// testListPages: a page of a work's children comes with the files of its
// pages in one read (ListPages), the same children ListChildren gives and
// of each file what ChildFiles gives of the fields ListPages promises, as
// far as the caller may see them; its statements do not grow with the
// work or with the depth of the page.
func testListPages(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	w, sets := bookWithFiles(t, e.env, 5)
	part := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: w.ID}))
	key, _ := e.repo.IDs().Key(got2(t, e.repo, w.ID, sets[1])[0].ID)
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetFileFormats(ctx, []int64{key}, []*shelfmark.Format{{PRONOM: "fmt/43", Name: "JPEG File Interchange Format",
			MediaType: "image/jpeg", Width: 2000, Height: 3000, Pages: 0}})
	}); err != nil {
		t.Fatal(err)
	}
	priv := shelfmark.Private
	rs(t)(e.repo.UpdateResource(ctx, sets[0], shelfmark.ResourceUpdate{Visibility: &priv}))
	rs(t)(e.repo.UpdateResource(ctx, got2(t, e.repo, w.ID, sets[2])[1].ID, shelfmark.ResourceUpdate{Visibility: &priv}))

	brief := func(f *shelfmark.Resource) string {
		fm := "none"
		if f.File.Format != nil {
			fm = fmt.Sprintf("%s %s %dx%d %d", f.File.Format.PRONOM, f.File.Format.MediaType, f.File.Format.Width, f.File.Format.Height, f.File.Format.Pages)
		}
		return fmt.Sprintf("%s %s %s %s %s %s %s %d %s %s %q %s", f.ID, f.Kind, f.Parent, f.Visibility, f.Modified.UTC().Format(time.RFC3339Nano),
			f.File.Name, f.File.MediaType, f.File.Size, f.File.SHA256, f.File.Use, f.File.ExternalURL, fm)
	}
	for _, c := range []struct {
		name  string
		ctx   context.Context
		pages int // file sets shown
	}{{"the system", ctx, 5}, {"anonymous", as(shelfmark.Anonymous()), 4}} {
		for _, limit := range []int{2, 100} {
			var ids []shelfmark.ID
			after := shelfmark.Cursor("")
			for {
				pg, err := e.repo.ListPages(c.ctx, w.ID, shelfmark.PageRequest{After: after, Limit: limit, Metadata: true}, nil)
				if err != nil {
					t.Fatal(err)
				}
				want, err := e.repo.ListChildren(c.ctx, w.ID, shelfmark.PageRequest{After: after, Limit: limit, Metadata: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(pg.Items) != len(want.Items) || pg.Next != want.Next {
					t.Fatalf("%s, %d a page: %d items, next %q; ListChildren %d, %q", c.name, limit, len(pg.Items), pg.Next, len(want.Items), want.Next)
				}
				var sets []shelfmark.ID
				for i, it := range pg.Items {
					if it.ID != want.Items[i].ID || it.Visibility != want.Items[i].Visibility || len(it.Metadata) != len(want.Items[i].Metadata) {
						t.Fatalf("%s: item %d is %+v, ListChildren's %+v", c.name, i, it, want.Items[i])
					}
					if it.Kind == shelfmark.KindFileSet {
						sets = append(sets, it.ID)
					}
					ids = append(ids, it.ID)
				}
				files, err := e.repo.ChildFiles(c.ctx, w.ID, sets)
				if err != nil {
					t.Fatal(err)
				}
				if len(pg.Files) != len(files) {
					t.Fatalf("%s: files of %d pages, ChildFiles gives %d", c.name, len(pg.Files), len(files))
				}
				for fs, fl := range files {
					got := pg.Files[fs]
					if len(got) != len(fl) {
						t.Fatalf("%s: %d files of %s, ChildFiles gives %d", c.name, len(got), fs, len(fl))
					}
					for i := range fl {
						if g, w := brief(got[i]), brief(fl[i]); g != w {
							t.Fatalf("%s: file %d of %s is\n%s\nChildFiles gives\n%s", c.name, i, fs, g, w)
						}
					}
				}
				if after = pg.Next; after == "" {
					break
				}
			}
			if len(ids) != c.pages+1 || ids[len(ids)-1] != part.ID {
				t.Fatalf("%s, %d a page: children %v", c.name, limit, ids)
			}
		}
	}
	if _, err := e.repo.ListPages(ctx, w.ID, shelfmark.PageRequest{After: "x"}, nil); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Fatalf("a cursor not given out: %v", err)
	}
	rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Visibility: &priv}))
	if _, err := e.repo.ListPages(as(shelfmark.Anonymous()), w.ID, shelfmark.PageRequest{}, nil); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("pages of a private work, anonymous: %v", err)
	}

	// cost: the first page of 10 and one deep in a 300-page book
	large, largeSets := bookWithFiles(t, e.env, 300)
	anon := as(shelfmark.Anonymous())
	read := func(after shelfmark.Cursor) []call {
		return e.rec.capture(func() {
			pg, err := e.repo.ListPages(anon, large.ID, shelfmark.PageRequest{After: after, Limit: 10, Metadata: true}, nil)
			if err != nil || len(pg.Items) != 10 || len(pg.Files) != 10 {
				t.Fatalf("a page of 10: %+v, %v", pg, err)
			}
		})
	}
	deep, err := e.repo.ChildCursor(rs(t)(e.repo.FindResource(ctx, largeSets[200])))
	if err != nil {
		t.Fatal(err)
	}
	sameWork(t, "a page of a book with its files", read(""), read(deep))
}
