package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// readTx implements shelfmark.ReadTx inside a View or an Update.
type readTx struct {
	sqlstore.Tx
	r runner
}

// writeTx implements shelfmark.WriteTx inside an Update.
type writeTx struct {
	readTx
	sqlstore.WriteTx
	savepoints int // savepoints opened for COPY (see copyInSavepoint)
}

// newReadTx returns the read transaction of q.
func (db *DB) newReadTx(q querier) *readTx {
	t := &readTx{r: db.run(q)}
	t.Tx = sqlstore.NewTx(t, &dialect)
	return t
}

// newWriteTx returns the write transaction of q.
func (db *DB) newWriteTx(q querier) *writeTx {
	t := &writeTx{readTx: readTx{r: db.run(q)}}
	t.Tx = sqlstore.NewTx(&t.readTx, &dialect)
	t.WriteTx = sqlstore.NewWriteTx(t, &dialect)
	return t
}

// EachRow runs a query and calls each for every row: sqlstore.Querier
// over the runner.
func (t *readTx) EachRow(ctx context.Context, sql string, args []any, each func(sqlstore.Scanner) error) error {
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error { return each(rows) })
	return err
}

// Exec runs a statement and returns the rows it affected:
// sqlstore.Execer over the runner.
func (t *writeTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return t.r.exec(ctx, sql, args...)
}

var (
	_ shelfmark.ReadTx  = (*readTx)(nil)
	_ shelfmark.WriteTx = (*writeTx)(nil)
)

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func microsPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// nullZero maps 0 to NULL (Parent and Position).
func nullZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func zeroNull(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// Fields returns key's fields sorted by predicate, optionally only those
// with the given predicates.
func (t *readTx) Fields(ctx context.Context, key int64, predicates ...string) ([]shelfmark.Field, error) {
	sql := `SELECT predicate, objects FROM fields WHERE resource = $1 ORDER BY predicate`
	args := []any{key}
	if len(predicates) > 0 {
		sql = `SELECT predicate, objects FROM fields WHERE resource = $1 AND predicate = ANY($2) ORDER BY predicate`
		args = append(args, predicates)
	}
	var out []shelfmark.Field
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		var f shelfmark.Field
		var raw []byte
		if err := rows.Scan(&f.Predicate, &raw); err != nil {
			return err
		}
		objs, err := shelfmark.DecodeObjects(raw)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Predicate, err)
		}
		f.Objects = objs
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read fields of %d: %w", key, err)
	}
	return out, nil
}

// File returns the file description of key, or nil.
func (t *readTx) File(ctx context.Context, key int64) (*shelfmark.File, error) {
	var f *shelfmark.File
	_, err := t.r.query(ctx, `SELECT name, media_type, size, sha256, sha512, md5, use, external_url,
  format_id, format_name, format_version, format_mime, width, height, pages, format_note
FROM files WHERE resource = $1`, []any{key}, func(rows pgx.Rows) error {
		f = new(shelfmark.File)
		var fm shelfmark.Format
		var id *string
		if err := rows.Scan(&f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
			&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note); err != nil {
			return err
		}
		if id != nil {
			fm.PRONOM = *id
			f.Format = &fm
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read file of %d: %w", key, err)
	}
	return f, nil
}

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

// NextSeq reserves n change sequence numbers and returns the first.
//
// The UPDATE takes the row lock of counters('seq') and PostgreSQL holds it
// until this transaction commits or rolls back. A second transaction calling
// NextSeq waits for it, and gets higher numbers only after the first has
// committed; so the order of sequence numbers is the order of commits, and a
// harvester that has read every change with seq <= X never sees a change
// with seq <= X appear later. (Update's writer lock serialises write
// transactions already; this lock also covers any other writer.)
func (t *writeTx) NextSeq(ctx context.Context, n int) (int64, error) {
	if n < 1 {
		return 0, fmt.Errorf("postgres: reserve %d sequence numbers: n must be at least 1", n)
	}
	var last int64
	if err := t.r.queryRow(ctx, `UPDATE counters SET value = value + $1 WHERE name = 'seq' RETURNING value`,
		[]any{int64(n)}, &last); err != nil {
		return 0, fmt.Errorf("postgres: reserve %d sequence numbers: %w", n, err)
	}
	return last - int64(n) + 1, nil
}

// resourceColumns is sqlstore.ResourceCols as a list, for COPY.
var resourceColumns = strings.Split(sqlstore.ResourceCols, ", ")

// InsertResources inserts rows in one statement: COPY for many rows, else
// an INSERT over unnest arrays. A row whose key exists fails either way.
func (t *writeTx) InsertResources(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	if t.r.useCopy(n) {
		if _, err := t.r.copyFrom(ctx, "resources", resourceColumns, n, func(i int) []any {
			r := rows[i]
			return []any{r.Key, string(r.Kind), string(r.Visibility), microsPtr(r.Embargo), microsPtr(r.Lease), nullZero(r.Parent), nullZero(r.Position),
				r.Version, r.Seq, micros(r.Created), micros(r.Modified), microsPtr(r.Deleted),
				nullZero(r.Source), string(r.Effective.Visibility), microsPtr(r.Effective.Embargo), microsPtr(r.Effective.Lease)}
		}); err != nil {
			return fmt.Errorf("postgres: insert %d resources: %w", n, err)
		}
		return nil
	}
	var (
		keys, versions, seqs, created, modified = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		kinds, visibilities, effVis             = make([]string, n), make([]string, n), make([]string, n)
		embargoes, leases, parents              = make([]*int64, n), make([]*int64, n), make([]*int64, n)
		positions, deletions                    = make([]*int64, n), make([]*int64, n)
		sources, effEmb, effLease               = make([]*int64, n), make([]*int64, n), make([]*int64, n)
	)
	for i, r := range rows {
		keys[i] = r.Key
		kinds[i] = string(r.Kind)
		visibilities[i] = string(r.Visibility)
		embargoes[i] = microsPtr(r.Embargo)
		leases[i] = microsPtr(r.Lease)
		parents[i] = nullZero(r.Parent)
		positions[i] = nullZero(r.Position)
		versions[i] = r.Version
		seqs[i] = r.Seq
		created[i] = micros(r.Created)
		modified[i] = micros(r.Modified)
		deletions[i] = microsPtr(r.Deleted)
		sources[i] = nullZero(r.Source)
		effVis[i] = string(r.Effective.Visibility)
		effEmb[i] = microsPtr(r.Effective.Embargo)
		effLease[i] = microsPtr(r.Effective.Lease)
	}
	if _, err := t.r.exec(ctx, `INSERT INTO resources (`+sqlstore.ResourceCols+`)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[],
                     $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[],
                     $13::bigint[], $14::text[], $15::bigint[], $16::bigint[])`,
		keys, kinds, visibilities, embargoes, leases, parents, positions, versions, seqs, created, modified, deletions,
		sources, effVis, effEmb, effLease); err != nil {
		return fmt.Errorf("postgres: insert %d resources: %w", n, err)
	}
	return nil
}

// UpdateResource writes every field of row except Key, Kind, Parent,
// Position, Created and Source. A missing row is an ENOTFOUND error.
func (t *writeTx) UpdateResource(ctx context.Context, row *shelfmark.ResourceRow) error {
	n, err := t.r.exec(ctx, `UPDATE resources SET visibility = $2, embargo = $3, lease = $4, version = $5, seq = $6, modified = $7,
deleted = $8, eff_visibility = $9, eff_embargo = $10, eff_lease = $11 WHERE key = $1`, row.Key, string(row.Visibility), microsPtr(row.Embargo),
		microsPtr(row.Lease), row.Version, row.Seq, micros(row.Modified), microsPtr(row.Deleted),
		string(row.Effective.Visibility), microsPtr(row.Effective.Embargo), microsPtr(row.Effective.Lease))
	if err != nil {
		return fmt.Errorf("postgres: update resource %d: %w", row.Key, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No resource has the key %d.", row.Key)
	}
	return nil
}

// SetEffectiveAccess writes the effective access and seq of rows in one
// statement whatever their number (arrays, unnest).
func (t *writeTx) SetEffectiveAccess(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows)
	keys, seqs := make([]int64, n), make([]int64, n)
	vis := make([]string, n)
	emb, lease := make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		keys[i], seqs[i], vis[i] = r.Key, r.Seq, string(r.Effective.Visibility)
		emb[i], lease[i] = microsPtr(r.Effective.Embargo), microsPtr(r.Effective.Lease)
	}
	if _, err := t.r.exec(ctx, `UPDATE resources r SET eff_visibility = v.vis, eff_embargo = v.emb, eff_lease = v.lease, seq = v.seq
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[]) AS v(key, vis, emb, lease, seq)
WHERE r.key = v.key`, keys, vis, emb, lease, seqs); err != nil {
		return fmt.Errorf("postgres: effective access of %d resources: %w", n, err)
	}
	return nil
}

// accessDependentsSQL reads the live children of $1 (resources_children)
// and the live files made from them (resources_source).
const accessDependentsSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE parent = ANY($1) AND deleted IS NULL
UNION SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE source = ANY($1) AND deleted IS NULL`

// AccessDependents returns the live children of keys and the live files
// made from them, in one statement.
func (t *readTx) AccessDependents(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, accessDependentsSQL, keys)
	if err != nil {
		return nil, fmt.Errorf("postgres: what depends on the access of %d resources: %w", len(keys), err)
	}
	return rows, nil
}

// fieldColumns are the columns of fields, for COPY.
var fieldColumns = []string{"resource", "predicate", "objects"}

// PutFields upserts the fields that have objects and deletes those that
// have none: a number of statements that does not depend on the number of
// fields, with the rows in arrays (unnest). Many fields to upsert (the new
// resources of a batch) are first tried with COPY inside a savepoint; if
// one of them exists already, the COPY is undone and the upsert runs.
func (t *writeTx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
	if len(keys) != len(fields) {
		return fmt.Errorf("postgres: put fields: %d keys for %d fields", len(keys), len(fields))
	}
	var putKeys, delKeys []int64
	var putPreds, delPreds []string
	var putObjs [][]byte
	for i, f := range fields {
		if len(f.Objects) == 0 {
			delKeys, delPreds = append(delKeys, keys[i]), append(delPreds, f.Predicate)
		} else {
			putKeys, putPreds = append(putKeys, keys[i]), append(putPreds, f.Predicate)
			putObjs = append(putObjs, shelfmark.EncodeObjects(f.Objects))
		}
	}
	if t.copyInSavepoint(len(putKeys)) {
		conflict, err := t.r.copyNew(ctx, "fields", fieldColumns, len(putKeys), func(i int) []any {
			return []any{putKeys[i], putPreds[i], putObjs[i]}
		})
		if err != nil {
			return fmt.Errorf("postgres: put %d fields: %w", len(putKeys), err)
		}
		if !conflict {
			putKeys = nil // written
		}
	}
	if len(putKeys) > 0 {
		if _, err := t.r.exec(ctx, `INSERT INTO fields (resource, predicate, objects)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
ON CONFLICT (resource, predicate) DO UPDATE SET objects = EXCLUDED.objects`, putKeys, putPreds, putObjs); err != nil {
			return fmt.Errorf("postgres: put %d fields: %w", len(putKeys), err)
		}
	}
	if len(delKeys) > 0 {
		if _, err := t.r.exec(ctx, `DELETE FROM fields f USING unnest($1::bigint[], $2::text[]) AS d(resource, predicate)
WHERE f.resource = d.resource AND f.predicate = d.predicate`, delKeys, delPreds); err != nil {
			return fmt.Errorf("postgres: delete %d fields: %w", len(delKeys), err)
		}
	}
	return nil
}

func membershipArrays(ms []shelfmark.Membership) (collections, members []int64) {
	collections, members = make([]int64, len(ms)), make([]int64, len(ms))
	for i, m := range ms {
		collections[i], members[i] = m.Collection, m.Member
	}
	return collections, members
}

// membershipColumns are the columns of memberships, for COPY.
var membershipColumns = []string{"collection", "member"}

// InsertMemberships adds edges in one statement; existing edges (and
// repeats within ms) are left as they are. Many edges are first tried
// with COPY inside a savepoint; if one of them exists already (or repeats),
// the COPY is undone and the INSERT … ON CONFLICT DO NOTHING runs.
func (t *writeTx) InsertMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	if len(ms) == 0 {
		return nil
	}
	if t.copyInSavepoint(len(ms)) {
		conflict, err := t.r.copyNew(ctx, "memberships", membershipColumns, len(ms), func(i int) []any {
			return []any{ms[i].Collection, ms[i].Member}
		})
		if err != nil {
			return fmt.Errorf("postgres: insert %d memberships: %w", len(ms), err)
		}
		if !conflict {
			return nil
		}
	}
	cs, mems := membershipArrays(ms)
	if _, err := t.r.exec(ctx, `INSERT INTO memberships (collection, member)
SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING`, cs, mems); err != nil {
		return fmt.Errorf("postgres: insert %d memberships: %w", len(ms), err)
	}
	return nil
}

// DeleteMemberships removes edges in one statement.
func (t *writeTx) DeleteMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	if len(ms) == 0 {
		return nil
	}
	cs, mems := membershipArrays(ms)
	if _, err := t.r.exec(ctx, `DELETE FROM memberships m USING unnest($1::bigint[], $2::bigint[]) AS d(collection, member)
WHERE m.collection = d.collection AND m.member = d.member`, cs, mems); err != nil {
		return fmt.Errorf("postgres: delete %d memberships: %w", len(ms), err)
	}
	return nil
}

// setPositionsSQL orders a parent's children in one statement. $1 is the
// parent, $2 the ordered children. The rows it considers are the children
// now ordered (position < UnorderedBase, a range of the (parent, position)
// index) and the unordered children that $2 names; each gets its index in
// $2 (1-based) or, when $2 does not name it, UnorderedBase+key. Rows whose
// position would not change are dropped before the update, so applying the
// same order twice writes nothing, and unordered children that stay
// unordered are never read.
//
// The UPDATE finds its rows by the ctid (physical address) read in x, not
// by key: a TID scan instead of one primary key lookup per row (5–9% of
// the statement's time for 1,200 children). A ctid identifies the row
// version this statement's snapshot sees, and nothing else can update it in
// the meantime: every write transaction holds the writer lock (see the
// package documentation). Without that lock a concurrently updated row
// would be skipped (its new version has another ctid), not reordered.
//
// The cost per row is writing the new row version into the heap and into
// all three indexes of resources: an update of position can never be HOT
// (resources_children indexes it), so even resources_seq, whose key does
// not change, gets a new entry for every reordered child.
var setPositionsSQL = `WITH u AS (
    SELECT key, ord FROM unnest($2::bigint[]) WITH ORDINALITY AS u(key, ord)
), x AS (
    SELECT c.ctid AS tid, c.position AS old, COALESCE(u.ord, ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + ` + c.key) AS pos
    FROM resources c LEFT JOIN u ON u.key = c.key
    WHERE c.parent = $1 AND c.position < ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + `
  UNION ALL
    SELECT c.ctid, c.position, u.ord
    FROM u JOIN resources c ON c.key = u.key
    WHERE c.parent = $1 AND (c.position >= ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + ` OR c.position IS NULL)
)
UPDATE resources r SET position = x.pos FROM x
WHERE r.ctid = x.tid AND x.old IS DISTINCT FROM x.pos`

// SetPositions gives children[i] position i+1 and every other child of
// parent that had an order position UnorderedBase+key, in one statement
// whatever the number of children. Only positions change. Keys in children
// that are not children of parent are ignored.
func (t *writeTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	if children == nil {
		children = []int64{}
	}
	if _, err := t.r.exec(ctx, setPositionsSQL, parent, children); err != nil {
		return fmt.Errorf("postgres: order %d children of %d: %w", len(children), parent, err)
	}
	return nil
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

// tombstoneSQL marks $1 and its live descendants deleted (recursively over
// parent), removes their statements and the memberships where they are the
// member, and returns how many resources it marked. Memberships where they
// are the collection stay (there may be millions): reads join live rows.
// Every data-modifying CTE runs to completion whether or not it is read.
const tombstoneSQL = `WITH RECURSIVE below(key) AS (
    SELECT key FROM resources WHERE key = $1 AND deleted IS NULL
  UNION
    SELECT r.key FROM resources r JOIN below ON r.parent = below.key WHERE r.deleted IS NULL
), t(key) AS (
    SELECT key FROM below
  UNION
    SELECT r.key FROM resources r JOIN below ON r.source = below.key WHERE r.deleted IS NULL
), marked AS (
    UPDATE resources r SET deleted = $3, seq = $2, version = r.version + 1, modified = $3
    FROM t WHERE r.key = t.key
    RETURNING r.key
), ds AS (
    DELETE FROM fields s USING marked m WHERE s.resource = m.key
), dm AS (
    DELETE FROM memberships ms USING marked m WHERE ms.member = m.key
)
SELECT count(*) FROM marked`

// Tombstone marks key, its live descendants and the live files made from
// any of them deleted at the given time and sequence number, in one
// statement, and returns how many it marked.
// Descendants already deleted are left as they are.
func (t *writeTx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
	var n int64
	if err := t.r.queryRow(ctx, tombstoneSQL, []any{key, seq, micros(at)}, &n); err != nil {
		return 0, fmt.Errorf("postgres: delete resource %d: %w", key, err)
	}
	return n, nil
}
