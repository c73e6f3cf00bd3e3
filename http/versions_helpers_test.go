package http

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// newKeeper makes a preservation copy in dir/ocfl and its preserver,
// which the tests drive by hand (preserveAt) rather than by its loop.
func newKeeper(t testing.TB, dir string, store shelfmark.Storage, blobs shelfmark.BlobStore, ids *shelfmark.IDCodec) *preserve.Preserver {
	t.Helper()
	fsys, err := ocfl.NewDirFS(filepath.Join(dir, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.InitRoot(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	return preserve.New(store, blobs, root, ids, preserve.Options{})
}

// preserveAt writes a version of the object of each work or collection
// (unless it is unchanged), dated at.
func (e *policyEnv) preserveAt(at time.Time, ids ...shelfmark.ID) {
	e.t.Helper()
	for _, id := range ids {
		key, err := e.repo.IDs().Key(id)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.keeper.Preserve(context.Background(), key, at); err != nil {
			e.t.Fatal(err)
		}
	}
}
