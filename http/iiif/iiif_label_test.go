package iiif

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"testing"
	"testing/fstest"

	"github.com/shelfmark/shelfmark/http/labels"
)

// TestNumberLabel: a page's label written from its message cut around the
// number is, byte for byte, the language map iiifLabels makes, for the
// product's catalogs and for messages whose text needs escaping; a
// message that is not text around one %d is left to iiifLabels.
func TestNumberLabel(t *testing.T) {
	product, err := labels.Load(os.DirFS(".."), "ui/locales")
	if err != nil {
		t.Fatal(err)
	}
	odd, err := labels.Load(fstest.MapFS{
		"l/en/a.json": {Data: []byte(`{"lang.name": "English", "work.page": "Page <%d> & \"so\"", "work.unordered": "%[1]d"}`)},
		"l/de/a.json": {Data: []byte(`{"lang.name": "Deutsch", "work.page": "%d. Seite \u2028é", "work.unordered": "%d %s"}`)},
	}, "l")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cats *labels.Catalogs
		key  string
		cut  bool
	}{
		{"product page", product, "work.page", true},
		{"product unordered", product, "work.unordered", true},
		{"escaped", odd, "work.page", true},
		{"indexed verb", odd, "work.unordered", false},
	} {
		s := &Handler{catalogs: c.cats}
		nl := newNumberLabel(c.cats, c.key)
		if (nl != nil) != c.cut {
			t.Errorf("%s: cut %v, want %v", c.name, nl != nil, c.cut)
			continue
		}
		if nl == nil {
			continue
		}
		for _, n := range []int{1, 9, 10, 1200, 1 << 40} {
			want := s.iiifLabels(c.key, n)
			got := nl.appendJSON(nil, n)
			if w := want.appendJSON(nil); !bytes.Equal(got, w) {
				t.Errorf("%s %d: %s, want %s", c.name, n, got, w)
			}
			var m map[string][]string
			if err := json.Unmarshal(got, &m); err != nil || !maps.EqualFunc(m, want, func(a, b []string) bool { return len(a) == 1 && len(b) == 1 && a[0] == b[0] }) {
				t.Errorf("%s %d: %s reads back as %v (%v), want %v", c.name, n, got, m, err, want)
			}
			doc := &iiifCanvasDoc{numLabel: nl, num: n}
			if l := s.labelMap(doc); !maps.EqualFunc(l, want, func(a, b []string) bool { return a[0] == b[0] }) {
				t.Errorf("%s %d: labelMap %v, want %v", c.name, n, l, want)
			}
		}
	}
}
