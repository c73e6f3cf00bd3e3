package shelfmark

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"time"
)

// ownOrAdmin resolves the user a token method is about: "" is the caller;
// another user takes an administrator.
func (a *Accounts) ownOrAdmin(ctx context.Context, c *Caller, name, action, what string) (string, error) {
	if !c.Authenticated() {
		return "", a.refuse(ctx, c, action, what, 0)
	}
	if name == "" {
		if c.User == 0 {
			return "", Errorf(EINVALID, "Name the user (the system has no tokens of its own).")
		}
		return c.Name, nil
	}
	if (c.User == 0 || name != c.Name) && !c.IsAdmin() {
		return "", a.refuse(ctx, c, action, what+" of another user", 0)
	}
	return name, nil
}

// CreateToken implements AccountService. A user makes API tokens for
// itself, an administrator for anyone. A token's scope cannot exceed the
// caller's, and only administrators' tokens may have the admin scope. The
// default scope is write; t.Kind must be "" or TokenAPI (sessions come
// from Login).
func (a *Accounts) CreateToken(ctx context.Context, t NewToken) (string, *Token, error) {
	c := CallerFrom(ctx)
	name, err := a.ownOrAdmin(ctx, c, t.User, "token.create", "create tokens")
	if err != nil {
		return "", nil, err
	}
	if t.Kind != "" && t.Kind != TokenAPI {
		return "", nil, Errorf(EINVALID, "Only API tokens are created this way; sessions are opened by signing in.")
	}
	if t.Scope == "" {
		// write, or the caller's own scope when that is narrower
		t.Scope = ScopeWrite
		if scopeRank(c.Scope) < scopeRank(t.Scope) {
			t.Scope = c.Scope
		}
	}
	if !t.Scope.Valid() {
		return "", nil, Errorf(EINVALID, "The scope %q is not one of read, write, admin.", clip(string(t.Scope), 40))
	}
	if scopeRank(t.Scope) > scopeRank(c.Scope) {
		return "", nil, a.refuse(ctx, c, "token.create", fmt.Sprintf("create a token with the scope %s (yours is %s)", t.Scope, c.Scope), 0)
	}
	if len(t.Note) > maxNoteLen {
		return "", nil, Errorf(EINVALID, "A token's note takes at most %d bytes.", maxNoteLen)
	}
	now := a.opts.Now()
	if t.Expires != nil && !t.Expires.After(now) {
		return "", nil, Errorf(EINVALID, "The expiry %s is not in the future.", t.Expires.UTC().Format(time.RFC3339))
	}
	var secret string
	var tok *Token
	err = a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		u, err := userNamed(ctx, at, name)
		if err != nil {
			return err
		}
		if u.Disabled {
			return Errorf(ECONFLICT, "The user %q is disabled.", name)
		}
		if t.Scope == ScopeAdmin && !u.Admin {
			return Errorf(EINVALID, "Only an administrator's token may have the admin scope; %q is not an administrator.", name)
		}
		secret, tok, err = a.insertToken(ctx, at, u, TokenAPI, t.Scope, t.Note, t.Expires, now)
		if err != nil {
			return err
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "token.create", 0, AuditOK,
			fmt.Sprintf("user %s: token %d (%s, scope %s)", name, tok.Key, tok.Hint, tok.Scope))})
	})
	if err != nil {
		return "", nil, err
	}
	return secret, tok, nil
}

// insertToken mints a secret and stores its token.
func (a *Accounts) insertToken(ctx context.Context, at AccountWriteTx, u *User, kind TokenKind, scope Scope, note string, expires *time.Time, now time.Time) (string, *Token, error) {
	secret, err := newSecret()
	if err != nil {
		return "", nil, err
	}
	h := sha256.Sum256([]byte(secret))
	tok := &Token{User: u.Key, Kind: kind, Hint: secret[:tokenHintLen], Hash: h[:], Scope: scope, Note: note,
		Created: now, Expires: expires}
	if err := at.InsertToken(ctx, tok); err != nil {
		return "", nil, fmt.Errorf("store token of %q: %w", u.Name, err)
	}
	return secret, tok, nil
}

// Tokens implements AccountService: a user's API tokens, newest first (its
// own, or anyone's for an administrator). Hashes are left out.
func (a *Accounts) Tokens(ctx context.Context, user string) ([]*Token, error) {
	c := CallerFrom(ctx)
	name, err := a.ownOrAdmin(ctx, c, user, "", "list the tokens")
	if err != nil {
		return nil, err
	}
	var out []*Token
	err = a.view(ctx, func(_ ReadTx, at AccountReadTx) error {
		u, err := userNamed(ctx, at, name)
		if err != nil {
			return err
		}
		out, err = at.Tokens(ctx, u.Key, TokenAPI)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, t := range out {
		t.Hash = nil
	}
	return out, nil
}

// RevokeToken implements AccountService: a user revokes its own tokens and
// sessions (user "" is the caller: revoking the caller's own session
// signs out), an administrator anyone's. The token stops working at once
// in this process, and within CacheTTL in others.
func (a *Accounts) RevokeToken(ctx context.Context, user string, key int64) error {
	c := CallerFrom(ctx)
	name, err := a.ownOrAdmin(ctx, c, user, "token.revoke", "revoke the tokens")
	if err != nil {
		return err
	}
	err = a.update(ctx, func(_ WriteTx, at AccountWriteTx) error {
		u, err := userNamed(ctx, at, name)
		if err != nil {
			return err
		}
		ok, err := at.RevokeToken(ctx, u.Key, key, a.opts.Now())
		if err != nil {
			return fmt.Errorf("revoke token %d of %q: %w", key, name, err)
		}
		if !ok {
			return Errorf(ENOTFOUND, "The user %q has no valid token %d.", name, key)
		}
		return at.InsertAudit(ctx, []*AuditEntry{a.entry(c, "token.revoke", 0, AuditOK, fmt.Sprintf("user %s: token %d", name, key))})
	})
	if err != nil {
		return err
	}
	a.evict(func(cc *Caller) bool { return cc.Token == key })
	return nil
}

// The form of a token's secret: TokenPrefix, 40 random base62 characters
// (238 bits), and a 6-character base62 CRC-32 of what precedes it, so that
// a scanner can tell a real token from a string that merely looks like one,
// and a mistyped token is refused without a database read.
const (
	base62        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	tokenRandLen  = 40
	tokenCheckLen = 6
	tokenLen      = len(TokenPrefix) + tokenRandLen + tokenCheckLen
	tokenHintLen  = 10
)

// newSecret mints a token secret.
func newSecret() (string, error) {
	b := make([]byte, 0, tokenLen)
	b = append(b, TokenPrefix...)
	var buf [64]byte
	for len(b) < len(TokenPrefix)+tokenRandLen {
		if _, err := rand.Read(buf[:]); err != nil {
			return "", fmt.Errorf("token: random: %w", err)
		}
		for _, x := range buf {
			// 248 = 4×62: rejecting larger bytes keeps every character
			// equally likely
			if x < 248 && len(b) < len(TokenPrefix)+tokenRandLen {
				b = append(b, base62[x%62])
			}
		}
	}
	return string(b) + tokenChecksum(string(b)), nil
}

// tokenChecksum is the base62 CRC-32 (IEEE) of s, 6 characters.
func tokenChecksum(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	var out [tokenCheckLen]byte
	for i := tokenCheckLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out[:])
}

// wellFormed reports whether secret has the form of a token: the prefix,
// the length, base62 characters and a matching checksum.
func wellFormed(secret string) bool {
	if len(secret) != tokenLen || !strings.HasPrefix(secret, TokenPrefix) {
		return false
	}
	for i := len(TokenPrefix); i < len(secret); i++ {
		if strings.IndexByte(base62, secret[i]) < 0 {
			return false
		}
	}
	body := secret[:len(secret)-tokenCheckLen]
	return tokenChecksum(body) == secret[len(body):]
}

// errBadToken is the one answer to every credential that does not work, so
// that the answer tells nothing of why (unknown, expired, revoked, a
// disabled user).
func errBadToken() error {
	return Errorf(EUNAUTHORIZED, "The token is not valid (unknown, expired or revoked).")
}

// Authenticate implements AccountService. A secret that does not have the
// form of a token is refused without a database read. Otherwise the
// secret's SHA-256 is looked up: the secret itself is never compared, so
// no timing reveals how much of a guess was right (the lookup's time
// depends only on the hash, which the guesser cannot steer). A successful
// lookup is remembered for CacheTTL, so that a busy client costs no
// database read per request.
func (a *Accounts) Authenticate(ctx context.Context, secret string) (*Caller, error) {
	if !wellFormed(secret) {
		return nil, errBadToken()
	}
	h := sha256.Sum256([]byte(secret))
	now := a.opts.Now()
	if c, ok := a.cached(h, now); ok {
		return c, nil
	}
	var c *Caller
	var expires time.Time
	err := a.view(ctx, func(_ ReadTx, at AccountReadTx) error {
		t, err := at.TokenByHash(ctx, h[:])
		if err != nil {
			return fmt.Errorf("look up token: %w", err)
		}
		if t == nil || t.Revoked != nil || (t.Expires != nil && !now.Before(*t.Expires)) {
			return errBadToken()
		}
		u, err := at.UserByKey(ctx, t.User)
		if err != nil {
			return fmt.Errorf("user of token %d: %w", t.Key, err)
		}
		if u == nil || u.Disabled {
			return errBadToken()
		}
		c = callerOf(u, t.Scope, t.Key)
		if t.Expires != nil {
			expires = *t.Expires
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	a.remember(h, c, now, expires)
	return c, nil
}

// callerOf is the caller a user's credential makes.
func callerOf(u *User, scope Scope, token int64) *Caller {
	return &Caller{User: u.Key, Name: u.Name, Admin: u.Admin, Groups: slices.Clone(u.Groups), Scope: scope, Token: token}
}
