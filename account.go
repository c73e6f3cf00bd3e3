package shelfmark

import (
	"context"
	"time"
)

// User is an account. Users sign in with a password (people), through
// OpenID Connect (institutional single sign-on) or with API tokens.
type User struct {
	Key  int64
	Name string
	// Admin users hold every role everywhere (with an admin-scoped
	// credential).
	Admin    bool
	Disabled bool
	// PasswordHash is the encoded argon2id hash of the password; "" when
	// the user cannot sign in with a password.
	PasswordHash string
	// Groups lists the groups the user belongs to, sorted.
	Groups  []string
	Created time.Time
}

// TokenKind tells API tokens from browser sessions.
type TokenKind string

// The kinds of token.
const (
	TokenAPI     TokenKind = "api"
	TokenSession TokenKind = "session"
)

// TokenPrefix begins every API token, so that scanners can recognise
// leaked ones.
const TokenPrefix = "smk_"

// Token is a stored credential. Only the SHA-256 hash of its secret is
// kept; the secret is shown once, when it is created.
type Token struct {
	Key  int64
	User int64
	Kind TokenKind
	// Hint is the start of the secret (prefix and a few characters),
	// stored to help a person tell tokens apart.
	Hint  string
	Hash  []byte // SHA-256 of the whole secret
	Scope Scope
	// Note says what the token is for.
	Note    string
	Created time.Time
	Expires *time.Time // nil: never
	Revoked *time.Time // nil: valid
}

// Grant gives a role to a principal ("user:NAME" or "group:NAME") on a
// collection, or on the whole repository (Resource 0); or, made by a
// decision on a request for access (access_requests.go), the viewer role on
// one work to one user until Expires.
type Grant struct {
	Resource  int64
	Principal string
	Role      Role
	// Expires, when set, ends the grant: from then on the policy ignores
	// it (and a later decision replaces it). Roles on collections and on
	// the repository never expire.
	Expires *time.Time
}

// ActiveAt reports whether g is in force at now (it has not expired).
func (g Grant) ActiveAt(now time.Time) bool { return g.Expires == nil || now.Before(*g.Expires) }

// AuditEntry is one line of the append-only audit trail.
type AuditEntry struct {
	// Key orders the trail; it is assigned by the database.
	Key int64
	At  time.Time
	// Actor names who acted: a user's name, "anonymous", or "system:…".
	Actor string
	User  int64 // 0 when not a user
	Token int64 // the token or session used; 0 when none
	// Action is what was done, for example "create", "update", "delete",
	// "members.add", "order", "roles", "token.create", "login".
	Action string
	// Resource is the key of the resource acted on; 0 when none.
	Resource int64
	// Predicates lists the metadata predicates an update changed.
	Predicates []string
	// Outcome is "ok", "denied" or "failed".
	Outcome string
	// Detail is a short note (for example why a write was denied).
	Detail  string
	Request string
}

// The outcomes of an audited action.
const (
	AuditOK     = "ok"
	AuditDenied = "denied"
	AuditFailed = "failed"
)

// AuditQuery selects a page of the audit trail, newest first.
type AuditQuery struct {
	Resource int64  // 0: any
	Actor    string // "": any
	// Before, when not 0, returns entries with smaller keys (the next
	// page).
	Before int64
	// After, when set, returns only entries at or after this time.
	After time.Time
	Limit int
}

// AccountReadTx reads accounts, grants, owners, the audit trail and
// settings within a transaction. (nil, nil) means "none" for single rows.
type AccountReadTx interface {
	// UserByName returns the user with that name, or (nil, nil).
	UserByName(ctx context.Context, name string) (*User, error)
	// UserByKey returns the user with that key, or (nil, nil).
	UserByKey(ctx context.Context, key int64) (*User, error)
	// Users returns up to limit users with keys greater than after, by key.
	Users(ctx context.Context, after int64, limit int) ([]*User, error)
	// TokenByHash returns the token whose secret hashes to hash, or
	// (nil, nil).
	TokenByHash(ctx context.Context, hash []byte) (*Token, error)
	// Tokens returns a user's tokens of a kind, newest first.
	Tokens(ctx context.Context, user int64, kind TokenKind) ([]*Token, error)
	// GrantsOn returns the grants on these resources (0: the repository).
	GrantsOn(ctx context.Context, resources []int64) ([]Grant, error)
	// GrantsTo returns the grants made to these principals.
	GrantsTo(ctx context.Context, principals []string) ([]Grant, error)
	// Owners returns the user that deposited each resource, for those
	// that have one.
	Owners(ctx context.Context, keys []int64) (map[int64]int64, error)
	// Audit returns a page of the audit trail, newest first.
	Audit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error)
	// Setting returns a repository setting and whether it is set.
	Setting(ctx context.Context, name string) (string, bool, error)
	// AccessDue returns up to limit live resources whose embargo or
	// lease ends at or before now, by key.
	AccessDue(ctx context.Context, now time.Time, limit int) ([]*ResourceRow, error)
}

// AccountWriteTx writes accounts, grants, owners, the audit trail and
// settings within a write transaction.
type AccountWriteTx interface {
	AccountReadTx
	// InsertUser stores a new user and sets its Key; a taken name is an
	// ECONFLICT error.
	InsertUser(ctx context.Context, u *User) error
	// UpdateUser writes Admin, Disabled and PasswordHash.
	UpdateUser(ctx context.Context, u *User) error
	// SetUserGroups replaces the user's groups.
	SetUserGroups(ctx context.Context, user int64, groups []string) error
	// InsertToken stores a new token and sets its Key.
	InsertToken(ctx context.Context, t *Token) error
	// RevokeToken marks a user's token revoked; it reports whether the
	// token existed, belonged to the user and was not yet revoked.
	RevokeToken(ctx context.Context, user, key int64, at time.Time) (bool, error)
	// SetGrants replaces every grant on resource (0: the repository).
	SetGrants(ctx context.Context, resource int64, grants []Grant) error
	// PruneGrants deletes up to limit grants whose expiry is at or before
	// before, the earliest first, and returns them; the roles, which
	// never expire, stay.
	PruneGrants(ctx context.Context, before time.Time, limit int) ([]Grant, error)
	// SetOwners records user as the depositor of keys.
	SetOwners(ctx context.Context, keys []int64, user int64) error
	// InsertAudit appends entries to the audit trail.
	InsertAudit(ctx context.Context, entries []*AuditEntry) error
	// InitSetting stores value under name unless a value is there
	// already, and returns the stored value.
	InitSetting(ctx context.Context, name, value string) (string, error)
	// PutSetting stores value under name, replacing any.
	PutSetting(ctx context.Context, name, value string) error
}

// PasswordHasher hashes passwords for storage and checks them (argon2id/).
type PasswordHasher interface {
	// Hash returns the encoded hash of password with a fresh salt.
	Hash(password string) (string, error)
	// Verify reports whether password matches the encoded hash, in time
	// that does not depend on where they differ.
	Verify(password, encoded string) (bool, error)
}

// NewToken asks for a new token.
type NewToken struct {
	User    string // the user's name
	Kind    TokenKind
	Scope   Scope
	Note    string
	Expires *time.Time
}

// AccountService manages accounts, credentials, roles and the audit trail.
// Every method obeys the caller on ctx (CallerFrom).
type AccountService interface {
	// AddUser creates a user (admin only); password may be "".
	AddUser(ctx context.Context, name, password string, admin bool, groups []string) (*User, error)
	// Users lists users (admin only), after the given key.
	Users(ctx context.Context, after int64, limit int) ([]*User, error)
	// SetDisabled disables or enables a user (admin only); a disabled
	// user's tokens and sessions stop working at once.
	SetDisabled(ctx context.Context, name string, disabled bool) error
	// SetPassword replaces a user's password (admin only) and ends its
	// sessions.
	SetPassword(ctx context.Context, name, password string) error
	// SetGroups replaces a user's groups (admin only).
	SetGroups(ctx context.Context, name string, groups []string) error
	// CreateToken makes a token (for the caller, or for anyone when the
	// caller is an admin) and returns its secret, shown only this once.
	CreateToken(ctx context.Context, t NewToken) (secret string, tok *Token, err error)
	// Tokens lists a user's API tokens (its own, or anyone's for an admin).
	Tokens(ctx context.Context, user string) ([]*Token, error)
	// RevokeToken revokes a token of the caller's (or anyone's, for an
	// admin).
	RevokeToken(ctx context.Context, user string, key int64) error
	// Authenticate resolves a token or session secret to its caller; an
	// unknown, malformed, expired or revoked secret, or one of a disabled
	// user, is an EUNAUTHORIZED error.
	Authenticate(ctx context.Context, secret string) (*Caller, error)
	// Login checks a password and opens a session: it returns the
	// session's secret.
	Login(ctx context.Context, name, password string) (secret string, c *Caller, err error)
	// LoginExternal opens a session for a person an identity provider
	// (OpenID Connect) vouched for: the user is created on first sign-in
	// and its groups are replaced by the provider's.
	LoginExternal(ctx context.Context, name string, groups []string) (secret string, c *Caller, err error)
	// Roles returns the grants on a collection ("": the repository).
	Roles(ctx context.Context, resource ID) ([]Grant, error)
	// SetRoles replaces the grants on a collection ("": the repository).
	SetRoles(ctx context.Context, resource ID, grants []Grant) error
	// Audit returns a page of the audit trail.
	Audit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error)
	// RequestAccess, AccessRequests, AccessRequest, DecideAccessRequest,
	// WorkAccessGrants and RevokeAccess are the requests for the files of
	// a work whose record shows (access_requests.go).
	RequestAccess(ctx context.Context, work ID, message string) (*AccessRequest, error)
	AccessRequests(ctx context.Context, q AccessRequestQuery) ([]*AccessRequest, int64, error)
	AccessRequest(ctx context.Context, key int64) (*AccessRequest, error)
	DecideAccessRequest(ctx context.Context, key int64, d AccessDecision) (*AccessRequest, error)
	WorkAccessGrants(ctx context.Context, work ID) ([]Grant, error)
	RevokeAccess(ctx context.Context, work ID, principal string) error
}
