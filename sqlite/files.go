package sqlite

import (
	"context"
	"database/sql"

	"github.com/shelfmark/shelfmark"
)

// File returns the file description of key, or nil.
func (t *tx) File(ctx context.Context, key int64) (*shelfmark.File, error) {
	var out *shelfmark.File
	err := t.query(ctx, `SELECT name, media_type, size, sha256, sha512, md5, use, external_url FROM files WHERE resource = ?`,
		[]any{key}, func(r *sql.Rows) error {
			var f shelfmark.File
			out = &f
			return r.Scan(&f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL)
		})
	return out, err
}

// InsertFiles stores file descriptions.
func (t *tx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
	const width = 9
	return chunked(len(files), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for i := lo; i < hi; i++ {
			f := files[i]
			args = append(args, keys[i], f.Name, f.MediaType, f.Size, f.SHA256, f.SHA512, f.MD5, f.Use, f.ExternalURL)
		}
		_, err := t.exec(ctx, `INSERT INTO files (resource, name, media_type, size, sha256, sha512, md5, use, external_url) VALUES `+
			placeholders(hi-lo, width), args...)
		return err
	})
}
