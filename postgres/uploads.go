package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// Uploads implements shelfmark.UploadReadTx: one statement over the
// primary key (user_key, sha256).
func (t *readTx) Uploads(ctx context.Context, user int64, shas []string) (map[string]shelfmark.Upload, error) {
	out := map[string]shelfmark.Upload{}
	if len(shas) == 0 {
		return out, nil
	}
	_, err := t.r.query(ctx, `SELECT sha256, size, stored FROM uploads WHERE user_key = $1 AND sha256 = ANY($2)`, []any{user, shas},
		func(rows pgx.Rows) error {
			u := shelfmark.Upload{User: user}
			var stored int64
			if err := rows.Scan(&u.SHA256, &u.Size, &stored); err != nil {
				return err
			}
			u.Stored = fromMicros(stored)
			out[u.SHA256] = u
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: uploads of user %d: %w", user, err)
	}
	return out, nil
}

// UploadUsage implements shelfmark.UploadReadTx: the user's row and the
// totals' row (user_key 0) of upload_usage.
func (t *readTx) UploadUsage(ctx context.Context, user int64) (shelfmark.UploadUsage, error) {
	var u shelfmark.UploadUsage
	_, err := t.r.query(ctx, `SELECT user_key, files, bytes FROM upload_usage WHERE user_key IN ($1, 0)`, []any{user}, func(rows pgx.Rows) error {
		var k, files, bytes int64
		if err := rows.Scan(&k, &files, &bytes); err != nil {
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
		return u, fmt.Errorf("postgres: upload usage of user %d: %w", user, err)
	}
	return u, nil
}

// FilesHolding implements shelfmark.UploadReadTx through the partial index
// on files (sha256) (the condition that sha256 is not empty lets the planner use it).
func (t *readTx) FilesHolding(ctx context.Context, sha string, limit int) ([]shelfmark.HeldFile, error) {
	var out []shelfmark.HeldFile
	if sha == "" || limit <= 0 {
		return nil, nil
	}
	_, err := t.r.query(ctx, `SELECT f.resource, f.size FROM files f JOIN resources r ON r.key = f.resource
		WHERE f.sha256 = $1 AND f.sha256 <> '' AND r.deleted IS NULL ORDER BY f.resource LIMIT $2`, []any{sha, limit}, func(rows pgx.Rows) error {
		var h shelfmark.HeldFile
		if err := rows.Scan(&h.Key, &h.Size); err != nil {
			return err
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: files holding %s: %w", sha, err)
	}
	return out, nil
}

// PutUpload implements shelfmark.UploadWriteTx. A concurrent record of the
// same user and bytes waits for this one (the primary key), then renews it.
func (t *writeTx) PutUpload(ctx context.Context, u shelfmark.Upload) error {
	n, err := t.r.exec(ctx, `INSERT INTO uploads (user_key, sha256, size, stored) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		u.User, u.SHA256, u.Size, micros(u.Stored))
	if err != nil {
		return fmt.Errorf("postgres: record an upload: %w", err)
	}
	if n == 0 {
		// the same bytes again: the same size (they are named by their
		// digest), one more use, a later time
		if _, err := t.r.exec(ctx, `UPDATE uploads SET stored = greatest(stored, $1), uses = uses + 1 WHERE user_key = $2 AND sha256 = $3`,
			micros(u.Stored), u.User, u.SHA256); err != nil {
			return fmt.Errorf("postgres: renew an upload: %w", err)
		}
		return nil
	}
	return t.addUploadUsage(ctx, map[int64][2]int64{u.User: {1, u.Size}})
}

// DeleteUploads implements shelfmark.UploadWriteTx.
func (t *writeTx) DeleteUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	return t.deleteUploads(ctx, user, shas, "")
}

// ReleaseUploads implements shelfmark.UploadWriteTx: a digest named n
// times in shas takes n uses off.
func (t *writeTx) ReleaseUploads(ctx context.Context, user int64, shas []string) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	if _, err := t.r.exec(ctx, `UPDATE uploads u SET uses = u.uses - d.n
		FROM (SELECT s, count(*) AS n FROM unnest($2::text[]) s GROUP BY s) d
		WHERE u.user_key = $1 AND u.sha256 = d.s`, user, shas); err != nil {
		return 0, fmt.Errorf("postgres: release uploads of user %d: %w", user, err)
	}
	return t.deleteUploads(ctx, user, shas, " AND uses <= 0")
}

// deleteUploads deletes the uploads of user among shas that meet cond
// (SQL appended to the WHERE clause), takes them off the usage, and
// returns how many it deleted.
func (t *writeTx) deleteUploads(ctx context.Context, user int64, shas []string, cond string) (int, error) {
	var n, bytes int64
	_, err := t.r.query(ctx, `DELETE FROM uploads WHERE user_key = $1 AND sha256 = ANY($2)`+cond+` RETURNING size`, []any{user, shas},
		func(rows pgx.Rows) error {
			var size int64
			err := rows.Scan(&size)
			n, bytes = n+1, bytes+size
			return err
		})
	if err != nil {
		return 0, fmt.Errorf("postgres: delete uploads of user %d: %w", user, err)
	}
	if n == 0 {
		return 0, nil
	}
	return int(n), t.addUploadUsage(ctx, map[int64][2]int64{user: {-n, -bytes}})
}

// PruneUploads implements shelfmark.UploadWriteTx: the oldest first,
// through the index uploads_stored.
func (t *writeTx) PruneUploads(ctx context.Context, before time.Time, limit int) (int, error) {
	deltas := map[int64][2]int64{}
	n := 0
	_, err := t.r.query(ctx, `DELETE FROM uploads WHERE (user_key, sha256) IN
		(SELECT user_key, sha256 FROM uploads WHERE stored < $1 ORDER BY stored LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING user_key, size`,
		[]any{micros(before), limit}, func(rows pgx.Rows) error {
			var user, size int64
			if err := rows.Scan(&user, &size); err != nil {
				return err
			}
			d := deltas[user]
			deltas[user] = [2]int64{d[0] - 1, d[1] - size}
			n++
			return nil
		})
	if err != nil {
		return 0, fmt.Errorf("postgres: prune uploads: %w", err)
	}
	return n, t.addUploadUsage(ctx, deltas)
}

// addUploadUsage adds files and bytes to the usage of each user and to
// the totals (user_key 0), in one statement. The totals' row comes first,
// then the users by key, so that concurrent writers lock the rows in one
// order (and never wait for each other in a cycle).
func (t *writeTx) addUploadUsage(ctx context.Context, deltas map[int64][2]int64) error {
	if len(deltas) == 0 {
		return nil
	}
	var keys, files, bytes []int64
	for _, u := range shelfmark.UsageRows(deltas) {
		keys, files, bytes = append(keys, u.User), append(files, u.Files), append(bytes, u.Bytes)
	}
	if _, err := t.r.exec(ctx, `INSERT INTO upload_usage (user_key, files, bytes)
		SELECT d.user_key, d.files, d.bytes FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS d(user_key, files, bytes, n) ORDER BY d.n
		ON CONFLICT (user_key) DO UPDATE SET files = upload_usage.files + excluded.files, bytes = upload_usage.bytes + excluded.bytes`,
		keys, files, bytes); err != nil {
		return fmt.Errorf("postgres: upload usage: %w", err)
	}
	return nil
}
