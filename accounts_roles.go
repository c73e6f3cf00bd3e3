package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// collectionFor resolves a roles request: the repository for "" (whose
// roles only administrators see and set), or a live collection the caller
// can see (ENOTFOUND otherwise) and manages (EFORBIDDEN otherwise; write
// also takes a credential that allows writes). It records nothing: it
// runs inside transactions (see deniedAfter).
func (a *Accounts) collectionFor(ctx context.Context, tx ReadTx, c *Caller, resource ID, write bool, what string) (int64, error) {
	if resource == "" {
		if !c.IsAdmin() {
			return 0, refusal(c, write, what+" of the repository")
		}
		return 0, nil
	}
	key, err := a.repo.ids.Key(resource)
	if err != nil {
		return 0, err
	}
	return a.collectionKey(ctx, tx, c, key, write, what)
}

// collectionKey is collectionFor for a collection's key.
func (a *Accounts) collectionKey(ctx context.Context, tx ReadTx, c *Caller, key int64, write bool, what string) (int64, error) {
	if key < 1 || key > MaxKey {
		return 0, Errorf(ENOTFOUND, "No resource has the key %d.", key)
	}
	g := a.repo.guard(tx, c)
	acc, err := g.readable(ctx, key)
	if err != nil {
		return 0, err
	}
	id := a.repo.ids.Encode(key)
	if acc.row.Kind != KindCollection {
		return 0, Errorf(EINVALID, "%s is a %s; roles are granted on collections.", id, acc.row.Kind)
	}
	if ok, err := g.canManage(ctx, acc, write); err != nil {
		return 0, err
	} else if !ok {
		return key, refusal(c, write, fmt.Sprintf("%s of %s (it takes the manager role)", what, id))
	}
	return key, nil
}

// deniedAfter records, after a transaction, a refusal it returned.
func (a *Accounts) deniedAfter(ctx context.Context, c *Caller, action string, resource int64, err error) {
	switch ErrorCode(err) {
	case EFORBIDDEN, EUNAUTHORIZED:
		a.record(ctx, a.entry(c, action, resource, AuditDenied, ErrorMessage(err)))
	}
}

// Roles implements AccountService: the grants on a collection, for its
// managers and administrators ("": the repository, administrators only).
func (a *Accounts) Roles(ctx context.Context, resource ID) ([]Grant, error) {
	c := CallerFrom(ctx)
	var out []Grant
	err := a.view(ctx, func(tx ReadTx, at AccountReadTx) error {
		key, err := a.collectionFor(ctx, tx, c, resource, false, "see the roles")
		if err != nil {
			return err
		}
		out, err = at.GrantsOn(ctx, []int64{key})
		return err
	})
	if err != nil {
		return nil, err
	}
	sortGrants(out)
	return out, nil
}

// sortGrants orders grants by principal, then role.
func sortGrants(gs []Grant) {
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].Principal != gs[j].Principal {
			return gs[i].Principal < gs[j].Principal
		}
		return gs[i].Role.rank() > gs[j].Role.rank()
	})
}

// maxGrants bounds the grants on one resource.
const maxGrants = 1000

// SetRoles implements AccountService: it replaces the grants on a
// collection (its managers and administrators) or on the repository
// (administrators). Each grant names a known role and a principal
// "user:NAME" of an existing user or "group:NAME"; the grants' Resource
// fields are ignored. A change that would leave a collection that had a
// manager without one is refused (ECONFLICT).
func (a *Accounts) SetRoles(ctx context.Context, resource ID, grants []Grant) error {
	c := CallerFrom(ctx)
	if len(grants) > maxGrants {
		return Errorf(EINVALID, "At most %d grants may be set on one resource.", maxGrants)
	}
	clean := make([]Grant, 0, len(grants))
	seen := map[Grant]bool{}
	var users []string
	for i, g := range grants {
		if !g.Role.Valid() {
			return Errorf(EINVALID, "grants[%d]: the role %q is not one of manager, curator, depositor, viewer.", i, clip(string(g.Role), 40))
		}
		kind, name, ok := strings.Cut(g.Principal, ":")
		if !ok || (kind != "user" && kind != "group") {
			return Errorf(EINVALID, "grants[%d]: the principal %q is not user:NAME or group:NAME.", i, clip(g.Principal, 80))
		}
		if err := validName(kind, name); err != nil {
			return Errorf(EINVALID, "grants[%d]: %s", i, ErrorMessage(err))
		}
		g.Resource = 0
		if seen[g] {
			continue
		}
		seen[g] = true
		if kind == "user" {
			users = append(users, name)
		}
		clean = append(clean, g)
	}
	sortGrants(clean)
	var key int64
	err := a.update(ctx, func(tx WriteTx, at AccountWriteTx) error {
		var err error
		key, err = a.collectionFor(ctx, tx, c, resource, true, "set the roles")
		if err != nil {
			return err
		}
		for _, name := range users {
			u, err := at.UserByName(ctx, name)
			if err != nil {
				return fmt.Errorf("user %q: %w", name, err)
			}
			if u == nil {
				return Errorf(EINVALID, "There is no user %q to grant a role to.", clip(name, 80))
			}
		}
		old, err := at.GrantsOn(ctx, []int64{key})
		if err != nil {
			return fmt.Errorf("roles of %s: %w", resource, err)
		}
		if key != 0 && hasManager(old) && !hasManager(clean) {
			return Errorf(ECONFLICT, "The change would leave %s without a manager; grant the manager role to someone else first.", resource)
		}
		parts := make([]string, len(clean))
		for i := range clean {
			clean[i].Resource = key
			parts[i] = clean[i].Principal + "=" + string(clean[i].Role)
		}
		if err := at.SetGrants(ctx, key, clean); err != nil {
			return fmt.Errorf("set roles of %s: %w", resource, err)
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "roles", key, AuditOK, strings.Join(parts, ", "))})
	})
	a.deniedAfter(ctx, c, "roles", key, err)
	return err
}

// hasManager reports whether grants name a manager.
func hasManager(gs []Grant) bool {
	return slices.ContainsFunc(gs, func(g Grant) bool { return g.Role == RoleManager })
}
