package kit

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"
)

// RequestIDs hands out the ids of requests (X-Request-Id): a random
// prefix of the process and a sequence. It is safe for concurrent use;
// build it with NewRequestIDs.
type RequestIDs struct {
	prefix string
	seq    atomic.Uint64
}

// NewRequestIDs returns request ids with a fresh random prefix.
func NewRequestIDs() *RequestIDs {
	var b [6]byte
	rand.Read(b[:])
	return &RequestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

// Of returns the client's X-Request-Id when it is sane (1 to 64 letters,
// digits and ._:-), else a fresh one (one small allocation).
func (g *RequestIDs) Of(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && SaneID(id) {
		return id
	}
	return g.prefix + strconv.FormatUint(g.seq.Add(1), 36)
}

// SaneID reports whether a request id is made of letters, digits and
// ._:- only.
func SaneID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
