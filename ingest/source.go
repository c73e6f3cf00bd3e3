package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// Item is one work to ingest with its files, in order.
type Item struct {
	// Key is the stable source key (see the package documentation: a
	// stated identifier, or where the item is and what it holds), used for
	// resuming and idempotency. Different inputs get different keys.
	Key string
	// FormerKey is the key earlier versions of Shelfmark gave the item
	// ("dir:books/b1", "bag:b1", "csv:row-7", "marc:file.mrc#3"), or ""
	// when the key did not change. Those keys could name different inputs,
	// so a work stored under one is taken for this item only when it holds
	// the same files and metadata (shelfmark.NewGroup.FormerKey).
	FormerKey string
	// Metadata holds the statements whose subject is the work.
	Metadata []shelfmark.Statement
	// Files are the work's files in their order.
	Files []FileRef
	// Collection is the parent collection the source names (the CSV parent
	// column), or "".
	Collection string
	// Row is the CSV row number of the item's first row (the header being
	// row 1), or 0 for sources without rows.
	Row int
	// Structured is set by a source that states the item's resources
	// (a Shelfmark bag): Kind, Access, Sets and MemberKeys then describe
	// it, and Files is empty.
	Structured bool
	// Kind is the item's resource kind: a work ("" too) or a collection.
	Kind shelfmark.Kind
	// Access is the root's visibility, embargo and lease (zero: public).
	Access Access
	// Sets are the work's file sets in their order, each with its
	// metadata, access and files (Structured only).
	Sets []SetRef
	// MemberKeys are the source keys of the collections the item was a
	// member of; those stored before (found by FindSources) become its
	// collections, the others are left out.
	MemberKeys []string
	// anyway is set by the pipeline for an item stored before that is
	// stored anyway.
	anyway bool
}

// FileRef is a file of an item, checked to lie inside the input root.
type FileRef struct {
	// Path is absolute, with symbolic links resolved, and inside the root.
	Path string
	// Name is the file's name as the source gives it (for bags, its path
	// below data/).
	Name string
	// Size is the length in bytes when listed.
	Size int64
	// MediaType is guessed from the extension (mime.TypeByExtension), or
	// application/octet-stream.
	MediaType string
	// SHA256 is the lower-case hex digest when the source states one (a
	// BagIt manifest-sha256.txt), or "".
	SHA256 string
	// Open, when set, supplies the bytes instead of the file at Path (for
	// sources that generate or stream content, such as benchmarks).
	Open func() (io.ReadCloser, error)
	// Use is what the file is to its work (shelfmark.File.Use); empty
	// means "original".
	Use string
}

// Source is a stream of items.
type Source interface {
	// Next returns the next item, io.EOF at the end, or a *ItemError for a
	// bad item, after which the caller may call Next again. Any other
	// error ends the stream.
	Next(ctx context.Context) (*Item, error)
	// Close releases the source's resources.
	Close() error
}

// ItemError reports a bad item: nothing of it may be stored, and the stream
// goes on with the next item.
type ItemError struct {
	// Key is the item's key.
	Key string
	// Row is the CSV row number (the header is row 1), or 0.
	Row int
	// Path is the offending path as the source names it, or "".
	Path string
	// Reason says what is wrong, for a person.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *ItemError) Error() string {
	if e.Row > 0 {
		return fmt.Sprintf("ingest: %s: row %d: %s", e.Key, e.Row, e.Reason)
	}
	return fmt.Sprintf("ingest: %s: %s", e.Key, e.Reason)
}

// Unwrap returns the underlying error.
func (e *ItemError) Unwrap() error { return e.Err }

// errClosed is returned by Next after Close.
var errClosed = errors.New("ingest: source is closed")

// Predicates used by the readers.
const (
	dcTitle       = shelfmark.NSDC + "title"
	xsdDate       = "http://www.w3.org/2001/XMLSchema#date"
	bagInfoPrefix = "urn:shelfmark:bag-info:"
	csvPrefix     = "urn:shelfmark:csv:"
)

// NaturalCompare orders names as people expect: runs of digits compare by
// their numeric value ("page_2" before "page_10"), everything else
// case-insensitively; equal names under that rule fall back to a plain
// byte comparison so that the order is total.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		ra, wa := utf8.DecodeRuneInString(a[i:])
		rb, wb := utf8.DecodeRuneInString(b[j:])
		if c := cmpInt(int(unicode.ToLower(ra)), int(unicode.ToLower(rb))); c != 0 {
			return c
		}
		i += wa
		j += wb
	}
	if c := cmpInt(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// resolveRoot returns the absolute, symlink-free form of a root directory.
func resolveRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("ingest: %s is not a directory", dir)
	}
	return real, nil
}

// within reports whether the absolute path p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkedFile is a file found to be a regular file inside the root.
type checkedFile struct {
	path string // resolved absolute path
	size int64
}

// checkFile resolves p (an absolute path below root, perhaps through
// symbolic links) and checks that it is a regular file inside root. When it
// is not, the reason is a sentence fragment about the file called name, with
// the cause when there is one.
func checkFile(root, p, name string) (checkedFile, string, error) {
	if _, err := os.Lstat(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return checkedFile{}, fmt.Sprintf("file %s does not exist", name), err
		}
		return checkedFile{}, fmt.Sprintf("file %s cannot be read: %v", name, err), err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return checkedFile{}, fmt.Sprintf("file %s is a broken symbolic link", name), err
		}
		return checkedFile{}, fmt.Sprintf("file %s cannot be resolved: %v", name, err), err
	}
	if !within(root, real) {
		return checkedFile{}, fmt.Sprintf("file %s resolves to %s, outside the input root", name, real), nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return checkedFile{}, fmt.Sprintf("file %s cannot be read: %v", name, err), err
	}
	if !fi.Mode().IsRegular() {
		return checkedFile{}, fmt.Sprintf("file %s is not a regular file", name), nil
	}
	return checkedFile{path: real, size: fi.Size()}, "", nil
}

// joinInside joins the slash path rel to root, refusing absolute paths and
// paths that climb out of root. The reason is "" when rel is acceptable.
func joinInside(root, rel string) (string, string) {
	switch {
	case rel == "":
		return "", "the file path is empty"
	case strings.ContainsRune(rel, 0):
		return "", fmt.Sprintf("file %q contains a NUL character", rel)
	case strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || filepath.VolumeName(rel) != "":
		return "", fmt.Sprintf("file %s is an absolute path; paths must be relative to the input root", rel)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if !within(root, p) {
		return "", fmt.Sprintf("file %s escapes the input root", rel)
	}
	return p, ""
}

// mediaType guesses a media type from a file name's extension.
func mediaType(name string) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// escapeIRIPart percent-encodes the bytes of s that an IRI may not contain
// (space, controls, <>"{}|^`\) and '%' itself, so that a label or column
// name can end a predicate IRI.
func escapeIRIPart(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '%' || strings.IndexByte("<>\"{}|^`\\", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// checkText returns a reason a metadata value cannot be stored, or "".
func checkText(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "contains a NUL character"
	}
	return ""
}

// errorText is the human message of a parse error, with its position.
func errorText(err error) string {
	var e *shelfmark.Error
	if errors.As(err, &e) {
		msg := e.Message
		if line, ok := e.Details["line"]; ok {
			msg = fmt.Sprintf("%s (line %v, column %v)", msg, line, e.Details["column"])
		}
		return msg
	}
	return err.Error()
}

// hasTitle reports whether stmts give a dc:title or dcterms:title.
func hasTitle(stmts []shelfmark.Statement) bool {
	for _, s := range stmts {
		if s.Predicate == dcTitle || s.Predicate == shelfmark.NSDCTerms+"title" {
			return true
		}
	}
	return false
}
