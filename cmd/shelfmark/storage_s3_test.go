package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/blob/s3test"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestIngestS3: ingest --storage s3://… with the endpoint and credentials
// from the standard AWS environment variables stores large files in the
// bucket and small ones in the pack database; blobs gc works on the same
// store; a bad --storage is refused with a clear error.
func TestIngestS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "ingest")
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	src := t.TempDir()
	for i := 0; i < 3; i++ {
		dir := filepath.Join(src, fmt.Sprintf("work%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		big := bytes.Repeat([]byte(fmt.Sprintf("page %d ", i)), 20000)
		if err := os.WriteFile(filepath.Join(dir, "page.bin"), big, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(fmt.Sprintf("note %d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	run := func(args ...string) (string, error) {
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}
	if out, err := run("ingest", src, "--data", data, "--storage", "s3://ingest/p"); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	if keys := s3Keys(t, srv, "ingest", "p/"); len(keys) != 3 {
		t.Fatalf("objects %q, want the 3 pages", keys)
	}
	// the notes (small files) are in the pack database beside the SQLite
	// database, not in the bucket
	pack, err := blob.OpenPack(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	smalls, err := pack.ListSmallBlobs(context.Background(), "", time.Now().Add(time.Hour), 100)
	pack.Close()
	if err != nil || len(smalls) != 3 {
		t.Fatalf("%d small blobs in the pack database, want the 3 notes: %v", len(smalls), err)
	}
	out, err := run("blobs", "gc", "--data", data, "--storage", "s3://ingest/p", "--dry-run")
	if err != nil || !strings.Contains(out, "referenced by no file") {
		t.Fatalf("blobs gc: %v %q", err, out)
	}
	for _, bad := range []struct{ storage, want string }{
		{"s3://Bad_Bucket/p", "not a bucket name"},
		{"file:///tmp", "must start with s3://"},
		{"s3://missing-bucket/p", `has no bucket "missing-bucket"`},
	} {
		_, err := run("ingest", src, "--data", t.TempDir(), "--storage", bad.storage, "--s3-timeout", "30s")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("--storage %s: %v, want %q", bad.storage, err, bad.want)
		}
	}
}

// TestWorkerS3: worker --storage s3://… identifies files whose bytes it
// reads from the bucket (and the HEAD and GET show in the counts).
func TestWorkerS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "work")
	proxy := s3test.NewProxy(t, srv.Endpoint)
	flags := []string{"--storage", "s3://work/w", "--s3-endpoint", proxy.Endpoint, "--s3-access-key", s3test.AccessKey, "--s3-secret-key", s3test.SecretKey}
	src := filepath.Join(t.TempDir(), "work0")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	for i := 0; text.Len() < 100<<10; i++ {
		fmt.Fprintf(&text, "Line %d of the field notes on the narwhal.\n", i)
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	root := newRootCommand()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs(append([]string{"ingest", filepath.Dir(src), "--data", data}, flags...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, "", data, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	defer repo.Close()
	queued := func(counts []shelfmark.QueueCount) (n, failed int64) {
		for _, c := range counts {
			if c.Queue == "characterize" {
				return c.Queued + c.Running, c.Failed
			}
		}
		return 0, 0
	}
	counts, err := repo.QueueCounts(ctx)
	if n, _ := queued(counts); err != nil || n == 0 {
		t.Fatalf("no characterize job after ingest: %+v %v", counts, err)
	}
	proxy.Counts()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	w := newWorkerCommand()
	w.SetArgs(append([]string{"--data", data, "--log-level", "error", "--queues", "characterize"}, flags...))
	go func() { done <- w.ExecuteContext(wctx) }()
	testkit.WaitJobs(t, repo, 2*time.Minute, "characterize", func(cs []shelfmark.QueueCount) bool {
		n, failed := queued(cs)
		if failed > 0 {
			t.Fatalf("characterize failed: %+v", cs)
		}
		return n == 0
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := proxy.Counts(); c["GET"] == 0 {
		t.Errorf("the worker read nothing from S3: %s", s3test.String(c))
	}
}

// TestIngestS3Postgres: with PostgreSQL metadata, ingest --storage s3://
// keeps the small files in the database's small_blobs table (no pack
// database beside it) and the large ones in the bucket.
func TestIngestS3Postgres(t *testing.T) {
	dsn := testkit.PostgresSchema(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "meta-pg")
	src := t.TempDir()
	for i := 0; i < 4; i++ {
		dir := filepath.Join(src, fmt.Sprintf("work%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "page.bin"), bytes.Repeat([]byte(fmt.Sprintf("page %d ", i)), 20000), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(fmt.Sprintf("note %d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := t.TempDir()
	root := newRootCommand()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"ingest", src, "--data", data, "--database", dsn, "--storage", "s3://meta-pg/x", "--s3-endpoint", srv.Endpoint,
		"--s3-access-key", s3test.AccessKey, "--s3-secret-key", s3test.SecretKey})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	if keys := s3Keys(t, srv, "meta-pg", "x/"); len(keys) != 4 {
		t.Fatalf("objects %q, want the 4 pages", keys)
	}
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM small_blobs`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d small blobs in PostgreSQL, want the 4 notes: %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(data, "blobs", "small.db")); err == nil {
		t.Error("a pack database was made beside PostgreSQL")
	}
}
