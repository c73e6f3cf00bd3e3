package shelfmark

import (
	"context"
	"fmt"
)

// hash checks a new password's length and hashes it.
func (a *Accounts) hash(password string) (string, error) {
	if a.opts.Hasher == nil {
		return "", Errorf(EUNSUPPORTED, "This server is not set up for passwords.")
	}
	if n := len([]rune(password)); n < minPassword || len(password) > maxPassword {
		return "", Errorf(EINVALID, "A password takes %d to %d characters.", minPassword, maxPassword)
	}
	h, err := a.opts.Hasher.Hash(password)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

// SetPassword implements AccountService: administrators only. The new
// password replaces the old one and ends the user's open sessions (its
// API tokens stay valid).
func (a *Accounts) SetPassword(ctx context.Context, name, password string) error {
	if err := a.adminOnly(ctx, CallerFrom(ctx), "user.password", "set passwords"); err != nil {
		return err // before the password is hashed
	}
	h, err := a.hash(password)
	if err != nil {
		return err
	}
	return a.changeUser(ctx, name, "user.password", "set passwords", func(_ *Caller, u *User, at AccountWriteTx) (string, error) {
		u.PasswordHash = h
		if err := at.UpdateUser(ctx, u); err != nil {
			return "", fmt.Errorf("update user %q: %w", name, err)
		}
		sessions, err := at.Tokens(ctx, u.Key, TokenSession)
		if err != nil {
			return "", err
		}
		now := a.opts.Now()
		for _, t := range sessions {
			if t.Revoked == nil {
				if _, err := at.RevokeToken(ctx, u.Key, t.Key, now); err != nil {
					return "", err
				}
			}
		}
		return "user " + name, nil
	})
}

// dummyHash is a hash of a random password, checked when a login names an
// unknown user, so that the answer takes as long as for a known one.
func (a *Accounts) dummyHash() string {
	a.dummyOnce.Do(func() {
		pw, err := newSecret()
		if err == nil {
			a.dummy, _ = a.opts.Hasher.Hash(pw)
		}
	})
	return a.dummy
}
