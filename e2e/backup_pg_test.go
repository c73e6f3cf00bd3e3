package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/storagetest"
)

// pitrScript is scripts/backup-pg.sh, the procedure of docs/backup.md.
func pitrScript() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "scripts", "backup-pg.sh")
}

// pitr runs pitrScript with args.
func pitr(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(pitrScript(), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("backup-pg.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// pgBinaries reports whether pg_basebackup and initdb are installed where
// scripts/postgres.sh looks for them.
func pgBinaries() bool {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_basebackup")
	if len(dirs) > 0 {
		return true
	}
	_, err := exec.LookPath("pg_basebackup")
	return err == nil
}

// pgDSN is the DSN of the throwaway cluster on port.
func pgDSN(t *testing.T, port int) string {
	t.Helper()
	name := "shelfmark-pg"
	if os.Getuid() != 0 {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		name = u.Username
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", name, port)
}

// pgWorks adds n works to the PostgreSQL repository dsn, each with a file
// set and an original stored in the content store under data (every
// third larger than a small blob), deletes the first of them when del is
// set, and brings the preservation copy data/ocfl up to date.
func pgWorks(t *testing.T, dsn, data string, from, n int, del bool) []shelfmark.ID {
	t.Helper()
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, dsn, data, "safe", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	defer repo.Close()
	blobs, err := setup.OpenBlobs(ctx, setup.BlobFlags{}, data, store)
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	title := func(s string) []shelfmark.Statement {
		return []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(s)}}
	}
	var works []shelfmark.ID
	for i := from; i < from+n; i++ {
		w, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: title(fmt.Sprintf("work %d", i))})
		if err != nil {
			t.Fatal(err)
		}
		set, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: title("page")})
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(fmt.Sprintf("the page of work %d\n", i))
		if i%3 == 0 {
			body = bytes.Repeat(body, blob.SmallMax/len(body)+2)
		}
		b, err := blobs.Put(ctx, bytes.NewReader(body), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
			Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}); err != nil {
			t.Fatal(err)
		}
		works = append(works, w.ID)
	}
	if del {
		if err := repo.DeleteResource(sys, works[0], 0); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := ocfl.NewDirFS(filepath.Join(data, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.OpenRoot(ctx, fsys)
	if err != nil {
		if root, err = ocfl.InitRoot(ctx, fsys); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := preserve.New(store, blobs, root, ids, preserve.Options{Window: time.Nanosecond}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	return works
}

// pgDump is the canonical dump of the PostgreSQL repository dsn.
func pgDump(t *testing.T, dsn string) string {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), dsn, t.TempDir(), "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := storagetest.Dump(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pgNow is the cluster's clock.
func pgNow(t *testing.T, dsn string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var now string
	if err := conn.QueryRow(context.Background(), "SELECT clock_timestamp()::text").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// TestBackupPostgresPITR runs the PostgreSQL procedure of docs/backup.md
// on a cluster of its own with WAL archiving: Shelfmark writes, a base
// backup is taken, Shelfmark writes more (and deletes), shelfmark backup
// copies the content store and the preservation copy; the cluster is lost.
// The base backup and the archived WAL, restored into a fresh directory,
// hold the repository as it was (the canonical dumps have no difference),
// and so does a point-in-time recovery to a moment between two batches of
// writes; shelfmark restore brings back the content store and the
// preservation copy, and a server on both answers.
func TestBackupPostgresPITR(t *testing.T) {
	if !pgBinaries() {
		if requireTools() {
			t.Fatal("pg_basebackup and initdb are not installed (scripts/postgres.sh start installs them)")
		}
		t.Skip("pg_basebackup and initdb are not installed")
	}
	tmp, err := os.MkdirTemp("", "shelfmark-pitr-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range []string{"pg", "pg-end", "pg-time"} {
			if _, err := os.Stat(filepath.Join(tmp, d)); err == nil {
				_ = exec.Command(pitrScript(), "stop", filepath.Join(tmp, d)).Run()
			}
		}
		os.RemoveAll(tmp)
	})
	archive, base := filepath.Join(tmp, "archive"), filepath.Join(tmp, "base", "b")
	pitr(t, "init", filepath.Join(tmp, "pg"), strconv.Itoa(ports[0]), archive)
	dsn := pgDSN(t, ports[0])
	data := filepath.Join(tmp, "data")

	pgWorks(t, dsn, data, 0, 30, false)
	atBase := pgDump(t, dsn)
	pitr(t, "base", strconv.Itoa(ports[0]), base)
	pgWorks(t, dsn, data, 30, 20, true)
	atTime := pgDump(t, dsn)
	target := pgNow(t, dsn)
	time.Sleep(50 * time.Millisecond)
	sample := pgWorks(t, dsn, data, 50, 20, true)
	want := pgDump(t, dsn)
	if want == atTime || atTime == atBase {
		t.Fatal("the batches of writes changed nothing")
	}
	out, err := runCLI(t, "backup", filepath.Join(tmp, "content"), "--database", dsn, "--data", data)
	if err != nil || !strings.Contains(out, "PostgreSQL, not copied") {
		t.Fatalf("shelfmark backup --database: %v\n%s", err, out)
	}
	pitr(t, "switch", strconv.Itoa(ports[0]))
	pitr(t, "stop", filepath.Join(tmp, "pg"))

	// to the end of the archive
	pitr(t, "restore", base, archive, filepath.Join(tmp, "pg-end"), strconv.Itoa(ports[1]))
	dsnEnd := pgDSN(t, ports[1])
	if d := storagetest.DiffLines(want, pgDump(t, dsnEnd)); d != "" {
		t.Fatalf("the database restored from the base backup and the WAL archive differs (- original, + restored):\n%s", d)
	}
	// to a point in time
	pitr(t, "restore", base, archive, filepath.Join(tmp, "pg-time"), strconv.Itoa(ports[2]), target)
	if d := storagetest.DiffLines(atTime, pgDump(t, pgDSN(t, ports[2]))); d != "" {
		t.Fatalf("the point-in-time recovery to %s differs (- original then, + restored):\n%s", target, d)
	}

	restored := filepath.Join(tmp, "restored")
	out, err = runCLI(t, "restore", filepath.Join(tmp, "content"), "--data", restored)
	if err != nil || !strings.Contains(out, "the database is PostgreSQL") {
		t.Fatalf("shelfmark restore: %v\n%s", err, out)
	}
	sameBlobs(t, filepath.Join(data, "blobs"), filepath.Join(restored, "blobs"))

	// a server on the restored database and content store serves a work's
	// original
	bin := shelfmarkBinary(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://127.0.0.1:" + strconv.Itoa(port)
	srv := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--database", dsnEnd, "--data", restored,
		"--log-level", "warn", "--workers=false", "--blob-gc", "0"}, noBacklogLimit()...)...)
	srv.Env = cleanEnv(filepath.Dir(bin))
	var log lockedBuffer
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	testkit.WaitServing(t, addr)
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, w := range sample[1:4] {
		resp, err := hc.Get(addr + "/api/v1/resources/" + string(w))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status, body := resp.StatusCode, string(b)
		if status != http.StatusOK || !strings.Contains(body, string(w)) {
			t.Fatalf("GET %s on the restored server: %d %.300s\n%s", w, status, body, log.String())
		}
	}
}

// sameBlobs fails unless the local content stores a and b hold the same
// blobs with the same bytes.
func sameBlobs(t *testing.T, a, b string) {
	t.Helper()
	read := func(dir string) map[string]string {
		s, err := blob.NewLocal(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out := map[string]string{}
		ctx := context.Background()
		if err := s.Walk(ctx, func(sha string) error {
			rc, err := s.Open(ctx, sha)
			if err != nil {
				return err
			}
			defer rc.Close()
			data, err := io.ReadAll(rc)
			out[sha] = string(data)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ma, mb := read(a), read(b)
	if len(ma) == 0 || len(ma) != len(mb) {
		t.Fatalf("content stores: %d blobs in the original, %d restored", len(ma), len(mb))
	}
	for k, v := range ma {
		if mb[k] != v {
			t.Fatalf("blob %s differs or was not restored", k)
		}
	}
}
