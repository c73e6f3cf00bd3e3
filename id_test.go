package shelfmark

import "testing"

func TestIDRoundTrip(t *testing.T) {
	seen := map[ID]bool{}
	for _, k := range []int64{1, 2, 3, 28, 29, 30, 1000, 123456789, MaxKey - 1, MaxKey} {
		id := EncodeID(k)
		if len(id) != 9 {
			t.Fatalf("EncodeID(%d) = %q, want 9 characters", k, id)
		}
		got, err := id.Key()
		if err != nil || got != k {
			t.Fatalf("EncodeID(%d) = %q -> Key() = %d, %v", k, id, got, err)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

func TestIDCheckCharacterCatchesTypos(t *testing.T) {
	for k := int64(1); k < 3000; k += 7 {
		id := []byte(EncodeID(k))
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
		if _, err := ID(s).Key(); ErrorCode(err) != ENOTFOUND {
			t.Errorf("ID(%q).Key() error = %v, want not_found", s, err)
		}
	}
}

func FuzzIDKey(f *testing.F) {
	f.Add("bcdfghjkm")
	f.Add(string(EncodeID(42)))
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ID(s).Key()
		if err != nil {
			return
		}
		if EncodeID(k) != ID(s) {
			t.Fatalf("Key(%q) = %d but EncodeID(%d) = %q", s, k, k, EncodeID(k))
		}
	})
}
