package ingest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// fingerprintHex is how many hex digits of a SHA-256 a source key keeps:
// 128 bits, so that two different inputs are told apart whatever their
// number.
const fingerprintHex = 32

// fingerprint hashes a sequence of strings and numbers unambiguously: each
// string is preceded by its length, so that ("ab", "c") and ("a", "bc")
// differ.
type fingerprint struct{ h hash.Hash }

func newFingerprint(kind string) *fingerprint {
	f := &fingerprint{h: sha256.New()}
	f.str(kind)
	return f
}

// str adds a string.
func (f *fingerprint) str(s string) {
	var n [binary.MaxVarintLen64]byte
	f.h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	f.h.Write([]byte(s))
}

// num adds a number.
func (f *fingerprint) num(v int64) {
	var n [binary.MaxVarintLen64]byte
	f.h.Write(n[:binary.PutVarint(n[:], v)])
}

// sum returns the first fingerprintHex hex digits of the digest.
func (f *fingerprint) sum() string {
	return hex.EncodeToString(f.h.Sum(nil))[:fingerprintHex]
}
