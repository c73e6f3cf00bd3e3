package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// A create reads top to bottom: newCreation decodes every id the request
// names to a key, once, and validates the request in memory; the op's
// check reads the rows those keys name, once each, and asks the policy
// whether the caller may put the new resource there; its apply writes on
// keys alone; and the Resource answered is built once, from the request's
// own ids (the one id encoded is a minted key's).

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
		key, id := keys[i], ID("")
		if nr != nil && nr.ID != "" {
			k, err := r.refKey(nr.ID, "id")
			if err != nil {
				errs[i] = err
				continue
			}
			key, id = k, nr.ID
		}
		o, res, err := r.createOp(nr, id, key, 0)
		if err != nil {
			errs[i] = err
			continue
		}
		o.parallel = true // a new row under a key of its own
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
// it under key, plus the Resource it will be once committed. id is key's
// id when the caller has it ("" to encode key); position, when not 0, is
// the new child's place among its parent's ordered children.
func (r *Repository) createOp(nr *NewResource, id ID, key, position int64) (*op, *Resource, error) {
	c, err := r.newCreation(nr, key, 0, position)
	if err != nil {
		return nil, nil, err
	}
	res := c.resource(id)
	return c.op(), res, nil
}

// creation is one new resource whose request is resolved: the row it
// inserts, on keys, and what its check read of the rows it names.
type creation struct {
	r      *Repository
	nr     *NewResource
	row    *ResourceRow // Seq, times and effective access are set by apply
	fields []Field
	// colls are the keys of the collections of memberOf, each once, in the
	// request's order; collIDs are their ids as the request gave them.
	colls   []int64
	collIDs []ID
	// parent and source are the rows the new one takes its effective
	// access from: read by check, or by apply when the op has no check
	// (the derivatives of a finished job).
	parent, source *ResourceRow
	// res is the answer, when one was asked for: apply stamps its
	// sequence number and times.
	res *Resource
}

// newCreation validates nr in memory and decodes the ids it names, each
// once: parent, when not 0, is the key of the parent known already (a
// derivative's file set); otherwise nr.Parent names it. The checks run in
// a fixed order, so a request with several faults always gets the same
// error.
func (r *Repository) newCreation(nr *NewResource, key, parent, position int64) (*creation, error) {
	if nr == nil || !nr.Kind.Valid() {
		return nil, Errorf(EINVALID, "kind must be one of collection, work, fileset, file.")
	}
	vis, err := ParseVisibility(string(nr.Visibility))
	if err != nil {
		return nil, err
	}
	if err := r.checkAccessDates(nr.Embargo, nr.Lease); err != nil {
		return nil, err
	}
	if nr.Parent != "" {
		if parent, err = r.refKey(nr.Parent, "parent"); err != nil {
			return nil, err
		}
	}
	switch {
	case nr.Kind == KindCollection && parent != 0:
		return nil, Errorf(EINVALID, "A collection cannot have a parent; use memberOf to nest collections.")
	case nr.Kind == KindFileSet && parent == 0:
		return nil, Errorf(EINVALID, "A file set needs a parent work.")
	case nr.Kind == KindFile && parent == 0:
		return nil, Errorf(EINVALID, "A file needs a parent file set.")
	case nr.Kind == KindFile && nr.File == nil:
		return nil, Errorf(EINVALID, "A file needs its bytes or an external URL.")
	case nr.Kind != KindFile && nr.File != nil:
		return nil, Errorf(EINVALID, "Only resources of kind file carry bytes.")
	case len(nr.MemberOf) > 0 && nr.Kind != KindWork && nr.Kind != KindCollection:
		return nil, Errorf(EINVALID, "Only works and collections can be members of collections.")
	}
	c := &creation{r: r, nr: nr}
	if len(nr.MemberOf) > 0 {
		c.colls = make([]int64, 0, len(nr.MemberOf))
		c.collIDs = make([]ID, 0, len(nr.MemberOf))
		seen := make(map[int64]bool, len(nr.MemberOf))
		for _, id := range nr.MemberOf {
			k, err := r.refKey(id, "memberOf")
			if err != nil {
				return nil, err
			}
			if !seen[k] {
				seen[k] = true
				c.colls = append(c.colls, k)
				c.collIDs = append(c.collIDs, id)
			}
		}
	}
	if err := validateStatements("metadata", nr.Metadata); err != nil {
		return nil, err
	}
	if err := validateFile(nr.File); err != nil {
		return nil, err
	}
	c.fields = FieldsOf(nr.Metadata)
	c.row = &ResourceRow{Key: key, Kind: nr.Kind, Visibility: vis, Embargo: nr.Embargo, Lease: nr.Lease, Parent: parent, Version: 1, Source: nr.source}
	if parent != 0 {
		c.row.Position = UnorderedBase + key
		if position > 0 {
			c.row.Position = position
		}
	}
	return c, nil
}

// resource is the Resource the creation will be once committed, named by
// the request's own ids: id is the new row's, when known; only a minted
// key is encoded.
func (c *creation) resource(id ID) *Resource {
	row, nr := c.row, c.nr
	if id == "" {
		id = c.r.ids.Encode(row.Key)
	}
	c.res = &Resource{ID: id, Kind: row.Kind, Visibility: row.Visibility, Embargo: row.Embargo, Lease: row.Lease, Parent: nr.Parent,
		MemberOf: c.collIDs, Metadata: StatementsOf(c.fields), File: nr.File, Version: 1}
	if row.Parent != 0 && row.Position < UnorderedBase {
		c.res.Position = int(row.Position)
	}
	return c.res
}

// op is the write operation of the creation.
func (c *creation) op() *op {
	o := &op{}
	o.check = func(tx WriteTx) error { return c.check(o, tx) }
	o.apply = func(tx WriteTx, seq int64, now time.Time) error { return c.apply(o, tx, seq, now) }
	return o
}

// check reads the rows the request names, once each, and asks the policy
// whether the caller on o may create the resource where the request puts
// it: under a parent it may change, made of bytes it may name, in
// collections it may deposit in (or, in none, with the repository-wide
// role).
func (c *creation) check(o *op, tx WriteTx) error {
	ctx := context.Background()
	g := c.r.guard(tx, CallerFrom(o.ctx))
	c.parent, c.source = nil, nil
	if err := c.readParent(ctx, g, o.group[c.row.Parent]); err != nil {
		return err
	}
	if err := c.readSource(ctx, tx); err != nil {
		return err
	}
	// the bytes a file names, once the caller may create it at all
	o.uploads = nil
	if own, err := g.mayName(ctx, c.nr.File); err != nil {
		return err
	} else if own {
		o.uploads = []string{c.nr.File.SHA256}
	}
	colls, err := c.readCollections(ctx, g)
	if err != nil {
		return err
	}
	if c.row.Parent == 0 || len(c.colls) > 0 {
		want := RoleDepositor
		if c.row.Kind == KindCollection {
			want = RoleCurator
		}
		if err := g.mayDeposit(ctx, colls, "memberOf", want); err != nil {
			return err
		}
	}
	if c.row.Kind != KindCollection {
		return nil
	}
	return c.r.checkNestingUnder(ctx, tx, c.colls)
}

// readParent reads the parent, which must be live, readable and of a kind
// that may hold the new resource, and which the caller must be allowed to
// change. A parent the same group creates (inGroup) was authorised with
// the group's root; only its kind is checked.
func (c *creation) readParent(ctx context.Context, g *guard, inGroup bool) error {
	key := c.row.Parent
	if key == 0 {
		return nil
	}
	var p *ResourceRow
	var pa *access // nil for a parent of the same group
	var err error
	if inGroup {
		p, err = c.r.live(ctx, g.tx, key)
	} else if pa, err = g.readable(ctx, key); err == nil {
		p = pa.row
	}
	if err != nil {
		return asInvalid(err, "parent")
	}
	if !allowedParent(c.row.Kind, p.Kind) {
		return Errorf(EINVALID, "A %s cannot be a child of the %s %s.", c.row.Kind, p.Kind, c.parentID())
	}
	if pa != nil {
		if err := g.mayChange(ctx, pa, "add to"); err != nil {
			return err
		}
	}
	c.parent = p
	return nil
}

// parentID names the parent in a message: as the request did, or by its
// key's id for a derivative.
func (c *creation) parentID() ID {
	if c.nr.Parent != "" {
		return c.nr.Parent
	}
	return c.r.ids.Encode(c.row.Parent)
}

// readSource reads the file a derivative is made from, which must be a
// live file of the derivative's own file set.
func (c *creation) readSource(ctx context.Context, tx ReadTx) error {
	if c.row.Source == 0 {
		return nil
	}
	s, err := c.r.live(ctx, tx, c.row.Source)
	if err != nil {
		return err
	}
	if s.Kind != KindFile || s.Parent != c.row.Parent {
		return Errorf(EINVALID, "A derivative is made from a file of its own file set, not from %s.", c.r.ids.Encode(c.row.Source))
	}
	c.source = s
	return nil
}

// readCollections reads the collections of memberOf in one statement and
// returns what the policy knows of each (nothing for a caller who deposits
// everywhere); every one must be a live collection. One the caller may not see is reported as missing, so that
// its kind, or its deletion, is not told to someone who may not know it
// exists.
func (c *creation) readCollections(ctx context.Context, g *guard) ([]*access, error) {
	if len(c.colls) == 0 {
		return nil, nil
	}
	rows, err := g.tx.Resources(ctx, c.colls)
	if err != nil {
		return nil, err
	}
	byKey := make(map[int64]*ResourceRow, len(rows))
	for _, row := range rows {
		byKey[row.Key] = row
	}
	var out []*access // nil when the policy needs none: see mayDeposit
	if !g.depositsEverywhere() {
		out = make([]*access, 0, len(c.colls))
	}
	for i, k := range c.colls {
		row, id := byKey[k], c.collIDs[i]
		var a *access
		if row != nil && !g.all() {
			if a, err = g.accessOf(ctx, row); err != nil {
				return nil, err
			}
			if ok, err := g.canRead(ctx, a); err != nil {
				return nil, err
			} else if !ok {
				row = nil
			}
		}
		switch {
		case row == nil:
			return nil, Errorf(EINVALID, "memberOf: no resource has the id %s.", id)
		case row.Deleted != nil:
			return nil, Errorf(EINVALID, "memberOf: the collection %s was deleted.", id)
		case row.Kind != KindCollection:
			return nil, Errorf(EINVALID, "memberOf: %s is a %s, not a collection.", id, row.Kind)
		}
		if out == nil {
			continue
		}
		if a == nil {
			// a collection has no parent: its access reads nothing
			if a, err = g.accessOf(ctx, row); err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// apply inserts the row, its fields, memberships and file, on keys, with
// its effective access (from the parent and source check read), its
// depositor and its audit entry; a file's first job is enqueued with it.
func (c *creation) apply(o *op, tx WriteTx, seq int64, now time.Time) error {
	ctx := context.Background()
	row, key := c.row, c.row.Key
	row.Seq, row.Created, row.Modified = seq, now, now
	if err := c.r.readAccessSources(ctx, tx, row, &c.parent, &c.source); err != nil {
		return err
	}
	row.Effective = effectiveOf(row, c.parent, c.source)
	if c.res != nil {
		c.res.Seq, c.res.Created, c.res.Modified = seq, now, now
	}
	if err := tx.InsertResources(ctx, []*ResourceRow{row}); err != nil {
		return err
	}
	if err := depositedBy(ctx, tx, o, row); err != nil {
		return err
	}
	o.audit = append(o.audit, auditEntry(o.ctx, "create", key, nil))
	if len(c.fields) > 0 {
		keys := make([]int64, len(c.fields))
		for i := range keys {
			keys[i] = key
		}
		if err := tx.PutFields(ctx, keys, c.fields); err != nil {
			return err
		}
	}
	if len(c.colls) > 0 {
		ms := make([]Membership, len(c.colls))
		for i, coll := range c.colls {
			ms[i] = Membership{Collection: coll, Member: key}
		}
		if err := tx.InsertMemberships(ctx, ms); err != nil {
			return err
		}
	}
	if f := c.nr.File; f != nil {
		if err := tx.InsertFiles(ctx, []int64{key}, []*File{f}); err != nil {
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
		if f.Processed() {
			return tx.EnqueueJobs(ctx, []NewJob{{Queue: QueueCharacterize, Resource: key}}, now)
		}
	}
	return nil
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
