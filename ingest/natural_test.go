package ingest

import (
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	names := []string{"page_10.tif", "Page_1.tif", "page_2.tif", "page_002b.tif", "page_02.tif", "a", "B", "b", "page_1a", "10", "9", "x99999999999999999999999", "x100000000000000000000000"}
	slices.SortFunc(names, NaturalCompare)
	eq(t, "sorted", names, []string{"9", "10", "a", "B", "b", "Page_1.tif", "page_1a", "page_02.tif", "page_2.tif", "page_002b.tif", "page_10.tif", "x99999999999999999999999", "x100000000000000000000000"})
	for _, a := range names {
		for _, b := range names {
			if NaturalCompare(a, b) != -NaturalCompare(b, a) {
				t.Errorf("not antisymmetric: %q %q", a, b)
			}
			if (NaturalCompare(a, b) == 0) != (a == b) {
				t.Errorf("not total: %q %q", a, b)
			}
		}
	}
}
