package blob

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// enospc fails every write after the first limit bytes as a full disk
// does.
type enospc struct {
	w     io.Writer
	limit int
}

func (e *enospc) Write(p []byte) (int, error) {
	if len(p) > e.limit {
		n, _ := e.w.Write(p[:e.limit])
		e.limit = 0
		return n, &fs.PathError{Op: "write", Path: "put-x", Err: syscall.ENOSPC}
	}
	e.limit -= len(p)
	return e.w.Write(p)
}

// TestStorageFull checks that a write that fails for lack of space is
// ESTORAGEFULL (not an internal error), leaves nothing behind, and that
// ProbeSpace finds the space once it is back.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	s.wrapTemp = func(w io.Writer) io.Writer { return &enospc{w: w, limit: 16 << 10} }
	_, err := s.Put(ctx, bytes.NewReader(data(1<<20, 1)), shelfmark.PutOptions{})
	assertCode(t, err, shelfmark.ESTORAGEFULL)
	assertEmpty(t, dir)
	if err := s.ProbeSpace(ctx); shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL {
		t.Errorf("probe on a full disk: %v", err)
	}
	if ents, _ := os.ReadDir(s.tmp); len(ents) != 0 {
		t.Errorf("the probe left %v", ents)
	}
	// Space is back.
	s.wrapTemp = nil
	if err := s.ProbeSpace(ctx); err != nil {
		t.Errorf("probe with space: %v", err)
	}
	if _, err := s.Put(ctx, bytes.NewReader(data(1<<20, 1)), shelfmark.PutOptions{}); err != nil {
		t.Errorf("put with space: %v", err)
	}

	// The pack database of small blobs full (SQLITE_FULL): its page
	// count capped where it stands.
	var pages int
	if err := s.small.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.small.w.Exec(`PRAGMA max_page_count = ` + strconv.Itoa(pages+2)); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		_, err = s.Put(ctx, bytes.NewReader(data(SmallMax, byte(i+2))), shelfmark.PutOptions{})
		if err != nil {
			break
		}
	}
	assertCode(t, err, shelfmark.ESTORAGEFULL)
	_, err = s.Put(ctx, bytes.NewReader(data(SmallMax, 200)), shelfmark.PutOptions{Deferred: true})
	if err == nil {
		err = s.Sync(ctx)
	}
	assertCode(t, err, shelfmark.ESTORAGEFULL)

	// Deferred puts whose Sync finds no space: the Sync says so, neither
	// is in the pack database, and neither is dropped: the next Sync with
	// space stores both.
	s2, _ := newStore(t)
	if err := s2.small.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.small.w.Exec(`PRAGMA max_page_count = ` + strconv.Itoa(pages+4)); err != nil {
		t.Fatal(err)
	}
	var deferred [][]byte
	for _, d := range [][]byte{data(100, 7), data(SmallMax, 8)} {
		b, err := s2.Put(ctx, bytes.NewReader(d), shelfmark.PutOptions{Deferred: true})
		if err != nil {
			t.Fatal(err)
		}
		sum, _ := hex.DecodeString(b.Digests[shelfmark.SHA256])
		deferred = append(deferred, sum)
	}
	assertCode(t, s2.Sync(ctx), shelfmark.ESTORAGEFULL)
	for _, sum := range deferred {
		if _, ok, err := s2.small.get(ctx, sum); err != nil || ok {
			t.Errorf("a deferred blob of a failed Sync is in the pack database: %v %v", ok, err)
		}
	}
	assertCode(t, s2.Sync(ctx), shelfmark.ESTORAGEFULL)
	if _, err := s2.small.w.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if err := s2.Sync(ctx); err != nil {
		t.Errorf("a Sync with space again: %v", err)
	}
	for _, sum := range deferred {
		if _, ok, err := s2.small.get(ctx, sum); err != nil || !ok {
			t.Errorf("a deferred blob not stored once space was made: %v %v", ok, err)
		}
	}
}
