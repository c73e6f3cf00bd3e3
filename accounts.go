package shelfmark

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
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
