package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestIngestResumeAfterKill: `shelfmark ingest` of a tree of books is
// killed with SIGKILL at random moments and started again until a run
// completes; every book is then stored exactly once, whole, with its pages
// in order and their bytes intact.
func TestIngestResumeAfterKill(t *testing.T) {
	books, pages, rounds := 600, 4, 20
	if testing.Short() {
		books, rounds = 150, 4
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	dir := t.TempDir()
	tree, data := filepath.Join(dir, "tree"), filepath.Join(dir, "data")
	content := func(b, p int) []byte {
		return []byte(fmt.Sprintf("book %d page %d %s", b, p, string(make([]byte, 2000+b*7+p))))
	}
	for b := 0; b < books; b++ {
		for p := 1; p <= pages; p++ {
			path := filepath.Join(tree, fmt.Sprintf("book%03d", b), fmt.Sprintf("page_%d.txt", p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content(b, p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	repo.Close()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"ingest", tree, "--data", data, "--collection", string(coll.ID), "--workers", "2", "--batch", "3"}
	run := func(kill time.Duration) (killed bool, out []byte) {
		cmd := childCommand(t, nil, args...)
		var buf safeBuffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if kill > 0 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ingest failed before the kill: %v\n%s", err, buf.Bytes())
				}
				return false, buf.Bytes()
			case <-time.After(kill):
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				return true, buf.Bytes()
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("final ingest failed: %v\n%s", err, buf.Bytes())
		}
		return false, buf.Bytes()
	}
	kills := 0
	for round := 0; round < rounds; round++ {
		killed, _ := run(time.Duration(150+rng.IntN(450)) * time.Millisecond)
		if !killed {
			break
		}
		kills++
	}
	_, out := run(0)
	t.Logf("%d kills; final run: %s", kills, lastLine(out))
	if kills == 0 {
		t.Log("no run was killed mid-ingest (the machine was fast); the test still checked a complete ingest")
	}

	db, err = sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo = shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	members := map[shelfmark.ID]bool{}
	var cursor shelfmark.Cursor
	for {
		p, err := repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: cursor, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			members[it.ID] = true
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if len(members) != books {
		t.Fatalf("the collection has %d works, want %d (a duplicate or a lost book)", len(members), books)
	}
	keys := dirKeys(t, tree)
	for b := 0; b < books; b++ {
		key := keys[fmt.Sprintf("dir:book%03d", b)]
		found, err := repo.FindSources(ctx, []string{key})
		if err != nil || !members[found[key]] {
			t.Fatalf("%s: stored as %q (member: %v), %v", key, found[key], members[found[key]], err)
		}
		kids, err := repo.ListChildren(ctx, found[key], shelfmark.PageRequest{})
		if err != nil || len(kids.Items) != pages {
			t.Fatalf("%s: %d pages, %v", key, len(kids.Items), err)
		}
		for i, k := range kids.Items {
			files, err := repo.ListChildren(ctx, k.ID, shelfmark.PageRequest{})
			if err != nil || len(files.Items) != 1 || k.Position != i+1 {
				t.Fatalf("%s page %d: %v %v", key, i+1, files, err)
			}
			f, err := repo.FindResource(ctx, files.Items[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(content(b, i+1))
			if f.File.Name != fmt.Sprintf("page_%d.txt", i+1) || f.File.SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("%s page %d holds %s %s", key, i+1, f.File.Name, f.File.SHA256)
			}
			r, err := blobs.Open(ctx, f.File.SHA256)
			if err != nil {
				t.Fatalf("%s page %d: bytes missing: %v", key, i+1, err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, content(b, i+1)) {
				t.Fatalf("%s page %d: stored bytes differ: %v", key, i+1, err)
			}
		}
	}
}

// safeBuffer is a bytes.Buffer for a child's stdout and stderr at once.
type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

func lastLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
