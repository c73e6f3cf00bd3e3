package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Uploads implements shelfmark.UploadReadTx: one statement over the
// primary key (user_key, sha256).
func (t *tx) Uploads(ctx context.Context, user int64, shas []string) (map[string]shelfmark.Upload, error) {
	out := map[string]shelfmark.Upload{}
	if len(shas) == 0 {
		return out, nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return nil, fmt.Errorf("sqlite: uploads: %w", err)
	}
	err = t.query(ctx, `SELECT sha256, size, stored FROM uploads WHERE user_key = ? AND sha256 IN (SELECT value FROM json_each(?))`,
		[]any{user, string(list)}, func(r *sql.Rows) error {
			u := shelfmark.Upload{User: user}
			var stored int64
			if err := r.Scan(&u.SHA256, &u.Size, &stored); err != nil {
				return err
			}
			u.Stored = time.UnixMicro(stored).UTC()
			out[u.SHA256] = u
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: uploads of user %d: %w", user, err)
	}
	return out, nil
}

// UploadUsage implements shelfmark.UploadReadTx: the user's row and the
// totals' row (user_key 0) of upload_usage.
func (t *tx) UploadUsage(ctx context.Context, user int64) (shelfmark.UploadUsage, error) {
	var u shelfmark.UploadUsage
	err := t.query(ctx, `SELECT user_key, files, bytes FROM upload_usage WHERE user_key IN (?, 0)`, []any{user}, func(r *sql.Rows) error {
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
		return u, fmt.Errorf("sqlite: upload usage of user %d: %w", user, err)
	}
	return u, nil
}

// FilesHolding implements shelfmark.UploadReadTx through the partial index
// files_sha256 (the condition that sha256 is not empty lets the planner use it).
func (t *tx) FilesHolding(ctx context.Context, sha string, limit int) ([]shelfmark.HeldFile, error) {
	var out []shelfmark.HeldFile
	if sha == "" || limit <= 0 {
		return nil, nil
	}
	err := t.query(ctx, `SELECT f.resource, f.size FROM files f JOIN resources r ON r.key = f.resource
		WHERE f.sha256 = ? AND f.sha256 <> '' AND r.deleted IS NULL ORDER BY f.resource LIMIT ?`, []any{sha, limit}, func(r *sql.Rows) error {
		var h shelfmark.HeldFile
		if err := r.Scan(&h.Key, &h.Size); err != nil {
			return err
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: files holding %s: %w", sha, err)
	}
	return out, nil
}

// PutUpload implements shelfmark.UploadWriteTx.
func (t *tx) PutUpload(ctx context.Context, u shelfmark.Upload) error {
	n, err := t.exec(ctx, `INSERT INTO uploads (user_key, sha256, size, stored) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		u.User, u.SHA256, u.Size, u.Stored.UnixMicro())
	if err != nil {
		return fmt.Errorf("sqlite: record an upload: %w", err)
	}
	if n == 0 {
		// the same bytes again: the same size (they are named by their
		// digest), one more use, a later time
		if _, err := t.exec(ctx, `UPDATE uploads SET stored = max(stored, ?), uses = uses + 1 WHERE user_key = ? AND sha256 = ?`,
			u.Stored.UnixMicro(), u.User, u.SHA256); err != nil {
			return fmt.Errorf("sqlite: renew an upload: %w", err)
		}
		return nil
	}
	return t.addUploadUsage(ctx, map[int64][2]int64{u.User: {1, u.Size}})
}

// DeleteUploads implements shelfmark.UploadWriteTx.
func (t *tx) DeleteUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete uploads: %w", err)
	}
	return t.deleteUploads(ctx, user, string(list), "")
}

// ReleaseUploads implements shelfmark.UploadWriteTx: a digest named n
// times in shas takes n uses off.
func (t *tx) ReleaseUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return 0, fmt.Errorf("sqlite: release uploads: %w", err)
	}
	if _, err := t.exec(ctx, `UPDATE uploads SET uses = uses - d.n
		FROM (SELECT value AS sha, count(*) AS n FROM json_each(?2) GROUP BY value) AS d
		WHERE uploads.user_key = ?1 AND uploads.sha256 = d.sha`, user, string(list)); err != nil {
		return 0, fmt.Errorf("sqlite: release uploads of user %d: %w", user, err)
	}
	return t.deleteUploads(ctx, user, string(list), " AND uses <= 0")
}

// deleteUploads deletes the uploads of user among the digests of list (a
// JSON array) that meet cond (SQL appended to the WHERE clause), takes
// them off the usage, and returns how many it deleted.
func (t *tx) deleteUploads(ctx context.Context, user int64, list, cond string) (int, error) {
	var n, bytes int64
	err := t.query(ctx, `DELETE FROM uploads WHERE user_key = ? AND sha256 IN (SELECT value FROM json_each(?))`+cond+` RETURNING size`,
		[]any{user, list}, func(r *sql.Rows) error {
			var size int64
			err := r.Scan(&size)
			n, bytes = n+1, bytes+size
			return err
		})
	if err != nil {
		return 0, fmt.Errorf("sqlite: delete uploads of user %d: %w", user, err)
	}
	if n == 0 {
		return 0, nil
	}
	return int(n), t.addUploadUsage(ctx, map[int64][2]int64{user: {-n, -bytes}})
}

// PruneUploads implements shelfmark.UploadWriteTx: the oldest first,
// through the index uploads_stored.
func (t *tx) PruneUploads(ctx context.Context, before time.Time, limit int) (int, error) {
	deltas := map[int64][2]int64{}
	n := 0
	err := t.query(ctx, `DELETE FROM uploads WHERE (user_key, sha256) IN
		(SELECT user_key, sha256 FROM uploads WHERE stored < ? ORDER BY stored LIMIT ?) RETURNING user_key, size`,
		[]any{before.UnixMicro(), limit}, func(r *sql.Rows) error {
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
		return 0, fmt.Errorf("sqlite: prune uploads: %w", err)
	}
	return n, t.addUploadUsage(ctx, deltas)
}

// addUploadUsage adds files and bytes to the usage of each user and to
// the totals (user_key 0), in one statement. The totals' row comes first,
// then the users by key, so that writers on PostgreSQL lock the rows in
// one order.
func (t *tx) addUploadUsage(ctx context.Context, deltas map[int64][2]int64) error {
	if len(deltas) == 0 {
		return nil
	}
	usage := shelfmark.UsageRows(deltas)
	rows := make([][3]int64, len(usage))
	for i, u := range usage {
		rows[i] = [3]int64{u.User, u.Files, u.Bytes}
	}
	list, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("sqlite: upload usage: %w", err)
	}
	_, err = t.exec(ctx, `INSERT INTO upload_usage (user_key, files, bytes)
		SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?) WHERE true
		ON CONFLICT (user_key) DO UPDATE SET files = upload_usage.files + excluded.files, bytes = upload_usage.bytes + excluded.bytes`, string(list))
	if err != nil {
		return fmt.Errorf("sqlite: upload usage: %w", err)
	}
	return nil
}
