// Package api serves the REST API's routes that have left the shell (the
// others are still served by package http): today the search of public
// hits. Every read goes through the repository with the request's caller
// on its context, so the engine's access policy decides what is answered.
package api

import "github.com/shelfmark/shelfmark/http/kit"

// Handler serves the REST API routes of this package. It holds nothing
// but its dependencies, so it is safe for concurrent use.
type Handler struct {
	deps kit.Deps
}

// New builds the REST API face from the shell's dependencies.
func New(deps kit.Deps) *Handler { return &Handler{deps: deps} }

// Routes are the REST API routes of this package.
func (s *Handler) Routes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/api/v1/search", Handle: s.search},
	}
}
