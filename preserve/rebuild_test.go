package preserve

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestRebuildFormat1: a record of format 1, which did not give the
// effective access, rebuilds a private work's file set and file as
// hidden as the work, not as their own (public) visibility.
func TestRebuildFormat1(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
		if err != nil {
			t.Fatal(err)
		}
		set := s.page(t, w.ID, "a private page")
		s.clock.Add(DefaultWindow)
		if _, _, err := s.p.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		// the object as a format 1 preserver wrote it
		o := s.object(t, w.ID)
		var rec Record
		if err := json.Unmarshal([]byte(s.read(t, o, o.Head(), RecordPath)), &rec); err != nil {
			t.Fatal(err)
		}
		rec.Shelfmark = 1
		for i := range rec.Resources {
			if rec.Resources[i].Effective == nil && rec.Resources[i].Kind != string(shelfmark.KindWork) {
				t.Fatalf("resource %s had no effective access in format 2", rec.Resources[i].ID)
			}
			rec.Resources[i].Effective = nil
			if f := rec.Resources[i].File; f != nil {
				f.SHA512Stored = false
			}
		}
		js, err := json.Marshal(&rec)
		if err != nil {
			t.Fatal(err)
		}
		state, err := o.State(o.Head())
		if err != nil {
			t.Fatal(err)
		}
		d := sha512hex(js)
		state[RecordPath] = d
		if _, err := s.root.Commit(ctx, o.ID(), o.Head(), newVersionOf(state, d, js, s.clock.Now())); err != nil {
			t.Fatal(err)
		}

		dir := t.TempDir()
		dst, err := sqlite.Open(ctx, filepath.Join(dir, "db.sqlite"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		defer blobs.Close()
		rep, err := Rebuild(ctx, s.root, dst, blobs, RebuildOptions{Now: s.clock.Now})
		if err != nil || len(rep.Skipped) != 0 {
			t.Fatalf("rebuild: %+v, %v", rep, err)
		}
		setKey, _ := s.repo.IDs().Key(set)
		if err := dst.View(ctx, func(tx shelfmark.ReadTx) error {
			files, err := tx.ChildFiles(ctx, []int64{setKey}, 10)
			if err != nil || len(files) != 1 {
				t.Fatalf("files of the page: %d, %v", len(files), err)
			}
			row, err := tx.Resource(ctx, setKey)
			if err != nil {
				return err
			}
			for _, r := range []*shelfmark.ResourceRow{row, files[0].Row} {
				if r.Effective.Visibility != shelfmark.Private || r.Visibility != shelfmark.Public {
					t.Errorf("%s %d: own %s, effective %s; want public, private", r.Kind, r.Key, r.Visibility, r.Effective.Visibility)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// sha512hex is the SHA-512 of data in hex.
func sha512hex(data []byte) string {
	sum := sha512.Sum512(data)
	return hex.EncodeToString(sum[:])
}

// newVersionOf is a version of state whose one new content, of digest d,
// is data.
func newVersionOf(state map[string]string, d string, data []byte, at time.Time) ocfl.NewVersion {
	return ocfl.NewVersion{
		State: state,
		Content: func(_ context.Context, digest string) (io.ReadCloser, error) {
			if digest != d {
				return nil, fmt.Errorf("no content %s", digest)
			}
			return io.NopCloser(bytes.NewReader(data)), nil
		},
		Created: at,
		Message: "test",
		User:    ocfl.User{Name: "test", Address: "urn:test"},
	}
}
