package ui

// This file stages what a bulk ingest is given: the multipart upload of
// POST /bulk is streamed to a directory of the run (nothing is written
// before the form's token is checked), a zip of the manifest's files is
// checked whole (no entry may climb out with "..", be absolute, be a link
// or a device, or repeat; its entries and unpacked size are capped) before
// any entry is unpacked, and a server path must lie inside an import root
// (symbolic links resolved). Anything refused leaves nothing behind.

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

const (
	// bulkMaxZipEntries caps the entries of an uploaded zip.
	bulkMaxZipEntries = 100_000
	// bulkMaxFieldBytes caps a text field of the bulk form.
	bulkMaxFieldBytes = 4096
)

// bulkUploadLimit and bulkExpandLimit are the caps of Options, with their
// defaults.
func (s bulkPages) bulkUploadLimit() int64 {
	if s.opts.MaxBulkUploadBytes > 0 {
		return s.opts.MaxBulkUploadBytes
	}
	return s.opts.MaxUploadBytes
}

func (s bulkPages) bulkExpandLimit() int64 {
	if s.opts.MaxBulkExpandBytes > 0 {
		return s.opts.MaxBulkExpandBytes
	}
	return 2 * s.bulkUploadLimit()
}

// bulkForm is what the upload of POST /bulk gave, staged in dir.
type bulkForm struct {
	dir          string
	manifest     string // the staged manifest, "" when none was sent
	manifestName string
	zip          string // the staged zip, "" when none was sent
	path         string // the server path asked for, "" when none
	collection   string // the collection every work goes into, "" when none
}

// bulkStageForm streams the multipart form of r into dir, counting what
// it writes with m. The form token must come before any file (the
// interface's form sends it first; an X-CSRF-Token header or an API token
// does as well).
func (s bulkPages) bulkStageForm(w http.ResponseWriter, r *http.Request, dir string, m *stageMeter) (*bulkForm, error) {
	r.Body = http.MaxBytesReader(w, r.Body, s.bulkUploadLimit())
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The bulk ingest form must be sent as multipart/form-data: %v", err)
	}
	checked := false
	if _, ok := kit.Bearer(r); ok || r.Header.Get(csrfHeader) != "" {
		if err := s.checkCSRF(r, ""); err != nil {
			return nil, err
		}
		checked = true
	}
	f := &bulkForm{dir: dir}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bulkFormError(err)
		}
		switch name := part.FormName(); name {
		case csrfField:
			v, err := bulkReadField(part)
			if err != nil {
				return nil, err
			}
			if !checked {
				if err := s.checkCSRF(r, v); err != nil {
					return nil, err
				}
				checked = true
			}
		case "path":
			v, err := bulkReadField(part)
			if err != nil {
				return nil, err
			}
			f.path = strings.TrimSpace(v)
		case "collection":
			v, err := bulkReadField(part)
			if err != nil {
				return nil, err
			}
			f.collection = strings.TrimSpace(v)
		case "manifest", "zip":
			if !checked {
				return nil, s.checkCSRF(r, "") // no token before the files: refused, nothing written
			}
			to := filepath.Join(dir, "upload.zip")
			if name == "manifest" {
				to = filepath.Join(dir, "manifest.csv")
			}
			n, err := bulkSaveFile(part, to, m)
			if err != nil {
				return nil, err
			}
			if n == 0 && part.FileName() == "" {
				os.Remove(to) // a file input left empty
				continue
			}
			if name == "manifest" {
				f.manifest, f.manifestName = to, filepath.Base(part.FileName())
			} else {
				f.zip = to
			}
		default:
			if _, err := io.Copy(io.Discard, part); err != nil {
				return nil, bulkFormError(err)
			}
		}
	}
	if !checked {
		return nil, s.checkCSRF(r, "")
	}
	return f, nil
}

// bulkFormError is the error of a form that could not be read: 413 past the
// cap, 400 otherwise.
func bulkFormError(err error) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return shelfmark.Errorf(shelfmark.ETOOLARGE, "The upload is larger than this server accepts for a bulk ingest (%d bytes).", maxErr.Limit)
	}
	return shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
}

// bulkReadField reads a small text field.
func bulkReadField(p *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, bulkMaxFieldBytes+1))
	if err != nil {
		return "", bulkFormError(err)
	}
	if len(b) > bulkMaxFieldBytes {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The form field %q is longer than %d bytes.", p.FormName(), bulkMaxFieldBytes)
	}
	if !utf8.Valid(b) {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The form field %q is not valid UTF-8.", p.FormName())
	}
	return string(b), nil
}

// bulkSaveFile writes a file part to a new file, counted by m.
func bulkSaveFile(p *multipart.Part, to string, m *stageMeter) (int64, error) {
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, shelfmark.Errorf(shelfmark.EINVALID, "The form sends the field %q twice.", p.FormName())
		}
		return 0, fmt.Errorf("bulk ingest: stage %s: %w", p.FormName(), err)
	}
	n, err := io.Copy(io.MultiWriter(m, out), p)
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
			return 0, bulkFormError(err)
		}
		return 0, fmt.Errorf("bulk ingest: stage %s: %w", p.FormName(), err)
	}
	return n, nil
}

// bulkCheckManifest refuses a manifest that is plainly not text (a NUL
// byte or invalid UTF-8 in its first 8 KiB).
func bulkCheckManifest(p string) error {
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

// bulkZipName returns the slash path an entry unpacks to, or why it may
// not be unpacked.
func bulkZipName(name string) (string, error) {
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
func (s bulkPages) zipAllowed(compressed uint64) uint64 {
	if compressed > (1<<63-1)/uint64(s.opts.MaxZipRatio) {
		return 1<<63 - 1
	}
	return max(zipRatioFloor, compressed*uint64(s.opts.MaxZipRatio))
}

// zipBomb is the error of a zip that unpacks too far (413).
func (s bulkPages) zipBomb(what string, compressed, unpacked uint64) error {
	return &shelfmark.Error{Code: shelfmark.ETOOLARGE,
		Message: fmt.Sprintf("%s unpacks to %s from %s, more than %d times as much; this server takes zips that expand at most %d times (beyond 1 MB). Nothing was stored.",
			what, kit.HumanBytes(int64(min(unpacked, 1<<62))), kit.HumanBytes(int64(min(compressed, 1<<62))), s.opts.MaxZipRatio, s.opts.MaxZipRatio),
		Details: map[string]any{"max_ratio": s.opts.MaxZipRatio}}
}

// bulkUnzip checks every entry of the zip at zipPath, then unpacks it into
// dest (which exists and is empty), counting what it writes with m. It
// bounds the unpacked size and the compression ratio of each entry and of
// the whole archive twice: by the sizes the zip declares, before anything
// is unpacked, and by the bytes actually unpacked (declared sizes lie).
func (s bulkPages) bulkUnzip(zipPath, dest string, m *stageMeter) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return shelfmark.Errorf(shelfmark.EINVALID, "The files are not a zip archive: %v", err)
	}
	defer zr.Close()
	if len(zr.File) > bulkMaxZipEntries {
		return shelfmark.Errorf(shelfmark.EINVALID, "The zip has %d entries; at most %d are taken.", len(zr.File), bulkMaxZipEntries)
	}
	fi, err := os.Stat(zipPath)
	if err != nil {
		return fmt.Errorf("bulk ingest: the staged zip: %w", err)
	}
	archive := s.zipAllowed(uint64(fi.Size()))
	limit := s.bulkExpandLimit()
	names := make([]string, len(zr.File))
	seen := make(map[string]bool, len(zr.File))
	var total uint64
	for i, f := range zr.File {
		n, err := bulkZipName(f.Name)
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
		if f.UncompressedSize64 > s.zipAllowed(f.CompressedSize64) {
			return s.zipBomb(fmt.Sprintf("The zip entry %q", f.Name), f.CompressedSize64, f.UncompressedSize64)
		}
		total += f.UncompressedSize64
		if total > uint64(limit) {
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The zip unpacks to more than this server accepts (%d bytes).", limit)
		}
		if total > archive {
			return s.zipBomb("The zip", uint64(fi.Size()), total)
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
				return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, bulkUnwrapPath(err))
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, bulkUnwrapPath(err))
		}
		// what this entry may unpack to: what is left of the caps, and
		// its own ratio and declared size
		own, rest := s.zipAllowed(f.CompressedSize64), archive-unpacked
		entry := min(budget, int64(min(own, rest, 1<<62)))
		n, over, err := bulkUnzipFile(f, to, entry, m)
		switch {
		case err != nil:
			return err
		case uint64(n) > f.UncompressedSize64:
			return shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q holds more than the %d bytes it declares; such a zip is refused. Nothing was stored.", f.Name, f.UncompressedSize64)
		case over && entry == budget:
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The zip unpacks to more than this server accepts (%d bytes).", limit)
		case over && uint64(entry) == own:
			return s.zipBomb(fmt.Sprintf("The zip entry %q", f.Name), f.CompressedSize64, uint64(n))
		case over:
			return s.zipBomb("The zip", uint64(fi.Size()), unpacked+uint64(n))
		}
		budget -= n
		unpacked += uint64(n)
	}
	return nil
}

// bulkUnzipFile unpacks one entry, counted by m, and returns its size; over
// reports that it holds more than limit bytes (it reads limit+1, and the
// caller refuses the zip).
func bulkUnzipFile(f *zip.File, to string, limit int64, m *stageMeter) (n int64, over bool, err error) {
	rc, err := f.Open()
	if err != nil {
		return 0, false, shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be read: %v", f.Name, err)
	}
	defer rc.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, false, shelfmark.Errorf(shelfmark.EINVALID, "The zip entry %q cannot be unpacked: %v", f.Name, bulkUnwrapPath(err))
	}
	n, err = io.Copy(io.MultiWriter(m, out), io.LimitReader(rc, limit+1))
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

func bulkUnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// bulkImportPath resolves a server path asked for: it must be absolute, lie
// inside one of the import roots both as written and with symbolic links
// resolved, and be a directory. A path outside the roots is refused
// before it is looked at, so that the answer tells nothing of the rest of
// the server's files.
func (s bulkPages) bulkImportPath(p string) (string, error) {
	if len(s.opts.ImportRoots) == 0 {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "This server takes no server paths for bulk ingests (it has no import root); upload a zip of the files instead.")
	}
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q must be an absolute path inside an import root.", p)
	}
	clean := filepath.Clean(p)
	outside := shelfmark.Errorf(shelfmark.EINVALID, "The server path %q is not inside an import root of this server (%s).", p, strings.Join(s.opts.ImportRoots, ", "))
	var roots []string
	for _, root := range s.opts.ImportRoots {
		abs, err := filepath.Abs(root)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			continue
		}
		if bulkInside(abs, clean) || bulkInside(real, clean) {
			roots = append(roots, real)
		}
	}
	if len(roots) == 0 {
		return "", outside
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q cannot be read: %v", p, bulkUnwrapPath(err))
	}
	ok := false
	for _, root := range roots {
		ok = ok || bulkInside(root, real)
	}
	if !ok {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q leads outside the import roots through a symbolic link; it is refused.", p)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q cannot be read: %v", p, bulkUnwrapPath(err))
	}
	if !fi.IsDir() {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "The server path %q is not a folder.", p)
	}
	return real, nil
}

// bulkInside reports whether the clean absolute path p is root or below it.
func bulkInside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// meterStep is how much a stageMeter reserves at a time.
const meterStep = 1 << 20

// stageMeter counts what the staging of one bulk upload writes (its
// manifest, its zip, the zip's files) against the quotas of its user and
// of the server, reserving a mebibyte at a time in the registry of runs,
// so that concurrent uploads see each other; a write past a quota is
// EQUOTA. It is an io.Writer that writes nothing.
type stageMeter struct {
	s              bulkPages
	c              *shelfmark.Caller
	db             shelfmark.UploadUsage
	used, reserved int64
}

// newStageMeter refuses, before anything is read, a caller whose quota is
// reached or a server holding its cap of staged runs (EQUOTA).
func (s bulkPages) newStageMeter(ctx context.Context) (*stageMeter, error) {
	c := shelfmark.CallerFrom(ctx)
	if err := s.bulk.admit(c.User); err != nil {
		return nil, err
	}
	db, err := s.deps.Resources.UploadUsage(ctx)
	if err != nil {
		return nil, err
	}
	m := &stageMeter{s: s, c: c, db: db}
	if err := m.take(0); err != nil {
		return nil, err
	}
	return m, nil
}

// Write counts p.
func (m *stageMeter) Write(p []byte) (int, error) {
	n := int64(len(p))
	if m.used+n > m.reserved {
		if err := m.take(m.used + n - m.reserved); err != nil {
			return 0, err
		}
	}
	m.used += n
	return len(p), nil
}

// take reserves at least need bytes (up to meterStep when the quotas
// leave room), or fails with EQUOTA; take(0) only checks that some room
// is left.
func (m *stageMeter) take(need int64) error {
	b := &m.s.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	mine, all := b.stagedLocked(m.c.User)
	room, err := m.s.opts.Uploads.Room(m.c, shelfmark.UploadUsage{Files: m.db.Files, Bytes: m.db.Bytes + mine, AllBytes: m.db.AllBytes + all})
	if err != nil {
		return err
	}
	if need > room {
		return m.s.opts.Uploads.OverQuota(m.c, shelfmark.UploadUsage{Files: m.db.Files, Bytes: m.db.Bytes + mine + need, AllBytes: m.db.AllBytes + all + need})
	}
	if need == 0 {
		return nil
	}
	grant := min(max(need, meterStep), room)
	if b.inflight == nil {
		b.inflight = map[int64]int64{}
	}
	b.inflight[m.c.User] += grant
	m.reserved += grant
	return nil
}

// free notes that n of the bytes counted were removed (the zip, once
// unpacked).
func (m *stageMeter) free(n int64) { m.used = max(m.used-n, 0) }

// release gives back what the meter reserved: the bytes of a run that was
// added count through the run from then on.
func (m *stageMeter) release() {
	b := &m.s.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inflight[m.c.User] -= m.reserved; b.inflight[m.c.User] <= 0 {
		delete(b.inflight, m.c.User)
	}
	m.reserved = 0
}
