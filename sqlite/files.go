package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

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

// childFilesSQL takes the first live files of each parent by position,
// found through the index resources_children, up to a limit a parent
// (SQLite's form of a lateral join: a correlated subquery with LIMIT,
// which unlike a window function over all the parents' files needs no
// temporary table of them).
var childFilesSQL = `SELECT ` + sqlstore.ResourceColsR + `, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url,
  f.format_id, f.format_name, f.format_version, f.format_mime, f.width, f.height, f.pages, f.format_note
FROM json_each(?1) p JOIN resources r ON r.key IN (
  SELECT c.key FROM resources c WHERE c.parent = p.value AND c.kind = 'file' AND c.deleted IS NULL ORDER BY c.position LIMIT ?2)
JOIN files f ON f.resource = r.key
ORDER BY r.parent, r.position`

// ChildFiles returns up to perParent live files of each of parents, with
// their descriptions, by parent and position: one statement over the index
// resources_children, a range of it per parent.
func (t *tx) ChildFiles(ctx context.Context, parents []int64, perParent int) ([]*shelfmark.FileRow, error) {
	if len(parents) == 0 || perParent <= 0 {
		return nil, nil
	}
	var out []*shelfmark.FileRow
	err := t.query(ctx, childFilesSQL,
		[]any{jsonInts(parents), perParent}, func(rows *sql.Rows) error {
			var (
				rs sqlstore.RowScan[nullable]
				f  shelfmark.File
				fm shelfmark.Format
				id sql.NullString
			)
			if err := rows.Scan(append(rs.Dest(), &f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
				&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note)...); err != nil {
				return err
			}
			row := rs.Result()
			if id.Valid {
				fm.PRONOM = id.String
				f.Format = &fm
			}
			out = append(out, &shelfmark.FileRow{Row: row, File: &f})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: files of %d resources: %w", len(parents), err)
	}
	return out, nil
}
