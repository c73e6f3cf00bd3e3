package ui

// This file stages what a bulk ingest is given: the multipart upload of
// POST /bulk is streamed to a directory of the run (nothing is written
// before the form's token is checked) and counted against the upload
// quotas; package staging checks and unpacks what it holds. Anything
// refused leaves nothing behind.

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/ui/staging"
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
			return nil, staging.FormError(err)
		}
		switch name := part.FormName(); name {
		case csrfField:
			v, err := staging.ReadField(part)
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
			v, err := staging.ReadField(part)
			if err != nil {
				return nil, err
			}
			f.path = strings.TrimSpace(v)
		case "collection":
			v, err := staging.ReadField(part)
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
			n, err := staging.SaveFile(part, to, m)
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
				return nil, staging.FormError(err)
			}
		}
	}
	if !checked {
		return nil, s.checkCSRF(r, "")
	}
	return f, nil
}

// bulkUnzip unpacks the staged zip into dest within the Options' caps
// (staging.Unzip), counting what it writes with m.
func (s bulkPages) bulkUnzip(zipPath, dest string, m *stageMeter) error {
	return staging.Unzip(zipPath, dest, staging.Limits{MaxExpand: s.bulkExpandLimit(), MaxRatio: s.opts.MaxZipRatio}, m)
}

// bulkImportPath resolves a server path inside the import roots
// (staging.ImportPath).
func (s bulkPages) bulkImportPath(p string) (string, error) {
	return staging.ImportPath(s.opts.ImportRoots, p)
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
