package shelfmark

import (
	"context"
	"time"
)

// SmallBlob is the bytes of one small blob and their SHA-256.
type SmallBlob struct {
	// SHA256 is the digest of Data in lower-case hex.
	SHA256 string
	Data   []byte
}

// SmallBlobInfo describes a small blob without its bytes.
type SmallBlobInfo struct {
	SHA256 string // lower-case hex
	Size   int64
	// Stored is when the blob was last stored (or stored again).
	Stored time.Time
}

// SmallBlobStore keeps small blobs (a few tens of KiB at most) in the
// metadata database, so that a content store whose large blobs live
// elsewhere (an object store, where every object costs requests) stores a
// small file without a request of its own. Blobs are content-addressed:
// storing the same SHA-256 again keeps one row and renews its time, which
// the collector of unreferenced blobs reads.
type SmallBlobStore interface {
	// PutSmallBlobs stores blobs durably in one statement, whatever their
	// number. Duplicates are allowed; a blob already stored gets its time
	// renewed.
	PutSmallBlobs(ctx context.Context, blobs []SmallBlob) error
	// SmallBlob returns the bytes stored under sha256, or false.
	SmallBlob(ctx context.Context, sha256 string) ([]byte, bool, error)
	// ListSmallBlobs returns at most limit blobs last stored before
	// storedBefore with a SHA-256 greater than after, in SHA-256 order
	// (keyset paging: pass the last one's SHA-256 to go on).
	ListSmallBlobs(ctx context.Context, after string, storedBefore time.Time, limit int) ([]SmallBlobInfo, error)
	// DeleteSmallBlobs deletes those of shas last stored before
	// storedBefore (a blob stored again since is kept) and reports how
	// many it deleted.
	DeleteSmallBlobs(ctx context.Context, shas []string, storedBefore time.Time) (int, error)
}

// PresignOptions shape a presigned download URL.
type PresignOptions struct {
	// TTL is how long the URL stays valid.
	TTL time.Duration
	// ContentType and ContentDisposition, when set, are the headers the
	// object store answers the URL's GET with.
	ContentType        string
	ContentDisposition string
}

// BlobPresigner is implemented by a content store whose blobs a client
// may fetch directly: the HTTP server may redirect a download there
// instead of streaming the bytes itself.
type BlobPresigner interface {
	// Presign returns a URL that serves the blob with the given SHA-256
	// for opts.TTL, or "" (and no error) when this blob cannot be fetched
	// so (a small blob kept in the database): the caller then serves the
	// bytes itself.
	Presign(ctx context.Context, sha256 string, opts PresignOptions) (string, error)
}
