package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// workerProc is a running worker child.
type workerProc struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

func startWorker(t *testing.T, env []string, args ...string) *workerProc {
	t.Helper()
	out := &lockedBuffer{}
	cmd := childCommand(t, env, append([]string{"worker"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProc{cmd: cmd, out: out}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// stop interrupts the worker and waits for it to hand its jobs back.
func (p *workerProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("worker did not stop; output:\n%s", p.out.String())
	}
}

// TestWorkerKilled: a worker killed with SIGKILL in the middle of an OCR
// job leaves no child process behind, and the job, whose lease then ends,
// is taken up and finished by the next worker.
func TestWorkerKilled(t *testing.T) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
			t.Fatal("tesseract missing")
		}
		t.Skip("tesseract missing")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, "", data, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	defer repo.Close()
	page := gen.PageImage(3, 0, []string{"LIGHTHOUSE", "HARBOUR"})
	b, err := blobs.Put(ctx, bytes.NewReader(page), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	work, _ := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	fs, _ := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	_, err = repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "page.png", MediaType: "image/png", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: "original"}})
	if err != nil {
		t.Fatal(err)
	}

	// a tesseract that hangs, and says who it is
	fake := filepath.Join(dir, "bin")
	pidFile := filepath.Join(dir, "tesseract.pid")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	// (written whole, then renamed: the test may look at any moment, and a
	// redirection creates the file before it writes the pid into it)
	script := fmt.Sprintf("#!/bin/sh\necho $$ > %[1]s.tmp && mv %[1]s.tmp %[1]s\nexec sleep 300\n", pidFile)
	if err := os.WriteFile(filepath.Join(fake, "tesseract"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data", data, "--log-level", "debug", "--job-timeout", "ocr=20s,derive=30s,characterize=30s", "--lease-grace", "1s"}
	w1 := startWorker(t, []string{"PATH=" + fake + ":" + os.Getenv("PATH")}, args...)
	// characterize, then derive, then the OCR job that hangs
	testkit.WaitJobs(t, repo, 2*time.Minute, "the OCR job running", func(cs []shelfmark.QueueCount) bool {
		_, err := os.Stat(pidFile)
		return cs[3].Running == 1 && err == nil
	}, w1.out)
	raw, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("pid file %q", raw)
	}
	if err := w1.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = w1.cmd.Wait()
	// the hanging tool went with its worker
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("tesseract %d outlived its killed worker", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// the job is still held by the dead worker
	if cs, _ := repo.QueueCounts(ctx); cs[3].Running != 1 {
		t.Fatalf("after the kill %+v", cs[3])
	}
	// a new worker (with the real tesseract) takes it back when its lease
	// ends, and finishes it
	// (its OCR runs at idle priority, which on a machine kept busy gets a
	// sliver of a core: the OCR of this page, a fifth of a second of CPU,
	// then takes a minute or more, so this worker's time limit is long; the
	// job's lease, taken by the killed worker, stays the short one)
	args2 := append([]string(nil), args...)
	for i, a := range args2 {
		if strings.HasPrefix(a, "ocr=") {
			args2[i] = "ocr=5m,derive=5m,characterize=5m"
		}
	}
	w2 := startWorker(t, nil, args2...)
	testkit.WaitJobs(t, repo, 6*time.Minute, "every job finished", func(cs []shelfmark.QueueCount) bool {
		for _, c := range cs {
			if c.Queued+c.Running+c.Failed > 0 {
				return false
			}
		}
		return true
	}, w2.out)
	w2.stop(t)
	kids, err := repo.ListChildren(ctx, fs.ID, shelfmark.PageRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string]bool{}
	for _, k := range kids.Items {
		r, err := repo.FindResource(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		uses[r.File.Use] = true
	}
	// one of each: the original and what derive (thumbnail, access copy,
	// tiles) and OCR (hOCR, ALTO) make, none twice
	if !uses[shelfmark.UseOCR] || !uses[shelfmark.UseALTO] || !uses[shelfmark.UseThumbnail] || !uses[shelfmark.UseAccess] ||
		!uses[shelfmark.UseTiles] || len(kids.Items) != 6 {
		t.Fatalf("files of the page after recovery: %v (%d)", uses, len(kids.Items))
	}
	if !strings.Contains(w2.out.String(), "returned to their queues") {
		t.Errorf("the second worker did not report taking the lost job back:\n%s", w2.out.String())
	}
}

// alive reports whether a process exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// TestWorkersShareQueue: two worker processes on one PostgreSQL database
// share a queue of 400 jobs without ever running the same job twice.
func TestWorkersShareQueue(t *testing.T) {
	dsn := testkit.PostgresSchema(t)
	dir := t.TempDir()
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, dsn, dir, "safe", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	defer repo.Close()
	const n = 400
	work, _ := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	for i := 0; i < n; i++ {
		b, err := blobs.Put(ctx, strings.NewReader(fmt.Sprintf("note %d, in plain text\n", i)), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "n.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: "original"}}); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--database", dsn, "--data", dir, "--log-level", "debug", "--queues", "characterize"}
	w1, w2 := startWorker(t, nil, args...), startWorker(t, nil, args...)
	testkit.WaitJobs(t, repo, 3*time.Minute, "the characterize queue drained", func(cs []shelfmark.QueueCount) bool {
		return cs[0].Queued+cs[0].Running == 0
	}, w1.out, w2.out)
	w1.stop(t)
	w2.stop(t)
	settled := regexp.MustCompile(`msg="job settled" queue=characterize job=(\d+) .* outcome=(\w+)`)
	seen := map[string]int{}
	per := [2]int{}
	for i, w := range []*workerProc{w1, w2} {
		sc := bufio.NewScanner(strings.NewReader(w.out.String()))
		for sc.Scan() {
			if m := settled.FindStringSubmatch(sc.Text()); m != nil {
				if m[2] != "done" {
					t.Errorf("worker %d: job %s ended %s", i+1, m[1], m[2])
				}
				seen[m[1]]++
				per[i]++
			}
		}
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("job %s ran %d times", id, k)
		}
	}
	if len(seen) != n || per[0] == 0 || per[1] == 0 {
		t.Fatalf("%d distinct jobs ran (want %d); worker 1 ran %d, worker 2 ran %d", len(seen), n, per[0], per[1])
	}
	t.Logf("worker 1 ran %d jobs, worker 2 ran %d", per[0], per[1])
}
