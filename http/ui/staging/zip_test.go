package staging

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestEntryName: entries that climb out, are absolute or carry a NUL are
// refused; others unpack to their clean slash path.
func TestEntryName(t *testing.T) {
	for name, want := range map[string]string{"a/b.tif": "a/b.tif", "a\\b.tif": "a/b.tif", "./a//b": "a/b", "../x": "", "a/../../x": "", "/etc/passwd": "", "C:/x": "", "a\x00b": ""} {
		got, err := entryName(name)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("entryName(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestUnzipRatio: an entry that expands past the ratio (beyond the floor)
// is ETOOLARGE, and the same zip within the ratio unpacks.
func TestUnzipRatio(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("zeros.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 4*RatioFloor)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(t.TempDir(), "z.zip")
	if err := os.WriteFile(zipPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	err = Unzip(zipPath, t.TempDir(), Limits{MaxExpand: 1 << 30, MaxRatio: 100}, io.Discard)
	if shelfmark.ErrorCode(err) != shelfmark.ETOOLARGE {
		t.Fatalf("4 MiB of zeros at ratio 100: %v, want ETOOLARGE", err)
	}
	dest := t.TempDir()
	if err := Unzip(zipPath, dest, Limits{MaxExpand: 1 << 30, MaxRatio: 1 << 20}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dest, "zeros.bin")); err != nil || fi.Size() != 4*RatioFloor {
		t.Fatalf("unpacked: %v %v", fi, err)
	}
}
