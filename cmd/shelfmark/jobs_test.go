package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// runCLI runs the root command with args and returns its output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return testkit.RunCommand(newRootCommand(), args...)
}

// TestJobsCommand: status, pause, resume, failed and retry act on the
// queue in the database; drain waits until the queue is empty.
func TestJobsCommand(t *testing.T) {
	data := t.TempDir()
	if _, err := runCLI(t, "jobs", "status", "--data", data); err == nil {
		t.Fatal("jobs status created a repository in an empty directory")
	}
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, "", data, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	work, _ := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	fs, _ := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	for i := 0; i < 3; i++ {
		if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "p.tif", MediaType: "image/tiff", Size: 1, SHA256: strings.Repeat("a", 63) + string(rune('0'+i)), Use: "original"}}); err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := repo.ClaimJobs(ctx, shelfmark.Claim{Queue: shelfmark.QueueCharacterize, Worker: "w", N: 1, Now: time.Now().Add(time.Second), Lease: time.Now().Add(time.Hour)})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	if err := repo.FailJob(ctx, jobs[0], errors.New("identify p.tif: corrupt")); err != nil {
		t.Fatal(err)
	}
	repo.Close()
	store.Close()

	out, err := runCLI(t, "jobs", "status", "--data", data)
	if err != nil || !strings.Contains(out, "characterize") || !regexpLine(out, "characterize", "running", "2", "2", "0", "1") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if out, err = runCLI(t, "jobs", "pause", "ocr", "derive", "--data", data); err != nil || !strings.Contains(out, "ocr: paused") {
		t.Fatalf("pause: %v\n%s", err, out)
	}
	if out, _ = runCLI(t, "jobs", "status", "--data", data); !regexpLine(out, "ocr", "PAUSED") || !regexpLine(out, "derive", "PAUSED") {
		t.Fatalf("status after pause:\n%s", out)
	}
	if _, err = runCLI(t, "jobs", "pause", "nosuch", "--data", data); err == nil {
		t.Fatal("paused a queue that does not exist")
	}
	if out, err = runCLI(t, "jobs", "resume", "ocr", "--data", data); err != nil || !strings.Contains(out, "ocr: resumed") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if out, err = runCLI(t, "jobs", "failed", "--data", data); err != nil || !strings.Contains(out, "identify p.tif: corrupt") {
		t.Fatalf("failed: %v\n%s", err, out)
	}
	if out, err = runCLI(t, "jobs", "retry", "characterize", "--data", data); err != nil || !strings.Contains(out, "1 failed jobs queued again") {
		t.Fatalf("retry: %v\n%s", err, out)
	}
	// drain returns once a worker emptied the queue
	if out, err = runCLI(t, "jobs", "drain", "ocr", "--data", data); err != nil || !strings.Contains(out, "drained [ocr]") {
		t.Fatalf("drain of an empty queue: %v\n%s", err, out)
	}
}

// regexpLine reports whether some line of out has the given fields in
// order (separated by spaces).
func regexpLine(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) {
			ok := true
			for i, w := range fields {
				if f[i] != w {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}
