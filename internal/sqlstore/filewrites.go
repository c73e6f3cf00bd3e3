package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// fileCols are the columns of files.
var fileCols = []Col{{"resource", Int64}, {"name", Text}, {"media_type", Text}, {"size", Int64}, {"sha256", Text},
	{"sha512", Text}, {"md5", Text}, {"use", Text}, {"external_url", Text}, {"format_id", NullText}, {"format_name", Text},
	{"format_version", Text}, {"format_mime", Text}, {"width", Int32}, {"height", Int32}, {"pages", Int32}, {"format_note", Text}}

// InsertFiles stores files[i] as the file description of keys[i] (with its
// format, when known), in one bulk write.
func (w *WriteTx) InsertFiles(ctx context.Context, keys []int64, files []*shelfmark.File) error {
	if len(keys) != len(files) {
		return fmt.Errorf("%sinsert files: %d keys for %d files", w.d.Prefix, len(keys), len(files))
	}
	return w.insert(ctx, "insert %d files", "files", Rows{Cols: fileCols, N: len(files), Row: func(i int, v []any) {
		f := files[i]
		v[0], v[1], v[2], v[3], v[4] = keys[i], f.Name, f.MediaType, f.Size, f.SHA256
		v[5], v[6], v[7], v[8] = f.SHA512, f.MD5, f.Use, f.ExternalURL
		if fm := f.Format; fm != nil {
			v[9], v[10], v[11], v[12] = fm.PRONOM, fm.Name, fm.Version, fm.MediaType
			v[13], v[14], v[15], v[16] = int64(fm.Width), int64(fm.Height), int64(fm.Pages), fm.Note
		} else {
			v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16] = nil, "", "", "", int64(0), int64(0), int64(0), ""
		}
	}}, "")
}

// SetFileFormats records the formats of files (formats[i] of keys[i]) in
// one statement.
func (w *WriteTx) SetFileFormats(ctx context.Context, keys []int64, formats []*shelfmark.Format) error {
	if len(keys) != len(formats) {
		return fmt.Errorf("%sset file formats: %d keys for %d formats", w.d.Prefix, len(keys), len(formats))
	}
	if len(keys) == 0 {
		return nil
	}
	_, err := w.execFrom(ctx, Rows{
		Cols: []Col{{"key", Int64}, {"id", Text}, {"name", Text}, {"version", Text}, {"mime", Text},
			{"w", Int32}, {"h", Int32}, {"p", Int32}, {"note", Text}},
		N: len(keys),
		Row: func(i int, v []any) {
			f := formats[i]
			v[0], v[1], v[2], v[3], v[4] = keys[i], f.PRONOM, f.Name, f.Version, f.MediaType
			v[5], v[6], v[7], v[8] = int64(f.Width), int64(f.Height), int64(f.Pages), f.Note
		},
	}, func(v string) string {
		return `UPDATE files SET format_id = v.id, format_name = v.name, format_version = v.version, format_mime = v.mime,
  width = v.w, height = v.h, pages = v.p, format_note = v.note FROM ` + v + ` WHERE files.resource = v.key`
	})
	if err != nil {
		return fmt.Errorf("%sset the format of %d files: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}

// PutFields upserts the fields that have objects and deletes those that
// have none (fields[i] of keys[i]): one bulk write and one statement
// whatever the number of fields.
func (w *WriteTx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
	if len(keys) != len(fields) {
		return fmt.Errorf("%sput fields: %d keys for %d fields", w.d.Prefix, len(keys), len(fields))
	}
	var put, del []int
	var objects [][]byte // of put
	for i, f := range fields {
		if len(f.Objects) == 0 {
			del = append(del, i)
		} else {
			put, objects = append(put, i), append(objects, shelfmark.EncodeObjects(f.Objects))
		}
	}
	if err := w.insert(ctx, "put %d fields", "fields", Rows{Cols: []Col{{"resource", Int64}, {"predicate", Text}, {"objects", Bytes}}, N: len(put),
		Row: func(i int, v []any) {
			j := put[i]
			v[0], v[1], v[2] = keys[j], fields[j].Predicate, objects[i]
		}}, "ON CONFLICT (resource, predicate) DO UPDATE SET objects = excluded.objects"); err != nil {
		return err
	}
	if len(del) == 0 {
		return nil
	}
	if _, err := w.execFrom(ctx, Rows{Cols: []Col{{"resource", Int64}, {"predicate", Text}}, N: len(del),
		Row: func(i int, v []any) { v[0], v[1] = keys[del[i]], fields[del[i]].Predicate }}, func(v string) string {
		return `DELETE FROM fields WHERE (resource, predicate) IN (SELECT resource, predicate FROM ` + v + `)`
	}); err != nil {
		return fmt.Errorf("%sdelete %d fields: %w", w.d.Prefix, len(del), err)
	}
	return nil
}
