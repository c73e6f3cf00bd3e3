package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Uploads is a dialect's statements of the upload methods of Tx and
// WriteTx. Their arguments are those named, in that order; a list of
// digests is one argument bound by Dialect.Strings.
type Uploads struct {
	Uploads      string // user, shas: sha256, size, stored
	UploadUsage  string // user: user_key, files, bytes of the user and of 0
	FilesHolding string // sha, limit: resource, size
	PutUpload    string // user, sha, size, stored; nothing on conflict
	RenewUpload  string // stored, user, sha
	// ReleaseUploads takes one use off per mention of a digest: user, shas.
	ReleaseUploads string
	// DeleteUploads deletes user's uploads among shas; a condition and
	// RETURNING size follow it.
	DeleteUploads string
	PruneUploads  string // before, limit: user_key, size
}

// Uploads returns the user's uploads among shas, by digest: one statement
// over the primary key (user_key, sha256).
func (t *Tx) Uploads(ctx context.Context, user int64, shas []string) (map[string]shelfmark.Upload, error) {
	out := map[string]shelfmark.Upload{}
	if len(shas) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.Uploads.Uploads, []any{user, t.d.Strings(shas)}, func(r Scanner) error {
		u := shelfmark.Upload{User: user}
		var stored int64
		if err := r.Scan(&u.SHA256, &u.Size, &stored); err != nil {
			return err
		}
		u.Stored = FromMicros(stored)
		out[u.SHA256] = u
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%suploads of user %d: %w", t.d.Prefix, user, err)
	}
	return out, nil
}

// UploadUsage returns the user's usage and the totals: the user's row and
// the totals' row (user_key 0) of upload_usage.
func (t *Tx) UploadUsage(ctx context.Context, user int64) (shelfmark.UploadUsage, error) {
	var u shelfmark.UploadUsage
	err := t.q.EachRow(ctx, t.d.UploadUsage, []any{user}, func(r Scanner) error {
		var k, files, bytes int64
		if err := r.Scan(&k, &files, &bytes); err != nil {
			return err
		}
		if k == 0 {
			u.AllFiles, u.AllBytes = files, bytes
		}
		if k == user {
			u.Files, u.Bytes = files, bytes
		}
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("%supload usage of user %d: %w", t.d.Prefix, user, err)
	}
	return u, nil
}

// FilesHolding returns up to limit live files whose digest is sha, by
// key, over the index of files by sha256.
func (t *Tx) FilesHolding(ctx context.Context, sha string, limit int) ([]shelfmark.HeldFile, error) {
	if sha == "" || limit <= 0 {
		return nil, nil
	}
	out, err := Collect(ctx, t.q, t.d.FilesHolding, []any{sha, limit}, func(r Scanner) (shelfmark.HeldFile, error) {
		var h shelfmark.HeldFile
		err := r.Scan(&h.Key, &h.Size)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("%sfiles holding %s: %w", t.d.Prefix, sha, err)
	}
	return out, nil
}

// PutUpload records an upload, or, when the user stored the same bytes
// before, renews it (one more use, the later time).
func (w *WriteTx) PutUpload(ctx context.Context, u shelfmark.Upload) error {
	n, err := w.q.Exec(ctx, w.d.PutUpload, u.User, u.SHA256, u.Size, u.Stored.UnixMicro())
	if err != nil {
		return fmt.Errorf("%srecord an upload: %w", w.d.Prefix, err)
	}
	if n == 0 {
		// the same bytes again: the same size (they are named by their
		// digest), one more use, a later time
		if _, err := w.q.Exec(ctx, w.d.RenewUpload, u.Stored.UnixMicro(), u.User, u.SHA256); err != nil {
			return fmt.Errorf("%srenew an upload: %w", w.d.Prefix, err)
		}
		return nil
	}
	return w.addUploadUsage(ctx, map[int64][2]int64{u.User: {1, u.Size}})
}

// DeleteUploads deletes the user's uploads among shas and returns how
// many it deleted.
func (w *WriteTx) DeleteUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	return w.deleteUploads(ctx, user, w.d.Strings(shas), "")
}

// ReleaseUploads takes one use off the user's uploads per mention in shas
// and deletes those left unused.
func (w *WriteTx) ReleaseUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	list := w.d.Strings(shas)
	if _, err := w.q.Exec(ctx, w.d.ReleaseUploads, user, list); err != nil {
		return 0, fmt.Errorf("%srelease uploads of user %d: %w", w.d.Prefix, user, err)
	}
	return w.deleteUploads(ctx, user, list, " AND uses <= 0")
}

// deleteUploads deletes the uploads of user among the bound digests list
// that meet cond (SQL appended to the WHERE clause), takes them off the
// usage, and returns how many it deleted.
func (w *WriteTx) deleteUploads(ctx context.Context, user int64, list any, cond string) (int, error) {
	var n, bytes int64
	err := w.q.EachRow(ctx, w.d.DeleteUploads+cond+` RETURNING size`, []any{user, list}, func(r Scanner) error {
		var size int64
		err := r.Scan(&size)
		n, bytes = n+1, bytes+size
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%sdelete uploads of user %d: %w", w.d.Prefix, user, err)
	}
	if n == 0 {
		return 0, nil
	}
	return int(n), w.addUploadUsage(ctx, map[int64][2]int64{user: {-n, -bytes}})
}

// PruneUploads deletes up to limit uploads stored before before, the
// oldest first, through the index uploads_stored.
func (w *WriteTx) PruneUploads(ctx context.Context, before time.Time, limit int) (int, error) {
	deltas := map[int64][2]int64{}
	n := 0
	err := w.q.EachRow(ctx, w.d.PruneUploads, []any{before.UnixMicro(), limit}, func(r Scanner) error {
		var user, size int64
		if err := r.Scan(&user, &size); err != nil {
			return err
		}
		d := deltas[user]
		deltas[user] = [2]int64{d[0] - 1, d[1] - size}
		n++
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("%sprune uploads: %w", w.d.Prefix, err)
	}
	return n, w.addUploadUsage(ctx, deltas)
}

// addUploadUsage adds files and bytes to the usage of each user and to
// the totals (user_key 0), in one statement, in the order of
// shelfmark.UsageRows (by user_key), so that concurrent writers lock the
// rows in one order.
func (w *WriteTx) addUploadUsage(ctx context.Context, deltas map[int64][2]int64) error {
	if len(deltas) == 0 {
		return nil
	}
	usage := shelfmark.UsageRows(deltas)
	if _, err := w.execFrom(ctx, Rows{Cols: []Col{{"user_key", Int64}, {"files", Int64}, {"bytes", Int64}}, N: len(usage),
		Row: func(i int, v []any) { v[0], v[1], v[2] = usage[i].User, usage[i].Files, usage[i].Bytes }}, func(v string) string {
		return `INSERT INTO upload_usage (user_key, files, bytes) SELECT user_key, files, bytes FROM ` + v + ` WHERE true ORDER BY user_key
ON CONFLICT (user_key) DO UPDATE SET files = upload_usage.files + excluded.files, bytes = upload_usage.bytes + excluded.bytes`
	}); err != nil {
		return fmt.Errorf("%supload usage: %w", w.d.Prefix, err)
	}
	return nil
}
