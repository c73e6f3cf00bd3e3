package kit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/shelfmark/shelfmark"
)

// EMETHOD is the code of a request whose method the path does not take
// (405); it is the HTTP layer's own, not the domain's.
const EMETHOD = "method_not_allowed"

// statusOf maps error codes to HTTP status codes; read only.
var statusOf = map[string]int{
	shelfmark.EINVALID:        http.StatusBadRequest,
	shelfmark.ENOTFOUND:       http.StatusNotFound,
	shelfmark.ENOTACCEPTABLE:  http.StatusNotAcceptable,
	shelfmark.ECONFLICT:       http.StatusConflict,
	shelfmark.EDIGESTMISMATCH: http.StatusConflict,
	shelfmark.EGONE:           http.StatusGone,
	shelfmark.EPRECONDITION:   http.StatusPreconditionFailed,
	shelfmark.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	shelfmark.EUNSUPPORTED:    http.StatusUnsupportedMediaType,
	shelfmark.EUNAVAILABLE:    http.StatusServiceUnavailable,
	shelfmark.EINTERNAL:       http.StatusInternalServerError,
	shelfmark.EUNAUTHORIZED:   http.StatusUnauthorized,
	shelfmark.EFORBIDDEN:      http.StatusForbidden,
	shelfmark.ESTORAGEFULL:    http.StatusInsufficientStorage,
	shelfmark.EQUOTA:          http.StatusInsufficientStorage,
	shelfmark.ETOOMANY:        http.StatusTooManyRequests,
	EMETHOD:                   http.StatusMethodNotAllowed,
	ERANGE:                    http.StatusRequestedRangeNotSatisfiable,
	ETIMEOUT:                  http.StatusRequestTimeout,
	ENOTIMPLEMENTED:           http.StatusNotImplemented,
}

// ENOTIMPLEMENTED is the code of a valid request for a feature the
// server does not offer, where the protocol asks for 501 rather than 400
// (the IIIF Image API's sizes with ^ that need upscaling); it is the HTTP
// layer's own, not the domain's.
const ENOTIMPLEMENTED = "not_implemented"

// ERANGE is the code of a Range outside the file (416), which
// http.ServeContent detects.
const ERANGE = "range_not_satisfiable"

// ErrorBody is the JSON of every error response (and of each failed item
// of a batch): its code, message and details.
type ErrorBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// WriteError writes err as JSON with the status of its code (500 for a
// code it does not know) and returns the status: a body over its limit is
// 413, a request its client gave up is 503, a 401 names the Bearer scheme
// (RFC 6750), a 429 or 503 carries Retry-After when the error says when,
// and a 408 closes the connection. It clears ETag and Content-Length set
// for the answer that failed.
func WriteError(w http.ResponseWriter, r *http.Request, err error) int {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		err = &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: "The request body is larger than this server accepts.", Details: map[string]any{"limit": maxErr.Limit}}
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		err = shelfmark.Errorf(shelfmark.EUNAVAILABLE, "The request was cancelled.")
	}
	body := ErrorBody{Code: shelfmark.ErrorCode(err), Message: shelfmark.ErrorMessage(err)}
	var se *shelfmark.Error
	if errors.As(err, &se) {
		body.Details = se.Details
	}
	status, ok := statusOf[body.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("ETag")
	w.Header().Del("Content-Length")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch status {
	case http.StatusUnauthorized:
		// RFC 6750: a credential that was sent and refused is an
		// invalid_token; a request without one just learns the scheme.
		if body.Details["invalid_token"] == true {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shelfmark", error="invalid_token"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shelfmark"`)
		}
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		RetryAfter(w, err)
	case http.StatusRequestTimeout:
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
	return status
}

// WriteJSON writes v as JSON, with a trailing newline, under status; an
// error is one of encoding, before anything is written, or of the write.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

// ETIMEOUT is the code of a request whose body came too slowly (408); it
// is the HTTP layer's own, not the domain's.
const ETIMEOUT = "request_timeout"

// RetryAfter sets Retry-After for an ETOOMANY or EUNAVAILABLE error that
// carries the detail retry_after (seconds).
func RetryAfter(w http.ResponseWriter, err error) {
	var se *shelfmark.Error
	if errors.As(err, &se) && (se.Code == shelfmark.ETOOMANY || se.Code == shelfmark.EUNAVAILABLE) {
		if secs, ok := se.Details["retry_after"].(int64); ok {
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		}
	}
}

// ToErrorBody is the JSON of err, as WriteError would send it (without
// the rewriting of oversized bodies and cancelled requests).
func ToErrorBody(err error) *ErrorBody {
	eb := &ErrorBody{Code: shelfmark.ErrorCode(err), Message: shelfmark.ErrorMessage(err)}
	var se *shelfmark.Error
	if errors.As(err, &se) {
		eb.Details = se.Details
	}
	return eb
}

// codeOfStatus maps the status of an answer that is not an API error (from
// a proxy, say) to an error code. 409 is left out: its codes (conflict,
// digest_mismatch) tell what happened, and only the server knows which.
var codeOfStatus = func() map[int]string {
	m := map[int]string{}
	for code, status := range statusOf {
		if status != http.StatusConflict {
			m[status] = code
		}
	}
	return m
}()

// StatusOf is the HTTP status of an error code; ok is false for a code
// without one (answered 500).
func StatusOf(code string) (status int, ok bool) {
	status, ok = statusOf[code]
	return status, ok
}

// Status is the HTTP status of an error code, 0 for a code without one.
func Status(code string) int { return statusOf[code] }

// CodeOf is the error code of an HTTP status, for an answer that is not
// an API error (from a proxy, say); 409 has none, since only the server
// knows which of its codes it meant.
func CodeOf(status int) (code string, ok bool) {
	code, ok = codeOfStatus[status]
	return code, ok
}
