package preserve

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// TestRepositorySecret: the repository object of a new storage root holds
// the database's id secret beside the root number; a root written before
// it held the secret gains a version with it; a root holding another
// secret is another repository's.
func TestRepositorySecret(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		var secret string
		if err := s.repo.Storage().View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			secret, _, err = tx.Setting(ctx, shelfmark.IDSecretSetting)
			return err
		}); err != nil || len(secret) != 64 {
			t.Fatalf("the database's secret %q, %v", secret, err)
		}
		if _, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(DefaultWindow)
		if _, _, err := s.p.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		rec, head, err := ReadRepository(ctx, s.root)
		if err != nil || head != 1 || rec.IDSecret != secret || rec.Root == 0 || rec.Shelfmark != FormatVersion {
			t.Fatalf("repository object: %+v at version %d, %v; want the secret %s", rec, head, err, secret)
		}

		// a root written without the secret: a new preserver adds it
		old := RepositoryRecord{Shelfmark: 1, Root: rec.Root}
		commitRepository(t, s.root, head, old)
		p := New(s.repo.Storage(), s.blobs, s.root, s.repo.IDs(), Options{Now: s.clock.Now})
		if _, _, err := p.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		if rec, head, err = ReadRepository(ctx, s.root); err != nil || head != 3 || rec.IDSecret != secret {
			t.Fatalf("after a root without the secret: %+v at version %d, %v", rec, head, err)
		}

		// another repository's secret
		other := rec
		other.IDSecret = "legacy"
		commitRepository(t, s.root, head, other)
		p = New(s.repo.Storage(), s.blobs, s.root, s.repo.IDs(), Options{Now: s.clock.Now})
		if _, _, err := p.CatchUp(ctx); !errors.Is(err, ErrOtherRoot) {
			t.Fatalf("a root of another secret: %v, want ErrOtherRoot", err)
		}
	})
}

// commitRepository writes version head+1 of the repository object with
// rec.
func commitRepository(t *testing.T, root *ocfl.Root, head int, rec RepositoryRecord) {
	t.Helper()
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha512.Sum512(js)
	d := hex.EncodeToString(sum[:])
	if _, err := root.Commit(context.Background(), RepositoryObject, head, ocfl.NewVersion{
		State:   map[string]string{RepositoryPath: d},
		Content: func(context.Context, string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(js)), nil },
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		User:    ocfl.User{Name: "test", Address: "urn:test"},
	}); err != nil {
		t.Fatal(err)
	}
}
