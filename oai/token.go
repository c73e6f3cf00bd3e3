package oai

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// token is the state a resumptionToken carries: a keyset cursor into the
// view (rule R11), never an offset and never server-side state, so a token
// stays valid across restarts, on every server sharing the database, and
// while records are added.
type token struct {
	// Verb is the list the token continues (ListRecords, ListIdentifiers,
	// ListSets).
	Verb string
	// Prefix and Set are the list's metadataPrefix and setSpec.
	Prefix, Set string
	// After is the Seq (for sets, the key) of the last item returned.
	After int64
	// Max is the highest Seq of the list, or 0 for a list that is open at
	// its end (records added during the harvest are part of it). A list
	// with until is closed when it opens (see Provider.page).
	Max int64
	// Cursor is how many items earlier pages returned; Total is the
	// completeListSize given on the first page, or -1 when none is given
	// (see Provider.tally).
	Cursor, Total int64
	// Seen is the Seq of the first item after the page that issued the
	// token: the view that answered it held that item, so a view whose
	// next page does not reach it is older than that one (a read replica
	// behind the server that gave the previous page), and the page is read
	// again from the primary database. 0 in tokens of version 1.
	Seen int64
	// wnd is the from/until window of a list's first request (not encoded:
	// later pages carry it as After and Max).
	wnd window
	// fresh marks a list's first request (not encoded).
	fresh bool
}

const (
	// tokenVersion is the version of the tokens encode writes; version 1
	// (without Seen) is still read, so that harvests running during an
	// upgrade go on.
	tokenVersion = 2
	tokenMACSize = 12
)

var tokenVerbs = []string{"ListRecords", "ListIdentifiers", "ListSets"}

// errBadToken is returned for every token that is not one this repository
// issued: garbled, truncated, forged or from another version.
var errBadToken = errors.New("bad resumption token")

// encode returns the token's text: base64url of its fields and a MAC under
// key, so that a token altered in any byte is refused.
func (t *token) encode(key []byte) string {
	b := make([]byte, 0, 64)
	b = append(b, tokenVersion)
	v := 0
	for i, name := range tokenVerbs {
		if name == t.Verb {
			v = i
		}
	}
	b = append(b, byte(v))
	b = binary.AppendUvarint(b, uint64(t.After))
	b = binary.AppendUvarint(b, uint64(t.Max))
	b = binary.AppendUvarint(b, uint64(t.Cursor))
	b = binary.AppendUvarint(b, uint64(t.Total+1)) // -1 (not given) is 0
	b = binary.AppendUvarint(b, uint64(t.Seen))
	b = binary.AppendUvarint(b, uint64(len(t.Prefix)))
	b = append(b, t.Prefix...)
	b = append(b, t.Set...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = m.Sum(b)[:len(b)+tokenMACSize]
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken parses and checks a token's text.
func decodeToken(s string, key []byte) (*token, error) {
	if len(s) > 2048 {
		return nil, errBadToken
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 2+tokenMACSize {
		return nil, errBadToken
	}
	body, mac := b[:len(b)-tokenMACSize], b[len(b)-tokenMACSize:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:tokenMACSize], mac) {
		return nil, errBadToken
	}
	if body[0] < 1 || body[0] > tokenVersion || int(body[1]) >= len(tokenVerbs) {
		return nil, errBadToken
	}
	t := &token{Verb: tokenVerbs[body[1]]}
	rest := body[2:]
	// version 1: After, Max, Cursor, Total+1, len(Prefix); version 2
	// puts Seen before len(Prefix)
	nums := make([]uint64, 5+int(body[0]-1))
	for i := range nums {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > 1<<62 {
			return nil, errBadToken
		}
		nums[i], rest = n, rest[k:]
	}
	t.After, t.Max, t.Cursor, t.Total = int64(nums[0]), int64(nums[1]), int64(nums[2]), int64(nums[3])-1
	if body[0] >= 2 {
		t.Seen = int64(nums[4])
	}
	plen := nums[len(nums)-1]
	if plen > uint64(len(rest)) {
		return nil, errBadToken
	}
	t.Prefix, t.Set = string(rest[:plen]), string(rest[plen:])
	if t.Total >= 0 && t.Cursor > t.Total || t.Max != 0 && t.After > t.Max || t.Seen != 0 && t.Seen <= t.After {
		return nil, errBadToken
	}
	return t, nil
}
