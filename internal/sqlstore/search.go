package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// Search is a dialect's statements of the search document read and
// deletion of Tx and WriteTx. Their arguments are those named; a list is
// one argument bound by Dialect.Int64s.
type Search struct {
	// SearchDoc reads key, work, kind, format, title, body, access of the
	// document key.
	SearchDoc string
	// DeleteSearchDocs removes the documents of keys and of the works
	// among keys: keys.
	DeleteSearchDocs string
}

// SearchDoc returns the stored document of key, or nil: one primary key
// read.
func (t *Tx) SearchDoc(ctx context.Context, key int64) (*shelfmark.SearchDoc, error) {
	docs, err := Collect(ctx, t.q, t.d.SearchDoc, []any{key}, func(r Scanner) (*shelfmark.SearchDoc, error) {
		var d shelfmark.SearchDoc
		var kind string
		err := r.Scan(&d.Key, &d.Work, &kind, &d.Format, &d.Title, &d.Body, &d.Access)
		d.Kind = shelfmark.Kind(kind)
		return &d, err
	})
	if err != nil {
		return nil, fmt.Errorf("%ssearch document %d: %w", t.d.Prefix, key, err)
	}
	return first(docs), nil
}

// DeleteSearchDocs removes the documents of keys and those of the works
// among keys, in one statement.
func (w *WriteTx) DeleteSearchDocs(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteSearchDocs, w.d.Int64s(keys)); err != nil {
		return fmt.Errorf("%sdelete the search documents of %d keys: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}
