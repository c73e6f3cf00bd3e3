package kit

import "net/http"

// HandlerFunc is a handler that returns its error instead of writing it:
// the shell writes the error (as JSON, or as an HTML page for the
// interface's routes), counts the request and logs faults.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one route a face serves: a method, a pattern of
// net/http.ServeMux, and its handler, which the shell wraps in its
// envelope (errors, metrics, compression, the parse gate, replica
// routing) before registering it.
type Route struct {
	Method, Pattern string
	Handle          HandlerFunc
	// Admin: only administrators (with an admin-scoped credential) reach
	// the handler; anyone else is refused by the shell.
	Admin bool
	// Upload: the request carries a file, so it takes one of the shell's
	// upload slots (answered 503 with Retry-After when none is free).
	Upload bool
}
