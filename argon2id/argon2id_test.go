package argon2id

import (
	"strings"
	"testing"
)

// cheap keeps the tests fast; the encoding and the checks do not depend on
// the cost.
var cheap = Params{Memory: 64, Time: 1, Threads: 1}

func newCheap(t testing.TB) *Hasher {
	h, err := New(cheap, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRoundTrip(t *testing.T) {
	h := newCheap(t)
	enc, err := h.Hash("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding %q is not the PHC form", enc)
	}
	ok, err := h.Verify("correct horse battery staple", enc)
	if err != nil || !ok {
		t.Fatalf("Verify(right password) = %v, %v", ok, err)
	}
	ok, err = h.Verify("correct horse battery stapler", enc)
	if err != nil || ok {
		t.Fatalf("Verify(wrong password) = %v, %v", ok, err)
	}
	ok, err = h.Verify("", enc)
	if err != nil || ok {
		t.Fatalf("Verify(empty password) = %v, %v", ok, err)
	}
	// a fresh salt each time
	enc2, _ := h.Hash("correct horse battery staple")
	if enc2 == enc {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
}

// TestOtherParams: a hash made with other parameters (as stored before the
// defaults changed) still verifies.
func TestOtherParams(t *testing.T) {
	h := newCheap(t)
	other, err := New(Params{Memory: 128, Time: 2, Threads: 2, SaltLen: 32, KeyLen: 64}, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := other.Hash("pw")
	if ok, err := h.Verify("pw", enc); err != nil || !ok {
		t.Fatalf("Verify(%s) = %v, %v", enc, ok, err)
	}
}

// TestKnownVector: a hash made by the reference implementation (argon2
// CLI: echo -n password | argon2 somesalt -id -t 2 -m 16 -p 4 -l 32 -e)
// verifies, so hashes are interchangeable with other tools.
func TestKnownVector(t *testing.T) {
	h := newCheap(t)
	const enc = "$argon2id$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$GpZ3sK/oH9p7VIiV56G/64Zo/8GaUw434IimaPqxwCo"
	ok, err := h.Verify("password", enc)
	if err != nil || !ok {
		t.Fatalf("Verify(reference vector) = %v, %v", ok, err)
	}
}

func TestMalformed(t *testing.T) {
	h := newCheap(t)
	good, _ := h.Hash("pw")
	for _, enc := range []string{
		"",
		"$",
		"plain",
		"$argon2i$v=19$m=64,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=16$m=64,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$t=1,m=64,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=-1,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=0,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=1,p=0$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=1,p=256$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=4294967295,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8", // 4 TiB
		"$argon2id$v=19$m=64,t=1000000,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ=$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8", // padding
		"$argon2id$v=19$m=64,t=1,p=1$!!!$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$",                                  // no hash
		"$argon2id$v=19$m=64,t=1,p=1$$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8",             // no salt
		"$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8$", // extra field
		good + "*",
		strings.Replace(good, "m=64", "m=064", 1),
	} {
		ok, err := h.Verify("pw", enc)
		if err == nil || ok {
			t.Errorf("Verify(%q) = %v, %v; want an error", enc, ok, err)
		}
	}
}

func TestNewRefusesBadParams(t *testing.T) {
	for _, p := range []Params{{Memory: 1 << 30}, {Time: 1000}, {SaltLen: 2}, {KeyLen: 4}} {
		if _, err := New(p, 0); err == nil {
			t.Errorf("New(%+v) accepted", p)
		}
	}
}

// FuzzDecode: the parser of stored hashes never panics, and what it
// accepts is within the limits and encodes back to the same string.
func FuzzDecode(f *testing.F) {
	h := newCheap(f)
	good, _ := h.Hash("pw")
	f.Add(good)
	f.Add("$argon2id$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8")
	f.Add("$argon2id$v=19$m=,t=,p=$$")
	f.Add("$$$$$")
	f.Fuzz(func(t *testing.T, s string) {
		p, salt, key, err := decode(s)
		if err != nil {
			return
		}
		if err := p.check(); err != nil {
			t.Fatalf("decode(%q) accepted parameters outside the limits: %v", s, err)
		}
		if back := encode(p, salt, key); back != s {
			t.Fatalf("decode(%q) then encode gives %q", s, back)
		}
	})
}

// TestDefaults: with no parameters, hashes use RFC 9106's second
// recommended option.
func TestDefaults(t *testing.T) {
	h, err := New(Params{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := h.Hash("pw")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=65536,t=3,p=4$") || len(enc) != len("$argon2id$v=19$m=65536,t=3,p=4$")+22+1+43 {
		t.Fatalf("default hash %q", enc)
	}
}
