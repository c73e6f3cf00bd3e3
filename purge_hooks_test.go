package shelfmark

import "context"

// IndexStepAround runs one step of the search indexer x with between
// called after its read and before its write, for the external tests of
// a purge that lands between them.
func IndexStepAround(ctx context.Context, x *SearchIndexer, between func()) error {
	pl, read, err := x.readStep(ctx)
	if err != nil || read == 0 {
		return err
	}
	between()
	return x.writeStep(ctx, pl)
}
