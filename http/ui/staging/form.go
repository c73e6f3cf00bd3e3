// Package staging stages what a bulk ingest is given, safely: the fields
// and files of its multipart form, a zip of the manifest's files checked
// whole before any entry is unpacked (no entry may climb out with "..", be
// absolute, be a link or a device, or repeat; its entries, its unpacked
// size and its compression ratio are capped, by the sizes the zip declares
// and by the bytes actually unpacked), and a server path, which must lie
// inside an import root with symbolic links resolved. Every refusal is a
// *shelfmark.Error whose message a person can act on. It knows nothing of
// HTTP routes, sessions or the repository: the interface's bulk pages call
// it.
package staging

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

const (
	// MaxZipEntries caps the entries of an uploaded zip.
	MaxZipEntries = 100_000
	// MaxFieldBytes caps a text field of the bulk form.
	MaxFieldBytes = 4096
	// RatioFloor is the unpacked size up to which an entry (or an archive)
	// is not judged by its compression ratio: small files of zeros
	// compress far, and cost nothing.
	RatioFloor = 1 << 20
)

// FormError is the error of a form that could not be read: ETOOLARGE
// (413) past the body cap, EINVALID (400) otherwise.
func FormError(err error) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return shelfmark.Errorf(shelfmark.ETOOLARGE, "The upload is larger than this server accepts for a bulk ingest (%d bytes).", maxErr.Limit)
	}
	return shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
}

// ReadField reads a small text field: at most MaxFieldBytes of UTF-8.
func ReadField(p *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, MaxFieldBytes+1))
	if err != nil {
		return "", FormError(err)
	}
	if len(b) > MaxFieldBytes {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The form field %q is longer than %d bytes.", p.FormName(), MaxFieldBytes)
	}
	if !utf8.Valid(b) {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The form field %q is not valid UTF-8.", p.FormName())
	}
	return string(b), nil
}

// SaveFile writes a file part to a new file that must not exist yet, writing
// the same bytes to count (a quota meter: an error of its, a *shelfmark.Error,
// is returned as it is). A part sent twice is EINVALID.
func SaveFile(p *multipart.Part, to string, count io.Writer) (int64, error) {
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, shelfmark.Errorf(shelfmark.EINVALID, "The form sends the field %q twice.", p.FormName())
		}
		return 0, fmt.Errorf("bulk ingest: stage %s: %w", p.FormName(), err)
	}
	n, err := io.Copy(io.MultiWriter(count, out), p)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var se *shelfmark.Error
		if errors.As(err, &se) {
			return 0, err // a quota reached
		}
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "multipart") {
			return 0, FormError(err)
		}
		return 0, fmt.Errorf("bulk ingest: stage %s: %w", p.FormName(), err)
	}
	return n, nil
}

// CheckManifest refuses a manifest that is plainly not text (a NUL
// byte or invalid UTF-8 in its first 8 KiB).
func CheckManifest(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("bulk ingest: read the manifest: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 8192)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return fmt.Errorf("bulk ingest: read the manifest: %w", err)
	}
	b := buf[:n]
	if n == len(buf) {
		// the last rune may be cut by the buffer's end
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	if strings.IndexByte(string(b), 0) >= 0 || !utf8.Valid(b) {
		return shelfmark.Errorf(shelfmark.EINVALID, "The manifest is not a CSV file: it holds binary data (a CSV manifest is UTF-8 text).")
	}
	return nil
}
