// Package argon2id hashes passwords with Argon2id (RFC 9106) for
// shelfmark.PasswordHasher, in the PHC string form that other Argon2
// implementations read and write:
//
//	$argon2id$v=19$m=65536,t=3,p=4$SALT$HASH
//
// where SALT and HASH are unpadded standard base64. The parameters are kept
// in every hash, so hashes made with other parameters (older ones, or
// another tool's) keep verifying after the defaults change.
package argon2id

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/shelfmark/shelfmark"
)

// Params are the cost parameters of Argon2id.
type Params struct {
	// Memory is the memory cost in KiB.
	Memory uint32
	// Time is the number of passes over the memory.
	Time uint32
	// Threads is the degree of parallelism.
	Threads uint8
	// SaltLen and KeyLen are the lengths in bytes of the random salt and
	// of the derived hash.
	SaltLen, KeyLen uint32
}

// DefaultParams returns the second recommended option of RFC 9106
// (section 4): 64 MiB of memory, 3 passes, 4 lanes, a 128-bit salt and a
// 256-bit hash. (The first recommended option needs 2 GiB per hash, too
// much for a server that checks several passwords at once.)
func DefaultParams() Params {
	return Params{Memory: 64 * 1024, Time: 3, Threads: 4, SaltLen: 16, KeyLen: 32}
}

// Limits on the parameters a stored hash may name, so that a damaged or
// hostile hash cannot make Verify allocate or compute without bound.
const (
	maxMemory  = 1 << 20 // KiB: 1 GiB
	maxTime    = 64
	maxSaltLen = 64
	maxKeyLen  = 128
	minSaltLen = 8
	minKeyLen  = 16
)

// Hasher implements shelfmark.PasswordHasher with Argon2id. The zero value
// is not usable; use New.
type Hasher struct {
	p Params
	// slots bounds how many hashes are computed at once, so that a burst
	// of logins costs at most cap(slots) × Memory of memory.
	slots chan struct{}
}

var _ shelfmark.PasswordHasher = (*Hasher)(nil)

// New returns a hasher that makes new hashes with p (zero fields take the
// value of DefaultParams()) and computes at most concurrent hashes at once
// (0: 4). Verify accepts hashes of any parameters within sane limits.
func New(p Params, concurrent int) (*Hasher, error) {
	def := DefaultParams()
	if p.Memory == 0 {
		p.Memory = def.Memory
	}
	if p.Time == 0 {
		p.Time = def.Time
	}
	if p.Threads == 0 {
		p.Threads = def.Threads
	}
	if p.SaltLen == 0 {
		p.SaltLen = def.SaltLen
	}
	if p.KeyLen == 0 {
		p.KeyLen = def.KeyLen
	}
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("argon2id: %w", err)
	}
	if concurrent <= 0 {
		concurrent = 4
	}
	return &Hasher{p: p, slots: make(chan struct{}, concurrent)}, nil
}

// check refuses parameters outside the limits.
func (p Params) check() error {
	switch {
	case p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory:
		return fmt.Errorf("memory %d KiB is outside 8×threads..%d", p.Memory, maxMemory)
	case p.Time < 1 || p.Time > maxTime:
		return fmt.Errorf("time %d is outside 1..%d", p.Time, maxTime)
	case p.Threads < 1:
		return errors.New("threads must be at least 1")
	case p.SaltLen < minSaltLen || p.SaltLen > maxSaltLen:
		return fmt.Errorf("salt length %d is outside %d..%d", p.SaltLen, minSaltLen, maxSaltLen)
	case p.KeyLen < minKeyLen || p.KeyLen > maxKeyLen:
		return fmt.Errorf("key length %d is outside %d..%d", p.KeyLen, minKeyLen, maxKeyLen)
	}
	return nil
}

// Params returns the parameters of new hashes.
func (h *Hasher) Params() Params { return h.p }

// key derives the hash, waiting for a free slot.
func (h *Hasher) key(password string, salt []byte, p Params) []byte {
	h.slots <- struct{}{}
	defer func() { <-h.slots }()
	return argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
}

// Hash implements shelfmark.PasswordHasher.
func (h *Hasher) Hash(password string) (string, error) {
	salt := make([]byte, h.p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("argon2id: salt: %w", err)
	}
	return encode(h.p, salt, h.key(password, salt, h.p)), nil
}

// Verify implements shelfmark.PasswordHasher: the hashes are compared in
// constant time. A malformed encoding is an error, never a panic.
func (h *Hasher) Verify(password, encoded string) (bool, error) {
	p, salt, want, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := h.key(password, salt, p)
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// encode writes the PHC string form.
func encode(p Params, salt, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// decode parses the PHC string form; it refuses anything else, and
// parameters outside the limits.
func decode(s string) (Params, []byte, []byte, error) {
	var p Params
	bad := func(why string) (Params, []byte, []byte, error) {
		return p, nil, nil, fmt.Errorf("argon2id: malformed hash: %s", why)
	}
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" {
		return bad("want $argon2id$v=19$m=…,t=…,p=…$salt$hash")
	}
	if parts[1] != "argon2id" {
		return bad(fmt.Sprintf("algorithm %q is not argon2id", parts[1]))
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return bad(fmt.Sprintf("version %q is not v=%d", parts[2], argon2.Version))
	}
	kv := strings.Split(parts[3], ",")
	if len(kv) != 3 {
		return bad("want the parameters m=…,t=…,p=…")
	}
	var vals [3]uint64
	for i, name := range []string{"m=", "t=", "p="} {
		v, ok := strings.CutPrefix(kv[i], name)
		if !ok || v == "" || (len(v) > 1 && v[0] == '0') {
			return bad(fmt.Sprintf("parameter %q is not %s followed by a number", kv[i], name))
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return bad(fmt.Sprintf("parameter %q is not %s followed by a number", kv[i], name))
		}
		vals[i] = n
	}
	if vals[2] > 255 {
		return bad(fmt.Sprintf("parallelism %d is above 255", vals[2]))
	}
	b64 := base64.RawStdEncoding.Strict()
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return bad("the salt is not unpadded base64")
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil {
		return bad("the hash is not unpadded base64")
	}
	p = Params{Memory: uint32(vals[0]), Time: uint32(vals[1]), Threads: uint8(vals[2]), SaltLen: uint32(len(salt)), KeyLen: uint32(len(key))}
	if err := p.check(); err != nil {
		return bad(err.Error())
	}
	return p, salt, key, nil
}
