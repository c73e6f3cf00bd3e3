package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// refSet is the set of digests files refer to.
type refSet map[string]bool

func (r refSet) ReferencedBlobs(_ context.Context, shas []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, s := range shas {
		if r[s] {
			out[s] = true
		}
	}
	return out, nil
}

// age makes a stored blob look last stored d ago.
func age(t *testing.T, s *LocalStore, sha string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(s.path(sha), then, then); err == nil {
		return
	}
	sum, err := hex.DecodeString(sha)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.small.w.Exec(`UPDATE blobs SET stored = ? WHERE sha256 = ?`, then.UnixMicro(), sum)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no blob %s to age", sha)
	}
}

func TestCollect(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	put := func(n int, seed byte) string {
		b, err := s.Put(ctx, bytes.NewReader(data(n, seed)), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Digests[shelfmark.SHA256]
	}
	const big, small = 200 << 10, 1000
	usedBig, orphanBig, freshBig := put(big, 1), put(big, 2), put(big, 3)
	usedSmall, orphanSmall, freshSmall := put(small, 4), put(small, 5), put(small, 6)
	refs := refSet{usedBig: true, usedSmall: true}
	for _, sha := range []string{usedBig, orphanBig, usedSmall, orphanSmall} {
		age(t, s, sha, 25*time.Hour)
	}
	age(t, s, freshBig, 23*time.Hour)
	age(t, s, freshSmall, 23*time.Hour)
	before := files(t, dir)

	st, err := s.Collect(ctx, refs, CollectOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Examined != 4 || st.Orphans != 2 || st.Removed != 0 || st.Bytes != big+small {
		t.Errorf("dry run: %+v", st)
	}
	if after := files(t, dir); len(after) != len(before) {
		t.Errorf("a dry run removed %d blobs", len(before)-len(after))
	}

	st, err = s.Collect(ctx, refs, CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Orphans != 2 || st.Removed != 2 {
		t.Errorf("collect: %+v", st)
	}
	for _, sha := range []string{usedBig, usedSmall, freshBig, freshSmall} {
		if _, err := s.Open(ctx, sha); err != nil {
			t.Errorf("a referenced or recent blob was removed: %v", err)
		}
	}
	for _, sha := range []string{orphanBig, orphanSmall} {
		if _, err := s.Open(ctx, sha); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Errorf("an old orphan was kept: %v", err)
		}
	}
	if ents, _ := os.ReadDir(s.tmp); len(ents) != 0 {
		t.Errorf("left in tmp: %v", ents)
	}

	// Storing the same bytes again renews them: an old orphan uploaded
	// again, about to be committed, is kept.
	for _, sha := range []string{freshBig, freshSmall} {
		age(t, s, sha, 30*time.Hour)
	}
	put(big, 3)
	put(small, 6)
	if st, err := s.Collect(ctx, refs, CollectOptions{}); err != nil || st.Removed != 0 {
		t.Errorf("after a new put of the same bytes: %+v, %v", st, err)
	}
	// A shorter grace takes them.
	time.Sleep(10 * time.Millisecond)
	if st, err := s.Collect(ctx, refs, CollectOptions{Grace: time.Millisecond}); err != nil || st.Removed != 2 {
		t.Errorf("grace 1ms: %+v, %v", st, err)
	}

	// The collector puts back a blob renewed between its walk and its
	// removal.
	again := put(big, 7)
	age(t, s, again, 30*time.Hour)
	cutoff := time.Now().Add(-DefaultGrace)
	put(big, 7) // renewed after the walk saw it old
	if removed, err := s.removeFile(again, cutoff); err != nil || removed {
		t.Errorf("a renewed blob: removed %v, %v", removed, err)
	}
	if _, err := s.Open(ctx, again); err != nil {
		t.Errorf("the renewed blob is gone: %v", err)
	}
	// A blob the collector left aside when it crashed is put back.
	if err := os.Rename(s.path(again), filepath.Join(s.tmp, gcPrefix+again)); err != nil {
		t.Fatal(err)
	}
	s2, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Open(ctx, again); err != nil {
		t.Errorf("a blob left aside was not restored: %v", err)
	}
}

// TestCollectOldPackDatabase checks that a pack database made before blobs
// kept their time gains the column, its blobs counting as old.
func TestCollectOldPackDatabase(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "blobs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, smallFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("old"))
	if _, err := db.Exec(`CREATE TABLE blobs (sha256 BLOB PRIMARY KEY, data BLOB NOT NULL); INSERT INTO blobs VALUES (?, 'old')`, sum[:]); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Open(ctx, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Collect(ctx, refSet{}, CollectOptions{}); err != nil || st.Removed != 1 {
		t.Errorf("collect: %+v, %v", st, err)
	}
}
