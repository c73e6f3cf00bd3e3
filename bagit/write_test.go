package bagit

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func text(p, body string) File {
	return File{Path: p, Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWrite: a bag has its declaration, bag-info with Payload-Oxum, both
// manifests sorted by path (a path with % and a line break encoded) and
// tag manifests of every tag file; an existing destination is refused; a
// payload whose bytes do not have the digest wanted, a bad path or a bad
// bag-info field leaves nothing.
func TestWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dest := filepath.Join(dir, "b1")
	res, err := Write(ctx, dest, Bag{Info: []Field{{"Source-Organization", "Test"}},
		Payload: []File{text("z.txt", "zz"), text("a/b%1.txt", "abc"), text("line\nbreak.txt", "")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Octets != 5 || res.Files != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := read(t, filepath.Join(dest, "bagit.txt")); got != "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n" {
		t.Fatalf("bagit.txt: %q", got)
	}
	if got := read(t, filepath.Join(dest, "bag-info.txt")); got != "Source-Organization: Test\nPayload-Oxum: 5.3\n" {
		t.Fatalf("bag-info.txt: %q", got)
	}
	m := read(t, filepath.Join(dest, "manifest-sha256.txt"))
	lines := strings.Split(strings.TrimSpace(m), "\n")
	if len(lines) != 3 || lines[0] != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  data/a/b%251.txt" ||
		lines[1] != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  data/line%0Abreak.txt" || !strings.HasSuffix(lines[2], "  data/z.txt") {
		t.Fatalf("manifest-sha256.txt:\n%s", m)
	}
	if got := read(t, filepath.Join(dest, "data/line\nbreak.txt")); got != "" {
		t.Fatalf("payload: %q", got)
	}
	for _, alg := range algorithms {
		tm := read(t, filepath.Join(dest, "tagmanifest-"+alg+".txt"))
		for _, f := range []string{"bagit.txt", "bag-info.txt", "manifest-sha256.txt", "manifest-sha512.txt"} {
			if !strings.Contains(tm, "  "+f+"\n") {
				t.Fatalf("tagmanifest-%s.txt lacks %s:\n%s", alg, f, tm)
			}
		}
		if strings.Contains(tm, "tagmanifest") {
			t.Fatalf("tagmanifest-%s.txt lists a tag manifest:\n%s", alg, tm)
		}
	}
	if _, err := Write(ctx, dest, Bag{Payload: []File{text("x", "x")}}); !errors.Is(err, ErrExists) {
		t.Fatalf("write over an existing bag: %v", err)
	}

	// failures leave nothing
	bad := text("p.txt", "damaged")
	bad.Want = map[string]string{"sha256": strings.Repeat("0", 64)}
	for name, b := range map[string]Bag{
		"a damaged source": {Payload: []File{text("ok.txt", "ok"), bad}},
		"a climbing path":  {Payload: []File{text("../x", "x")}},
		"a path twice":     {Payload: []File{text("x", "x"), text("x", "y")}},
		"a bad label":      {Info: []Field{{"Bad: label", "v"}}},
		"a broken value":   {Info: []Field{{"Label", "two\nlines"}}},
	} {
		if _, err := Write(ctx, filepath.Join(dir, "b2"), b); err == nil {
			t.Fatalf("%s: written", name)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != "b1" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("%s left %v", name, names)
		}
	}
}
