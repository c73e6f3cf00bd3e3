package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Requests for access. A work may show its record to readers who may not
// read its files (SetFilesAccess): a signed-in reader of the record then
// asks for the files with a message (RequestAccess). Those who manage the
// work (administrators, and the managers of a collection that governs it)
// see the requests waiting (AccessRequests) and decide each one
// (DecideAccessRequest): granting gives the reader the viewer role on that
// work alone until a date at most MaxAccessGrant ahead (a Grant with
// Expires, which the access policy ignores once it has passed, so that no
// write is needed when it ends); refusing records the reply. Managers may
// end a grant early (RevokeAccess). Every request, decision and
// revocation is in the audit trail.
//
// Grants on works are an account matter, as sessions are: the
// preservation copy keeps the roles on collections, not these.

// AccessRequestState is where a request for access stands.
type AccessRequestState string

// The states of a request for access.
const (
	// AccessRequestOpen: waiting for a decision.
	AccessRequestOpen AccessRequestState = "open"
	// AccessRequestGranted: the reader was given access until Until.
	AccessRequestGranted AccessRequestState = "granted"
	// AccessRequestRefused: the request was refused (Reply says why).
	AccessRequestRefused AccessRequestState = "refused"
)

// AccessRequest is one reader's request for the files of one work.
type AccessRequest struct {
	Key      int64
	Resource int64 // the work
	User     int64 // who asks
	// UserName is the name of User, filled by reads.
	UserName string
	Message  string
	Created  time.Time
	State    AccessRequestState
	// Decided, DecidedBy, Until and Reply are set by the decision: when,
	// by which user, the end of the access granted, and the words to the
	// reader.
	Decided   *time.Time
	DecidedBy int64
	Until     *time.Time
	Reply     string
}

// AccessRequestFilter selects requests for access in storage, newest
// first: those of a state, or those of one user (on one work, when
// Resource is set). Before, unless 0, continues below that key.
type AccessRequestFilter struct {
	State    AccessRequestState
	User     int64
	Resource int64
	Before   int64
	Limit    int
}

// AccessRequestTx reads requests for access within a transaction.
type AccessRequestTx interface {
	// AccessRequests returns up to f.Limit requests matching f, newest
	// first, with their users' names: one statement.
	AccessRequests(ctx context.Context, f AccessRequestFilter) ([]*AccessRequest, error)
	// AccessRequestByKey returns one request, or (nil, nil).
	AccessRequestByKey(ctx context.Context, key int64) (*AccessRequest, error)
}

// AccessRequestWriteTx writes requests for access within a write
// transaction.
type AccessRequestWriteTx interface {
	AccessRequestTx
	// InsertAccessRequest stores a new request and sets its Key.
	InsertAccessRequest(ctx context.Context, q *AccessRequest) error
	// DecideAccessRequest writes State, Decided, DecidedBy, Until and
	// Reply of q, and reports whether q was still open.
	DecideAccessRequest(ctx context.Context, q *AccessRequest) (bool, error)
}

const (
	// MaxAccessRequestMessage caps a request's message and a decision's
	// reply, in bytes.
	MaxAccessRequestMessage = 2000
	// MaxOpenAccessRequests caps the requests one reader may have waiting.
	MaxOpenAccessRequests = 20
	// MaxAccessGrant is the longest access a decision may grant.
	MaxAccessGrant = 366 * 24 * time.Hour
	// DefaultAccessGrant is the access a form offers to grant.
	DefaultAccessGrant = 30 * 24 * time.Hour
	// accessRequestScan bounds the requests AccessRequests reads to fill
	// one page of those the caller manages.
	accessRequestScan = 2000
)

// AccessRequestQuery asks for one page of requests for access.
type AccessRequestQuery struct {
	// Mine lists the caller's own requests; otherwise those the caller
	// may decide, in State (default open).
	Mine  bool
	State AccessRequestState
	// Work, with Mine, lists the caller's requests on one work.
	Work ID
	// Before continues below the key of the last request of a page.
	Before int64
	// Limit is the page size: 50 when 0 or less, at most 200.
	Limit int
}

// FilesRestricted reports whether the caller may read the record of work
// but not the files of its first page (what a reader's request for access
// would open), and, when so, that page's own access (the files' access as
// the forms show it: FilesAccess). Beside the policy's look-ups for the
// work, one statement finds the first page and one reads it.
func (r *Repository) FilesRestricted(ctx context.Context, work ID) (bool, Access, error) {
	key, err := r.ids.Key(work)
	if err != nil {
		return false, Access{}, err
	}
	var closed bool
	var files Access
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		a, err := g.readable(ctx, key)
		if err != nil {
			return err
		}
		page, err := g.firstPage(ctx, a)
		if err != nil || page == nil {
			return err
		}
		ok, err := g.canRead(ctx, g.childAccess(a, page))
		if err != nil || ok {
			return err
		}
		closed, files = true, page.Own()
		return nil
	})
	return closed, files, err
}

// firstPage reads the first page of the work of wa, nil for a work without
// pages, a resource that is not a work, or a caller who sees everything
// (to whom no file is closed).
func (g *guard) firstPage(ctx context.Context, wa *access) (*ResourceRow, error) {
	if wa.row.Kind != KindWork || g.all() {
		return nil, nil
	}
	first, err := g.tx.FirstChildren(ctx, []int64{wa.row.Key}, KindFileSet)
	if err != nil {
		return nil, fmt.Errorf("first page of %s: %w", g.r.ids.Encode(wa.row.Key), err)
	}
	fs, ok := first[wa.row.Key]
	if !ok {
		return nil, nil
	}
	rows, err := g.tx.Resources(ctx, []int64{fs})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return rows[0], nil
}

// filesHidden reports whether the first page of the work of wa (whose
// record the caller reads) is hidden from the caller; false for a work
// without pages or a resource that is not a work.
func (g *guard) filesHidden(ctx context.Context, wa *access) (bool, error) {
	page, err := g.firstPage(ctx, wa)
	if err != nil || page == nil {
		return false, err
	}
	ok, err := g.canRead(ctx, g.childAccess(wa, page))
	return !ok, err
}

// RequestAccess records the caller's request for the files of work, with
// a message (trimmed, at most MaxAccessRequestMessage bytes). The caller
// must be signed in and read the work's record but not its files
// (ECONFLICT when the files are readable already); a request of the
// caller's on the work still open is returned as it is, and a reader may
// have at most MaxOpenAccessRequests waiting. Audited as
// "access.request".
func (a *Accounts) RequestAccess(ctx context.Context, work ID, message string) (*AccessRequest, error) {
	c := CallerFrom(ctx)
	if c.User == 0 {
		return nil, refusal(c, true, "request access")
	}
	if !c.MayWrite() {
		return nil, refusal(c, true, "request access")
	}
	message = strings.TrimSpace(message)
	if len(message) > MaxAccessRequestMessage {
		return nil, Errorf(EINVALID, "message: at most %d bytes, not %d.", MaxAccessRequestMessage, len(message))
	}
	if err := validText("message", message); err != nil {
		return nil, err
	}
	key, err := a.repo.ids.Key(work)
	if err != nil {
		return nil, err
	}
	var out *AccessRequest
	err = a.update(ctx, func(tx WriteTx, at AccountWriteTx) error {
		g := a.repo.guard(tx, c)
		wa, err := g.readable(ctx, key)
		if err != nil {
			return err
		}
		if wa.row.Kind != KindWork {
			return Errorf(EINVALID, "%s is a %s; access is requested to the files of a work.", work, wa.row.Kind)
		}
		hidden, err := g.filesHidden(ctx, wa)
		if err != nil {
			return err
		}
		if !hidden {
			return Errorf(ECONFLICT, "You may read the files of %s already.", work)
		}
		mine, err := tx.AccessRequests(ctx, AccessRequestFilter{User: c.User, Resource: key, Limit: 1})
		if err != nil {
			return err
		}
		if len(mine) > 0 && mine[0].State == AccessRequestOpen {
			out = mine[0]
			return nil
		}
		open, err := tx.AccessRequests(ctx, AccessRequestFilter{User: c.User, Limit: accessRequestScan})
		if err != nil {
			return err
		}
		n := 0
		for _, q := range open {
			if q.State == AccessRequestOpen {
				n++
			}
		}
		if n >= MaxOpenAccessRequests {
			return Errorf(ECONFLICT, "You have %d requests for access waiting; wait for a decision on one of them first.", n)
		}
		out = &AccessRequest{Resource: key, User: c.User, UserName: c.Name, Message: message, Created: a.repo.now(), State: AccessRequestOpen}
		if err := tx.InsertAccessRequest(ctx, out); err != nil {
			return err
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "access.request", key, AuditOK, fmt.Sprintf("request %d", out.Key))})
	})
	if err != nil {
		a.deniedAfter(ctx, c, "access.request", key, err)
		return nil, fmt.Errorf("request access to %s: %w", work, err)
	}
	return out, nil
}

// AccessRequests returns one page of requests for access, newest first:
// with q.Mine the caller's own (on q.Work, when set); otherwise those in
// q.State (default open) on works the caller may decide for (manages),
// reading at most accessRequestScan requests to fill the page, so the
// cost is bounded whatever the number of requests (a page may then hold
// fewer than its limit, or none, with a next page still to read); next is
// the Before of the following page, 0 at the end.
func (a *Accounts) AccessRequests(ctx context.Context, q AccessRequestQuery) (out []*AccessRequest, next int64, err error) {
	c := CallerFrom(ctx)
	if c.User == 0 && !c.System {
		return nil, 0, refusal(c, false, "see requests for access")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	state := q.State
	if state == "" {
		state = AccessRequestOpen
	}
	if !slices.Contains([]AccessRequestState{AccessRequestOpen, AccessRequestGranted, AccessRequestRefused}, state) {
		return nil, 0, Errorf(EINVALID, "state: %q is not one of open, granted, refused.", clip(string(state), 40))
	}
	var work int64
	if q.Work != "" {
		if work, err = a.repo.ids.Key(q.Work); err != nil {
			return nil, 0, err
		}
	}
	err = a.view(ctx, func(tx ReadTx, _ AccountReadTx) error {
		out, next = nil, 0
		if q.Mine {
			rs, err := tx.AccessRequests(ctx, AccessRequestFilter{User: c.User, Resource: work, Before: q.Before, Limit: limit + 1})
			if err != nil {
				return err
			}
			if len(rs) > limit {
				rs, next = rs[:limit], rs[limit-1].Key
			}
			out = rs
			return nil
		}
		g := a.repo.guard(tx, c)
		before, scanned := q.Before, 0
		for scanned < accessRequestScan {
			n := min(200, accessRequestScan-scanned)
			rs, err := tx.AccessRequests(ctx, AccessRequestFilter{State: state, Before: before, Limit: n})
			if err != nil {
				return err
			}
			for _, r := range rs {
				before = r.Key
				ok, err := g.mayDecide(ctx, r.Resource)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				if len(out) == limit {
					next = out[limit-1].Key
					return nil
				}
				out = append(out, r)
			}
			scanned += len(rs)
			if len(rs) < n {
				return nil
			}
		}
		next = before // the scan's budget is spent: go on below what it read
		return nil
	})
	return out, next, err
}

// AccessRequest returns the request key to the reader who made it or to
// one who may decide it (manages its work): the request's row and, for
// another caller than its reader, what mayDecide reads of its work. To
// anyone else it is ENOTFOUND, as an unknown key is, so that its
// existence shows to no one who may not see it; signed out, it is
// EUNAUTHORIZED.
func (a *Accounts) AccessRequest(ctx context.Context, key int64) (*AccessRequest, error) {
	c := CallerFrom(ctx)
	if c.User == 0 && !c.System {
		return nil, refusal(c, false, "see a request for access")
	}
	var out *AccessRequest
	err := a.view(ctx, func(tx ReadTx, _ AccountReadTx) error {
		q, err := tx.AccessRequestByKey(ctx, key)
		if err != nil {
			return err
		}
		if q != nil && (q.User != c.User || c.User == 0) {
			if ok, err := a.repo.guard(tx, c).mayDecide(ctx, q.Resource); err != nil {
				return err
			} else if !ok {
				q = nil
			}
		}
		if q == nil {
			return Errorf(ENOTFOUND, "There is no request for access %d that you may see.", key)
		}
		out = q
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("request for access %d: %w", key, err)
	}
	return out, nil
}

// mayDecide reports whether the caller manages the live work key (reads
// it and holds the manager role on it, or sees everything).
func (g *guard) mayDecide(ctx context.Context, key int64) (bool, error) {
	if g.all() {
		return true, nil
	}
	wa, err := g.readable(ctx, key)
	switch ErrorCode(err) {
	case "":
	case ENOTFOUND, EGONE:
		return false, nil
	default:
		return false, err
	}
	return g.canManage(ctx, wa, false)
}

// AccessDecision is a decision on a request for access.
type AccessDecision struct {
	// Grant gives the reader access until Until (ahead, at most
	// MaxAccessGrant from now); otherwise the request is refused.
	Grant bool
	Until time.Time
	// Reply is shown to the reader (at most MaxAccessRequestMessage
	// bytes).
	Reply string
}

// DecideAccessRequest decides the open request key: the caller must manage
// its work (as for the roles of its collections, with a credential that
// allows writes). Granting replaces any grant the reader holds on the work
// with the viewer role until d.Until. A request decided already is
// ECONFLICT. Audited as "access.grant" or "access.refuse".
func (a *Accounts) DecideAccessRequest(ctx context.Context, key int64, d AccessDecision) (*AccessRequest, error) {
	c := CallerFrom(ctx)
	d.Reply = strings.TrimSpace(d.Reply)
	if len(d.Reply) > MaxAccessRequestMessage {
		return nil, Errorf(EINVALID, "reply: at most %d bytes, not %d.", MaxAccessRequestMessage, len(d.Reply))
	}
	if err := validText("reply", d.Reply); err != nil {
		return nil, err
	}
	now := a.repo.now()
	if d.Grant {
		if !d.Until.After(now) {
			return nil, Errorf(EINVALID, "until: access is granted until a time ahead, not %s.", d.Until.UTC().Format(time.RFC3339))
		}
		if d.Until.Sub(now) > MaxAccessGrant {
			return nil, Errorf(EINVALID, "until: access is granted for at most %d days.", int(MaxAccessGrant/(24*time.Hour)))
		}
	}
	var out *AccessRequest
	var work int64
	action := "access.refuse"
	if d.Grant {
		action = "access.grant"
	}
	err := a.update(ctx, func(tx WriteTx, at AccountWriteTx) error {
		q, err := tx.AccessRequestByKey(ctx, key)
		if err != nil {
			return err
		}
		if q == nil {
			return Errorf(ENOTFOUND, "There is no request for access %d.", key)
		}
		work = q.Resource
		g := a.repo.guard(tx, c)
		ok, err := g.mayDecide(ctx, q.Resource)
		if err != nil {
			return err
		}
		if !ok {
			if c.User == 0 || !c.MayWrite() {
				return refusal(c, true, "decide a request for access")
			}
			return Errorf(EFORBIDDEN, "Deciding a request for access to %s takes the manager role.", a.repo.ids.Encode(q.Resource))
		}
		if !c.MayWrite() {
			return refusal(c, true, "decide a request for access")
		}
		if q.State != AccessRequestOpen {
			return Errorf(ECONFLICT, "The request %d was %s already.", key, q.State)
		}
		q.Decided, q.DecidedBy, q.Reply = &now, c.User, d.Reply
		detail := UserPrincipal(q.UserName)
		if d.Grant {
			until := d.Until.UTC()
			q.State, q.Until = AccessRequestGranted, &until
			if err := setWorkGrant(ctx, at, q.Resource, UserPrincipal(q.UserName), &until); err != nil {
				return err
			}
			detail += " until " + until.Format(time.RFC3339)
		} else {
			q.State = AccessRequestRefused
		}
		if ok, err := tx.DecideAccessRequest(ctx, q); err != nil {
			return err
		} else if !ok {
			return Errorf(ECONFLICT, "The request %d was decided already.", key)
		}
		out = q
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, action, q.Resource, AuditOK, fmt.Sprintf("request %d: %s", key, detail))})
	})
	if err != nil {
		a.deniedAfter(ctx, c, action, work, err)
		return nil, fmt.Errorf("decide request for access %d: %w", key, err)
	}
	return out, nil
}

// setWorkGrant gives principal the viewer role on the work until until,
// or, with until nil, takes any grant of principal's on it away; the
// other grants on the work stay.
func setWorkGrant(ctx context.Context, at AccountWriteTx, work int64, principal string, until *time.Time) error {
	gs, err := at.GrantsOn(ctx, []int64{work})
	if err != nil {
		return fmt.Errorf("grants on %d: %w", work, err)
	}
	gs = slices.DeleteFunc(gs, func(g Grant) bool { return g.Principal == principal })
	if until != nil {
		gs = append(gs, Grant{Resource: work, Principal: principal, Role: RoleViewer, Expires: until})
	}
	if err := at.SetGrants(ctx, work, gs); err != nil {
		return fmt.Errorf("grants on %d: %w", work, err)
	}
	return nil
}

// WorkAccessGrants returns the grants in force on work (the access
// requests gave), for those who may decide its requests.
func (a *Accounts) WorkAccessGrants(ctx context.Context, work ID) ([]Grant, error) {
	c := CallerFrom(ctx)
	key, err := a.repo.ids.Key(work)
	if err != nil {
		return nil, err
	}
	var out []Grant
	err = a.view(ctx, func(tx ReadTx, at AccountReadTx) error {
		g := a.repo.guard(tx, c)
		if ok, err := g.mayDecide(ctx, key); err != nil {
			return err
		} else if !ok {
			if _, err := g.readable(ctx, key); err != nil {
				return err
			}
			return refusal(c, false, "see who was given access to "+string(work)+" (it takes the manager role)")
		}
		gs, err := at.GrantsOn(ctx, []int64{key})
		if err != nil {
			return err
		}
		now := a.repo.now()
		for _, gr := range gs {
			if gr.Expires != nil && gr.ActiveAt(now) {
				out = append(out, gr)
			}
		}
		return nil
	})
	return out, err
}

// RevokeAccess ends the access a decision gave principal ("user:NAME") to
// work before its time, for those who may decide the work's requests.
// Audited as "access.revoke"; a principal without such a grant is
// ENOTFOUND.
func (a *Accounts) RevokeAccess(ctx context.Context, work ID, principal string) error {
	c := CallerFrom(ctx)
	key, err := a.repo.ids.Key(work)
	if err != nil {
		return err
	}
	err = a.update(ctx, func(tx WriteTx, at AccountWriteTx) error {
		g := a.repo.guard(tx, c)
		if ok, err := g.mayDecide(ctx, key); err != nil {
			return err
		} else if !ok || !c.MayWrite() {
			if _, err := g.readable(ctx, key); err != nil {
				return err
			}
			return refusal(c, true, "end the access given to "+string(work)+" (it takes the manager role)")
		}
		gs, err := at.GrantsOn(ctx, []int64{key})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(gs, func(gr Grant) bool { return gr.Principal == principal && gr.Expires != nil }) {
			return Errorf(ENOTFOUND, "%s holds no access to %s that a request gave.", clip(principal, 80), work)
		}
		if err := setWorkGrant(ctx, at, key, principal, nil); err != nil {
			return err
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "access.revoke", key, AuditOK, clip(principal, 200))})
	})
	if err != nil {
		a.deniedAfter(ctx, c, "access.revoke", key, err)
		return fmt.Errorf("end access to %s: %w", work, err)
	}
	return nil
}
