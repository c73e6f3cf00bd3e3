package shelfmark

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The rights to bytes. Bytes are content-addressed and shared: a file
// names its bytes by SHA-256, and the same bytes may be held by files of
// many collections. Knowing a digest must not open the bytes, so a caller
// may name bytes in a new file only when
//
//   - it sent them itself (an Upload record of its own: it holds them), or
//   - it may read a live file that holds them (the access policy's
//     readable, for each of the first maxHolders such files).
//
// Either way the bytes are stored: a record is written once they are, and
// goes with them.
//
// The check runs inside the commit, after the caller's right to create the
// file at all, and a refusal is the same answer as for bytes that are not
// stored: it tells nothing of what others stored, nor its size.

// maxHolders bounds the live files a naming check reads for one digest.
const maxHolders = 8

// UploadService is what adapters need of the engine to take bytes for a
// caller: whether it may deposit anywhere (before any byte is read), what
// its uploads hold (for quotas), the records of what it sent, and the
// removal of the bytes of a refused upload or deposit.
type UploadService interface {
	// CheckDepositRight answers nil when the caller may deposit somewhere
	// (see Repository.CheckDepositRight).
	CheckDepositRight(ctx context.Context) error
	// UploadUsage returns what the caller's uploads, and all users',
	// hold.
	UploadUsage(ctx context.Context) (UploadUsage, error)
	// RecordUploads records that the caller sent the bytes of ups (each a
	// use of the record, which DiscardUploads takes back), and returns
	// the usage after.
	RecordUploads(ctx context.Context, ups []Upload) (UploadUsage, error)
	// DiscardUploads forgets the caller's uploads of shas and removes from
	// blobs the bytes nothing else holds.
	DiscardUploads(ctx context.Context, blobs BlobStore, shas []string, storedAt time.Time) error
}

// BlobDiscarder is implemented by content stores that can remove one blob
// at once, safely beside uploads of the same bytes.
type BlobDiscarder interface {
	// Discard removes the blob sha unless it was stored again after
	// storedAt, or held reports it held once the blob was taken out of
	// reach (so that a reference committed before that is seen). It
	// reports whether it removed the blob; a blob that is not stored is
	// no error.
	Discard(ctx context.Context, sha string, storedAt time.Time, held func(context.Context) (bool, error)) (bool, error)
}

// noBytes is the one answer for a file naming bytes that are not stored
// and for one naming bytes the caller may not name: the same code,
// message shape and details, and no size.
func noBytes(f *File) error {
	return &Error{Code: EINVALID,
		Message: fmt.Sprintf("file %q: no bytes with the SHA-256 %.80s that you sent or may read are stored on the server; POST them to /api/v1/blobs first.", f.Name, f.SHA256),
		Details: map[string]any{"sha256": f.SHA256}}
}

// sizeMismatch is the answer for a file whose stated size differs from
// that of the bytes it names, given only to a caller who may name them.
func sizeMismatch(f *File, size int64) error {
	return &Error{Code: EDIGESTMISMATCH,
		Message: fmt.Sprintf("file %q: the stored bytes with the SHA-256 %s are %d bytes long, not %d as stated.", f.Name, f.SHA256, size, f.Size),
		Details: map[string]any{"sha256": f.SHA256, "size": f.Size, "stored_size": size}}
}

// validDigest reports whether s is a SHA-256 in lower-case hex.
func validDigest(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// mayName checks that the caller may name the managed bytes of f in a new
// file, and that f states their size. It reports whether the caller named
// its own upload, whose record the commit then deletes (the bytes are held
// by the file from then on). The system (workers, commands run against
// the data directory) may name any bytes; an administrator, who reads
// every file, still names only bytes a file holds or it sent, so that no
// file is made of bytes that are not stored. External files name none.
func (g *guard) mayName(ctx context.Context, f *File) (own bool, err error) {
	if f == nil || !f.Managed() || g.c.System {
		return false, nil
	}
	if g.c.User == 0 || !validDigest(f.SHA256) {
		return false, noBytes(f)
	}
	ups, err := g.tx.Uploads(ctx, g.c.User, []string{f.SHA256})
	if err != nil {
		return false, err
	}
	if u, ok := ups[f.SHA256]; ok {
		if u.Size != f.Size {
			return false, sizeMismatch(f, u.Size)
		}
		return true, nil
	}
	held, err := g.tx.FilesHolding(ctx, f.SHA256, maxHolders)
	if err != nil {
		return false, err
	}
	for _, h := range held {
		if _, err := g.readable(ctx, h.Key); err != nil {
			if c := ErrorCode(err); c == ENOTFOUND || c == EGONE {
				continue
			}
			return false, err
		}
		if h.Size != f.Size {
			return false, sizeMismatch(f, h.Size)
		}
		return false, nil
	}
	return false, noBytes(f)
}

// depositsAnywhere reports whether the caller holds the depositor role (or
// a stronger one) on the repository or on some live collection, or is an
// administrator; its credential must allow writes.
func (g *guard) depositsAnywhere(ctx context.Context) (bool, error) {
	if !g.c.MayWrite() {
		return false, nil
	}
	if g.all() {
		return true, nil
	}
	gs, err := g.myGrants(ctx)
	if err != nil {
		return false, err
	}
	checked := 0
	for _, gr := range gs {
		if !gr.Role.Includes(RoleDepositor) {
			continue
		}
		if gr.Resource == 0 {
			return true, nil
		}
		// a grant on a collection deleted since gives no right; the
		// collections looked at are bounded
		if checked == maxHolders {
			continue
		}
		checked++
		if _, err := g.r.live(ctx, g.tx, gr.Resource); err == nil {
			return true, nil
		} else if c := ErrorCode(err); c != ENOTFOUND && c != EGONE {
			return false, err
		}
	}
	return false, nil
}

// CheckDepositRight answers nil when the caller on ctx may deposit
// somewhere: it holds the depositor role (or a stronger one) on the
// repository or on a collection, or is an administrator, with a credential
// that allows writes. Otherwise it is EUNAUTHORIZED (signed out) or
// EFORBIDDEN. Adapters ask before they read bytes that only a deposit
// would use (an upload, the staging of a bulk ingest), so that a caller
// who may deposit nowhere stores nothing. It costs the caller's grants
// and at most maxHolders collection rows.
func (r *Repository) CheckDepositRight(ctx context.Context) error {
	c := CallerFrom(ctx)
	if err := mayWrite(c, "send files"); err != nil {
		return err
	}
	return r.store.View(ctx, func(tx ReadTx) error {
		ok, err := r.guard(tx, c).depositsAnywhere(ctx)
		if err != nil {
			return fmt.Errorf("deposit right of %s: %w", c.Actor(), err)
		}
		if !ok {
			return Errorf(EFORBIDDEN, "You may not deposit anywhere (it takes the depositor role on a collection or on the repository), so this server takes no files from you.")
		}
		return nil
	})
}

// UploadUsage returns what the caller's uploads not yet named by a file
// hold, and those of all users (two rows).
func (r *Repository) UploadUsage(ctx context.Context) (UploadUsage, error) {
	var u UploadUsage
	c := CallerFrom(ctx)
	err := r.store.View(ctx, func(tx ReadTx) error {
		var err error
		u, err = tx.UploadUsage(ctx, c.User)
		return err
	})
	if err != nil {
		return u, fmt.Errorf("upload usage of %s: %w", c.Actor(), err)
	}
	if c.User == 0 {
		u.Files, u.Bytes = 0, 0
	}
	return u, nil
}

// RecordUploads records, in one transaction, that the caller sent the
// bytes of ups (their SHA256, Size and Stored), and returns the usage
// after. A caller without a user (the system) keeps no records: it names
// any bytes.
func (r *Repository) RecordUploads(ctx context.Context, ups []Upload) (UploadUsage, error) {
	c := CallerFrom(ctx)
	if c.User == 0 || len(ups) == 0 {
		return r.UploadUsage(ctx)
	}
	for _, u := range ups {
		if !validDigest(u.SHA256) || u.Size < 0 {
			return UploadUsage{}, fmt.Errorf("record upload: %q (%d bytes) is not a stored blob", u.SHA256, u.Size)
		}
	}
	var usage UploadUsage
	err := r.store.Update(ctx, func(tx WriteTx) error {
		for _, u := range ups {
			u.User = c.User
			if u.Stored.IsZero() {
				u.Stored = r.now()
			}
			if err := tx.PutUpload(ctx, u); err != nil {
				return err
			}
		}
		var err error
		usage, err = tx.UploadUsage(ctx, c.User)
		return err
	})
	if err != nil {
		return usage, fmt.Errorf("record %d uploads of %s: %w", len(ups), c.Actor(), err)
	}
	return usage, nil
}

// DiscardUploads forgets the caller's uploads of shas (the bytes of an
// upload or deposit that was refused: one use of the record each, so that
// another upload of the same bytes by the caller that waits to be named
// keeps its record) and removes at once, from blobs, those bytes nothing
// else holds: no file (live or deleted) and no upload record of anyone. A blob stored again after storedAt (the end of the
// refused upload's store) is kept, as is every blob of a content store
// that cannot discard (the collector takes it after its grace period). A
// failure to remove is returned; the records are gone by then.
func (r *Repository) DiscardUploads(ctx context.Context, blobs BlobStore, shas []string, storedAt time.Time) error {
	if len(shas) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx) // a client that left still leaves nothing behind
	c := CallerFrom(ctx)
	if c.User != 0 {
		err := r.store.Update(ctx, func(tx WriteTx) error {
			_, err := tx.ReleaseUploads(ctx, c.User, shas)
			return err
		})
		if err != nil {
			return fmt.Errorf("discard uploads of %s: %w", c.Actor(), err)
		}
	}
	d, ok := blobs.(BlobDiscarder)
	refs, ok2 := r.store.(BlobReferences)
	if !ok || !ok2 {
		return nil
	}
	seen := make(map[string]bool, len(shas))
	for _, sha := range shas {
		if seen[sha] || !validDigest(sha) {
			continue
		}
		seen[sha] = true
		held := func(ctx context.Context) (bool, error) {
			used, err := refs.ReferencedBlobs(ctx, []string{sha})
			return used[sha], err
		}
		if _, err := d.Discard(ctx, sha, storedAt, held); err != nil {
			return fmt.Errorf("discard the bytes %s: %w", sha, err)
		}
	}
	return nil
}

// forgetUsed deletes the records of the caller's uploads an applied op
// named in files: the files hold the bytes from then on.
func forgetUsed(ctx context.Context, tx WriteTx, o *op) error {
	if len(o.uploads) == 0 {
		return nil
	}
	if _, err := tx.DeleteUploads(ctx, CallerFrom(o.ctx).User, o.uploads); err != nil {
		return fmt.Errorf("forget used uploads: %w", err)
	}
	return nil
}
