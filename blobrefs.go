package shelfmark

import "context"

// BlobReferences tells which stored blobs are held: referred to by files,
// or sent by a user who has not named them in a file yet (an Upload), so
// that the bytes nothing holds (sent to the blob endpoint and never used
// within the grace period, stored by an upload killed before it
// committed, or by an upload that was refused) can be removed. Both
// storage backends implement it.
type BlobReferences interface {
	// ReferencedBlobs returns the members of shas (SHA-256 digests in
	// lower-case hex) that the file of some resource, live or deleted,
	// refers to, or that an upload record holds. It reads committed rows
	// only.
	ReferencedBlobs(ctx context.Context, shas []string) (map[string]bool, error)
}
