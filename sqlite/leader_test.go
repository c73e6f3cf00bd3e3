package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/storagetest"
)

func TestElection(t *testing.T) {
	storagetest.RunElection(t, func(t *testing.T) storagetest.ElectionBackend {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "shelfmark.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return storagetest.ElectionBackend{Open: func(t *testing.T) (shelfmark.Elector, func()) {
			e := db.Elector(0)
			return e, func() { e.Close() }
		}}
	})
}
