package shelfmark

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"time"
)

// The access policy (rule R14). One set of functions decides what a caller
// may see and do with a resource; every path of the engine asks them, and
// the adapters (REST, OAI-PMH, search) never decide on their own.
//
//   - Visibility is inherited down the parent chain: a file is as hidden
//     as its file set, which is as hidden as its work. The effective
//     visibility of a resource is the most restrictive along the chain.
//   - An embargo keeps a resource private until its date, then its stated
//     visibility applies; a lease keeps it at its stated visibility (public)
//     until its date, then it is private. A job writes the change when the
//     date passes (so that OAI-PMH and search learn of it), but every read
//     already honours the dates.
//   - Roles are granted on collections (or the whole repository) and are
//     inherited by the collections' members, and by the members of
//     collections nested in them. A work in several collections takes the
//     strongest role of any.
//   - Administrators (and the system) hold every role everywhere; a token's
//     scope still caps what a request may do.
//   - What a caller may not read answers ENOTFOUND, exactly as a resource
//     that does not exist; a readable resource the caller may not change
//     answers EFORBIDDEN (EUNAUTHORIZED for anonymous callers).

// visRank orders visibilities from the most open to the most restrictive.
func visRank(v Visibility) int {
	switch v {
	case Public:
		return 0
	case Authenticated:
		return 1
	}
	return 2
}

// VisibilityAt is the row's own visibility at time now, its embargo and
// lease applied (an unknown visibility counts as private); see EffectiveAt
// for who may see it.
func (row *ResourceRow) VisibilityAt(now time.Time) Visibility { return row.Own().At(now) }

// VisibilityAt is who may see res at time now, by the rule the policy
// reads rows with (Access.At): its Visibility, for a resource held by
// another already as hidden as what holds it, made private by its own
// embargo until the embargo's date and by its own lease from the lease's
// date (an unknown visibility counts as private). Adapters that show a
// resource's access ask it rather than compare the dates themselves; it
// reads nothing.
func (res *Resource) VisibilityAt(now time.Time) Visibility {
	return Access{Visibility: res.Visibility, Embargo: res.Embargo, Lease: res.Lease}.At(now)
}

// maxChain bounds the walk up a resource's parents (works nest in works).
const maxChain = 64

// MaxChain is how many parents the access policy walks up from a
// resource (works nest in works); a search walks the same (SearchReader).
const MaxChain = maxChain

// guard answers the policy's questions for one caller inside one
// transaction, reading what it needs once.
type guard struct {
	r      *Repository
	tx     ReadTx
	c      *Caller
	now    time.Time
	grants []Grant // the caller's grants, loaded on first need
	loaded bool
	// owners holds the depositors of root works read ahead for a batch
	// (preloadOwners), by root key (0: none); owns reads a root not in it
	owners map[int64]int64
}

// guard returns the policy's view for caller c within tx.
func (r *Repository) guard(tx ReadTx, c *Caller) *guard {
	return &guard{r: r, tx: tx, c: c, now: r.now()}
}

// all reports whether the caller sees everything (administrators and the
// system read all, whatever their token's scope).
func (g *guard) all() bool { return g.c.System || g.c.Admin }

// access is what the policy knows of one resource.
type access struct {
	row   *ResourceRow
	chain []*ResourceRow // row, its parent, …, the root (a work or collection)
	vis   Visibility     // the row's effective visibility now (effective.go)
	// role is the strongest role of roleBy's caller on the resource, kept
	// once role has worked it out, so that deciding twice reads nothing
	// twice
	role   Role
	roleBy *guard
}

func (a *access) root() *ResourceRow { return a.chain[len(a.chain)-1] }

// showIn reports in res (the resource of a) who may see it now, when that
// comes from what holds it or what it was made from: a file set or file
// is shown as hidden as its work, a derivative as its source. A resource
// on its own keeps its stated visibility (with its embargo or lease
// beside it, for its editors to read).
func (a *access) showIn(res *Resource) {
	if (len(a.chain) > 1 || a.row.Source != 0) && visRank(a.vis) > visRank(res.Visibility) {
		res.Visibility = a.vis
	}
}

// accessOf walks up row's parents, whose roles and depositor reach it;
// who may see it is its stored effective access.
func (g *guard) accessOf(ctx context.Context, row *ResourceRow) (*access, error) {
	if row.Parent == 0 {
		return chainAccess(g.now, []*ResourceRow{row}), nil
	}
	up, err := g.tx.ResourceChain(ctx, row.Parent, maxChain-1)
	if err != nil {
		return nil, err
	}
	return chainAccess(g.now, append([]*ResourceRow{row}, up...)), nil
}

// chainAccess is the access of chain[0], whose parents are the rest of
// chain, nearest first (ReadTx.ResourceChain).
func chainAccess(now time.Time, chain []*ResourceRow) *access {
	return &access{row: chain[0], chain: chain, vis: chain[0].EffectiveAt(now)}
}

// childAccess is the access of a child of parent (whose access is known)
// without reading the parent chain again.
func (g *guard) childAccess(parent *access, row *ResourceRow) *access {
	return &access{row: row, chain: append([]*ResourceRow{row}, parent.chain...), vis: row.EffectiveAt(g.now)}
}

// myGrants loads the caller's grants once.
func (g *guard) myGrants(ctx context.Context) ([]Grant, error) {
	if g.loaded {
		return g.grants, nil
	}
	ps := g.c.Principals()
	if len(ps) > 0 {
		gs, err := g.tx.GrantsTo(ctx, ps)
		if err != nil {
			return nil, fmt.Errorf("grants of %s: %w", g.c.Actor(), err)
		}
		// a grant on a work that a request for access gave ends
		g.grants = slices.DeleteFunc(gs, func(gr Grant) bool { return !gr.ActiveAt(g.now) })
	}
	g.loaded = true
	return g.grants, nil
}

// governing returns the resources whose grants apply to a: the works and
// collections of its chain (a work's grant is the viewer role a decision on
// a request for access gives), the collections they belong to, and every
// collection above them, up to MaxCollectionNesting levels.
func (g *guard) governing(ctx context.Context, a *access) (map[int64]bool, error) {
	out := map[int64]bool{}
	var frontier []int64
	for _, row := range a.chain {
		if (row.Kind == KindCollection || row.Kind == KindWork) && !out[row.Key] {
			out[row.Key] = true
			frontier = append(frontier, row.Key)
		}
	}
	for depth := 0; len(frontier) > 0 && depth <= MaxCollectionNesting+1; depth++ {
		up, err := g.tx.MemberOfMany(ctx, frontier)
		if err != nil {
			return nil, fmt.Errorf("collections above %s: %w", g.r.ids.Encode(a.row.Key), err)
		}
		frontier = frontier[:0]
		for _, cs := range up {
			for _, c := range cs {
				if !out[c] {
					out[c] = true
					frontier = append(frontier, c)
				}
			}
		}
	}
	return out, nil
}

// role is the caller's strongest role on a ("" for none), worked out once
// per access.
func (g *guard) role(ctx context.Context, a *access) (Role, error) {
	if g.all() {
		return RoleManager, nil
	}
	if a.roleBy == g {
		return a.role, nil
	}
	gs, err := g.myGrants(ctx)
	if err != nil {
		return "", err
	}
	if len(gs) == 0 {
		a.role, a.roleBy = "", g
		return "", nil
	}
	var best Role
	var colls map[int64]bool
	for _, gr := range gs {
		if gr.Resource != 0 {
			if colls == nil {
				if colls, err = g.governing(ctx, a); err != nil {
					return "", err
				}
			}
			if !colls[gr.Resource] {
				continue
			}
		}
		if gr.Role.rank() > best.rank() {
			best = gr.Role
		}
	}
	a.role, a.roleBy = best, g
	return best, nil
}

// repositoryRole is the caller's strongest role on the whole repository.
func (g *guard) repositoryRole(ctx context.Context) (Role, error) {
	if g.all() {
		return RoleManager, nil
	}
	gs, err := g.myGrants(ctx)
	if err != nil {
		return "", err
	}
	var best Role
	for _, gr := range gs {
		if gr.Resource == 0 && gr.Role.rank() > best.rank() {
			best = gr.Role
		}
	}
	return best, nil
}

// owns reports whether the caller deposited a's root work.
func (g *guard) owns(ctx context.Context, a *access) (bool, error) {
	if g.c.User == 0 {
		return false, nil
	}
	root := a.root()
	if u, ok := g.owners[root.Key]; ok {
		return u == g.c.User, nil
	}
	owners, err := g.tx.Owners(ctx, []int64{root.Key})
	if err != nil {
		return false, fmt.Errorf("depositor of %s: %w", g.r.ids.Encode(root.Key), err)
	}
	return owners[root.Key] == g.c.User, nil
}

// preloadOwners reads the depositors of the root works keys in one
// statement, for owns to answer a batch of them without a statement each.
// It is for one decision over rows read together: a depositor stored after
// it is not seen.
func (g *guard) preloadOwners(ctx context.Context, keys []int64) error {
	if g.c.User == 0 || len(keys) == 0 {
		return nil
	}
	owners, err := g.tx.Owners(ctx, keys)
	if err != nil {
		return fmt.Errorf("depositors: %w", err)
	}
	if g.owners == nil {
		g.owners = make(map[int64]int64, len(keys))
	}
	for _, k := range keys {
		g.owners[k] = owners[k]
	}
	return nil
}

// canRead decides whether the caller may see a.
func (g *guard) canRead(ctx context.Context, a *access) (bool, error) {
	switch {
	case g.all() || a.vis == Public:
		return true, nil
	case a.vis == Authenticated && g.c.Authenticated():
		return true, nil
	case g.c.User == 0:
		return false, nil
	}
	role, err := g.role(ctx, a)
	if err != nil || role.Includes(RoleViewer) {
		return err == nil, err
	}
	return g.owns(ctx, a)
}

// canReadRow decides whether the caller may read row (everything to
// those who see all, without a look-up; otherwise as canRead).
func (g *guard) canReadRow(ctx context.Context, row *ResourceRow) (bool, error) {
	if g.all() {
		return true, nil
	}
	a, err := g.accessOf(ctx, row)
	if err != nil {
		return false, err
	}
	return g.canRead(ctx, a)
}

// readableKey reports whether the caller may read the live resource key.
func (g *guard) readableKey(ctx context.Context, key int64) (bool, error) {
	if g.all() {
		return true, nil
	}
	switch _, err := g.readable(ctx, key); ErrorCode(err) {
	case "":
		return true, nil
	case ENOTFOUND, EGONE:
		return false, nil
	default:
		return false, err
	}
}

// hideUnseen leaves out of res (the resource of row) the relations that
// name what the caller may not read: its parent (a resource readable
// through a role may sit under one that is not) and the collections it
// is a member of (res.MemberOf, whose keys are keys). A relation to what
// the caller may not read is answered as if absent. up is row's parents,
// nearest first, when the caller has read them (its access's chain after
// row), else nil; the rows named that it does not hold are read in one
// statement.
func (g *guard) hideUnseen(ctx context.Context, res *Resource, row *ResourceRow, up []*ResourceRow, keys []int64) error {
	if g.all() || (row.Parent == 0 && len(keys) == 0) {
		return nil
	}
	seen := make(map[int64]bool, len(keys)+1)
	named := keys
	if row.Parent != 0 {
		if len(up) > 0 && up[0].Key == row.Parent {
			if p := up[0]; p.Deleted == nil {
				ok, err := g.canRead(ctx, chainAccess(g.now, up))
				if err != nil {
					return err
				}
				seen[p.Key] = ok
			}
		} else {
			named = append(slices.Clone(keys), row.Parent)
		}
	}
	var rows []*ResourceRow
	if len(named) > 0 {
		var err error
		if rows, err = g.tx.Resources(ctx, named); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.Deleted != nil {
			continue
		}
		a, err := g.accessOf(ctx, r)
		if err != nil {
			return err
		}
		if seen[r.Key], err = g.canRead(ctx, a); err != nil {
			return err
		}
	}
	if row.Parent != 0 && !seen[row.Parent] {
		res.Parent, res.Position = "", 0
	}
	if len(keys) > 0 {
		shown := res.MemberOf[:0]
		for i, k := range keys {
			if seen[k] {
				shown = append(shown, res.MemberOf[i])
			}
		}
		res.MemberOf = shown
	}
	return nil
}

// notFound is the answer for what the caller may not see: the same as for
// a resource that does not exist.
func (g *guard) notFound(key int64) error { return g.r.liveRow(key, nil) }

// readable loads a live resource the caller may read; ENOTFOUND when there
// is none or the caller may not see it, EGONE for a tombstone the caller
// could have seen.
func (g *guard) readable(ctx context.Context, key int64) (*access, error) {
	chain, err := g.tx.ResourceChain(ctx, key, maxChain)
	if err != nil {
		return nil, err
	}
	return g.readableChain(ctx, key, chain)
}

// readableChain is readable for the chain of key already read
// (ReadTx.ResourceChain, maxChain rows at most).
func (g *guard) readableChain(ctx context.Context, key int64, chain []*ResourceRow) (*access, error) {
	if len(chain) == 0 || chain[0].Key != key {
		return nil, g.notFound(key)
	}
	a, err := g.mayRead(ctx, key, chainAccess(g.now, chain))
	if err != nil {
		return nil, err
	}
	if err := g.r.liveRow(key, a.row); err != nil {
		return nil, err
	}
	return a, nil
}

// readableRow is readable for a row already read (nil: no row has key).
func (g *guard) readableRow(ctx context.Context, key int64, row *ResourceRow) (*access, error) {
	a, err := g.readableEver(ctx, key, row)
	if err != nil {
		return nil, err
	}
	if err := g.r.liveRow(key, row); err != nil {
		return nil, err
	}
	return a, nil
}

// readableEver is readableRow that lets a tombstone through: what a
// resource's history and events need, which outlive its deletion for
// whoever may read it.
func (g *guard) readableEver(ctx context.Context, key int64, row *ResourceRow) (*access, error) {
	if row == nil {
		return nil, g.notFound(key)
	}
	a, err := g.accessOf(ctx, row)
	if err != nil {
		return nil, err
	}
	return g.mayRead(ctx, key, a)
}

// mayRead returns a when the caller may read it, else key's not found.
func (g *guard) mayRead(ctx context.Context, key int64, a *access) (*access, error) {
	ok, err := g.canRead(ctx, a)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, g.notFound(key)
	}
	return a, nil
}

// refused is the answer for a change the caller may not make to a
// resource it can see.
func (g *guard) refused(what string, key int64) error {
	if !g.c.Authenticated() {
		return Errorf(EUNAUTHORIZED, "Sign in (send a token) to %s %s.", what, g.r.ids.Encode(key))
	}
	if !g.c.MayWrite() {
		return Errorf(EFORBIDDEN, "Your token's scope (%s) does not allow writes.", g.c.Scope)
	}
	return Errorf(EFORBIDDEN, "You may not %s %s.", what, g.r.ids.Encode(key))
}

// canEdit decides whether the caller may change a (its metadata, access
// fields, children and files): curators and managers of a governing
// collection, and depositors for the works they deposited.
func (g *guard) canEdit(ctx context.Context, a *access) (bool, error) {
	if !g.c.MayWrite() {
		return false, nil
	}
	if g.c.System || g.c.Admin {
		return true, nil
	}
	role, err := g.role(ctx, a)
	if err != nil {
		return false, err
	}
	switch {
	case role.Includes(RoleCurator):
		return true, nil
	case role.Includes(RoleDepositor):
		return g.owns(ctx, a)
	}
	return false, nil
}

// canDelete decides whether the caller may delete a: deleting a file set
// or file is an edit of its work; deleting a work or collection takes a
// curator.
func (g *guard) canDelete(ctx context.Context, a *access) (bool, error) {
	if len(a.chain) > 1 {
		return g.canEdit(ctx, a)
	}
	return g.canHoldRole(ctx, a, RoleCurator)
}

// deletable loads a live resource the caller may delete.
func (g *guard) deletable(ctx context.Context, key int64) (*access, error) {
	a, err := g.readable(ctx, key)
	if err != nil {
		return nil, err
	}
	if ok, err := g.canDelete(ctx, a); err != nil {
		return nil, err
	} else if !ok {
		return nil, g.refused("delete", key)
	}
	return a, nil
}

// editable loads a live resource the caller may change.
func (g *guard) editable(ctx context.Context, key int64, what string) (*access, error) {
	a, err := g.readable(ctx, key)
	if err != nil {
		return nil, err
	}
	if err := g.mayChange(ctx, a, what); err != nil {
		return nil, err
	}
	return a, nil
}

// mayChange is nil when the caller may change a (see canEdit), and
// otherwise the refusal, naming the change what ("add to", "change").
func (g *guard) mayChange(ctx context.Context, a *access, what string) error {
	ok, err := g.canEdit(ctx, a)
	if err != nil {
		return err
	} else if !ok {
		return g.refused(what, a.row.Key)
	}
	return nil
}

// canManage decides whether the caller may read (and, with write, set) the
// roles granted on a and its audit trail: it takes the manager role on a,
// and a change takes a credential that allows writes.
func (g *guard) canManage(ctx context.Context, a *access, write bool) (bool, error) {
	role, err := g.role(ctx, a)
	if err != nil {
		return false, err
	}
	return role.Includes(RoleManager) && (!write || g.c.MayWrite()), nil
}

// canHoldRole reports whether the caller holds at least want on a.
func (g *guard) canHoldRole(ctx context.Context, a *access, want Role) (bool, error) {
	if !g.c.MayWrite() {
		return false, nil
	}
	role, err := g.role(ctx, a)
	return role.Includes(want), err
}

// depositsEverywhere reports whether the caller may create resources in
// any collection, or in none, without its roles being asked: the system,
// and administrators whose credential allows writes.
func (g *guard) depositsEverywhere() bool { return g.c.System || (g.c.Admin && g.c.MayWrite()) }

// mayDeposit decides whether the caller may add works (or, with want
// curator, collections) to the collections whose access is colls: live
// collections it may see, read once by its caller (who need not read them
// for a caller that deposits everywhere). In no collection, the caller's
// role on the whole repository decides. field names the request's field
// in a refusal.
func (g *guard) mayDeposit(ctx context.Context, colls []*access, field string, want Role) error {
	if g.depositsEverywhere() {
		return nil
	}
	if len(colls) == 0 {
		// a resource in no collection: the repository-wide role decides
		role, err := g.repositoryRole(ctx)
		if err != nil {
			return err
		}
		if !g.c.MayWrite() || !role.Includes(want) {
			if !g.c.Authenticated() {
				return Errorf(EUNAUTHORIZED, "Sign in (send a token) to create resources.")
			}
			return Errorf(EFORBIDDEN, "Creating a resource outside any collection takes the %s role on the repository.", want)
		}
		return nil
	}
	for _, a := range colls {
		ok, err := g.canHoldRole(ctx, a, want)
		if err != nil {
			return err
		}
		if !ok {
			c := a.row.Key
			if !g.c.Authenticated() {
				return Errorf(EUNAUTHORIZED, "Sign in (send a token) to add to the collection %s.", g.r.ids.Encode(c))
			}
			return Errorf(EFORBIDDEN, "%s: adding to the collection %s takes the %s role on it.", field, g.r.ids.Encode(c), want)
		}
	}
	return nil
}

// DefaultMaxListScan bounds the rows one listing page reads past rows the
// caller may not see; a page that reaches it ends early, with a cursor to
// go on (RepositoryOptions.MaxListScan).
const DefaultMaxListScan = 10 * MaxPageSize

// memberFilter returns the test for the members of the collection whose
// access is ca: a role on the collection reaches its members, and a member
// is otherwise seen as its own access allows.
func (g *guard) memberFilter(ctx context.Context, ca *access) (func(row *ResourceRow) (bool, error), error) {
	if g.all() {
		return func(*ResourceRow) (bool, error) { return true, nil }, nil
	}
	role, err := g.role(ctx, ca)
	if err != nil {
		return nil, err
	}
	return func(row *ResourceRow) (bool, error) {
		if role.Includes(RoleViewer) {
			return true, nil
		}
		a, err := g.accessOf(ctx, row)
		if err != nil {
			return false, err
		}
		return g.canRead(ctx, a)
	}, nil
}

// childFilter returns the test for the children of the resource whose
// access is pa: a child is as hidden as its parent or more, and the
// parent's roles and depositor reach it.
func (g *guard) childFilter(ctx context.Context, pa *access) (func(row *ResourceRow) (bool, error), error) {
	if g.all() {
		return func(*ResourceRow) (bool, error) { return true, nil }, nil
	}
	var (
		decided, staff bool
	)
	return func(row *ResourceRow) (bool, error) {
		// the child's own effective visibility decides, or else the
		// caller's standing on the parent (its access, pa): no access of
		// the child is built, since a page of a book asks this of each of
		// thousands of rows
		vis := row.EffectiveAt(g.now)
		switch {
		case vis == Public:
			return true, nil
		case vis == Authenticated && g.c.Authenticated():
			return true, nil
		case g.c.User == 0:
			return false, nil
		}
		if !decided {
			role, err := g.role(ctx, pa)
			if err != nil {
				return false, err
			}
			staff = role.Includes(RoleViewer)
			if !staff {
				if staff, err = g.owns(ctx, pa); err != nil {
					return false, err
				}
			}
			decided = true
		}
		return staff, nil
	}, nil
}

// visiblePage reads a page of a listing through fetch (rows after a
// position, in order), keeping the rows keep accepts. It stops at limit+1
// kept rows, at the end of the list, or after maxScan rows; pos gives
// a row's position for the next fetch. more reports whether the list goes
// on past the returned rows, and last is the position to go on from.
func visiblePage(limit, maxScan int, fetch func(after int64, n int) ([]*ResourceRow, error), pos func(*ResourceRow) int64,
	keep func(*ResourceRow) (bool, error), after int64) (rows []*ResourceRow, more bool, last int64, err error) {
	last = after
	for scanned := 0; scanned < maxScan; {
		batch, err := fetch(last, limit+1)
		if err != nil {
			return nil, false, 0, err
		}
		for _, row := range batch {
			scanned++
			ok, err := keep(row)
			if err != nil {
				return nil, false, 0, err
			}
			if ok {
				if len(rows) == limit {
					// the next page starts after the last row shown, so
					// the cursor never names a row the caller may not see
					return rows, true, pos(rows[len(rows)-1]), nil
				}
				rows = append(rows, row)
			}
			last = pos(row)
		}
		if len(batch) < limit+1 {
			return rows, false, last, nil
		}
	}
	return rows, true, last, nil
}

// memberRights checks that the caller may change the members of the
// collection whose access is ca: adding takes the depositor role on the
// collection and the right to edit each member (so nobody files what they
// cannot change, or cannot see, into a collection); removing takes the
// curator role on the collection, or the right to edit the member. rows
// holds the members' rows, read by the caller in one statement (nil for a
// key no row has).
func (g *guard) memberRights(ctx context.Context, ca *access, keys []int64, rows map[int64]*ResourceRow, add bool) error {
	if g.c.System || (g.c.Admin && g.c.MayWrite()) {
		return nil
	}
	want := RoleCurator
	if add {
		want = RoleDepositor
	}
	onColl, err := g.canHoldRole(ctx, ca, want)
	if err != nil {
		return err
	}
	if add && !onColl {
		return g.refused("add members to", ca.row.Key)
	}
	if add || !onColl {
		// the members are works and collections: most are their own root
		if err := g.preloadOwners(ctx, keys); err != nil {
			return err
		}
	}
	for _, k := range keys {
		a, err := g.readableRow(ctx, k, rows[k])
		if err != nil {
			return asInvalid(err, "members")
		}
		if !add && onColl {
			continue
		}
		ok, err := g.canEdit(ctx, a)
		if err != nil {
			return err
		}
		if !ok {
			return g.refused("file or unfile", k)
		}
	}
	return nil
}

// RequireWrite refuses (EUNAUTHORIZED or EFORBIDDEN) a caller on ctx
// whose credentials allow no writes at all; what names the action in the
// message. Adapters call it before accepting bytes that only a write will
// use.
func RequireWrite(ctx context.Context, what string) error { return mayWrite(CallerFrom(ctx), what) }

// mayWrite refuses callers whose credentials allow no writes at all.
func mayWrite(c *Caller, what string) error {
	switch {
	case c.MayWrite():
		return nil
	case !c.Authenticated():
		return Errorf(EUNAUTHORIZED, "Sign in (send a token) to %s.", what)
	}
	return Errorf(EFORBIDDEN, "Your token's scope (%s) does not allow you to %s.", c.Scope, what)
}

// CheckEdit answers nil when the caller on ctx may change the resource id
// (its metadata, children and files), and otherwise the error a change
// would get: ENOTFOUND when the caller may not see it, EUNAUTHORIZED or
// EFORBIDDEN when it may see but not change it. Adapters ask before they
// accept bytes for a resource.
func (r *Repository) CheckEdit(ctx context.Context, id ID) error {
	key, err := r.ids.Key(id)
	if err != nil {
		return err
	}
	return r.store.View(ctx, func(tx ReadTx) error {
		_, err := r.guard(tx, CallerFrom(ctx)).editable(ctx, key, "change")
		return err
	})
}

// CheckDelete answers nil when the caller may delete the resource (a work
// or collection takes a curator; a file set or file is an edit of its
// work), and otherwise the error a delete would get (404, 401 or 403).
func (r *Repository) CheckDelete(ctx context.Context, id ID) error {
	key, err := r.ids.Key(id)
	if err != nil {
		return err
	}
	return r.store.View(ctx, func(tx ReadTx) error {
		_, err := r.guard(tx, CallerFrom(ctx)).deletable(ctx, key)
		return err
	})
}

// requireAdmin refuses callers without administrative rights in this
// request (an administrator's admin-scoped credential, or the system).
func requireAdmin(ctx context.Context, what string) error {
	c := CallerFrom(ctx)
	switch {
	case c.IsAdmin():
		return nil
	case !c.Authenticated():
		return Errorf(EUNAUTHORIZED, "Sign in as an administrator to %s.", what)
	}
	return Errorf(EFORBIDDEN, "Only administrators (with an admin-scoped token) may %s.", what)
}

// checkAccessDates refuses an embargo or lease whose date has passed (it
// would mean nothing, and is most likely a mistyped year), and a resource
// given both (an embargo ends in a visibility, a lease in private: say
// which one is meant).
func (r *Repository) checkAccessDates(embargo, lease *time.Time) error {
	now := r.now()
	switch {
	case embargo != nil && lease != nil:
		return Errorf(EINVALID, "A resource has an embargo or a lease, not both.")
	case embargo != nil && !embargo.After(now):
		return &Error{Code: EINVALID, Message: fmt.Sprintf("embargo: %s has passed; give a date in the future, or none.", embargo.UTC().Format(time.RFC3339)),
			Details: map[string]any{"field": "embargo"}}
	case lease != nil && !lease.After(now):
		return &Error{Code: EINVALID, Message: fmt.Sprintf("lease: %s has passed; give a date in the future, or none.", lease.UTC().Format(time.RFC3339)),
			Details: map[string]any{"field": "lease"}}
	}
	return nil
}

// hiddenCursorCodec returns a codec under a random secret of this
// process's own. A cursor made with it names a row the caller may not see
// without telling which; it is good on this server until it restarts (a
// cursor from another server is refused as unknown, and the client starts
// the listing again). Only a page that ends after MaxListScan hidden rows
// needs one.
func hiddenCursorCodec() *IDCodec {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic(fmt.Sprintf("shelfmark: no randomness for cursors: %v", err))
	}
	return NewIDCodec(secret)
}

// editableWorkAt reads the work key that c may change (as editable
// decides), at version ifMatch (0: any; EPRECONDITION otherwise): the
// check every change of a work's pages starts with. A resource of another
// kind is EINVALID, saying notWork ("only works have ordered children").
func (r *Repository) editableWorkAt(ctx context.Context, tx ReadTx, c *Caller, key int64, what, notWork string, ifMatch int64) (*ResourceRow, error) {
	a, err := r.guard(tx, c).editable(ctx, key, what)
	if err != nil {
		return nil, err
	}
	if a.row.Kind != KindWork {
		return nil, Errorf(EINVALID, "%s is a %s; %s.", r.ids.Encode(key), a.row.Kind, notWork)
	}
	if err := r.checkVersion(a.row, ifMatch); err != nil {
		return nil, err
	}
	return a.row, nil
}
