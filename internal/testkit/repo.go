package testkit

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// Repo is the engine over store with the store's own id codec, as the
// commands open it; the repository and store close when the test ends.
// The test fails at once when the codec cannot be read.
func Repo(t *testing.T, store shelfmark.Storage) *shelfmark.Repository {
	t.Helper()
	ids, err := shelfmark.LoadIDCodec(context.Background(), store)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	t.Cleanup(func() {
		repo.Close()
		store.Close()
	})
	return repo
}
