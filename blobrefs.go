package shelfmark

import "context"

// BlobReferences tells which stored blobs files refer to, so that the
// bytes no file refers to (sent to the blob endpoint and never used, or
// stored by an upload killed before it committed) can be collected. Both
// storage backends implement it.
type BlobReferences interface {
	// ReferencedBlobs returns the members of shas (SHA-256 digests in
	// lower-case hex) that the file of some resource, live or deleted,
	// refers to. It reads committed rows only.
	ReferencedBlobs(ctx context.Context, shas []string) (map[string]bool, error)
}
