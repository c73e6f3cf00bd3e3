package http

// This file holds the account of the bytes the server takes for users
// before any work names them: uploads (POST /api/v1/blobs, a file upload,
// the deposit form's files) recorded by the engine until a file names them,
// and the files of bulk ingests staged on this server (package ui). A
// caller may send bytes only when it may deposit somewhere; what it holds
// so is capped per user and for the whole server (507, code quota), a
// request too large for any quota is 413 (too_large), and the bytes of an
// upload or deposit that is refused are removed at once (the engine's
// DiscardUploads), not at the next collection of unreferenced blobs.

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/ui"
)

// Defaults of the upload limits of Options (see there for what each
// caps and what is answered past it).
const (
	DefaultUploadQuotaBytes       = 32 << 30
	DefaultUploadQuotaFiles       = 100_000
	DefaultUploadQuotaTotalBytes  = 128 << 30
	DefaultMaxZipRatio            = ui.DefaultMaxZipRatio
	DefaultMaxBulkPreviews        = ui.DefaultMaxBulkPreviews
	DefaultMaxBulkPreviewsPerUser = ui.DefaultMaxBulkPreviewsPerUser
)

// uploadDefaults fills in the upload limits left at zero.
func uploadDefaults(o *Options) {
	if o.UploadQuotaBytes <= 0 {
		o.UploadQuotaBytes = DefaultUploadQuotaBytes
	}
	if o.UploadQuotaFiles <= 0 {
		o.UploadQuotaFiles = DefaultUploadQuotaFiles
	}
	if o.UploadQuotaTotalBytes <= 0 {
		o.UploadQuotaTotalBytes = DefaultUploadQuotaTotalBytes
	}
	if o.MaxZipRatio <= 0 {
		o.MaxZipRatio = DefaultMaxZipRatio
	}
	if o.MaxBulkPreviews <= 0 {
		o.MaxBulkPreviews = DefaultMaxBulkPreviews
	}
	if o.MaxBulkPreviewsPerUser <= 0 {
		o.MaxBulkPreviewsPerUser = DefaultMaxBulkPreviewsPerUser
	}
}

// quotaUsage is what counts towards the quotas: the caller's uploads not
// yet named and staged bytes, and everyone's bytes.
type quotaUsage struct {
	files, bytes, allBytes int64
}

// usage reads the caller's usage: its uploads' (one query) and its bulk
// ingests staged on this server.
func (s *Server) usage(ctx context.Context) (quotaUsage, error) {
	u, err := s.opts.Resources.UploadUsage(ctx)
	if err != nil {
		return quotaUsage{}, err
	}
	mine, all := s.ui.StagedBytes(shelfmark.CallerFrom(ctx).User)
	return quotaUsage{files: u.Files, bytes: u.Bytes + mine, allBytes: u.AllBytes + all}, nil
}

// room returns how many more bytes a caller with usage u may store, or
// EQUOTA when it may store none. The system has no quota.
func (s *Server) room(c *shelfmark.Caller, u quotaUsage) (int64, error) {
	if c.System {
		return 1<<63 - 1, nil
	}
	if u.files >= s.opts.UploadQuotaFiles {
		return 0, quotaError("files", s.opts.UploadQuotaFiles, u.files)
	}
	if left := s.opts.UploadQuotaBytes - u.bytes; left <= 0 {
		return 0, quotaError("user", s.opts.UploadQuotaBytes, u.bytes)
	} else if all := s.opts.UploadQuotaTotalBytes - u.allBytes; all <= 0 {
		return 0, quotaError("server", s.opts.UploadQuotaTotalBytes, u.allBytes)
	} else {
		return min(left, all), nil
	}
}

// overQuota is the error of usage u past a quota, or nil.
func (s *Server) overQuota(c *shelfmark.Caller, u quotaUsage) error {
	switch {
	case c.System:
		return nil
	case u.files > s.opts.UploadQuotaFiles:
		return quotaError("files", s.opts.UploadQuotaFiles, u.files)
	case u.bytes > s.opts.UploadQuotaBytes:
		return quotaError("user", s.opts.UploadQuotaBytes, u.bytes)
	case u.allBytes > s.opts.UploadQuotaTotalBytes:
		return quotaError("server", s.opts.UploadQuotaTotalBytes, u.allBytes)
	}
	return nil
}

// quotaError is the EQUOTA error of a quota reached: "user" (bytes a user
// holds), "files" (uploads a user holds) or "server" (bytes all users
// hold).
func quotaError(which string, limit, used int64) error {
	var msg string
	switch which {
	case "files":
		msg = fmt.Sprintf("Upload quota reached: you hold %d uploads that no work names yet; this server keeps at most %d per user. Deposit them (name them in files) or wait a day for unused ones to go, then send again.", used, limit)
	case "user":
		msg = fmt.Sprintf("Upload quota reached: you hold %s that no work names yet (uploads not yet deposited, and bulk ingests staged for a preview); this server keeps at most %s per user. Deposit or cancel some (unused uploads go after a day), then send again.", kit.HumanBytes(used), kit.HumanBytes(limit))
	default:
		msg = fmt.Sprintf("Upload quota reached: this server holds %s that no work names yet, for all its users, and keeps at most %s. Send again later.", kit.HumanBytes(used), kit.HumanBytes(limit))
	}
	return &shelfmark.Error{Code: shelfmark.EQUOTA, Message: msg, Details: map[string]any{"quota": which, "limit": limit, "used": used}}
}

// storeUpload stores body (size bytes, -1 when unknown) for the caller
// with opts, whose MaxSize is the upload limit: it is refused before it is
// read when the caller's quota is reached or size is past it (507), cut
// off past the quota or the limit (507 or 413, and nothing is kept), and
// then recorded as the caller's upload (keepUploads). It returns the time
// the store ended, for a refusal to discard the bytes.
func (s *Server) storeUpload(ctx context.Context, body io.Reader, size int64, opts shelfmark.PutOptions) (*shelfmark.Blob, time.Time, error) {
	c := shelfmark.CallerFrom(ctx)
	u, err := s.usage(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	room, err := s.room(c, u)
	if err != nil {
		return nil, time.Time{}, err
	}
	past := func(n int64) error {
		return s.overQuota(c, quotaUsage{files: u.files + 1, bytes: u.bytes + n, allBytes: u.allBytes + n})
	}
	if size > room {
		return nil, time.Time{}, past(size)
	}
	limit := opts.MaxSize
	if opts.MaxSize <= 0 || room < opts.MaxSize {
		opts.MaxSize = room
	}
	blob, err := s.opts.Blobs.Put(ctx, body, opts)
	if shelfmark.ErrorCode(err) == shelfmark.ETOOLARGE && (limit <= 0 || room < limit) {
		return nil, time.Time{}, past(room + 1) // past the quota before the limit
	} else if err != nil {
		return nil, time.Time{}, err
	}
	storedAt := s.now()
	if err := s.keepUploads(ctx, []*shelfmark.Blob{blob}, storedAt, true); err != nil {
		return nil, time.Time{}, err
	}
	return blob, storedAt, nil
}

// keepUploads records blobs, stored at storedAt, as the caller's uploads,
// holds the caller to its quotas when quota is set, and checks that the
// bytes still open (a refused upload of the same bytes elsewhere may have
// removed them in between: the client then sends them again). On any
// refusal the blobs are discarded at once.
func (s *Server) keepUploads(ctx context.Context, blobs []*shelfmark.Blob, storedAt time.Time, quota bool) error {
	if len(blobs) == 0 {
		return nil
	}
	c := shelfmark.CallerFrom(ctx)
	ups := make([]shelfmark.Upload, len(blobs))
	shas := make([]string, len(blobs))
	for i, b := range blobs {
		shas[i] = b.Digests[shelfmark.SHA256]
		ups[i] = shelfmark.Upload{SHA256: shas[i], Size: b.Size, Stored: storedAt}
	}
	u, err := s.opts.Resources.RecordUploads(ctx, ups)
	if err != nil {
		s.dropUploads(ctx, shas, storedAt)
		return err
	}
	if quota {
		mine, all := s.ui.StagedBytes(c.User)
		if err := s.overQuota(c, quotaUsage{files: u.Files, bytes: u.Bytes + mine, allBytes: u.AllBytes + all}); err != nil {
			s.dropUploads(ctx, shas, storedAt)
			return err
		}
	}
	for _, sha := range shas {
		rc, err := s.opts.Blobs.Open(ctx, sha)
		if err != nil {
			s.dropUploads(ctx, shas, storedAt)
			if shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND {
				return &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: "The bytes were removed while they were stored (a refused upload of the same bytes); send them again.",
					Details: map[string]any{"retry_after": int64(1), "sha256": sha}}
			}
			return err
		}
		rc.Close()
	}
	return nil
}

// dropUploads discards the caller's uploads of shas, stored at storedAt
// (an upload or deposit that was refused): the bytes nothing else holds go
// at once. A failure is logged; the refusal stays the answer.
func (s *Server) dropUploads(ctx context.Context, shas []string, storedAt time.Time) {
	if err := s.opts.Resources.DiscardUploads(ctx, s.opts.Blobs, shas, storedAt); err != nil {
		s.log.Warn("removing the bytes of a refused upload failed (the collector removes them later)", "err", err)
	}
}
