package backup_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/storagetest"
)

// testRepo is a repository in a data directory: its database (SQLite in
// dir, or the PostgreSQL schema dsn), a local content store and an OCFL
// preservation copy in dir, as serve lays them out.
type testRepo struct {
	t     testing.TB
	dir   string
	store shelfmark.Storage
	repo  *shelfmark.Repository
	blobs *blob.LocalStore
	pres  *preserve.Preserver
	coll  shelfmark.ID
	works int
}

// newTestRepo makes a repository with an administrator and a token (so
// accounts and the audit log have rows), a collection, and works works.
func newTestRepo(t testing.TB, dir, dsn string, works int) *testRepo {
	t.Helper()
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, dsn, dir, "relaxed", 4)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := ocfl.NewDirFS(filepath.Join(dir, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	r := &testRepo{t: t, dir: dir, store: store, repo: repo, blobs: blobs,
		pres: preserve.New(store, blobs, root, ids, preserve.Options{Window: time.Nanosecond})}
	t.Cleanup(r.close)
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Scope: shelfmark.ScopeAdmin}); err != nil {
		t.Fatal(err)
	}
	coll, err := repo.CreateResource(r.sys(), &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Kept")})
	if err != nil {
		t.Fatal(err)
	}
	r.coll = coll.ID
	r.addWorks(works)
	return r
}

func (r *testRepo) close() {
	if r.repo != nil {
		r.repo.Close()
		r.store.Close()
		r.blobs.Close()
		r.repo = nil
	}
}

func (r *testRepo) sys() context.Context {
	return shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
}

func title(s string) []shelfmark.Statement {
	return []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(s)}}
}

// addWorks adds n works, each with a file set and an original (every
// third larger than a small blob, so it is a file of its own), and brings
// the preservation copy up to date. It returns how many new blobs it
// stored.
func (r *testRepo) addWorks(n int) int {
	r.t.Helper()
	ctx := r.sys()
	for range n {
		i := r.works
		r.works++
		vis := shelfmark.Public
		if i%5 == 0 {
			vis = shelfmark.Private
		}
		w, err := r.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{r.coll},
			Metadata: title(fmt.Sprintf("work %d", i))})
		if err != nil {
			r.t.Fatal(err)
		}
		set, err := r.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: title("page")})
		if err != nil {
			r.t.Fatal(err)
		}
		body := []byte(fmt.Sprintf("the page of work %d\n", i))
		if i%3 == 0 {
			body = bytes.Repeat(body, (blob.SmallMax/len(body))+2)
		}
		b, err := r.blobs.Put(ctx, bytes.NewReader(body), shelfmark.PutOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		if _, err := r.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
			Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}); err != nil {
			r.t.Fatal(err)
		}
	}
	if _, _, err := r.pres.CatchUp(ctx); err != nil {
		r.t.Fatal(err)
	}
	return n
}

// dump is the canonical dump of the repository's resources.
func (r *testRepo) dump() string {
	r.t.Helper()
	d, err := storagetest.Dump(context.Background(), r.store)
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

// tableDump is every row of every table of the SQLite database file (the
// virtual tables' contents are in their shadow tables), a sorted line a
// row, so two files holding the same rows give the same text.
func tableDump(t *testing.T, file string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+file+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var out []string
	for _, tb := range tables {
		rs, err := db.Query(`SELECT * FROM "` + tb + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		var lines []string
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, tb+" "+fmt.Sprintf("%q", vals))
		}
		rs.Close()
		sort.Strings(lines)
		out = append(out, fmt.Sprintf("%s: %d rows", tb, len(lines)))
		out = append(out, lines...)
	}
	return strings.Join(out, "\n")
}

// treeFiles reads every regular file under dir (but the OCFL lock file),
// by path.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".ocfl-lock" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// blobBytes reads every blob of the local content store in dir.
func blobBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	s, err := blob.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string][]byte{}
	ctx := context.Background()
	err = s.Walk(ctx, func(sha string) error {
		rc, err := s.Open(ctx, sha)
		if err != nil {
			return err
		}
		defer rc.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(rc); err != nil {
			return err
		}
		out[sha] = b.Bytes()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails unless a and b hold the same paths with the same bytes.
func sameFiles(t *testing.T, what string, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d files in the original, %d restored", what, len(a), len(b))
	}
	for p, da := range a {
		db, ok := b[p]
		if !ok {
			t.Errorf("%s: %s was not restored", what, p)
		} else if !bytes.Equal(da, db) {
			t.Errorf("%s: %s differs", what, p)
		}
	}
	if len(a) == 0 {
		t.Errorf("%s: no files to compare", what)
	}
}
