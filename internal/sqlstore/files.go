package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// FileSQL is a dialect's statement of the file read of Tx.
type FileSQL struct {
	// File reads FileCols of the file key.
	File string
}

// FileCols are the columns of a file description, from files.
const FileCols = `name, media_type, size, sha256, sha512, md5, use, external_url,
  format_id, format_name, format_version, format_mime, width, height, pages, format_note`

// File returns the file description of key (with its format when
// format_id is set), or nil: one primary key read.
func (t *Tx) File(ctx context.Context, key int64) (*shelfmark.File, error) {
	files, err := Collect(ctx, t.q, t.d.FileSQL.File, []any{key}, func(r Scanner) (*shelfmark.File, error) {
		var f shelfmark.File
		var fm shelfmark.Format
		var id *string
		if err := r.Scan(&f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
			&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note); err != nil {
			return nil, err
		}
		if id != nil {
			fm.PRONOM = *id
			f.Format = &fm
		}
		return &f, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sread file of %d: %w", t.d.Prefix, key, err)
	}
	return first(files), nil
}
