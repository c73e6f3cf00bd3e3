package oai

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"testing"
)

// TestTokenVersion1 reads a token of version 1 (before Seen), so that a
// harvest under way during an upgrade goes on; its Seen is 0.
func TestTokenVersion1(t *testing.T) {
	key := []byte("test key")
	b := []byte{1, 0} // version 1, ListRecords
	for _, n := range []uint64{12, 99, 100, 5001, uint64(len("oai_dc"))} {
		b = binary.AppendUvarint(b, n)
	}
	b = append(b, "oai_dca:b"...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = m.Sum(b)[:len(b)+tokenMACSize]
	tok, err := decodeToken(base64.RawURLEncoding.EncodeToString(b), key)
	if err != nil {
		t.Fatal(err)
	}
	want := token{Verb: "ListRecords", Prefix: "oai_dc", Set: "a:b", After: 12, Max: 99, Cursor: 100, Total: 5000}
	if *tok != want {
		t.Errorf("decoded %+v, want %+v", *tok, want)
	}
}

// TestTokenSeen: version 2 carries Seen, which must lie after After.
func TestTokenSeen(t *testing.T) {
	key := []byte("test key")
	in := token{Verb: "ListIdentifiers", Prefix: "marc21", After: 40, Seen: 41, Total: -1}
	tok, err := decodeToken(in.encode(key), key)
	if err != nil || *tok != in {
		t.Fatalf("decoded %+v (%v), want %+v", tok, err, in)
	}
	bad := token{Verb: "ListIdentifiers", Prefix: "marc21", After: 40, Seen: 40, Total: -1}
	if _, err := decodeToken(bad.encode(key), key); err == nil {
		t.Errorf("a token whose Seen is not after After was accepted")
	}
}
