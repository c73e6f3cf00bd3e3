package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// childFilesSQL reads each parent's first files through the index on
// (parent, position): one short index range per parent.
const childFilesSQL = `SELECT ` + sqlstore.ResourceColsR + `, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url,
  f.format_id, f.format_name, f.format_version, f.format_mime, f.width, f.height, f.pages, f.format_note
FROM unnest($1::bigint[]) AS p(key) CROSS JOIN LATERAL (
  SELECT * FROM resources c WHERE c.parent = p.key AND c.kind = 'file' AND c.deleted IS NULL ORDER BY c.position LIMIT $2) r
JOIN files f ON f.resource = r.key
ORDER BY r.parent, r.position`

// ChildFiles returns up to perParent live files of each of parents, with
// their descriptions, by parent and position.
func (t *readTx) ChildFiles(ctx context.Context, parents []int64, perParent int) ([]*shelfmark.FileRow, error) {
	if len(parents) == 0 || perParent <= 0 {
		return nil, nil
	}
	var out []*shelfmark.FileRow
	_, err := t.r.query(ctx, childFilesSQL, []any{parents, int64(perParent)}, func(rows pgx.Rows) error {
		var (
			rs sqlstore.RowScan[nullable]
			f  shelfmark.File
			fm shelfmark.Format
			id *string
		)
		if err := rows.Scan(append(rs.Dest(), &f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
			&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note)...); err != nil {
			return err
		}
		row := rs.Result()
		if id != nil {
			fm.PRONOM = *id
			f.Format = &fm
		}
		out = append(out, &shelfmark.FileRow{Row: row, File: &f})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read files of %d resources: %w", len(parents), err)
	}
	return out, nil
}

// fileColumns are the columns of files, for COPY.
var fileColumns = []string{"resource", "name", "media_type", "size", "sha256", "sha512", "md5", "use", "external_url",
	"format_id", "format_name", "format_version", "format_mime", "width", "height", "pages", "format_note"}

// fileRow is the row of files[i] in the order of fileColumns.
func fileRow(key int64, f *shelfmark.File) []any {
	row := []any{key, f.Name, f.MediaType, f.Size, f.SHA256, f.SHA512, f.MD5, f.Use, f.ExternalURL}
	if fm := f.Format; fm != nil {
		return append(row, fm.PRONOM, fm.Name, fm.Version, fm.MediaType, int32(fm.Width), int32(fm.Height), int32(fm.Pages), fm.Note)
	}
	return append(row, nil, "", "", "", int32(0), int32(0), int32(0), "")
}

// InsertFiles stores files[i] as the file description of keys[i] (with its
// format, when known), in one statement (COPY for many files).
func (t *writeTx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
	if len(keys) != len(files) {
		return fmt.Errorf("postgres: insert files: %d keys for %d files", len(keys), len(files))
	}
	if len(files) == 0 {
		return nil
	}
	n := len(files)
	if t.r.useCopy(n) {
		if _, err := t.r.copyFrom(ctx, "files", fileColumns, n, func(i int) []any {
			return fileRow(keys[i], files[i])
		}); err != nil {
			return fmt.Errorf("postgres: insert %d files: %w", n, err)
		}
		return nil
	}
	names, types, sha256s, sha512s, md5s, uses, urls := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	fids, fnames, fversions, fmimes, fnotes := make([]*string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	sizes := make([]int64, n)
	ws, hs, ps := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, f := range files {
		names[i], types[i], sizes[i] = f.Name, f.MediaType, f.Size
		sha256s[i], sha512s[i], md5s[i] = f.SHA256, f.SHA512, f.MD5
		uses[i], urls[i] = f.Use, f.ExternalURL
		if fm := f.Format; fm != nil {
			fids[i] = &fm.PRONOM
			fnames[i], fversions[i], fmimes[i], fnotes[i] = fm.Name, fm.Version, fm.MediaType, fm.Note
			ws[i], hs[i], ps[i] = int32(fm.Width), int32(fm.Height), int32(fm.Pages)
		}
	}
	args := []any{keys, names, types, sizes, sha256s, sha512s, md5s, uses, urls, fids, fnames, fversions, fmimes, ws, hs, ps, fnotes}
	if _, err := t.r.exec(ctx, `INSERT INTO files (`+strings.Join(fileColumns, ", ")+`)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
  $10::text[], $11::text[], $12::text[], $13::text[], $14::int[], $15::int[], $16::int[], $17::text[])`, args...); err != nil {
		return fmt.Errorf("postgres: insert %d files: %w", n, err)
	}
	return nil
}
