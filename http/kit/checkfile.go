package kit

import (
	"strings"

	"github.com/shelfmark/shelfmark"
)

// CheckFile checks the form of a file a client names by its bytes (its
// name, SHA-256 in hex and stated size; media type and use default to
// application/octet-stream and original) and returns the File to store.
// It does not look for the bytes: telling a caller whether bytes are stored, or their size, before
// the engine has checked that it may name them would tell anyone what
// others stored.
func CheckFile(name, mediaType, use, sha256 string, size *int64) (*shelfmark.File, error) {
	// Only the last element of a path is kept, as for uploads.
	clean, err := shelfmark.CleanFileName(name)
	if err != nil {
		return nil, err
	}
	if clean == "" {
		clean = "file"
	}
	sha := strings.ToLower(sha256)
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "file.sha256 %.80q is not a SHA-256 in hex (64 digits).", sha256)
	}
	if size == nil || *size < 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "file.size is missing or negative; state the length of the bytes.")
	}
	mt := mediaType
	if mt == "" {
		mt = "application/octet-stream"
	}
	if use == "" {
		use = "original"
	}
	return &shelfmark.File{Name: clean, MediaType: mt, Size: *size, SHA256: sha, Use: use}, nil
}
