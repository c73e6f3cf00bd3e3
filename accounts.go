package shelfmark

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// AccountsOptions configure Accounts. Zero values pick defaults.
type AccountsOptions struct {
	// Hasher hashes and checks passwords (argon2id.Hasher); required for
	// passwords. Without one, AddUser refuses passwords and Login refuses
	// everyone.
	Hasher PasswordHasher
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// SessionTTL is how long a session opened by Login or LoginExternal
	// lasts (default 12 h).
	SessionTTL time.Duration
	// CacheTTL is how long a successful Authenticate is remembered in
	// memory (default 10 s; negative: no cache). A token revoked, or a
	// user disabled, through another process (another server on the same
	// PostgreSQL database, or the command line) keeps working in this
	// process for at most this long; through this process it stops at
	// once.
	CacheTTL time.Duration
	// CacheSize bounds the number of remembered tokens (default 10,000).
	CacheSize int
	// Logger receives what cannot be returned (default slog.Default()).
	Logger *slog.Logger
}

// Accounts implements AccountService over a Repository's Storage: users,
// groups, API tokens, sessions, roles on collections and the audit trail.
// Every method obeys the caller on its context (CallerFrom); a context
// without one is the system, which may do everything. Accounts is safe for
// concurrent use.
type Accounts struct {
	repo  *Repository
	store Storage
	opts  AccountsOptions

	dummyOnce sync.Once
	dummy     string // a hash checked for unknown users, so they cost as much as known ones

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedCaller
}

var _ AccountService = (*Accounts)(nil)

// cachedCaller is a successful Authenticate remembered for CacheTTL.
type cachedCaller struct {
	c       Caller
	until   time.Time // end of the cache entry
	expires time.Time // the token's own expiry (zero: none)
}

// NewAccounts returns the account service of repo.
func NewAccounts(repo *Repository, opts AccountsOptions) *Accounts {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = 10 * time.Second
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 10000
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Accounts{repo: repo, store: repo.store, opts: opts, cache: map[[sha256.Size]byte]cachedCaller{}}
}

// Limits on account names and notes.
const (
	maxNameLen  = 64
	maxNoteLen  = 200
	maxGroups   = 100
	minPassword = 8
	maxPassword = 1024
)

// validName checks a user or group name: 1 to 64 characters among
// letters, digits and . _ @ -, not starting with a punctuation mark (so
// that names never look like options or contain the ':' of principals).
func validName(what, name string) error {
	ok := name != "" && len(name) <= maxNameLen
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '@' || c == '-') && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return Errorf(EINVALID, "The %s name %q is not valid: use 1 to %d letters, digits and . _ @ - (starting with a letter or digit).", what, clip(name, 80), maxNameLen)
	}
	return nil
}

// cleanGroups validates, sorts and deduplicates group names.
func cleanGroups(groups []string) ([]string, error) {
	if len(groups) > maxGroups {
		return nil, Errorf(EINVALID, "A user may belong to at most %d groups, not %d.", maxGroups, len(groups))
	}
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		if err := validName("group", g); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// clip shortens s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// view runs fn in a read transaction (which carries the account reads).
func (a *Accounts) view(ctx context.Context, fn func(tx ReadTx, at AccountReadTx) error) error {
	return a.store.View(ctx, func(tx ReadTx) error { return fn(tx, tx) })
}

// update runs fn in a write transaction (which carries the account
// writes).
func (a *Accounts) update(ctx context.Context, fn func(tx WriteTx, at AccountWriteTx) error) error {
	return a.store.Update(ctx, func(tx WriteTx) error { return fn(tx, tx) })
}

// entry is an audit entry for the caller c.
func (a *Accounts) entry(c *Caller, action string, resource int64, outcome, detail string) *AuditEntry {
	return &AuditEntry{At: a.opts.Now(), Actor: c.Actor(), User: c.User, Token: c.Token, Action: action,
		Resource: resource, Outcome: outcome, Detail: clip(detail, 500), Request: c.Request}
}

// record appends entries in a transaction of their own (for what did not
// happen: refused writes and failed logins). A failure is logged: the
// caller's answer is the refusal.
func (a *Accounts) record(ctx context.Context, entries ...*AuditEntry) {
	err := a.update(context.WithoutCancel(ctx), func(_ WriteTx, at AccountWriteTx) error {
		return at.InsertAudit(ctx, entries)
	})
	if err != nil {
		a.opts.Logger.Warn("audit: could not record", "action", entries[0].Action, "err", err)
	}
}

// refusal is the answer to a caller without the right to do what; write
// says the request is a write, which a read-scoped credential never may do.
func refusal(c *Caller, write bool, what string) error {
	switch {
	case !c.Authenticated():
		return Errorf(EUNAUTHORIZED, "Sign in (send a token) to %s.", what)
	case write && !c.MayWrite():
		return Errorf(EFORBIDDEN, "Your token's scope (%s) does not allow you to %s.", c.Scope, what)
	}
	return Errorf(EFORBIDDEN, "You may not %s.", what)
}

// refuse is refusal, recorded in the audit trail when action (a write) is
// named. It must not run inside a transaction.
func (a *Accounts) refuse(ctx context.Context, c *Caller, action, what string, resource int64) error {
	err := refusal(c, action != "", what)
	if action != "" {
		a.record(ctx, a.entry(c, action, resource, AuditDenied, ErrorMessage(err)))
	}
	return err
}

// adminOnly lets administrators (with an admin-scoped credential) and the
// system through.
func (a *Accounts) adminOnly(ctx context.Context, c *Caller, action, what string) error {
	if c.IsAdmin() {
		return nil
	}
	return a.refuse(ctx, c, action, what, 0)
}

// userNamed loads a user, ENOTFOUND when there is none.
func userNamed(ctx context.Context, at AccountReadTx, name string) (*User, error) {
	u, err := at.UserByName(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", name, err)
	}
	if u == nil {
		return nil, Errorf(ENOTFOUND, "There is no user %q.", clip(name, 80))
	}
	return u, nil
}

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

// scopeRank orders scopes; 0 for an unknown one.
func scopeRank(s Scope) int {
	switch s {
	case ScopeRead:
		return 1
	case ScopeWrite:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

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

// cached returns a copy of a remembered caller.
func (a *Accounts) cached(h [sha256.Size]byte, now time.Time) (*Caller, bool) {
	if a.opts.CacheTTL < 0 {
		return nil, false
	}
	a.mu.Lock()
	e, ok := a.cache[h]
	a.mu.Unlock()
	if !ok || !now.Before(e.until) || (!e.expires.IsZero() && !now.Before(e.expires)) {
		return nil, false
	}
	c := e.c
	c.Groups = slices.Clone(c.Groups)
	return &c, true
}

// remember keeps a successful lookup for CacheTTL. When the cache is full,
// stale entries go, and if none were stale, all of them.
func (a *Accounts) remember(h [sha256.Size]byte, c *Caller, now, expires time.Time) {
	if a.opts.CacheTTL < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= a.opts.CacheSize {
		for k, e := range a.cache {
			if !now.Before(e.until) {
				delete(a.cache, k)
			}
		}
		if len(a.cache) >= a.opts.CacheSize {
			clear(a.cache)
		}
	}
	cc := *c
	cc.Groups = slices.Clone(c.Groups)
	a.cache[h] = cachedCaller{c: cc, until: now.Add(a.opts.CacheTTL), expires: expires}
}

// evict forgets the remembered callers that match.
func (a *Accounts) evict(match func(*Caller) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, e := range a.cache {
		if match(&e.c) {
			delete(a.cache, k)
		}
	}
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
	role, err := g.role(ctx, acc)
	if err != nil {
		return 0, err
	}
	if !role.Includes(RoleManager) || (write && !c.MayWrite()) {
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

// Audit implements AccountService: administrators see the whole trail; the
// manager of a collection may read the entries about it (q.Resource set to
// it). q.Limit is 1..1000 (default 100).
func (a *Accounts) Audit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error) {
	c := CallerFrom(ctx)
	if q.Limit <= 0 || q.Limit > 1000 {
		q.Limit = min(max(q.Limit, 100), 1000)
	}
	var out []*AuditEntry
	err := a.view(ctx, func(tx ReadTx, at AccountReadTx) error {
		if !c.IsAdmin() {
			if q.Resource == 0 {
				return refusal(c, false, "read the audit trail of the whole repository (ask for one collection's)")
			}
			if _, err := a.collectionKey(ctx, tx, c, q.Resource, false, "read the audit trail"); err != nil {
				return err
			}
		}
		var err error
		if out, err = at.Audit(ctx, q); err != nil || c.IsAdmin() {
			return err
		}
		return a.redactAudit(ctx, tx, c, out)
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, fmt.Errorf("audit trail: %w", err)
	}
	return out, nil
}

// auditIDRE finds what may be resource ids in an audit entry's detail.
var auditIDRE = regexp.MustCompile(`\b[0-9bcdfghjkmnpqrstvwxz]{9}\b`)

// AuditHidden stands in an audit entry's detail, shown to someone other
// than an administrator, for the id of a resource they may not read.
const AuditHidden = "(a resource you may not read)"

// redactAudit replaces, in the details of entries, every id of a resource
// the caller may not read with AuditHidden: a collection's manager reads
// its trail, where a refused write may name someone else's private work.
// Each distinct id is looked up once.
func (a *Accounts) redactAudit(ctx context.Context, tx ReadTx, c *Caller, entries []*AuditEntry) error {
	g := a.repo.guard(tx, c)
	seen := map[string]bool{}
	for _, e := range entries {
		for _, m := range auditIDRE.FindAllString(e.Detail, -1) {
			if _, done := seen[m]; done {
				continue
			}
			key, err := a.repo.ids.Key(ID(m))
			if err != nil {
				seen[m] = true // not an id: a word that looks like one
				continue
			}
			ok, err := g.readableKey(ctx, key)
			if err != nil {
				return fmt.Errorf("audit trail: %w", err)
			}
			seen[m] = ok
		}
		e.Detail = auditIDRE.ReplaceAllStringFunc(e.Detail, func(m string) string {
			if seen[m] {
				return m
			}
			return AuditHidden
		})
	}
	return nil
}
