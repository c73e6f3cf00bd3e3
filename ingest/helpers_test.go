package ingest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// writeFile creates p (and its parents) with content.
func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// result is one answer of Next: an item or an item error.
type result struct {
	item *Item
	err  *ItemError
}

// key is the key of the item or of the error.
func (r result) key() string {
	if r.item != nil {
		return r.item.Key
	}
	return r.err.Key
}

// drain reads src to the end; any error other than an ItemError fails.
func drain(t testing.TB, src Source) []result {
	t.Helper()
	defer src.Close()
	var out []result
	for i := 0; i < 1000000; i++ {
		item, err := src.Next(context.Background())
		if err == io.EOF {
			return out
		}
		var ie *ItemError
		if errors.As(err, &ie) {
			out = append(out, result{err: ie})
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, result{item: item})
	}
	t.Fatal("source does not end")
	return nil
}

// keys lists the keys of results, errors marked with "!".
func keys(rs []result) []string {
	var out []string
	for _, r := range rs {
		if r.err != nil {
			out = append(out, "!"+r.key())
		} else {
			out = append(out, r.key())
		}
	}
	return out
}

// relKey turns a directory key below root ("dir:/abs/root/books/b1#fp")
// into the key relative to root that earlier versions gave ("dir:books/b1",
// "dir:." for root), for comparisons; other keys lose their fingerprint.
func relKey(k, root string) string {
	if i := strings.LastIndexByte(k, '#'); i >= 0 {
		k = k[:i]
	}
	switch {
	case k == "dir:"+filepath.ToSlash(root):
		return "dir:."
	case strings.HasPrefix(k, "dir:"+filepath.ToSlash(root)+"/"):
		return "dir:" + strings.TrimPrefix(k, "dir:"+filepath.ToSlash(root)+"/")
	}
	return k
}

// relKeys is keys with relKey applied.
func relKeys(rs []result, root string) []string {
	out := keys(rs)
	for i, k := range out {
		if bad := strings.HasPrefix(k, "!"); bad {
			out[i] = "!" + relKey(k[1:], root)
		} else {
			out[i] = relKey(k, root)
		}
	}
	return out
}

// findRel returns the result whose relKey is k.
func findRel(t testing.TB, rs []result, root, k string) result {
	t.Helper()
	for _, r := range rs {
		if relKey(r.key(), root) == k {
			return r
		}
	}
	t.Fatalf("no result %s in %q", k, relKeys(rs, root))
	return result{}
}

// fileNames lists the names of an item's files.
func fileNames(it *Item) []string {
	var out []string
	for _, f := range it.Files {
		out = append(out, f.Name)
	}
	return out
}

// values returns the literal values of predicate pred.
func values(md []shelfmark.Statement, pred string) []string {
	var out []string
	for _, s := range md {
		if s.Predicate == pred {
			out = append(out, s.Object.Value)
		}
	}
	return out
}

func eq(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// find returns the result with key k.
func find(t testing.TB, rs []result, k string) result {
	t.Helper()
	for _, r := range rs {
		if r.key() == k {
			return r
		}
	}
	t.Fatalf("no result %s in %q", k, keys(rs))
	return result{}
}

// wantItemError checks that r is an ItemError whose reason holds all of
// parts.
func wantItemError(t testing.TB, r result, parts ...string) {
	t.Helper()
	if r.err == nil {
		t.Errorf("%s: got an item, want an error containing %q", r.key(), parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(r.err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", r.key(), r.err.Error(), p)
		}
	}
}
