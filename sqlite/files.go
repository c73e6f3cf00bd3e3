package sqlite

import (
	"context"
	"database/sql"

	"github.com/shelfmark/shelfmark"
)

// File returns the file description of key, or nil.
func (t *tx) File(ctx context.Context, key int64) (*shelfmark.File, error) {
	var out *shelfmark.File
	err := t.query(ctx, `SELECT name, media_type, size, sha256, sha512, md5, use, external_url,
  format_id, format_name, format_version, format_mime, width, height, pages, format_note FROM files WHERE resource = ?`,
		[]any{key}, func(r *sql.Rows) error {
			var f shelfmark.File
			var fm shelfmark.Format
			var id sql.NullString
			out = &f
			if err := r.Scan(&f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
				&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note); err != nil {
				return err
			}
			if id.Valid {
				fm.PRONOM = id.String
				f.Format = &fm
			}
			return nil
		})
	return out, err
}

// InsertFiles stores file descriptions (with their format, when known).
func (t *tx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
	const width = 17
	return chunked(len(files), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for i := lo; i < hi; i++ {
			f := files[i]
			args = append(args, keys[i], f.Name, f.MediaType, f.Size, f.SHA256, f.SHA512, f.MD5, f.Use, f.ExternalURL)
			if fm := f.Format; fm != nil {
				args = append(args, fm.PRONOM, fm.Name, fm.Version, fm.MediaType, fm.Width, fm.Height, fm.Pages, fm.Note)
			} else {
				args = append(args, nil, "", "", "", 0, 0, 0, "")
			}
		}
		_, err := t.exec(ctx, `INSERT INTO files (resource, name, media_type, size, sha256, sha512, md5, use, external_url,
  format_id, format_name, format_version, format_mime, width, height, pages, format_note) VALUES `+
			placeholders(hi-lo, width), args...)
		return err
	})
}
