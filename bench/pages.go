package bench

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// storePages stores n files as works of up to 100 pages each (a file set
// holding one file per page), one group per work under the source key
// prefix:lo, and returns the files' keys in order. file(i) describes file
// i, whose bytes it has put in blobs (Deferred puts are synced before each
// work is committed).
func storePages(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, prefix string, n int,
	file func(i int) (*shelfmark.File, error), progress func(done int)) ([]int64, error) {
	const perWork = 100
	keys := make([]int64, 0, n)
	for lo := 0; lo < n; lo += perWork {
		hi := min(lo+perWork, n)
		ids, err := repo.MintIDs(ctx, 1+2*(hi-lo))
		if err != nil {
			return nil, err
		}
		g := &shelfmark.NewGroup{SourceKey: fmt.Sprintf("%s:%d", prefix, lo)}
		g.Resources = append(g.Resources, &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork})
		for i := lo; i < hi; i++ {
			f, err := file(i)
			if err != nil {
				return nil, err
			}
			fs, id := ids[1+2*(i-lo)], ids[2+2*(i-lo)]
			g.Resources = append(g.Resources,
				&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: ids[0]},
				&shelfmark.NewResource{ID: id, Kind: shelfmark.KindFile, Parent: fs, File: f})
			k, _ := repo.IDs().Key(id)
			keys = append(keys, k)
		}
		if err := blobs.Sync(ctx); err != nil {
			return nil, err
		}
		if _, errs := repo.CreateGroups(ctx, []*shelfmark.NewGroup{g}); errs[0] != nil {
			return nil, errs[0]
		}
		progress(hi)
	}
	return keys, nil
}
