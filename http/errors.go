package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/shelfmark/shelfmark"
)

// EMETHOD is the code of a request whose method the path does not take
// (405); it is the HTTP layer's own, not the domain's.
const EMETHOD = "method_not_allowed"

// statusOf maps error codes to HTTP status codes.
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
}

// ERANGE is the code of a Range outside the file (416), which
// http.ServeContent detects.
const ERANGE = "range_not_satisfiable"

// errorBody is the JSON of every error response.
type errorBody struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// writeError writes err as JSON with its status and returns the status.
func writeError(w http.ResponseWriter, r *http.Request, err error) int {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		err = &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: "The request body is larger than this server accepts.", Details: map[string]any{"limit": maxErr.Limit}}
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		err = shelfmark.Errorf(shelfmark.EUNAVAILABLE, "The request was cancelled.")
	}
	body := errorBody{Code: shelfmark.ErrorCode(err), Message: shelfmark.ErrorMessage(err)}
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
		retryAfter(w, err)
	case http.StatusRequestTimeout:
		w.Header().Set("Connection", "close")
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
	return status
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}
