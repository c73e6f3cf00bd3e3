package shelfmark

import (
	"context"
	"slices"
)

// Role is what a user or group may do on a collection (and its members) or
// on the whole repository. Each role includes the rights of the roles
// below it: manager > curator > depositor > viewer.
type Role string

// The roles.
const (
	// RoleManager may do everything on the collection, including granting
	// roles.
	RoleManager Role = "manager"
	// RoleCurator may edit and delete the collection's members.
	RoleCurator Role = "curator"
	// RoleDepositor may create works in the collection and edit the works
	// it deposited.
	RoleDepositor Role = "depositor"
	// RoleViewer may read the collection's private members.
	RoleViewer Role = "viewer"
)

// Roles lists the roles from the strongest to the weakest.
var Roles = []Role{RoleManager, RoleCurator, RoleDepositor, RoleViewer}

// rank orders roles; 0 for an unknown role.
func (r Role) rank() int {
	switch r {
	case RoleManager:
		return 4
	case RoleCurator:
		return 3
	case RoleDepositor:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r.rank() > 0 }

// Includes reports whether r grants at least the rights of other.
func (r Role) Includes(other Role) bool { return r.rank() >= other.rank() && other.rank() > 0 }

// Scope caps what a token may do, whatever its user may do.
type Scope string

// The scopes of a token.
const (
	// ScopeRead allows reading only.
	ScopeRead Scope = "read"
	// ScopeWrite allows reading and writing what the user's roles allow.
	ScopeWrite Scope = "write"
	// ScopeAdmin also allows the user's administrative rights (accounts,
	// job queues, metrics, the audit trail of the whole repository).
	ScopeAdmin Scope = "admin"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeRead || s == ScopeWrite || s == ScopeAdmin }

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

// Caller is who makes a request: an anonymous client, a signed-in user
// (through a token or a session), or the system itself (a worker, a
// command run against the data directory, a job).
type Caller struct {
	// User is the user's key; 0 for anonymous and system callers.
	User int64
	// Name is the user's name ("" for anonymous; the component for the
	// system, for example "system:worker").
	Name string
	// Admin is set for administrators (who hold every role everywhere).
	Admin bool
	// Groups are the groups the user belongs to.
	Groups []string
	// Scope caps what this request may do (ScopeAdmin for the system).
	Scope Scope
	// Token is the key of the token or session the request came with; 0
	// when none.
	Token int64
	// System marks the repository acting on its own behalf.
	System bool
	// Request is the request id, recorded in the audit trail.
	Request string
}

// Anonymous returns the caller of a request without credentials.
func Anonymous() *Caller { return &Caller{Scope: ScopeRead} }

// SystemCaller returns the repository acting on its own behalf; name says
// which part of it (for example "worker" or "cli").
func SystemCaller(name string) *Caller {
	return &Caller{Name: "system:" + name, System: true, Admin: true, Scope: ScopeAdmin}
}

// Authenticated reports whether the caller signed in (or is the system).
func (c *Caller) Authenticated() bool { return c.System || c.User != 0 }

// IsAdmin reports whether the caller holds administrative rights in this
// request: an administrator with an admin-scoped credential, or the system.
func (c *Caller) IsAdmin() bool { return c.System || (c.Admin && c.Scope == ScopeAdmin) }

// MayWrite reports whether the caller's credential allows writes at all.
func (c *Caller) MayWrite() bool {
	return c.System || (c.User != 0 && (c.Scope == ScopeWrite || c.Scope == ScopeAdmin))
}

// Principals are the names grants are made to: "user:NAME" and one
// "group:NAME" per group.
func (c *Caller) Principals() []string {
	if c.User == 0 {
		return nil
	}
	out := make([]string, 0, 1+len(c.Groups))
	out = append(out, UserPrincipal(c.Name))
	for _, g := range c.Groups {
		out = append(out, GroupPrincipal(g))
	}
	return out
}

// Actor is how the audit trail names the caller: the user's name, or
// "anonymous", or the system component.
func (c *Caller) Actor() string {
	switch {
	case c.System || c.Name != "":
		return c.Name
	}
	return "anonymous"
}

// InGroup reports whether the caller belongs to group g.
func (c *Caller) InGroup(g string) bool { return slices.Contains(c.Groups, g) }

// UserPrincipal names a user in a grant.
func UserPrincipal(name string) string { return "user:" + name }

// GroupPrincipal names a group in a grant.
func GroupPrincipal(name string) string { return "group:" + name }

type callerKey struct{}

// WithCaller returns a context that carries the caller. The HTTP adapter
// puts one on every request (anonymous when it carries no credentials).
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller a context carries. A context without one
// belongs to the process itself (a command run against the data
// directory, a worker, a test), which acts as the system: every network
// path must put a caller on its context before it reaches the engine.
func CallerFrom(ctx context.Context) *Caller {
	if c, ok := ctx.Value(callerKey{}).(*Caller); ok && c != nil {
		return c
	}
	return SystemCaller("process")
}
