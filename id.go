package shelfmark

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"sync"
)

// ID is the public identifier of a resource: nine characters from the NOID
// "betanumeric" alphabet (digits and consonants, no vowels, so ids never spell
// words), the last of which is a NOID check character. An ID is a keyed
// rewriting of the resource's database key (a number handed out in blocks by
// the database, rule R4) by the repository's IDCodec, so any number of
// processes mint without colliding, ids cannot be guessed from one another
// without the repository's secret, and a mistyped id is rejected without
// touching the database.
type ID string

const (
	idAlphabet = "0123456789bcdfghjkmnpqrstvwxz" // NOID betanumeric, 29 characters
	idDigits   = 8                               // digits before the check character
	idSpace    = 500246412961                    // 29^8: the number of distinct ids
	idHalf     = 707281                          // 29^4: each half of the Feistel network
	idRounds   = 10                              // Feistel rounds (as FF1)
	// idMul and idAdd make the affine bijection k -> (idMul*k + idAdd) mod
	// idSpace of the legacy codec. idMul is coprime to 29; idInv is its
	// inverse modulo idSpace.
	idMul = 278467932173
	idAdd = 93116583429
)

// idInv is the multiplicative inverse of idMul modulo idSpace, computed once.
var idInv = func() uint64 {
	// extended Euclid on signed 64-bit values; idSpace < 2^39 so no overflow.
	a, m := int64(idMul), int64(idSpace)
	x0, x1 := int64(0), int64(1)
	for a > 1 {
		q := a / m
		a, m = m, a%m
		x0, x1 = x1-q*x0, x0
	}
	if x1 < 0 {
		x1 += idSpace
	}
	return uint64(x1)
}()

// MaxKey is the largest database key that has an ID.
const MaxKey = idSpace - 1

func mulmod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

// IDSecretSetting is the repository setting that holds the secret of the
// repository's IDCodec: 64 hexadecimal digits, or "legacy" for a store
// whose ids were issued before ids were keyed (see LoadIDCodec).
const IDSecretSetting = "id_secret"

// idLegacy is the value of IDSecretSetting that selects LegacyIDCodec.
const idLegacy = "legacy"

// IDCodec turns database keys into IDs and back. The mapping is a
// pseudo-random permutation of [0, 29^8) keyed by a per-repository secret:
// a ten-round Feistel network on two halves of four base-29 digits each,
// with AES-128 round functions and addition modulo 29^4 (the construction
// of the FF1 format-preserving cipher), so consecutive keys give unrelated
// ids and no id can be derived from another without the secret. An IDCodec
// is safe for concurrent use.
type IDCodec struct {
	block cipher.Block // nil for the legacy affine map
}

// NewIDCodec returns the codec keyed by secret (any length; 32 random
// bytes is the norm).
func NewIDCodec(secret []byte) *IDCodec {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("shelfmark id permutation"))
	block, err := aes.NewCipher(mac.Sum(nil)[:16])
	if err != nil {
		panic(err) // a 16-byte key is always accepted
	}
	return &IDCodec{block: block}
}

var legacyIDs = &IDCodec{}

// LegacyIDCodec returns the codec of stores created before ids were keyed:
// an affine map of the key with constants in the source. Those stores keep
// it, since ids are persistent identifiers and never change.
func LegacyIDCodec() *IDCodec { return legacyIDs }

// round is the Feistel round function: a pseudo-random number below idHalf
// of the round number and a half. buf is 32 bytes of scratch (one
// allocation per id instead of one per round).
func (c *IDCodec) round(buf []byte, i int, x uint64) uint64 {
	clear(buf[:16])
	buf[0] = byte(i)
	binary.BigEndian.PutUint64(buf[8:16], x)
	c.block.Encrypt(buf[16:32], buf[:16])
	return binary.BigEndian.Uint64(buf[16:24]) % idHalf
}

// permute maps v in [0, idSpace) to its image under the permutation.
func (c *IDCodec) permute(v uint64) uint64 {
	if c.block == nil {
		return (mulmod(v, idMul, idSpace) + idAdd) % idSpace
	}
	buf := make([]byte, 32)
	l, r := v/idHalf, v%idHalf
	for i := 0; i < idRounds; i++ {
		l, r = r, (l+c.round(buf, i, r))%idHalf
	}
	return l*idHalf + r
}

// unpermute is the inverse of permute.
func (c *IDCodec) unpermute(v uint64) uint64 {
	if c.block == nil {
		return mulmod((v+idSpace-idAdd)%idSpace, idInv, idSpace)
	}
	buf := make([]byte, 32)
	l, r := v/idHalf, v%idHalf
	for i := idRounds - 1; i >= 0; i-- {
		l, r = (r+idHalf-c.round(buf, i, l))%idHalf, l
	}
	return l*idHalf + r
}

// Encode returns the public ID of database key k (1 <= k <= MaxKey).
func (c *IDCodec) Encode(k int64) ID {
	if k < 1 || k > MaxKey {
		panic(fmt.Sprintf("shelfmark: key %d out of id range", k))
	}
	v := c.permute(uint64(k))
	var b [idDigits + 1]byte
	sum := 0 // checkChar's, from the digits at hand
	for i := idDigits - 1; i >= 0; i-- {
		d := int(v % 29)
		b[i] = idAlphabet[d]
		sum += (i + 1) * d
		v /= 29
	}
	b[idDigits] = idAlphabet[sum%29]
	return ID(b[:])
}

// Key returns the database key of id, or an ENOTFOUND error when id is not
// one that Encode could have produced (wrong length, alphabet or check
// character). No database is consulted.
func (c *IDCodec) Key(id ID) (int64, error) {
	v, err := id.digits()
	if err != nil {
		return 0, err
	}
	k := c.unpermute(v)
	if k == 0 {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q.", string(id))
	}
	return int64(k), nil
}

// Valid reports whether id decodes to a key.
func (c *IDCodec) Valid(id ID) bool { _, err := c.Key(id); return err == nil }

// Check returns an ENOTFOUND error unless id is well formed: nine
// characters of the id alphabet with a correct check character. It needs
// no codec: a mistyped id is rejected before any secret or database.
func (id ID) Check() error { _, err := id.digits(); return err }

// Valid reports whether id is well formed with a correct check character
// (see Check).
func (id ID) Valid() bool { return id.Check() == nil }

// digits checks id's form and returns the number its first eight
// characters spell in base 29.
func (id ID) digits() (uint64, error) {
	s := string(id)
	if len(s) != idDigits+1 {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q: ids are %d characters.", truncate(s, 40), idDigits+1)
	}
	var v uint64
	for i := 0; i < idDigits; i++ {
		d := alphabetIndex(s[i])
		if d < 0 {
			return 0, Errorf(ENOTFOUND, "No resource has the id %q: %q is not an id character.", s, s[i])
		}
		v = v*29 + uint64(d)
	}
	if checkChar([]byte(s[:idDigits])) != s[idDigits] {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q: its check character is wrong (mistyped?).", s)
	}
	return v, nil
}

// LoadIDCodec returns the codec of the repository in store, choosing it on
// first use: a store that holds resources already (created before ids
// were keyed) keeps the legacy mapping, so its ids never change; a new
// store gets 32 random bytes. The choice is stored once (the first of
// several servers starting together wins) in the IDSecretSetting setting,
// and every later load reads it.
func LoadIDCodec(ctx context.Context, store Storage) (*IDCodec, error) {
	var value string
	var found bool
	err := store.View(ctx, func(tx ReadTx) error {
		var err error
		if value, found, err = tx.Setting(ctx, IDSecretSetting); err != nil || found {
			return err
		}
		rows, err := tx.Changes(ctx, 0, 1)
		if err == nil && len(rows) > 0 {
			value = idLegacy
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the id secret: %w", err)
	}
	if !found {
		if value == "" {
			var secret [32]byte
			if _, err := rand.Read(secret[:]); err != nil {
				return nil, fmt.Errorf("make an id secret: %w", err)
			}
			value = hex.EncodeToString(secret[:])
		}
		err = store.Update(ctx, func(tx WriteTx) error {
			var err error
			value, err = tx.InitSetting(ctx, IDSecretSetting, value)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("store the id secret: %w", err)
		}
	}
	if value == idLegacy {
		return LegacyIDCodec(), nil
	}
	secret, err := hex.DecodeString(value)
	if err != nil || len(secret) < 16 {
		return nil, Errorf(EINTERNAL, "The repository setting %s is neither %q nor at least 32 hexadecimal digits.", IDSecretSetting, idLegacy)
	}
	return NewIDCodec(secret), nil
}

func alphabetIndex(c byte) int { return int(idIndex[c]) }

// idIndex is alphabetIndex as a table: every id a request names is
// decoded, and a page of them is checked character by character.
var idIndex = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(idAlphabet); i++ {
		t[idAlphabet[i]] = int8(i)
	}
	return t
}()

// checkChar is the NOID check character: the sum of each character's
// ordinal times its 1-based position, modulo 29. It detects every single
// character error and every transposition of two adjacent characters.
func checkChar(b []byte) byte {
	sum := 0
	for i, c := range b {
		if d := alphabetIndex(c); d > 0 {
			sum += (i + 1) * d
		}
	}
	return idAlphabet[sum%29]
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// KeyAllocator hands out contiguous blocks of database keys. Storage backends
// implement it with one short transaction per block, so processes sharing a
// database never receive overlapping blocks.
type KeyAllocator interface {
	// AllocateKeys reserves n consecutive keys and returns the first.
	AllocateKeys(ctx context.Context, n int) (first int64, err error)
}

// Minter mints keys from blocks reserved through a KeyAllocator (rule R4).
// It is safe for concurrent use. Keys of a block that a process never uses
// are simply skipped; ids are unique, not dense.
type Minter struct {
	alloc KeyAllocator
	block int

	mu        sync.Mutex
	next, end int64 // next key to hand out; end is one past the block
}

// NewMinter returns a Minter reserving block keys at a time.
func NewMinter(alloc KeyAllocator, block int) *Minter {
	if block < 1 {
		block = 1
	}
	return &Minter{alloc: alloc, block: block}
}

// Mint returns n fresh keys (n >= 1), reserving new blocks as needed.
func (m *Minter) Mint(ctx context.Context, n int) ([]int64, error) {
	keys := make([]int64, 0, n)
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(keys) < n {
		if m.next == m.end {
			size := m.block
			if want := n - len(keys); want > size {
				size = want
			}
			first, err := m.alloc.AllocateKeys(ctx, size)
			if err != nil {
				return nil, fmt.Errorf("reserve %d keys: %w", size, err)
			}
			if first+int64(size)-1 > MaxKey {
				return nil, Errorf(EINTERNAL, "The id space is exhausted.")
			}
			m.next, m.end = first, first+int64(size)
		}
		keys = append(keys, m.next)
		m.next++
	}
	return keys, nil
}
