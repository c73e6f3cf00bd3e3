package shelfmark

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// RepositoryOptions configure a Repository. Zero values pick defaults.
type RepositoryOptions struct {
	// MintBlock is how many keys the minter reserves per database round
	// trip (default 1000).
	MintBlock int
	// MaxBatch caps the operations of one group commit (default 256).
	MaxBatch int
	// Committers is how many transactions may be open at once (default 1:
	// right for SQLite's single writer; PostgreSQL serialises sequence
	// numbers anyway).
	Committers int
	// Observer learns of every group commit.
	Observer CommitObserver
	// Logger receives what the engine cannot return to a caller (an audit
	// entry of a refused write that could not be stored); default
	// slog.Default().
	Logger *slog.Logger
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// IDs maps keys to ids (default LegacyIDCodec, for tests; a repository
	// on a real store uses LoadIDCodec).
	IDs *IDCodec
	// MaxListScan bounds the rows a listing page reads past rows its
	// caller may not see (default DefaultMaxListScan).
	MaxListScan int
	// WebLinksPublic opens the web link index (inbound counts, links, top
	// lists) to every caller. It spans every crawl, so by default only
	// readers of the whole repository see it; set it when every crawl is
	// public.
	WebLinksPublic bool
}

// Repository is the repository engine: it implements ResourceService over
// any Storage, keeping every rule of the data model in one place.
type Repository struct {
	store  Storage
	minter *Minter
	ids    *IDCodec
	// hidden encodes the keys of rows a caller may not see where a
	// listing's cursor must name one (see ListMembers): the id codec
	// itself would name the hidden row, and a bare key would too under the
	// legacy mapping, so it is a codec of its own.
	hidden  *IDCodec
	maxScan int
	// webLinksPublic opens the link index to everyone.
	webLinksPublic bool
	log            *slog.Logger
	commit         *committer
	now            func() time.Time
}

var _ ResourceService = (*Repository)(nil)

// NewRepository starts an engine over store. Close stops it.
func NewRepository(store Storage, opts RepositoryOptions) *Repository {
	if opts.MintBlock <= 0 {
		opts.MintBlock = 1000
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.Committers <= 0 {
		opts.Committers = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxListScan <= 0 {
		opts.MaxListScan = DefaultMaxListScan
	}
	if opts.IDs == nil {
		opts.IDs = LegacyIDCodec()
	}
	return &Repository{
		store:   store,
		minter:  NewMinter(store, opts.MintBlock),
		ids:     opts.IDs,
		hidden:  hiddenCursorCodec(),
		maxScan: opts.MaxListScan, webLinksPublic: opts.WebLinksPublic,
		log:    opts.Logger,
		commit: newCommitter(store, opts.Committers, opts.MaxBatch, opts.Observer, opts.Now),
		now:    opts.Now,
	}
}

// Close commits what is queued and stops the engine. It does not close the
// Storage.
func (r *Repository) Close() error {
	r.commit.close()
	return nil
}

// Storage returns the backend the engine runs on.
func (r *Repository) Storage() Storage { return r.store }

// IDs returns the codec between the repository's keys and ids.
func (r *Repository) IDs() *IDCodec { return r.ids }

// refKey decodes an id given inside a request body: a malformed one is the
// client's mistake in the body (400), not a missing resource.
func (r *Repository) refKey(id ID, field string) (int64, error) {
	k, err := r.ids.Key(id)
	if err != nil {
		return 0, &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %s", field, ErrorMessage(err)), Details: map[string]any{"field": field, "id": string(id)}}
	}
	return k, nil
}

// live loads a row and fails with ENOTFOUND or EGONE unless it is live.
func (r *Repository) live(ctx context.Context, tx ReadTx, key int64) (*ResourceRow, error) {
	row, err := tx.Resource(ctx, key)
	if err != nil {
		return nil, err
	}
	return row, r.liveRow(key, row)
}

// liveRow is ENOTFOUND when row (the row of key, read before) is nil and
// EGONE when it is a tombstone.
func (r *Repository) liveRow(key int64, row *ResourceRow) error {
	if row == nil {
		return Errorf(ENOTFOUND, "No resource has the id %s.", r.ids.Encode(key))
	} else if row.Deleted != nil {
		return &Error{Code: EGONE, Message: fmt.Sprintf("The resource %s was deleted.", r.ids.Encode(key)),
			Details: map[string]any{"deleted": row.Deleted.Format(time.RFC3339)}}
	}
	return nil
}

// checkVersion enforces If-Match.
func (r *Repository) checkVersion(row *ResourceRow, ifMatch int64) error {
	if ifMatch != 0 && ifMatch != row.Version {
		return &Error{Code: EPRECONDITION, Message: fmt.Sprintf("The resource %s is at version %d, not %d: read it again and retry.", r.ids.Encode(row.Key), row.Version, ifMatch),
			Details: map[string]any{"current_version": row.Version}}
	}
	return nil
}

// rowResource builds a Resource from a row (no metadata or memberships).
func (r *Repository) rowResource(row *ResourceRow) *Resource {
	res := &Resource{
		ID: r.ids.Encode(row.Key), Kind: row.Kind, Visibility: row.Visibility, Embargo: row.Embargo, Lease: row.Lease,
		Version: row.Version, Seq: row.Seq, Created: row.Created, Modified: row.Modified, Deleted: row.Deleted,
	}
	if row.Parent != 0 {
		res.Parent = r.ids.Encode(row.Parent)
		if row.Position < UnorderedBase {
			res.Position = int(row.Position)
		}
	}
	return res
}

func (r *Repository) encodeKeys(keys []int64) []ID {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]ID, len(keys))
	for i, k := range keys {
		ids[i] = r.ids.Encode(k)
	}
	return ids
}

// FindResource returns a live resource with metadata and memberships.
func (r *Repository) FindResource(ctx context.Context, id ID) (*Resource, error) {
	key, err := r.ids.Key(id)
	if err != nil {
		return nil, err
	}
	var res *Resource
	c := CallerFrom(ctx)
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, c)
		a, err := g.readable(ctx, key)
		if err != nil {
			return err
		}
		row := a.row
		res = r.rowResource(row)
		a.showIn(res)
		fields, err := tx.Fields(ctx, key)
		if err != nil {
			return err
		}
		res.Metadata = StatementsOf(fields)
		var colls []int64
		if row.Kind == KindWork || row.Kind == KindCollection {
			if colls, err = tx.MemberOf(ctx, key); err != nil {
				return err
			}
			res.MemberOf = r.encodeKeys(colls)
		}
		if err := g.hideUnseen(ctx, res, row, colls); err != nil {
			return err
		}
		if row.Kind == KindFile {
			if res.File, err = tx.File(ctx, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", id, err)
	}
	return res, nil
}

// allowedParent says which kind may hold which as an ordered child.
func allowedParent(child, parent Kind) bool {
	switch child {
	case KindFileSet, KindWork:
		return parent == KindWork
	case KindFile:
		return parent == KindFileSet
	}
	return false
}

// MintIDs reserves n fresh ids.
func (r *Repository) MintIDs(ctx context.Context, n int) ([]ID, error) {
	if err := mayWrite(CallerFrom(ctx), "reserve ids"); err != nil {
		return nil, err
	}
	keys, err := r.minter.Mint(ctx, n)
	if err != nil {
		return nil, err
	}
	return r.encodeKeys(keys), nil
}

// CreateResource stores one new resource.
func (r *Repository) CreateResource(ctx context.Context, nr *NewResource) (*Resource, error) {
	out, errs := r.CreateResources(ctx, []*NewResource{nr})
	return out[0], errs[0]
}

// CreateResources stores new resources in one group commit; each item gets
// its own result or error.
func (r *Repository) CreateResources(ctx context.Context, nrs []*NewResource) ([]*Resource, []error) {
	out := make([]*Resource, len(nrs))
	errs := make([]error, len(nrs))
	if err := mayWrite(CallerFrom(ctx), "create resources"); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	keys, err := r.minter.Mint(ctx, max(len(nrs), 1))
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	ops := make([]*op, 0, len(nrs))
	idx := make([]int, 0, len(nrs))
	for i, nr := range nrs {
		key := keys[i]
		if nr != nil && nr.ID != "" {
			k, err := r.refKey(nr.ID, "id")
			if err != nil {
				errs[i] = err
				continue
			}
			key = k
		}
		o, res, err := r.createOp(nr, key, 0)
		if err != nil {
			errs[i] = err
			continue
		}
		out[i] = res
		ops = append(ops, o)
		idx = append(idx, i)
	}
	if err := r.commit.submit(ctx, ops...); err != nil {
		for _, i := range idx {
			out[i], errs[i] = nil, err
		}
		return out, errs
	}
	for j, o := range ops {
		if o.err != nil {
			out[idx[j]], errs[idx[j]] = nil, o.err
			r.auditDenied(ctx, "create", 0, o.err)
		}
	}
	return out, errs
}

// createOp validates a NewResource in memory and returns the op that stores
// it, plus the Resource it will be once committed. position, when not 0,
// is the new child's place among its parent's ordered children.
func (r *Repository) createOp(nr *NewResource, key, position int64) (*op, *Resource, error) {
	if nr == nil || !nr.Kind.Valid() {
		return nil, nil, Errorf(EINVALID, "kind must be one of collection, work, fileset, file.")
	}
	vis, err := ParseVisibility(string(nr.Visibility))
	if err != nil {
		return nil, nil, err
	}
	if err := r.checkAccessDates(nr.Embargo, nr.Lease); err != nil {
		return nil, nil, err
	}
	var parent int64
	if nr.Parent != "" {
		k, err := r.refKey(nr.Parent, "parent")
		if err != nil {
			return nil, nil, err
		}
		parent = k
	}
	switch {
	case nr.Kind == KindCollection && parent != 0:
		return nil, nil, Errorf(EINVALID, "A collection cannot have a parent; use memberOf to nest collections.")
	case nr.Kind == KindFileSet && parent == 0:
		return nil, nil, Errorf(EINVALID, "A file set needs a parent work.")
	case nr.Kind == KindFile && parent == 0:
		return nil, nil, Errorf(EINVALID, "A file needs a parent file set.")
	case nr.Kind == KindFile && nr.File == nil:
		return nil, nil, Errorf(EINVALID, "A file needs its bytes or an external URL.")
	case nr.Kind != KindFile && nr.File != nil:
		return nil, nil, Errorf(EINVALID, "Only resources of kind file carry bytes.")
	case len(nr.MemberOf) > 0 && nr.Kind != KindWork && nr.Kind != KindCollection:
		return nil, nil, Errorf(EINVALID, "Only works and collections can be members of collections.")
	}
	colls := make([]int64, 0, len(nr.MemberOf))
	seen := map[int64]bool{}
	for _, id := range nr.MemberOf {
		k, err := r.refKey(id, "memberOf")
		if err != nil {
			return nil, nil, err
		}
		if !seen[k] {
			seen[k] = true
			colls = append(colls, k)
		}
	}
	if err := validateStatements("metadata", nr.Metadata); err != nil {
		return nil, nil, err
	}
	if err := validateFile(nr.File); err != nil {
		return nil, nil, err
	}
	fields := FieldsOf(nr.Metadata)
	meta := StatementsOf(fields)
	row := &ResourceRow{Key: key, Kind: nr.Kind, Visibility: vis, Embargo: nr.Embargo, Lease: nr.Lease, Parent: parent, Version: 1, Source: nr.source}
	if parent != 0 {
		row.Position = UnorderedBase + key
		if position > 0 {
			row.Position = position
		}
	}
	res := &Resource{ID: r.ids.Encode(key), Kind: nr.Kind, Visibility: vis, Embargo: nr.Embargo, Lease: nr.Lease, Parent: nr.Parent,
		MemberOf: r.encodeKeys(colls), Metadata: meta, File: nr.File, Version: 1}
	if parent != 0 && position > 0 {
		res.Position = int(position)
	}
	// the rows the new one takes its effective access from, read by check
	var parentRow, sourceRow *ResourceRow
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		g := r.guard(tx, CallerFrom(o.ctx))
		parentRow, sourceRow = nil, nil
		if parent != 0 && o.group[parent] {
			// a child of a resource the same group creates: the group's
			// root was authorised; the parent's kind is checked below
			p, err := r.live(ctx, tx, parent)
			if err != nil {
				return asInvalid(err, "parent")
			}
			if !allowedParent(nr.Kind, p.Kind) {
				return Errorf(EINVALID, "A %s cannot be a child of the %s %s.", nr.Kind, p.Kind, r.ids.Encode(parent))
			}
			parentRow = p
		} else if parent != 0 {
			pa, err := g.readable(ctx, parent)
			if err != nil {
				return asInvalid(err, "parent")
			}
			if p := pa.row; !allowedParent(nr.Kind, p.Kind) {
				return Errorf(EINVALID, "A %s cannot be a child of the %s %s.", nr.Kind, p.Kind, r.ids.Encode(parent))
			}
			if ok, err := g.canEdit(ctx, pa); err != nil {
				return err
			} else if !ok {
				return g.refused("add to", parent)
			}
			parentRow = pa.row
		}
		if nr.source != 0 {
			s, err := r.live(ctx, tx, nr.source)
			if err != nil {
				return err
			}
			if s.Kind != KindFile || s.Parent != parent {
				return Errorf(EINVALID, "A derivative is made from a file of its own file set, not from %s.", r.ids.Encode(nr.source))
			}
			sourceRow = s
		}
		// the bytes a file names, once the caller may create it at all
		o.uploads = nil
		if own, err := g.mayName(ctx, nr.File); err != nil {
			return err
		} else if own {
			o.uploads = []string{nr.File.SHA256}
		}
		if err := r.checkCollections(ctx, g, colls); err != nil {
			return err
		}
		if parent == 0 || len(colls) > 0 {
			want := RoleDepositor
			if nr.Kind == KindCollection {
				want = RoleCurator
			}
			if err := g.deposit(ctx, colls, "memberOf", want); err != nil {
				return err
			}
		}
		if nr.Kind != KindCollection {
			return nil
		}
		return r.checkNestingUnder(ctx, tx, colls)
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		ctx := context.Background()
		row.Seq, row.Created, row.Modified = seq, now, now
		if err := r.readAccessSources(ctx, tx, row, &parentRow, &sourceRow); err != nil {
			return err
		}
		row.Effective = effectiveOf(row, parentRow, sourceRow)
		res.Seq, res.Created, res.Modified = seq, now, now
		if err := tx.InsertResources(ctx, []*ResourceRow{row}); err != nil {
			return err
		}
		if err := depositedBy(ctx, tx, o, row); err != nil {
			return err
		}
		o.audit = append(o.audit, auditEntry(o.ctx, "create", key, nil))
		if len(fields) > 0 {
			keys := make([]int64, len(fields))
			for i := range keys {
				keys[i] = key
			}
			if err := tx.PutFields(ctx, keys, fields); err != nil {
				return err
			}
		}
		if len(colls) > 0 {
			ms := make([]Membership, len(colls))
			for i, c := range colls {
				ms[i] = Membership{Collection: c, Member: key}
			}
			if err := tx.InsertMemberships(ctx, ms); err != nil {
				return err
			}
		}
		if nr.File != nil {
			if err := tx.InsertFiles(ctx, []int64{key}, []*File{nr.File}); err != nil {
				return err
			}
			if o.group == nil {
				if err := forgetUsed(ctx, tx, o); err != nil {
					return err
				}
			}
			// the file's first job is enqueued in the transaction that
			// stores it: a crash loses neither, and no job runs for a
			// file that was not stored
			if nr.File.Processed() {
				return tx.EnqueueJobs(ctx, []NewJob{{Queue: QueueCharacterize, Resource: key}}, now)
			}
		}
		return nil
	}
	return o, res, nil
}

// readAccessSources reads the parent and source of a new row that its
// op's check did not read (the derivatives of a finished job are applied
// without one).
func (r *Repository) readAccessSources(ctx context.Context, tx ReadTx, row *ResourceRow, parent, source **ResourceRow) error {
	for _, want := range []struct {
		key int64
		row **ResourceRow
	}{{row.Parent, parent}, {row.Source, source}} {
		if want.key == 0 || *want.row != nil {
			continue
		}
		got, err := r.live(ctx, tx, want.key)
		if err != nil {
			return fmt.Errorf("effective access of %s: %w", r.ids.Encode(row.Key), err)
		}
		*want.row = got
	}
	return nil
}

// asInvalid turns a missing or deleted referenced resource into a 400: the
// request body named something that is not there.
func asInvalid(err error, field string) error {
	switch ErrorCode(err) {
	case ENOTFOUND, EGONE:
		return &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %s", field, ErrorMessage(err)), Details: map[string]any{"field": field}}
	}
	return err
}

// checkCollections verifies that every key is a live collection. A
// resource the caller of g may not see is reported as missing, so that its
// kind, or its deletion, is not told to someone who may not know it exists.
func (r *Repository) checkCollections(ctx context.Context, g *guard, colls []int64) error {
	if len(colls) == 0 {
		return nil
	}
	rows, err := g.tx.Resources(ctx, colls)
	if err != nil {
		return err
	}
	byKey := make(map[int64]*ResourceRow, len(rows))
	for _, row := range rows {
		byKey[row.Key] = row
	}
	for _, c := range colls {
		row := byKey[c]
		if row != nil && !g.all() {
			a, err := g.accessOf(ctx, row)
			if err != nil {
				return err
			}
			if ok, err := g.canRead(ctx, a); err != nil {
				return err
			} else if !ok {
				row = nil
			}
		}
		switch {
		case row == nil:
			return Errorf(EINVALID, "memberOf: no resource has the id %s.", r.ids.Encode(c))
		case row.Deleted != nil:
			return Errorf(EINVALID, "memberOf: the collection %s was deleted.", r.ids.Encode(c))
		case row.Kind != KindCollection:
			return Errorf(EINVALID, "memberOf: %s is a %s, not a collection.", r.ids.Encode(c), row.Kind)
		}
	}
	return nil
}
