package webarchive

import "github.com/shelfmark/shelfmark/http/kit"

// Handler serves the web archive routes of the API and opens captures'
// records for the interface's pages. It holds nothing but its
// dependencies, so it is safe for concurrent use.
type Handler struct {
	deps kit.Deps
}

// New builds the web archive face from the shell's dependencies.
func New(deps kit.Deps) *Handler { return &Handler{deps: deps} }
