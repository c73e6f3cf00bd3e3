package staging

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// Limits bound what a zip may unpack to.
type Limits struct {
	// MaxExpand caps the bytes the whole zip unpacks to (ETOOLARGE).
	MaxExpand int64
	// MaxRatio caps how many times its compressed size an entry, and the
	// whole archive, may unpack to, beyond RatioFloor (ETOOLARGE). It must
	// be above 0.
	MaxRatio int64
}

// entryName returns the slash path an entry unpacks to, or why it may
// not be unpacked.
func entryName(name string) (string, error) {
	n := strings.ReplaceAll(name, "\\", "/")
	switch {
	case n == "" || strings.ContainsRune(n, 0):
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The zip has an entry with an empty name or a NUL character.")
	case strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':'):
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q has an absolute path; entries must be relative paths. Nothing was stored.", name)
	case !utf8.ValidString(n):
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q has a name that is not valid UTF-8.", name)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return "", shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q climbs out of the archive with \"..\"; such a zip is refused. Nothing was stored.", name)
		}
	}
	return path.Clean(n), nil
}

// zipAllowed is what the ratio cap lets compressed bytes unpack to.
func (l Limits) allowed(compressed uint64) uint64 {
	if compressed > (1<<63-1)/uint64(l.MaxRatio) {
		return 1<<63 - 1
	}
	return max(RatioFloor, compressed*uint64(l.MaxRatio))
}

// zipBomb is the error of a zip that unpacks too far (413).
func (l Limits) bomb(what string, compressed, unpacked uint64) error {
	return &shelfmark.Error{Code: shelfmark.ETOOLARGE,
		Message: fmt.Sprintf("%s unpacks to %s from %s, more than %d times as much; this server takes zips that expand at most %d times (beyond 1 MB). Nothing was stored.",
			what, kit.HumanBytes(int64(min(unpacked, 1<<62))), kit.HumanBytes(int64(min(compressed, 1<<62))), l.MaxRatio, l.MaxRatio),
		Details: map[string]any{"max_ratio": l.MaxRatio}}
}

// Unzip checks every entry of the zip at zipPath, then unpacks it into
// dest (which exists and is empty), writing what it unpacks to count as
// well (a quota meter, whose *shelfmark.Error is returned as it is). It
// bounds the unpacked size and the compression ratio of each entry and of
// the whole archive twice: by the sizes the zip declares, before anything
// is unpacked, and by the bytes actually unpacked (declared sizes lie).
func Unzip(zipPath, dest string, l Limits, count io.Writer) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return shelfmark.Errorf(shelfmark.EINVALID, "The files are not a zip archive: %v", err)
	}
	defer zr.Close()
	if len(zr.File) > MaxZipEntries {
		return shelfmark.Errorf(shelfmark.EINVALID, "The zip has %d entries; at most %d are taken.", len(zr.File), MaxZipEntries)
	}
	fi, err := os.Stat(zipPath)
	if err != nil {
		return fmt.Errorf("bulk ingest: the staged zip: %w", err)
	}
	archive := l.allowed(uint64(fi.Size()))
	limit := l.MaxExpand
	names := make([]string, len(zr.File))
	seen := make(map[string]bool, len(zr.File))
	var total uint64
	for i, f := range zr.File {
		n, err := entryName(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q is a symbolic link; links are refused. Nothing was stored.", f.Name)
		case !mode.IsDir() && !mode.IsRegular():
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q is not a regular file or folder.", f.Name)
		}
		if seen[n] && !mode.IsDir() {
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip holds %q twice.", f.Name)
		}
		seen[n] = true
		names[i] = n
		if f.UncompressedSize64 > l.allowed(f.CompressedSize64) {
			return l.bomb(fmt.Sprintf("The zip entry %q", f.Name), f.CompressedSize64, f.UncompressedSize64)
		}
		total += f.UncompressedSize64
		if total > uint64(limit) {
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The zip unpacks to more than this server accepts (%d bytes).", limit)
		}
		if total > archive {
			return l.bomb("The zip", uint64(fi.Size()), total)
		}
	}
	budget, unpacked := limit, uint64(0)
	for i, f := range zr.File {
		if names[i] == "." {
			continue
		}
		to := filepath.Join(dest, filepath.FromSlash(names[i]))
		if f.Mode().IsDir() {
			if err := os.MkdirAll(to, 0o700); err != nil {
				return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, unwrapPath(err))
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, unwrapPath(err))
		}
		// what this entry may unpack to: what is left of the caps, and
		// its own ratio and declared size
		own, rest := l.allowed(f.CompressedSize64), archive-unpacked
		entry := min(budget, int64(min(own, rest, 1<<62)))
		n, over, err := unzipFile(f, to, entry, count)
		switch {
		case err != nil:
			return err
		case uint64(n) > f.UncompressedSize64:
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q holds more than the %d bytes it declares; such a zip is refused. Nothing was stored.", f.Name, f.UncompressedSize64)
		case over && entry == budget:
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The zip unpacks to more than this server accepts (%d bytes).", limit)
		case over && uint64(entry) == own:
			return l.bomb(fmt.Sprintf("The zip entry %q", f.Name), f.CompressedSize64, uint64(n))
		case over:
			return l.bomb("The zip", uint64(fi.Size()), unpacked+uint64(n))
		}
		budget -= n
		unpacked += uint64(n)
	}
	return nil
}

// unzipFile unpacks one entry, counted by count, and returns its size; over
// reports that it holds more than limit bytes (it reads limit+1, and the
// caller refuses the zip).
func unzipFile(f *zip.File, to string, limit int64, count io.Writer) (n int64, over bool, err error) {
	rc, err := f.Open()
	if err != nil {
		return 0, false, shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be read: %v", f.Name, err)
	}
	defer rc.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, false, shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, unwrapPath(err))
	}
	n, err = io.Copy(io.MultiWriter(count, out), io.LimitReader(rc, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	var se *shelfmark.Error
	switch {
	case errors.As(err, &se):
		return 0, false, err // a quota reached
	case err != nil:
		return 0, false, shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be read: %v", f.Name, err)
	}
	return n, n > limit, nil
}

// unwrapPath is the cause of a file system error, without the path (the
// staging directory's, which the caller need not see).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
