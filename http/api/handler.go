// Package api serves the REST API's routes that have left the shell (the
// others are still served by package http): the search of public hits,
// the job queues, a resource's members, children and order, and the
// caller's tokens, the roles and the audit trail. Every read goes through the repository with the request's caller
// on its context, so the engine's access policy decides what is answered.
package api

import "github.com/shelfmark/shelfmark/http/kit"

// Handler serves the REST API routes of this package. It holds nothing
// but its dependencies, so it is safe for concurrent use.
type Handler struct {
	deps kit.Deps
	opts Options
}

// Options are the limits the REST API keeps to, set by the shell.
type Options struct {
	// MaxBodyBytes caps a JSON request body (more is 413).
	MaxBodyBytes int64
}

// New builds the REST API face from the shell's dependencies.
func New(deps kit.Deps, opts Options) *Handler { return &Handler{deps: deps, opts: opts} }

// Routes are the REST API routes of this package.
func (s *Handler) Routes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/api/v1/search", Handle: s.search},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/members", Handle: s.listMembers},
		{Method: "POST", Pattern: "/api/v1/resources/{id}/members", Handle: s.addMembers},
		{Method: "DELETE", Pattern: "/api/v1/resources/{id}/members/{member}", Handle: s.removeMember},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/children", Handle: s.listChildren},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/order", Handle: s.putOrder},
		{Method: "GET", Pattern: "/api/v1/tokens", Handle: s.listTokens},
		{Method: "POST", Pattern: "/api/v1/tokens", Handle: s.createToken},
		{Method: "DELETE", Pattern: "/api/v1/tokens/{id}", Handle: s.revokeToken},
		{Method: "GET", Pattern: "/api/v1/roles", Handle: s.getRoles},
		{Method: "PUT", Pattern: "/api/v1/roles", Handle: s.putRoles},
		{Method: "GET", Pattern: "/api/v1/resources/{id}/roles", Handle: s.getRoles},
		{Method: "PUT", Pattern: "/api/v1/resources/{id}/roles", Handle: s.putRoles},
		{Method: "GET", Pattern: "/api/v1/audit", Handle: s.audit},
		{Method: "GET", Pattern: "/api/v1/jobs", Handle: s.getJobs, Admin: true},
		{Method: "GET", Pattern: "/api/v1/jobs/{queue}", Handle: s.listJobs, Admin: true},
		{Method: "POST", Pattern: "/api/v1/jobs/{queue}/{action}", Handle: s.queueAction, Admin: true},
	}
}
