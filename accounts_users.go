package shelfmark

import (
	"context"
	"fmt"
	"strings"
)

// AddUser implements AccountService: administrators only. password may be
// "" (the user signs in with tokens or single sign-on); otherwise it takes
// at least 8 characters.
func (a *Accounts) AddUser(ctx context.Context, name, password string, admin bool, groups []string) (*User, error) {
	c := CallerFrom(ctx)
	if err := a.adminOnly(ctx, c, "user.add", "add users"); err != nil {
		return nil, err
	}
	if err := validName("user", name); err != nil {
		return nil, err
	}
	groups, err := cleanGroups(groups)
	if err != nil {
		return nil, err
	}
	u := &User{Name: name, Admin: admin, Groups: groups, Created: a.opts.Now()}
	if password != "" {
		if u.PasswordHash, err = a.hash(password); err != nil {
			return nil, err
		}
	}
	detail := "user " + name
	if admin {
		detail += " (administrator)"
	}
	err = a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		if err := at.InsertUser(ctx, u); err != nil {
			if ErrorCode(err) == ECONFLICT {
				return Errorf(ECONFLICT, "There is a user %q already.", name)
			}
			return fmt.Errorf("add user %q: %w", name, err)
		}
		if len(groups) > 0 {
			if err := at.SetUserGroups(ctx, u.Key, groups); err != nil {
				return fmt.Errorf("groups of %q: %w", name, err)
			}
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "user.add", 0, AuditOK, detail)})
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Users implements AccountService: administrators only; limit is 1..1000
// (default 100).
func (a *Accounts) Users(ctx context.Context, after int64, limit int) ([]*User, error) {
	c := CallerFrom(ctx)
	if err := a.adminOnly(ctx, c, "", "list users"); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1000 {
		limit = min(max(limit, 100), 1000)
	}
	var out []*User
	err := a.view(ctx, func(_ ReadTx, at AccountReadTx) error {
		var err error
		out, err = at.Users(ctx, after, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	for _, u := range out {
		u.PasswordHash = "" // never leaves the service
	}
	return out, nil
}

// User returns the user with that name (administrators only), without its
// password hash; ENOTFOUND when there is none.
func (a *Accounts) User(ctx context.Context, name string) (*User, error) {
	c := CallerFrom(ctx)
	if err := a.adminOnly(ctx, c, "", "see users"); err != nil {
		return nil, err
	}
	var u *User
	err := a.view(ctx, func(_ ReadTx, at AccountReadTx) error {
		var err error
		u, err = userNamed(ctx, at, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	u.PasswordHash = ""
	return u, nil
}

// changeUser runs change on the user named name in a write transaction
// and appends the audit entry (action, detail) in it; then it forgets this
// process's cached credentials of the user, so the change holds at once.
// Administrators only (what names the right in the refusal).
func (a *Accounts) changeUser(ctx context.Context, name, action, what string, change func(c *Caller, u *User, at AccountWriteTx) (detail string, err error)) error {
	c := CallerFrom(ctx)
	if err := a.adminOnly(ctx, c, action, what); err != nil {
		return err
	}
	var key int64
	err := a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		u, err := userNamed(ctx, at, name)
		if err != nil {
			return err
		}
		key = u.Key
		detail, err := change(c, u, at)
		if err != nil {
			return err
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, action, 0, AuditOK, detail)})
	})
	if err != nil {
		return err
	}
	a.evict(func(cc *Caller) bool { return cc.User == key })
	return nil
}

// SetDisabled implements AccountService: administrators only. A disabled
// user's tokens and sessions stop working at once in this process, and
// within CacheTTL in others; an administrator cannot disable itself.
func (a *Accounts) SetDisabled(ctx context.Context, name string, disabled bool) error {
	action := "user.enable"
	if disabled {
		action = "user.disable"
	}
	return a.changeUser(ctx, name, action, "disable or enable users", func(c *Caller, u *User, at AccountWriteTx) (string, error) {
		if disabled && u.Key == c.User {
			return "", Errorf(ECONFLICT, "You cannot disable your own account.")
		}
		u.Disabled = disabled
		if err := at.UpdateUser(ctx, u); err != nil {
			return "", fmt.Errorf("update user %q: %w", name, err)
		}
		return "user " + name, nil
	})
}

// SetGroups implements AccountService: administrators only.
func (a *Accounts) SetGroups(ctx context.Context, name string, groups []string) error {
	if err := a.adminOnly(ctx, CallerFrom(ctx), "user.groups", "change groups"); err != nil {
		return err // before the groups are judged
	}
	groups, err := cleanGroups(groups)
	if err != nil {
		return err
	}
	return a.changeUser(ctx, name, "user.groups", "change groups", func(_ *Caller, u *User, at AccountWriteTx) (string, error) {
		if err := at.SetUserGroups(ctx, u.Key, groups); err != nil {
			return "", fmt.Errorf("groups of %q: %w", name, err)
		}
		return fmt.Sprintf("user %s: groups %s", name, strings.Join(groups, ", ")), nil
	})
}

// EnsureAdmin creates the user "admin" (an administrator without a
// password) when the store has no users at all, and reports whether it
// did, so that a first start can say how to get its token. Two servers
// starting at once create it once.
func (a *Accounts) EnsureAdmin(ctx context.Context) (bool, error) {
	created := false
	err := a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		us, err := at.Users(ctx, 0, 1)
		if err != nil || len(us) > 0 {
			return err
		}
		u := &User{Name: "admin", Admin: true, Created: a.opts.Now()}
		if err := at.InsertUser(ctx, u); err != nil {
			if ErrorCode(err) == ECONFLICT {
				return nil
			}
			return err
		}
		created = true
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(SystemCaller("setup"), "user.add", 0, AuditOK, "user admin (administrator), the first user")})
	})
	if err != nil {
		return false, fmt.Errorf("first administrator: %w", err)
	}
	return created, nil
}
