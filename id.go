package shelfmark

import (
	"context"
	"fmt"
	"math/bits"
	"sync"
)

// ID is the public identifier of a resource: nine characters from the NOID
// "betanumeric" alphabet (digits and consonants, no vowels, so ids never spell
// words), the last of which is a NOID check character. An ID is an opaque
// rewriting of the resource's database key (a number handed out in blocks by
// the database, rule R4), so any number of processes mint without colliding,
// and a mistyped id is rejected without touching the database.
type ID string

const (
	idAlphabet = "0123456789bcdfghjkmnpqrstvwxz" // NOID betanumeric, 29 characters
	idDigits   = 8                               // digits before the check character
	idSpace    = 500246412961                    // 29^8: the number of distinct ids
	// idMul and idAdd make the affine bijection k -> (idMul*k + idAdd) mod
	// idSpace that keeps consecutive keys from looking consecutive. idMul is
	// coprime to 29; idInv is its inverse modulo idSpace.
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

// EncodeID returns the public ID of database key k (1 <= k <= MaxKey).
func EncodeID(k int64) ID {
	if k < 1 || k > MaxKey {
		panic(fmt.Sprintf("shelfmark: key %d out of id range", k))
	}
	v := (mulmod(uint64(k), idMul, idSpace) + idAdd) % idSpace
	var b [idDigits + 1]byte
	for i := idDigits - 1; i >= 0; i-- {
		b[i] = idAlphabet[v%29]
		v /= 29
	}
	b[idDigits] = checkChar(b[:idDigits])
	return ID(b[:])
}

// Key returns the database key of id, or an ENOTFOUND error when id is not
// one that EncodeID could have produced (wrong length, alphabet or check
// character). No database is consulted.
func (id ID) Key() (int64, error) {
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
	k := mulmod((v+idSpace-idAdd)%idSpace, idInv, idSpace)
	if k == 0 {
		return 0, Errorf(ENOTFOUND, "No resource has the id %q.", s)
	}
	return int64(k), nil
}

// Valid reports whether id is well formed with a correct check character.
func (id ID) Valid() bool { _, err := id.Key(); return err == nil }

func alphabetIndex(c byte) int {
	for i := 0; i < len(idAlphabet); i++ {
		if idAlphabet[i] == c {
			return i
		}
	}
	return -1
}

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
