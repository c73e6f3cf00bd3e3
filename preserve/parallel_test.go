package preserve

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark/ocfl"
)

// remoteFS is an FS that is not a local directory (as the S3 store is not),
// over one.
type remoteFS struct{ ocfl.FS }

// TestDefaultParallel: versions are written one object at a time to a
// storage root in a directory, where each write is CPU in the kernel, and
// DefaultParallel at a time to any other store, whose round trips overlap;
// an explicit Parallel is kept.
func TestDefaultParallel(t *testing.T) {
	ctx := context.Background()
	dir, err := ocfl.NewDirFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, err := ocfl.InitRoot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := ocfl.OpenRoot(ctx, remoteFS{dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root *ocfl.Root
		set  int
		want int
	}{
		{local, 0, DefaultLocalParallel},
		{remote, 0, DefaultParallel},
		{local, 3, 3},
		{remote, 3, 3},
	} {
		if got := New(nil, nil, c.root, nil, Options{Parallel: c.set}).opts.Parallel; got != c.want {
			t.Errorf("%T, Parallel %d: %d objects at once, want %d", c.root.FS(), c.set, got, c.want)
		}
	}
}
