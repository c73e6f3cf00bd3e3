package preserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/rdf"
)

// Defaults of HistoryOptions.
const (
	// DefaultMaxVersions is how many versions of an object a timeline
	// looks at, the newest ones.
	DefaultMaxVersions = 256
	// DefaultMaxRecordBytes caps the object.json read for one version:
	// the record of a 10,000-page book is a few MiB.
	DefaultMaxRecordBytes = 64 << 20
	// DefaultMaxMetadataBytes caps the metadata.nt read for one version.
	DefaultMaxMetadataBytes = 64 << 20
	// DefaultMaxScanBytes caps the record bytes one timeline reads over
	// all the versions it looks at.
	DefaultMaxScanBytes = 256 << 20
)

// HistoryOptions bound what one request to a History reads. The zero
// value gives the defaults.
type HistoryOptions struct {
	// MaxVersions is how many versions, the newest, a timeline looks at
	// (DefaultMaxVersions); older ones are left out and the timeline says
	// it is truncated.
	MaxVersions int
	// MaxRecordBytes caps one version's object.json
	// (DefaultMaxRecordBytes); a larger one is an error.
	MaxRecordBytes int64
	// MaxMetadataBytes caps one version's metadata.nt
	// (DefaultMaxMetadataBytes); a larger one is an error.
	MaxMetadataBytes int64
	// MaxScanBytes caps the record bytes one timeline reads in all
	// (DefaultMaxScanBytes); the versions past it are left out and the
	// timeline says it is truncated.
	MaxScanBytes int64
}

// History reads the past states of resources from the preservation copy:
// which versions of its object hold a resource, the resource as a version
// recorded it (its row and its metadata), and a file's bytes as of a
// version. It reads the database only to find the object holding a
// resource. It is safe for concurrent use.
type History struct {
	store shelfmark.Storage
	root  *ocfl.Root
	ids   *shelfmark.IDCodec
	opts  HistoryOptions
}

// NewHistory returns the history of store's resources kept in root. ids
// is the repository's id codec.
func NewHistory(store shelfmark.Storage, root *ocfl.Root, ids *shelfmark.IDCodec, opts HistoryOptions) *History {
	if opts.MaxVersions <= 0 {
		opts.MaxVersions = DefaultMaxVersions
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = DefaultMaxRecordBytes
	}
	if opts.MaxMetadataBytes <= 0 {
		opts.MaxMetadataBytes = DefaultMaxMetadataBytes
	}
	if opts.MaxScanBytes <= 0 {
		opts.MaxScanBytes = DefaultMaxScanBytes
	}
	return &History{store: store, root: root, ids: ids, opts: opts}
}

// Version is one version of an object in which a resource exists.
type Version struct {
	// Num is the version number (1 for the first); Created, Message are
	// the version's own.
	Num     int
	Created time.Time
	Message string
	// Access is the resource's access as the version recorded it,
	// narrowed by that of what held it then (its file set, its work).
	Access shelfmark.Access
	// Deleted reports that the version records the resource's tombstone.
	Deleted bool
}

// Timeline is the versions of a resource's object that hold it, oldest
// first.
type Timeline struct {
	ID       shelfmark.ID
	Object   string // the OCFL object id
	Versions []Version
	// Truncated reports that older versions were not looked at
	// (MaxVersions, MaxScanBytes).
	Truncated bool
}

// At returns the version in force at t: the newest created at or before
// t; for a t before the first version, the first (the nearest, RFC 7089
// section 4.5.3); for a t after the last, the last. ok is false for an
// empty timeline.
func (tl *Timeline) At(t time.Time) (v Version, ok bool) {
	if len(tl.Versions) == 0 {
		return Version{}, false
	}
	v = tl.Versions[0]
	for _, c := range tl.Versions[1:] {
		if c.Created.After(t) {
			break
		}
		v = c
	}
	return v, true
}

// Memento is a resource as one version recorded it.
type Memento struct {
	// Version is the version, with the resource's recorded access.
	Version Version
	// Resource is the resource's row in the version's object.json.
	Resource Resource
	// Metadata is the resource's statements in the version's
	// metadata.nt, in their order there.
	Metadata []shelfmark.Statement
	// Children are the resources the version recorded with this one as
	// their parent, in the record's order (a work's file sets in their
	// order, then its files).
	Children []Resource

	obj *ocfl.Object
}

// Open opens the bytes of the memento's file as of its version, checked
// against their digest as they are read (reading to the end fails with
// ocfl.ErrDigestMismatch if they changed). ENOTFOUND for a resource that
// is not a file whose bytes the object keeps (a derivative, an external
// file).
func (m *Memento) Open(ctx context.Context) (io.ReadCloser, error) {
	f := m.Resource.File
	if f == nil || f.Path == "" {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s has no bytes kept in version %d of the preservation copy: only originals are kept.", m.Resource.ID, m.Version.Num)
	}
	rc, err := m.obj.Open(ctx, m.Version.Num, f.Path)
	if err != nil {
		return nil, fmt.Errorf("preserve: bytes of %s in version %d: %w", m.Resource.ID, m.Version.Num, err)
	}
	return rc, nil
}

// Timeline returns the versions of the object holding the resource id in
// which the resource exists, oldest first: for a work or a collection
// every version of its own object, for a file set or a file those of its
// work's object whose record holds it. ENOTFOUND when the resource is
// unknown or its object has no version yet.
//
// Cost: one database read to find the object, the object's inventory,
// then per version looked at (newest first, at most MaxVersions) its
// object.json read up to the resource, decoded one resource at a time
// (the first for a work or collection; versions sharing a record are read
// once), at most MaxScanBytes in all.
func (h *History) Timeline(ctx context.Context, id shelfmark.ID) (*Timeline, error) {
	obj, err := h.object(ctx, id)
	if err != nil {
		return nil, err
	}
	tl := &Timeline{ID: id, Object: obj.ID()}
	infos := obj.Versions()
	if len(infos) > h.opts.MaxVersions {
		infos, tl.Truncated = infos[len(infos)-h.opts.MaxVersions:], true
	}
	type seen struct {
		found bool
		v     Version
	}
	byDigest := map[string]seen{}
	budget := h.opts.MaxScanBytes
	var out []Version
	for i := len(infos) - 1; i >= 0; i-- {
		info := infos[i]
		state, err := obj.State(info.Num)
		if err != nil {
			return nil, fmt.Errorf("preserve: history of %s: %w", id, err)
		}
		digest, ok := state[RecordPath]
		if !ok {
			continue
		}
		s, ok := byDigest[digest]
		if !ok {
			if budget <= 0 {
				tl.Truncated = true
				break
			}
			rd, err := h.readRecord(ctx, obj, info.Num, string(id), false)
			if err != nil {
				return nil, err
			}
			budget -= rd.read
			if s.found = rd.target != nil; s.found {
				s.v = Version{Access: rd.access, Deleted: rd.target.Deleted != nil}
			}
			byDigest[digest] = s
		}
		if s.found {
			v := s.v
			v.Num, v.Created, v.Message = info.Num, info.Created, info.Message
			out = append(out, v)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	tl.Versions = out
	return tl, nil
}

// Memento returns the resource id as version n of its object recorded
// it. ENOTFOUND when the object has no version n or the version does not
// hold the resource.
//
// Cost: one database read to find the object, its inventory, the
// version's object.json (at most MaxRecordBytes) and metadata.nt (at most
// MaxMetadataBytes, of which only the resource's lines are parsed), each
// read once.
func (h *History) Memento(ctx context.Context, id shelfmark.ID, n int) (*Memento, error) {
	obj, err := h.object(ctx, id)
	if err != nil {
		return nil, err
	}
	var info *ocfl.VersionInfo
	for _, vi := range obj.Versions() {
		if vi.Num == n {
			info = &vi
			break
		}
	}
	if info == nil {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "The preservation copy holds no version %d of %s (it has %d).", n, id, obj.Head())
	}
	rd, err := h.readRecord(ctx, obj, n, string(id), true)
	if err != nil {
		return nil, err
	}
	if rd.target == nil {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "Version %d of the preservation copy does not hold %s.", n, id)
	}
	m := &Memento{
		Version:  Version{Num: n, Created: info.Created, Message: info.Message, Access: rd.access, Deleted: rd.target.Deleted != nil},
		Resource: *rd.target,
		Children: rd.children,
		obj:      obj,
	}
	if rd.target.Statements > 0 {
		if m.Metadata, err = h.metadata(ctx, obj, n, id); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// object opens the object holding the resource id: its own for a work or
// a collection, its work's for a file set or a file.
func (h *History) object(ctx context.Context, id shelfmark.ID) (*ocfl.Object, error) {
	key, err := h.ids.Key(id)
	if err != nil {
		return nil, err
	}
	var holder int64
	err = h.store.View(ctx, func(tx shelfmark.ReadTx) error {
		row, err := tx.Resource(ctx, key)
		if err != nil || row == nil {
			return err
		}
		switch row.Kind {
		case shelfmark.KindWork, shelfmark.KindCollection:
			holder = key
			return nil
		}
		if row.Parent == 0 {
			return nil
		}
		return holders(ctx, tx, map[int64]time.Time{row.Parent: row.Modified}, func(k int64, _ time.Time) { holder = k })
	})
	if err != nil {
		return nil, fmt.Errorf("preserve: object of %s: %w", id, err)
	}
	if holder == 0 {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "No resource has the id %s.", id)
	}
	obj, err := h.root.View(ctx, ObjectID(h.ids.Encode(holder)))
	if errors.Is(err, ocfl.ErrNotFound) {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s has no version in the preservation copy yet: changes are preserved a few seconds after they are made.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("preserve: object of %s: %w", id, err)
	}
	return obj, nil
}

// holders maps parents (file sets and works holding changed rows, each
// with a time) to the works and collections that hold them, up to two
// levels up (a file's file set, then its work), calling add for each
// with the newest time of what it holds. Cost: one read per level.
func holders(ctx context.Context, tx shelfmark.ReadTx, parents map[int64]time.Time, add func(key int64, t time.Time)) error {
	for range 2 {
		if len(parents) == 0 {
			break
		}
		keys := make([]int64, 0, len(parents))
		for k := range parents {
			keys = append(keys, k)
		}
		rs, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		next := map[int64]time.Time{}
		for _, r := range rs {
			t := parents[r.Key]
			switch r.Kind {
			case shelfmark.KindWork, shelfmark.KindCollection:
				add(r.Key, t)
			default:
				if old, ok := next[r.Parent]; r.Parent != 0 && (!ok || t.After(old)) {
					next[r.Parent] = t
				}
			}
		}
		parents = next
	}
	return nil
}

// recordRead is what readRecord found.
type recordRead struct {
	target   *Resource        // nil when the record does not hold it
	access   shelfmark.Access // the target's, narrowed by its holders'
	children []Resource       // with all: the target's children
	read     int64            // bytes read
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readRecord reads object.json of version n of obj, one resource at a
// time, and finds the resource id with the access of what holds it
// (holders come before what they hold). Without all it stops at id, and
// the bytes it skipped are not digest-checked; with all it reads to the
// end (checking the digest), collecting id's children.
func (h *History) readRecord(ctx context.Context, obj *ocfl.Object, n int, id string, all bool) (*recordRead, error) {
	rc, err := obj.Open(ctx, n, RecordPath)
	if err != nil {
		return nil, fmt.Errorf("preserve: %s version %d: %w", obj.ID(), n, err)
	}
	defer rc.Close()
	cr := &countReader{r: io.LimitReader(rc, h.opts.MaxRecordBytes+1)}
	fail := func(err error) (*recordRead, error) {
		if cr.n > h.opts.MaxRecordBytes {
			return nil, fmt.Errorf("preserve: %s version %d: %s is larger than %d bytes", obj.ID(), n, RecordPath, h.opts.MaxRecordBytes)
		}
		return nil, fmt.Errorf("preserve: %s version %d: read %s: %w", obj.ID(), n, RecordPath, err)
	}
	dec := json.NewDecoder(cr)
	if err := expectDelim(dec, '{'); err != nil {
		return fail(err)
	}
	out := &recordRead{}
	held := map[string]shelfmark.Access{} // works and file sets met, with their narrowed access
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		switch key, _ := tok.(string); key {
		case "shelfmark":
			var v int
			if err := dec.Decode(&v); err != nil {
				return fail(err)
			}
			if v > FormatVersion {
				return nil, fmt.Errorf("preserve: %s version %d: record format %d is newer than this server's (%d)", obj.ID(), n, v, FormatVersion)
			}
		case "resources":
			if err := expectDelim(dec, '['); err != nil {
				return fail(err)
			}
			for dec.More() {
				var r Resource
				if err := dec.Decode(&r); err != nil {
					return fail(err)
				}
				acc := shelfmark.Access{Visibility: shelfmark.Visibility(r.Visibility), Embargo: r.Embargo, Lease: r.Lease}
				if p, ok := held[r.Parent]; ok && r.Parent != "" {
					acc = acc.Narrow(p)
				}
				if r.Kind != string(shelfmark.KindFile) {
					held[r.ID] = acc
				}
				switch {
				case r.ID == id:
					out.target, out.access = &r, acc
					if !all {
						out.read = cr.n
						return out, nil
					}
				case all && r.Parent == id:
					out.children = append(out.children, r)
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	// to the end, so that the reader checks the digest
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return fail(err)
	}
	if cr.n > h.opts.MaxRecordBytes {
		return fail(nil)
	}
	out.read = cr.n
	return out, nil
}

// expectDelim reads the next token, which must be the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("found %v where %q was expected", tok, d)
	}
	return nil
}

// metadata reads the statements of the resource id in version n's
// metadata.nt: only the lines whose subject is the resource's IRI are
// parsed (N-Triples holds one statement a line).
func (h *History) metadata(ctx context.Context, obj *ocfl.Object, n int, id shelfmark.ID) ([]shelfmark.Statement, error) {
	rc, err := obj.Open(ctx, n, MetadataPath)
	if err != nil {
		return nil, fmt.Errorf("preserve: %s version %d: %w", obj.ID(), n, err)
	}
	defer rc.Close()
	cr := &countReader{r: io.LimitReader(rc, h.opts.MaxMetadataBytes+1)}
	br := bufio.NewReaderSize(cr, 64<<10)
	prefix := []byte("<" + SubjectIRI(id) + "> ")
	var mine bytes.Buffer
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// a long line: whole, then judged
			rest, err2 := br.ReadBytes('\n')
			line, err = append(append([]byte(nil), line...), rest...), err2
		}
		if bytes.HasPrefix(line, prefix) {
			mine.Write(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("preserve: %s version %d: read %s: %w", obj.ID(), n, MetadataPath, err)
		}
	}
	if cr.n > h.opts.MaxMetadataBytes {
		return nil, fmt.Errorf("preserve: %s version %d: %s is larger than %d bytes", obj.ID(), n, MetadataPath, h.opts.MaxMetadataBytes)
	}
	triples, err := rdf.Parse(&mine, rdf.NTriples, "", rdf.MaxTriples(shelfmark.MaxStatements))
	if err != nil {
		return nil, fmt.Errorf("preserve: %s version %d: statements of %s: %w", obj.ID(), n, id, err)
	}
	out := make([]shelfmark.Statement, len(triples))
	for i, t := range triples {
		out[i] = shelfmark.Statement{Predicate: t.Predicate, Object: t.Object}
	}
	return out, nil
}

// History returns the history of what p preserves, reading the same
// storage root (so that a read's recovery of an object never races this
// process's writes to it).
func (p *Preserver) History(opts HistoryOptions) *History {
	return NewHistory(p.store, p.root, p.ids, opts)
}
