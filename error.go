package shelfmark

import (
	"errors"
	"fmt"
)

// Error codes. Adapters map them to protocol errors (HTTP status codes,
// OAI-PMH error codes); they never leak database or driver errors.
const (
	ECONFLICT       = "conflict"        // 409: the request conflicts with stored state
	EGONE           = "gone"            // 410: the resource was deleted; its tombstone remains
	EINTERNAL       = "internal"        // 500: a fault of the server, not of the request
	EINVALID        = "invalid"         // 400: the request is malformed or breaks a rule
	ENOTFOUND       = "not_found"       // 404: no such resource
	EPRECONDITION   = "precondition"    // 412: If-Match names a version that is no longer current
	ETOOLARGE       = "too_large"       // 413: a body or file exceeds the configured limit
	EUNSUPPORTED    = "unsupported"     // 415: the media type cannot be read
	ENOTACCEPTABLE  = "not_acceptable"  // 406: no representation matches Accept
	EUNAVAILABLE    = "unavailable"     // 503: the server is shutting down or overloaded
	EDIGESTMISMATCH = "digest_mismatch" // 409: the bytes do not match the client's checksum
	EUNAUTHORIZED   = "unauthorized"    // 401: no valid credentials, and the request needs some
	EFORBIDDEN      = "forbidden"       // 403: the caller may see the resource but not do this
	ESTORAGEFULL    = "storage_full"    // 507: the disk or database has no space left
	ETOOMANY        = "too_many"        // 429: too many attempts or concurrent requests; retry later
	EQUOTA          = "quota"           // 507: the caller's (or the server's) quota of stored bytes is reached
)

// Error is the error type of the domain. Code is one of the E* constants,
// Message is a sentence meant for a person, and Details carries structured
// facts a client may act on (for example both digests of a checksum
// mismatch, or the line and column of a parse error).
type Error struct {
	Code    string
	Message string
	Details map[string]any
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("shelfmark: %s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the human message of the first *Error in err's chain,
// or a generic sentence for internal errors, which must not be shown to
// clients verbatim.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
