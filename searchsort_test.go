package shelfmark

import (
	"math"
	"slices"
	"testing"
)

// TestSearchTitleKey: titles come in catalogue order by their keys:
// folded (case, diacritics), a leading English article left out,
// punctuation a space, digits before letters, other scripts after z, a
// shorter title before a longer one it begins; ten characters count, and
// every key is exact in a float64. A title of no letter or digit has no
// key.
func TestSearchTitleKey(t *testing.T) {
	want := []string{
		"1984",
		"Annals of the Port",
		"Atlas of the Rhine",
		"The Bleak House",
		"Émile",
		"Moby",
		"Moby-Dick",
		"moby dick; or, the whale",
		"A Tale of Two Cities",
		"Typee",
		"Ωμέγα",
	}
	keys := make([]int64, len(want))
	for i, s := range want {
		k, ok := SearchTitleKey(s)
		if !ok || k < 0 || float64(k) >= 1<<53 || -float64(k) <= SearchUntitled {
			t.Fatalf("%q: key %d, %v", s, k, ok)
		}
		keys[i] = k
	}
	if !slices.IsSorted(keys) {
		t.Errorf("keys out of order: %v", keys)
	}
	a, _ := SearchTitleKey("Moby-Dick")
	b, _ := SearchTitleKey("moby dick; or, the whale")
	if a != b {
		t.Errorf("Moby-Dick %d and its longer title %d differ within ten characters", a, b)
	}
	if k, _ := SearchTitleKey("The"); k == 0 {
		t.Error("a title that is only an article has no key")
	}
	for _, s := range []string{"", " ", "***", "— —"} {
		if _, ok := SearchTitleKey(s); ok {
			t.Errorf("%q has a key", s)
		}
	}
	if max, _ := SearchTitleKey("ΩΩΩΩΩΩΩΩΩΩΩΩ"); float64(max) != math.Pow(38, 10)-1 {
		t.Errorf("the largest key %d", max)
	}
}
