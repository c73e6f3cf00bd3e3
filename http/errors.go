package http

import "github.com/shelfmark/shelfmark/http/kit"

// The HTTP layer's own error codes, beside the domain's (kit holds them
// with the statuses they are answered with).
const (
	// EMETHOD is the code of a request whose method the path does not
	// take (405).
	EMETHOD = kit.EMETHOD
	// ERANGE is the code of a Range outside the file (416).
	ERANGE = kit.ERANGE
)
