package bench

import (
	"context"
	"time"

	"github.com/shelfmark/shelfmark"
)

// RawInsertLimit measures plain inserts of the rows works write (each its
// resource row and its metadata fields), batch works per durable transaction,
// straight through the backend: no HTTP, no parsing, no engine. With batch
// 1 it is the best a server committing each request on its own could do;
// with a large batch it is the storage's ceiling for this data, which group
// commit approaches as clients rise.
func RawInsertLimit(ctx context.Context, store shelfmark.Storage, triples, batch int, d time.Duration) (float64, error) {
	fields := shelfmark.FieldsOf(patentStatements(1, 0, triples))
	const reserve = 1 << 22
	first, err := store.AllocateKeys(ctx, reserve)
	if err != nil {
		return 0, err
	}
	keys := make([]int64, 0, len(fields)*batch)
	all := make([]shelfmark.Field, 0, len(fields)*batch)
	start := time.Now()
	n := 0
	for time.Since(start) < d && n+batch < reserve {
		now := time.Now()
		err = store.Update(ctx, func(tx shelfmark.WriteTx) error {
			seq, err := tx.NextSeq(ctx, batch)
			if err != nil {
				return err
			}
			rows := make([]*shelfmark.ResourceRow, batch)
			keys, all = keys[:0], all[:0]
			for b := 0; b < batch; b++ {
				k := first + int64(n+b)
				rows[b] = &shelfmark.ResourceRow{Key: k, Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Version: 1, Seq: seq + int64(b), Created: now, Modified: now,
					Effective: shelfmark.Access{Visibility: shelfmark.Public}}
				for range fields {
					keys = append(keys, k)
				}
				all = append(all, fields...)
			}
			if err := tx.InsertResources(ctx, rows); err != nil {
				return err
			}
			return tx.PutFields(ctx, keys, all)
		})
		if err != nil {
			return 0, err
		}
		n += batch
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
