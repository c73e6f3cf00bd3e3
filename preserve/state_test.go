package preserve

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// backends runs f on a fresh repository of each backend.
func backends(t *testing.T, f func(t *testing.T, repo *shelfmark.Repository)) {
	t.Run("sqlite", func(t *testing.T) {
		store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db.sqlite"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, testkit.Repo(t, store))
	})
	t.Run("postgres", func(t *testing.T) {
		store, err := postgres.Open(context.Background(), testkit.PostgresSchema(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, testkit.Repo(t, store))
	})
}

func hex64(c byte) string { return strings.Repeat(string(c), 64) }

// build reads the state of id.
func build(t *testing.T, repo *shelfmark.Repository, id shelfmark.ID) *State {
	t.Helper()
	key, err := repo.IDs().Key(id)
	if err != nil {
		t.Fatal(err)
	}
	var st *State
	if err := repo.Storage().View(context.Background(), func(tx shelfmark.ReadTx) error {
		st, err = Build(context.Background(), tx, repo.IDs(), key)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBuild: a work's object holds its record (the work, its file sets in
// their order, each followed by its files), its metadata as N-Triples and
// its originals, not its derivatives; two originals of one name do not
// share a path; a deleted work's object holds its tombstone only.
func TestBuild(t *testing.T) {
	backends(t, func(t *testing.T, repo *shelfmark.Repository) {
		ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
		create := func(nr *shelfmark.NewResource) *shelfmark.Resource {
			t.Helper()
			r, err := repo.CreateResource(ctx, nr)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		title := func(s string) []shelfmark.Statement {
			return []shelfmark.Statement{{Predicate: "http://purl.org/dc/terms/title", Object: shelfmark.NewLiteral(s)}}
		}
		coll := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Maps")})
		work := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: title("Atlas")})
		var sets []shelfmark.ID
		for i, c := range []byte{'a', 'b', 'c'} {
			set := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID, Metadata: title("page")})
			sets = append(sets, set.ID)
			create(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
				Name: "page.tif", MediaType: "image/tiff", Size: int64(10 + i), SHA256: hex64(c), Use: shelfmark.UseOriginal}})
		}
		// a second original of the same name in the last file set
		again := create(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: sets[2], File: &shelfmark.File{
			Name: "page.tif", MediaType: "image/tiff", Size: 9, SHA256: hex64('e'), Use: shelfmark.UseOriginal}})
		create(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: sets[0], File: &shelfmark.File{
			Name: "thumb.jpg", MediaType: "image/jpeg", Size: 5, SHA256: hex64('d'), Use: shelfmark.UseThumbnail}})
		order := []shelfmark.ID{sets[2], sets[0], sets[1]}
		if _, err := repo.SetOrder(ctx, work.ID, order, 0); err != nil {
			t.Fatal(err)
		}

		st := build(t, repo, work.ID)
		rec := st.Record
		if rec.ID != string(work.ID) || rec.Shelfmark != FormatVersion {
			t.Fatalf("record of %s: %+v", work.ID, rec)
		}
		var kinds, ids []string
		for _, r := range rec.Resources {
			kinds = append(kinds, r.Kind)
			ids = append(ids, r.ID)
		}
		if got := strings.Join(kinds, " "); got != "work fileset file file fileset file file fileset file" {
			t.Fatalf("kinds %s", got)
		}
		if ids[1] != string(sets[2]) || ids[4] != string(sets[0]) || ids[7] != string(sets[1]) {
			t.Fatalf("file sets out of order: %v, want %v", ids, order)
		}
		w := rec.Resources[0]
		if len(w.MemberOf) != 1 || w.MemberOf[0] != string(coll.ID) || w.Statements != 1 || w.Parent != "" {
			t.Fatalf("work record %+v", w)
		}
		if rec.Resources[1].Position != 1 || rec.Resources[4].Position != 2 || rec.Resources[1].Parent != string(work.ID) {
			t.Fatalf("positions %+v %+v", rec.Resources[1], rec.Resources[4])
		}
		contents, err := st.Contents()
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, c := range contents {
			paths = append(paths, c.Path)
		}
		want := []string{
			"files/" + string(sets[0]) + "/page.tif",
			"files/" + string(sets[1]) + "/page.tif",
			"files/" + string(sets[2]) + "/page.tif",
			"files/" + string(sets[2]) + "/" + string(again.ID) + "-page.tif",
			MetadataPath, RecordPath,
		}
		if strings.Join(sortedCopy(paths), "\n") != strings.Join(sortedCopy(want), "\n") {
			t.Fatalf("paths\n%s\nwant\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
		}
		for _, r := range rec.Resources {
			if r.File != nil && r.File.Use == shelfmark.UseThumbnail && r.File.Path != "" {
				t.Fatalf("a derivative's bytes are kept: %+v", r.File)
			}
		}
		var nt string
		for _, c := range contents {
			if c.Path == MetadataPath {
				nt = string(c.Bytes)
			}
		}
		if !strings.Contains(nt, "<"+SubjectIRI(work.ID)+"> <http://purl.org/dc/terms/title> \"Atlas\" .") || strings.Count(nt, "\n") != 4 {
			t.Fatalf("metadata:\n%s", nt)
		}
		var back Record
		for _, c := range contents {
			if c.Path == RecordPath {
				if err := json.Unmarshal(c.Bytes, &back); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(back.Resources) != len(rec.Resources) || back.Resources[3].File.SHA256 != rec.Resources[3].File.SHA256 {
			t.Fatalf("object.json does not hold the record: %+v", back)
		}

		// a collection's object holds the collection alone
		if cs := build(t, repo, coll.ID); len(cs.Record.Resources) != 1 || cs.Record.Resources[0].Kind != "collection" {
			t.Fatalf("collection record %+v", cs.Record)
		}

		if err := repo.DeleteResource(ctx, work.ID, 0); err != nil {
			t.Fatal(err)
		}
		st = build(t, repo, work.ID)
		if len(st.Record.Resources) != 1 || st.Record.Resources[0].Deleted == nil || len(st.Originals) != 0 || len(st.Metadata) != 0 {
			t.Fatalf("deleted work: %+v, %d originals", st.Record.Resources, len(st.Originals))
		}
	})
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
