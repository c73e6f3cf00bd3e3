package shelfmark

import (
	"context"
	"fmt"
	"slices"
)

// errBadLogin is the one answer to every failed login.
func errBadLogin() error {
	return Errorf(EUNAUTHORIZED, "Wrong user name or password.")
}

// Login implements AccountService: it checks the password and opens a
// session (a token of kind TokenSession lasting SessionTTL, with the admin
// scope for administrators and the write scope for others). An unknown
// user, a disabled one, one without a password and a wrong password all
// take one password check and give the same EUNAUTHORIZED; each failure is
// recorded in the audit trail.
func (a *Accounts) Login(ctx context.Context, name, password string) (string, *Caller, error) {
	c := CallerFrom(ctx)
	if a.opts.Hasher == nil {
		return "", nil, errBadLogin()
	}
	var u *User
	if validName("user", name) == nil && len(password) <= maxPassword {
		err := a.view(ctx, func(_ ReadTx, at AccountReadTx) error {
			var err error
			u, err = at.UserByName(ctx, name)
			return err
		})
		if err != nil {
			return "", nil, fmt.Errorf("login: %w", err)
		}
	}
	encoded, why := a.dummyHash(), "unknown user"
	if u != nil && u.PasswordHash != "" {
		encoded, why = u.PasswordHash, "wrong password"
	} else if u != nil {
		why = "no password"
	}
	ok, err := a.opts.Hasher.Verify(password, encoded)
	if err != nil {
		a.opts.Logger.Warn("login: a stored password hash cannot be read", "user", name, "err", err)
		ok = false
	}
	if ok && u.Disabled {
		ok, why = false, "disabled user"
	}
	if !ok || u == nil || u.PasswordHash == "" {
		e := a.entry(c, "login", 0, AuditFailed, why)
		if validName("user", name) == nil {
			e.Actor = name
		} else {
			e.Detail = "malformed user name" // not recorded: it could carry anything
		}
		if u != nil {
			e.User = u.Key
		}
		a.record(ctx, e)
		return "", nil, errBadLogin()
	}
	return a.openSession(ctx, c, u, "password")
}

// openSession stores a session for u and records the login.
func (a *Accounts) openSession(ctx context.Context, c *Caller, u *User, how string) (string, *Caller, error) {
	scope := ScopeWrite
	if u.Admin {
		scope = ScopeAdmin
	}
	now := a.opts.Now()
	expires := now.Add(a.opts.SessionTTL)
	var secret string
	var tok *Token
	err := a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		var err error
		if secret, tok, err = a.insertToken(ctx, at, u, TokenSession, scope, how, &expires, now); err != nil {
			return err
		}
		e := a.entry(c, "login", 0, AuditOK, how)
		e.Actor, e.User, e.Token = u.Name, u.Key, tok.Key
		return at.InsertAudit(ctx, []*AuditEntry{e})
	})
	if err != nil {
		return "", nil, fmt.Errorf("open session: %w", err)
	}
	return secret, callerOf(u, scope, tok.Key), nil
}

// LoginExternal implements AccountService. It is for an adapter that has
// verified the person's identity itself (OpenID Connect), so it checks no
// credential: the user is created on first sign-in (neither administrator
// nor with a password) and its groups are replaced by groups. A disabled
// user is refused.
func (a *Accounts) LoginExternal(ctx context.Context, name string, groups []string) (string, *Caller, error) {
	c := CallerFrom(ctx)
	if err := validName("user", name); err != nil {
		return "", nil, err
	}
	groups, err := cleanGroups(groups)
	if err != nil {
		return "", nil, err
	}
	var u *User
	err = a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		var err error
		if u, err = at.UserByName(ctx, name); err != nil {
			return err
		}
		if u == nil {
			u = &User{Name: name, Groups: groups, Created: a.opts.Now()}
			if err := at.InsertUser(ctx, u); err != nil {
				return fmt.Errorf("add user %q: %w", name, err)
			}
			e := a.entry(c, "user.add", 0, AuditOK, "user "+name+" (single sign-on)")
			if err := at.InsertAudit(ctx, []*AuditEntry{e}); err != nil {
				return err
			}
		} else if u.Disabled {
			return nil
		}
		if !slices.Equal(u.Groups, groups) {
			u.Groups = groups
			if err := at.SetUserGroups(ctx, u.Key, groups); err != nil {
				return fmt.Errorf("groups of %q: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("single sign-on of %q: %w", name, err)
	}
	if u.Disabled {
		e := a.entry(c, "login", 0, AuditFailed, "disabled user (single sign-on)")
		e.Actor, e.User = name, u.Key
		a.record(ctx, e)
		return "", nil, errBadLogin()
	}
	a.evict(func(cc *Caller) bool { return cc.User == u.Key })
	return a.openSession(ctx, c, u, "single sign-on")
}
