package storagetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

var chainAt = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// chainRow is a public resource row of key under parent (0: none).
func chainRow(key, parent int64, kind shelfmark.Kind) *shelfmark.ResourceRow {
	r := &shelfmark.ResourceRow{Key: key, Kind: kind, Parent: parent, Visibility: shelfmark.Public,
		Version: 1, Seq: 1, Created: chainAt, Modified: chainAt, Effective: shelfmark.Access{Visibility: shelfmark.Public}}
	if parent != 0 {
		r.Position = 1
	}
	return r
}

// testResourceChain: ReadTx.ResourceChain reads a resource and its
// parents, nearest first, as Resource reads each of them: tombstones
// included, cut at n rows, ended by a parent that has no row, empty for a
// key that has none.
func testResourceChain(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	at := chainAt
	row := chainRow
	work, set, file := row(7001, 0, shelfmark.KindWork), row(7002, 7001, shelfmark.KindFileSet), row(7003, 7002, shelfmark.KindFile)
	orphan := row(7004, 6999, shelfmark.KindFile) // its parent has no row
	gone := row(7005, 7001, shelfmark.KindFileSet)
	gone.Deleted = &at
	// a chain longer than the policy walks
	deep := []*shelfmark.ResourceRow{row(7100, 0, shelfmark.KindWork)}
	for i := int64(1); i <= shelfmark.MaxChain+5; i++ {
		deep = append(deep, row(7100+i, 7100+i-1, shelfmark.KindWork))
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.InsertResources(ctx, append([]*shelfmark.ResourceRow{work, set, file, orphan, gone}, deep...))
	})
	last := deep[len(deep)-1].Key
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, c := range []struct {
			key  int64
			n    int
			want []int64
		}{
			{file.Key, shelfmark.MaxChain, []int64{7003, 7002, 7001}},
			{file.Key, 2, []int64{7003, 7002}},
			{file.Key, 1, []int64{7003}},
			{file.Key, 0, nil},
			{work.Key, shelfmark.MaxChain, []int64{7001}},
			{orphan.Key, shelfmark.MaxChain, []int64{7004}},
			{gone.Key, shelfmark.MaxChain, []int64{7005, 7001}},
			{6999, shelfmark.MaxChain, nil},
			{last, shelfmark.MaxChain, nil}, // filled in below
		} {
			if c.key == last {
				for k := last; len(c.want) < shelfmark.MaxChain; k-- {
					c.want = append(c.want, k)
				}
			}
			got, err := tx.ResourceChain(ctx, c.key, c.n)
			if err != nil {
				return err
			}
			var keys []int64
			for _, r := range got {
				keys = append(keys, r.Key)
				one, err := tx.Resource(ctx, r.Key)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(r, one) {
					t.Errorf("chain of %d: row %d is %+v, Resource reads %+v", c.key, r.Key, r, one)
				}
			}
			if !reflect.DeepEqual(keys, c.want) {
				t.Errorf("chain of %d, at most %d: %v, want %v", c.key, c.n, keys, c.want)
			}
		}
		return nil
	})
}
