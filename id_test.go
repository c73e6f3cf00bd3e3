package shelfmark

import "testing"

// testIDs is a keyed codec for the tests of this file.
var testIDs = NewIDCodec([]byte("a secret for the id tests"))

func TestIDRoundTrip(t *testing.T) {
	for name, c := range map[string]*IDCodec{"keyed": testIDs, "legacy": LegacyIDCodec()} {
		seen := map[ID]bool{}
		for _, k := range []int64{1, 2, 3, 28, 29, 30, 1000, 123456789, MaxKey - 1, MaxKey} {
			id := c.Encode(k)
			if len(id) != 9 || !id.Valid() {
				t.Fatalf("%s: Encode(%d) = %q, want 9 characters with a correct check character", name, k, id)
			}
			got, err := c.Key(id)
			if err != nil || got != k {
				t.Fatalf("%s: Encode(%d) = %q -> Key() = %d, %v", name, k, id, got, err)
			}
			if seen[id] {
				t.Fatalf("%s: duplicate id %q", name, id)
			}
			seen[id] = true
		}
	}
}

func TestIDCheckCharacterCatchesTypos(t *testing.T) {
	for k := int64(1); k < 3000; k += 7 {
		id := []byte(testIDs.Encode(k))
		// every single-character substitution is rejected
		for i := range id {
			orig := id[i]
			for j := 0; j < len(idAlphabet); j++ {
				if idAlphabet[j] == orig {
					continue
				}
				id[i] = idAlphabet[j]
				if ID(id).Valid() {
					t.Fatalf("substitution %q accepted (key %d)", id, k)
				}
			}
			id[i] = orig
		}
		// every adjacent transposition of distinct characters is rejected
		for i := 0; i+1 < len(id); i++ {
			if id[i] == id[i+1] {
				continue
			}
			id[i], id[i+1] = id[i+1], id[i]
			if ID(id).Valid() {
				t.Fatalf("transposition %q accepted (key %d)", id, k)
			}
			id[i], id[i+1] = id[i+1], id[i]
		}
	}
}

func TestIDRejectsMalformed(t *testing.T) {
	for _, s := range []string{"", "abc", "0000000000", "aaaaaaaaa", "../../etc", "00000000b"} {
		if _, err := testIDs.Key(ID(s)); ErrorCode(err) != ENOTFOUND {
			t.Errorf("Key(%q) error = %v, want not_found", s, err)
		}
		if ErrorCode(ID(s).Check()) != ENOTFOUND || ID(s).Valid() {
			t.Errorf("ID(%q).Check() = %v, want not_found", s, ID(s).Check())
		}
	}
}

func FuzzIDKey(f *testing.F) {
	f.Add("bcdfghjkm")
	f.Add(string(testIDs.Encode(42)))
	f.Fuzz(func(t *testing.T, s string) {
		k, err := testIDs.Key(ID(s))
		if err != nil {
			return
		}
		if testIDs.Encode(k) != ID(s) {
			t.Fatalf("Key(%q) = %d but Encode(%d) = %q", s, k, k, testIDs.Encode(k))
		}
	})
}

// TestIDPermutation shows the keyed mapping is a bijection: it round-trips
// over a million keys from the start of the key space and keys near its
// end, and no two keys of the sample share an id.
func TestIDPermutation(t *testing.T) {
	n := int64(1_000_000)
	if testing.Short() {
		n = 100_000
	}
	seen := make(map[uint64]int64, n+2000)
	check := func(k int64) {
		v := testIDs.permute(uint64(k))
		if v >= idSpace {
			t.Fatalf("permute(%d) = %d, outside [0, 29^8)", k, v)
		}
		if back := testIDs.unpermute(v); back != uint64(k) {
			t.Fatalf("unpermute(permute(%d)) = %d", k, back)
		}
		if other, dup := seen[v]; dup {
			t.Fatalf("keys %d and %d both map to %d", other, k, v)
		}
		seen[v] = k
	}
	for k := int64(0); k < n; k++ {
		check(k)
	}
	for k := int64(MaxKey) - 999; k <= MaxKey; k++ {
		check(k)
	}
	for _, k := range []int64{1, 2, idHalf - 1, idHalf, idHalf + 1, MaxKey} {
		id := testIDs.Encode(k)
		if got, err := testIDs.Key(id); err != nil || got != k {
			t.Fatalf("Encode(%d) = %q -> Key() = %d, %v", k, id, got, err)
		}
	}
}

// TestIDsNeedTheSecret shows that ids do not follow from one another: two
// secrets give different ids to the same keys, and the ids of consecutive
// keys have no constant difference (as an affine map's have).
func TestIDsNeedTheSecret(t *testing.T) {
	other := NewIDCodec([]byte("another repository's secret"))
	same := 0
	diffs := map[int64]bool{}
	prev := int64(-1)
	for k := int64(1); k <= 100; k++ {
		a, b := testIDs.Encode(k), other.Encode(k)
		if a == b {
			same++
		}
		v := int64(testIDs.permute(uint64(k)))
		if prev >= 0 {
			diffs[(v-prev+idSpace)%idSpace] = true
		}
		prev = v
	}
	if same > 0 {
		t.Errorf("%d of keys 1..100 have the same id under two secrets", same)
	}
	if len(diffs) < 95 {
		t.Errorf("ids of consecutive keys 1..100 differ by only %d distinct amounts; want them unrelated", len(diffs))
	}
	// the affine legacy map is what this rules out: one constant difference
	legacy := map[int64]bool{}
	for k := uint64(1); k < 100; k++ {
		d := (int64(legacyIDs.permute(k+1)) - int64(legacyIDs.permute(k)) + idSpace) % idSpace
		legacy[d] = true
	}
	if len(legacy) != 1 {
		t.Errorf("the legacy map has %d differences, want 1 (the test would not see an affine map)", len(legacy))
	}
	// the same secret gives the same codec
	again := NewIDCodec([]byte("a secret for the id tests"))
	for k := int64(1); k <= 100; k++ {
		if again.Encode(k) != testIDs.Encode(k) {
			t.Fatalf("one secret gives two ids to key %d", k)
		}
	}
}

// TestLegacyIDs pins ids issued before ids were keyed: stores that issued
// them keep them.
func TestLegacyIDs(t *testing.T) {
	for k, want := range map[int64]ID{1: "qhp6d4ppw", 59: "0thffm4pf", 123456789: "vm4zvt5qn", MaxKey: "m7cc5377v"} {
		if got := LegacyIDCodec().Encode(k); got != want {
			t.Errorf("legacy Encode(%d) = %q, want %q", k, got, want)
		}
		if got, err := LegacyIDCodec().Key(want); err != nil || got != k {
			t.Errorf("legacy Key(%q) = %d, %v, want %d", want, got, err, k)
		}
	}
}

func BenchmarkIDEncode(b *testing.B) {
	for i := 0; i < b.N; i++ {
		testIDs.Encode(int64(i%1000000) + 1)
	}
}
