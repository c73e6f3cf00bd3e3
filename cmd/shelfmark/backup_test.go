package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/blob/s3test"
	"github.com/shelfmark/shelfmark/internal/testkit/datadump"
	"github.com/shelfmark/shelfmark/storagetest"
)

// runCommand runs shelfmark with args in this process and returns what it
// printed.
func runCommand(args ...string) (string, error) {
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestBackupS3: shelfmark backup s3://… of a repository whose content
// store is in S3 too (with the settings from the standard AWS variables),
// then shelfmark restore s3://… into a fresh directory: the same
// resources, every blob restored into a local content store; a second
// backup copies nothing; restore refuses a directory that is not empty,
// and backup a directory that holds no repository.
func TestBackupS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "content")
	srv.CreateBucket(t, "backups")
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	src := t.TempDir()
	for i := range 3 {
		dir := filepath.Join(src, fmt.Sprintf("work%d", i))
		writeTree(t, dir, map[string]string{
			"page.bin": strings.Repeat(fmt.Sprintf("page %d ", i), 20000),
			"note.txt": fmt.Sprintf("note %d", i),
		})
	}
	data := t.TempDir()
	if out, err := runCommand("ingest", src, "--data", data, "--storage", "s3://content/p"); err != nil {
		t.Fatalf("ingest: %v\n%s", err, out)
	}
	want := datadump.SQLite(t, data)
	out, err := runCommand("backup", "s3://backups/b", "--data", data, "--storage", "s3://content/p")
	if err != nil || !strings.Contains(out, "whole: database:") || !strings.Contains(out, "6 blobs (6 copied)") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if keys := s3Keys(t, srv, "backups", "b/pool/sha256/"); len(keys) != 6 {
		t.Fatalf("the pool in the bucket holds %q, want the 6 blobs", keys)
	}
	out, err = runCommand("backup", "s3://backups/b", "--data", data, "--storage", "s3://content/p")
	if err != nil || !strings.Contains(out, "6 blobs (0 copied)") || !strings.Contains(out, " 0 bytes copied") {
		t.Fatalf("second backup: %v\n%s", err, out)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	out, err = runCommand("restore", "s3://backups/b", "--data", restored)
	if err != nil || !strings.Contains(out, "6 blobs") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if d := storagetest.DiffLines(want, datadump.SQLite(t, restored)); d != "" {
		t.Fatalf("the restored repository differs (- original, + restored):\n%s", d)
	}
	local, err := blob.NewLocal(filepath.Join(restored, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = local.Walk(context.Background(), func(string) error { n++; return nil })
	local.Close()
	if err != nil || n != 6 {
		t.Fatalf("the restored content store holds %d blobs (%v), want 6", n, err)
	}

	if out, err := runCommand("restore", "s3://backups/b", "--data", restored); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a directory that is not empty: %v\n%s", err, out)
	}
	empty := t.TempDir()
	if out, err := runCommand("backup", t.TempDir(), "--data", empty); err == nil || !strings.Contains(err.Error(), "no repository") {
		t.Fatalf("backup of no repository: %v\n%s", err, out)
	}
	if out, err := runCommand("restore", filepath.Join(empty, "nothing"), "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("restore from nothing: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(empty, "nothing")); err == nil {
		t.Error("restore from a missing directory made it")
	}
	if out, err := runCommand("restore", empty, "--data", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no backup here") {
		t.Fatalf("restore from a directory with no backup: %v\n%s", err, out)
	}
}
