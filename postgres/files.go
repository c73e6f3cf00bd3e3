package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
)

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
