package sqlite

import (
	"context"

	"github.com/shelfmark/shelfmark"
)

// InsertFiles stores file descriptions (with their format, when known).
func (t *writeTx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
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
