package shelfmark

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"io"
)

// File is the technical description of the bytes of a resource of kind
// file (rule R13: managed or external).
type File struct {
	// Name is the original file name as the client gave it.
	Name      string
	MediaType string
	// Size is the length in bytes; -1 when unknown (external files).
	Size int64
	// Hex digests. SHA256 is always set for managed files; the others only
	// when asked for or sent by the client.
	SHA256 string
	SHA512 string
	MD5    string
	// Use says what the file is to its file set: "original" or a
	// derivative such as "thumbnail", "access", "text", "ocr", "tiles".
	Use string
	// ExternalURL is set for external files, whose bytes Shelfmark never
	// fetches unless asked.
	ExternalURL string
	// Format is what characterization found; nil until it ran.
	Format *Format
}

// Uses of files. An original (or source) file is processed by the
// background pipeline; the others are what it derives.
const (
	UseOriginal  = "original"
	UseThumbnail = "thumbnail"
	UseAccess    = "access"
	UseText      = "text"
	UseOCR       = "ocr"
	// UseALTO is a page's OCR as ALTO XML: the same word boxes as the
	// hOCR of use UseOCR, for the viewers and tools that read ALTO.
	UseALTO = "alto"
	// UseTiles is a page image's tile pyramid: one ZIP archive of
	// stored (uncompressed) entries laid out as IIIF Image API 3.0
	// level 0 requests ("x,y,w,h/w,h/0/default.jpg" and "info.json").
	UseTiles = "tiles"
)

// Processed reports whether the background pipeline works on the file:
// managed originals and source records, not derivatives.
func (f *File) Processed() bool {
	return f.Managed() && (f.Use == "" || f.Use == UseOriginal || f.Use == UseSource)
}

// Format describes a file's format as characterization identified it
// (rule R6): its PRONOM id and name, the media type, and the dimensions
// of an image or the page count of a PDF.
type Format struct {
	// PRONOM is the PRONOM unique id ("fmt/353"), or FormatUnknown when
	// no signature matched.
	PRONOM    string
	Name      string
	Version   string
	MediaType string
	// Width and Height are an image's size in pixels, or a PDF's first
	// page's in points (1/72 inch); 0 when not an image or a PDF, or not
	// read.
	Width  int
	Height int
	// Pages is a PDF's page count (0 when not a PDF or not read).
	Pages int
	// Note is the identifier's basis or warning, for a person to read.
	Note string
}

// FormatUnknown is the PRONOM field of a file no signature matched.
const FormatUnknown = "UNKNOWN"

// Known reports whether a signature matched.
func (f *Format) Known() bool { return f != nil && f.PRONOM != "" && f.PRONOM != FormatUnknown }

// Managed reports whether Shelfmark holds the file's bytes.
func (f *File) Managed() bool { return f.ExternalURL == "" }

// DigestAlgorithm names a checksum algorithm as RFC 9530 registers it.
type DigestAlgorithm string

// Supported digest algorithms.
const (
	SHA256 DigestAlgorithm = "sha-256"
	SHA512 DigestAlgorithm = "sha-512"
	MD5    DigestAlgorithm = "md5"
	SHA1   DigestAlgorithm = "sha"
)

// New returns a running hash computing the algorithm, or nil when the
// algorithm is not one of the supported ones above.
func (a DigestAlgorithm) New() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New()
	case SHA512:
		return sha512.New()
	case MD5:
		return md5.New()
	case SHA1:
		return sha1.New()
	}
	return nil
}

// Size returns the length in bytes of the algorithm's digests, or 0 when
// the algorithm is not supported.
func (a DigestAlgorithm) Size() int {
	switch a {
	case SHA256:
		return sha256.Size
	case SHA512:
		return sha512.Size
	case MD5:
		return md5.Size
	case SHA1:
		return sha1.Size
	}
	return 0
}

// Digest is a checksum a client sent with its bytes.
type Digest struct {
	Algorithm DigestAlgorithm
	Value     []byte
}

// PutOptions control how a blob is stored.
type PutOptions struct {
	// MaxSize rejects bodies longer than this many bytes with ETOOLARGE
	// (0 means no limit).
	MaxSize int64
	// Expect lists checksums to verify; a mismatch is EDIGESTMISMATCH and
	// no bytes are kept.
	Expect []Digest
	// Compute lists extra algorithms to compute (SHA-256 always is).
	Compute []DigestAlgorithm
	// Deferred stores the bytes without making them durable: the caller
	// must call BlobStore.Sync before it commits anything that refers to
	// them. Bulk ingest uses it to make a whole batch durable at once.
	Deferred bool
}

// Blob describes stored bytes.
type Blob struct {
	Size int64
	// Digests holds lower-case hex digests by algorithm; it always has
	// SHA256.
	Digests map[DigestAlgorithm]string
}

// BlobStore keeps file bytes, content-addressed by SHA-256: identical bytes
// are stored once, and a stored blob never changes.
type BlobStore interface {
	// Put streams r into the store and returns its digests once the bytes
	// are durable. Nothing is kept when an error is returned.
	Put(ctx context.Context, r io.Reader, opts PutOptions) (*Blob, error)
	// Sync makes the bytes of every Deferred Put so far durable.
	Sync(ctx context.Context) error
	// Open returns the bytes with the given SHA-256 (hex) for reading
	// with seeking, so that HTTP Range requests are served from it.
	Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error)
}
