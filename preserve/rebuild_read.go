package preserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/rdf"
)

// maxRecordSize bounds the object.json and metadata.nt a rebuild reads
// of one version: a work of a few thousand pages stays far below it.
const maxRecordSize = 256 << 20

// loaded is what a rebuild writes for one object: its rows and
// everything attached to them, read and checked whole before any of it is
// written.
type loaded struct {
	id          string // the OCFL object id
	key         int64  // the object's resource
	rows        []*shelfmark.ResourceRow
	fieldKeys   []int64
	fields      []shelfmark.Field
	memberships []shelfmark.Membership
	fileKeys    []int64
	files       []*shelfmark.File
	sourceKeys  []string
	sourceRes   []int64
	owners      map[int64]string // depositor names
	grants      []shelfmark.Grant
	jobs        []shelfmark.NewJob
	originals   []original
	bytes       int64
	format      int // of the record being added
}

// original is an original's bytes in the object: the version and logical
// path to read them from, and the SHA-256 the content store keys them by.
type original struct {
	version int
	path    string
	sha256  string
	size    int64
}

// readObject reads and checks the object id: its newest record and
// metadata, and, for what the newest version no longer holds (file sets
// and files deleted since, a deleted work's children), the earlier
// versions' records, which become tombstones. Any fault (an inventory
// that does not match its digest, a record that does not parse or names
// impossible things, a missing file) is returned; nothing is written.
func readObject(ctx context.Context, root *ocfl.Root, ids *shelfmark.IDCodec, id string) (*loaded, *ocfl.Object, error) {
	obj, err := root.View(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	head := obj.Head()
	rec, err := readRecord(ctx, obj, head)
	if err != nil {
		return nil, nil, err
	}
	if want := ObjectID(shelfmark.ID(rec.ID)); want != id {
		return nil, nil, fmt.Errorf("its record is of %s", want)
	}
	l := &loaded{id: id, owners: map[int64]string{}, format: rec.Shelfmark}
	if l.key, err = keyOf(ids, rec.ID); err != nil {
		return nil, nil, err
	}
	state, err := obj.State(head)
	if err != nil {
		return nil, nil, err
	}
	stmts, err := readMetadata(ctx, obj, head, state, ids)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	live := rec.Resources
	for i := range live {
		r := &live[i]
		if seen[r.ID] {
			return nil, nil, fmt.Errorf("resource %s is twice in its record", r.ID)
		}
		seen[r.ID] = true
		if i == 0 && (r.ID != rec.ID || (r.Kind != string(shelfmark.KindWork) && r.Kind != string(shelfmark.KindCollection))) {
			return nil, nil, fmt.Errorf("its record does not begin with its work or collection %s", rec.ID)
		}
		if i > 0 && r.Kind != string(shelfmark.KindFileSet) && r.Kind != string(shelfmark.KindFile) {
			return nil, nil, fmt.Errorf("resource %s of its record is a %q, not a file set or file", r.ID, r.Kind)
		}
		if err := l.add(ids, r, head, state, stmts, nil); err != nil {
			return nil, nil, fmt.Errorf("resource %s: %w", r.ID, err)
		}
	}
	if rec.Shelfmark < 2 {
		narrowOwn(l.rows)
	}
	if n := countStatements(stmts); n > 0 {
		return nil, nil, fmt.Errorf("%s has %d statements of resources its record does not hold", MetadataPath, n)
	}
	if head > 1 {
		if err := l.history(ctx, obj, ids, rec, seen); err != nil {
			return nil, nil, err
		}
	}
	return l, obj, nil
}

// history adds the tombstones of what earlier versions held and the
// newest one does not: each resource as the last version holding it left
// it, deleted when the next version was made (when the object's resource
// itself is deleted, with its own deletion, as Tombstone does). Cost: one
// record read per earlier version.
func (l *loaded) history(ctx context.Context, obj *ocfl.Object, ids *shelfmark.IDCodec, headRec *Record, seen map[string]bool) error {
	rootGone := headRec.Resources[0].Deleted
	versions := obj.Versions()
	created := map[int]time.Time{}
	for _, v := range versions {
		created[v.Num] = v.Created
	}
	for v := obj.Head() - 1; v >= 1; v-- {
		rec, err := readRecord(ctx, obj, v)
		if err != nil {
			return fmt.Errorf("version %d: %w", v, err)
		}
		state, err := obj.State(v)
		if err != nil {
			return err
		}
		l.format = rec.Shelfmark
		for i := range rec.Resources {
			r := rec.Resources[i]
			if seen[r.ID] || r.Deleted != nil {
				continue
			}
			if i == 0 || (r.Kind != string(shelfmark.KindFileSet) && r.Kind != string(shelfmark.KindFile)) {
				continue
			}
			seen[r.ID] = true
			// the version after v is the first without it
			tomb := &tombstone{at: created[v+1].UTC(), seq: r.Seq}
			if rootGone != nil && v == obj.Head()-1 {
				tomb.at, tomb.seq = rootGone.UTC(), headRec.Resources[0].Seq
			}
			if err := l.add(ids, &r, v, state, nil, tomb); err != nil {
				return fmt.Errorf("version %d, resource %s: %w", v, r.ID, err)
			}
		}
	}
	return nil
}

// tombstone is how a resource an earlier version held was deleted.
type tombstone struct {
	at  time.Time
	seq int64
}

// add checks the record of one resource and appends its row, metadata,
// memberships, file, source keys and depositor; tomb, when set, makes it
// a tombstone (no metadata, no memberships: as Tombstone leaves it).
func (l *loaded) add(ids *shelfmark.IDCodec, r *Resource, version int, state map[string]string, stmts map[int64][]shelfmark.Statement, tomb *tombstone) error {
	key, err := keyOf(ids, r.ID)
	if err != nil {
		return err
	}
	kind := shelfmark.Kind(r.Kind)
	if !kind.Valid() {
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	vis := shelfmark.Visibility(r.Visibility)
	if !vis.Valid() {
		return fmt.Errorf("unknown visibility %q", r.Visibility)
	}
	if r.Version < 1 || r.Seq < 1 || r.Created.IsZero() || r.Modified.IsZero() {
		return errors.New("its version, sequence number and times are not all set")
	}
	row := &shelfmark.ResourceRow{Key: key, Kind: kind, Visibility: vis, Embargo: utc(r.Embargo), Lease: utc(r.Lease),
		Version: r.Version, Seq: r.Seq, Created: r.Created.UTC(), Modified: r.Modified.UTC(), Deleted: utc(r.Deleted)}
	if r.Parent != "" {
		if row.Parent, err = keyOf(ids, r.Parent); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
		row.Position = shelfmark.UnorderedBase + key
		if r.Position > 0 {
			if r.Position >= shelfmark.UnorderedBase {
				return fmt.Errorf("position %d is out of range", r.Position)
			}
			row.Position = r.Position
		}
	} else if kind == shelfmark.KindFileSet || kind == shelfmark.KindFile {
		return errors.New("a file set or file without a parent")
	}
	if r.Source != "" {
		// a derivative: the pipeline makes it again from its original
		delete(stmts, key)
		return nil
	}
	row.Effective = row.Own()
	if e := r.Effective; e != nil {
		ev := shelfmark.Visibility(e.Visibility)
		if !ev.Valid() {
			return fmt.Errorf("unknown effective visibility %q", e.Visibility)
		}
		row.Effective = shelfmark.Access{Visibility: ev, Embargo: utc(e.Embargo), Lease: utc(e.Lease)}
	}
	if tomb != nil {
		row.Deleted, row.Seq, row.Modified, row.Version = &tomb.at, max(tomb.seq, 1), tomb.at, r.Version+1
	}
	if stmts != nil {
		if got := len(stmts[key]); got != r.Statements {
			return fmt.Errorf("%s has %d statements of it, its record says %d", MetadataPath, got, r.Statements)
		}
		if fs := shelfmark.FieldsOf(stmts[key]); len(fs) > 0 {
			for range fs {
				l.fieldKeys = append(l.fieldKeys, key)
			}
			l.fields = append(l.fields, fs...)
		}
		delete(stmts, key)
	}
	if tomb == nil && row.Deleted == nil {
		for _, c := range r.MemberOf {
			ck, err := keyOf(ids, c)
			if err != nil {
				return fmt.Errorf("memberOf: %w", err)
			}
			l.memberships = append(l.memberships, shelfmark.Membership{Collection: ck, Member: key})
		}
		for _, g := range r.Grants {
			if kind != shelfmark.KindCollection {
				return errors.New("grants on a resource that is not a collection")
			}
			role := shelfmark.Role(g.Role)
			if !role.Valid() || !validPrincipal(g.Principal) {
				return fmt.Errorf("grant %q to %q: not a role and principal", g.Role, g.Principal)
			}
			l.grants = append(l.grants, shelfmark.Grant{Resource: key, Principal: g.Principal, Role: role})
		}
	}
	if r.Depositor != "" {
		if !validPrincipal("user:" + r.Depositor) {
			return fmt.Errorf("depositor %q is not a user name", r.Depositor)
		}
		l.owners[key] = r.Depositor
	}
	for _, sk := range r.SourceKeys {
		if sk == "" {
			return errors.New("an empty source key")
		}
		l.sourceKeys, l.sourceRes = append(l.sourceKeys, sk), append(l.sourceRes, key)
	}
	switch {
	case kind == shelfmark.KindFile && r.File == nil:
		return errors.New("a file without its description")
	case kind != shelfmark.KindFile && r.File != nil:
		return errors.New("a file description on a resource that is not a file")
	case r.File != nil:
		f, err := fileOf(r.File, l.format)
		if err != nil {
			return err
		}
		l.fileKeys, l.files = append(l.fileKeys, key), append(l.files, f)
		if r.File.Path != "" {
			if _, ok := state[r.File.Path]; !ok {
				return fmt.Errorf("its bytes %s are not in version %d", r.File.Path, version)
			}
			l.originals = append(l.originals, original{version: version, path: r.File.Path, sha256: f.SHA256, size: f.Size})
			l.bytes += f.Size
		}
		if row.Deleted == nil && f.Processed() {
			// the pipeline characterizes it again and makes its derivatives
			l.jobs = append(l.jobs, shelfmark.NewJob{Queue: shelfmark.QueueCharacterize, Resource: key})
		}
	}
	l.rows = append(l.rows, row)
	return nil
}

// fileOf is the file description of a record of format version,
// checked.
func fileOf(r *File, format int) (*shelfmark.File, error) {
	f := &shelfmark.File{Name: r.Name, MediaType: r.MediaType, Size: r.Size, SHA256: r.SHA256, SHA512: r.SHA512, MD5: r.MD5,
		Use: r.Use, ExternalURL: r.ExternalURL}
	if !r.SHA512Stored && format >= 2 {
		f.SHA512 = "" // the preserver's, not the database's
	}
	if r.Use == "" {
		return nil, errors.New("a file without its use")
	}
	if r.Path != "" && (len(r.SHA256) != 64 || !isHex(r.SHA256) || r.Size < 0) {
		return nil, fmt.Errorf("file %s has no valid SHA-256 and size", r.Path)
	}
	if fm := r.Format; fm != nil {
		f.Format = &shelfmark.Format{PRONOM: fm.PRONOM, Name: fm.Name, Version: fm.Version, MediaType: fm.MediaType,
			Width: fm.Width, Height: fm.Height, Pages: fm.Pages, Note: fm.Note}
	}
	return f, nil
}

// readRecord reads and checks object.json of version v.
func readRecord(ctx context.Context, obj *ocfl.Object, v int) (*Record, error) {
	data, err := readAll(ctx, obj, v, RecordPath)
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s of version %d: %w", RecordPath, v, err)
	}
	switch {
	case rec.Shelfmark < 1 || rec.Shelfmark > FormatVersion:
		return nil, fmt.Errorf("%s of version %d is of format %d; this Shelfmark reads 1 to %d", RecordPath, v, rec.Shelfmark, FormatVersion)
	case len(rec.Resources) == 0:
		return nil, fmt.Errorf("%s of version %d holds no resource", RecordPath, v)
	}
	return &rec, nil
}

// readMetadata reads metadata.nt of version v (when it has one) as each
// resource's statements, by key.
func readMetadata(ctx context.Context, obj *ocfl.Object, v int, state map[string]string, ids *shelfmark.IDCodec) (map[int64][]shelfmark.Statement, error) {
	out := map[int64][]shelfmark.Statement{}
	if _, ok := state[MetadataPath]; !ok {
		return out, nil
	}
	data, err := readAll(ctx, obj, v, MetadataPath)
	if err != nil {
		return nil, err
	}
	subjects, stmts, ok := parseOwnNTriples(data)
	if !ok {
		// not as Shelfmark writes it: the general parser
		triples, err := rdf.Parse(bytes.NewReader(data), "application/n-triples", "", rdf.MaxTriples(-1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", MetadataPath, err)
		}
		subjects, stmts = make([]string, len(triples)), make([]shelfmark.Statement, len(triples))
		for i, t := range triples {
			subjects[i], stmts[i] = t.Subject.Value, shelfmark.Statement{Predicate: t.Predicate, Object: t.Object}
		}
	}
	last, key := "", int64(0)
	for i, subj := range subjects {
		if subj != last {
			s, ok := strings.CutPrefix(subj, "urn:shelfmark:")
			if !ok {
				return nil, fmt.Errorf("%s: subject %q is not a resource", MetadataPath, subj)
			}
			k, err := keyOf(ids, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", MetadataPath, err)
			}
			last, key = subj, k
		}
		out[key] = append(out[key], stmts[i])
	}
	return out, nil
}

// readAll reads a logical file of version v whole, checked against its
// digest.
func readAll(ctx context.Context, obj *ocfl.Object, v int, path string) ([]byte, error) {
	rc, err := obj.Open(ctx, v, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s of version %d: %w", path, v, err)
	}
	if len(data) > maxRecordSize {
		return nil, fmt.Errorf("%s of version %d is larger than %d bytes", path, v, maxRecordSize)
	}
	return data, nil
}

// keyOf is the key of a resource id, checked.
func keyOf(ids *shelfmark.IDCodec, id string) (int64, error) {
	k, err := ids.Key(shelfmark.ID(id))
	if err != nil {
		return 0, fmt.Errorf("id %q: %s", id, shelfmark.ErrorMessage(err))
	}
	return k, nil
}

// countStatements is how many statements remain in stmts.
func countStatements(stmts map[int64][]shelfmark.Statement) int {
	n := 0
	for _, s := range stmts {
		n += len(s)
	}
	return n
}

// validPrincipal reports whether p is "user:NAME" or "group:NAME" with a
// plausible name.
func validPrincipal(p string) bool {
	kind, name, ok := strings.Cut(p, ":")
	if !ok || (kind != "user" && kind != "group") || name == "" || len(name) > 200 {
		return false
	}
	for _, c := range name {
		if c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// isHex reports whether s is lower-case hexadecimal.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// narrowOwn gives the rows of a record of format 1, which did not give
// the effective access, the access of what holds them within the object
// (rows come parents first): a file set and its files are as hidden as
// their work. A child work's own object cannot see its parent's: it
// keeps its own access.
func narrowOwn(rows []*shelfmark.ResourceRow) {
	byKey := make(map[int64]*shelfmark.ResourceRow, len(rows))
	for _, r := range rows {
		if p := byKey[r.Parent]; p != nil {
			r.Effective = r.Own().Narrow(p.Effective)
		}
		byKey[r.Key] = r
	}
}
