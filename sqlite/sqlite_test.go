package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "shelfmark.db"), sqlite.Options{Tracer: tracer})
		if err != nil {
			t.Fatal(err)
		}
		return db
	})
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shelfmark.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	r, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	repo.Close()
	db.Close()
	db, err = sqlite.Open(ctx, path, sqlite.Options{}) // migrations are not re-applied
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo = shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	if _, err := repo.FindResource(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	r2, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil || r2.ID == r.ID {
		t.Fatalf("after reopen: %v, %s", err, r2.ID)
	}
}
