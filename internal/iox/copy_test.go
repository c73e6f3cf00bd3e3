package iox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// onlyReader hides every method of a reader but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestCopy: Copy copies a reader longer than its buffer, and bytes in
// memory, whole into a file; it fails with ctx's error once ctx ends,
// before any read and between two; into a file from a plain reader it
// allocates a few bytes where io.Copy allocates its 32 KiB buffer every
// time.
func TestCopy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	long := bytes.Repeat([]byte("0123456789abcdef"), 3*copyBufSize/16+7)
	for name, src := range map[string]func() io.Reader{
		"plain reader":   func() io.Reader { return onlyReader{bytes.NewReader(long)} },
		"bytes.Reader":   func() io.Reader { return bytes.NewReader(long) },
		"strings.Reader": func() io.Reader { return strings.NewReader(string(long)) },
	} {
		f, err := os.Create(filepath.Join(dir, strings.ReplaceAll(name, " ", "-")))
		if err != nil {
			t.Fatal(err)
		}
		n, err := Copy(ctx, f, src())
		f.Close()
		if err != nil || n != int64(len(long)) {
			t.Fatalf("%s: copied %d of %d bytes: %v", name, n, len(long), err)
		}
		if got, err := os.ReadFile(f.Name()); err != nil || !bytes.Equal(got, long) {
			t.Fatalf("%s: the file differs from the bytes copied (%d bytes, %v)", name, len(got), err)
		}
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	if n, err := Copy(ended, io.Discard, bytes.NewReader(long)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("with ctx ended: %d bytes, %v", n, err)
	}
	midway, cancel := context.WithCancel(ctx)
	reads := 0
	src := readFunc(func(p []byte) (int, error) {
		if reads++; reads == 2 {
			cancel()
		}
		return copy(p, long[:len(p)]), nil // never ends by itself
	})
	if _, err := Copy(midway, io.Discard, src); !errors.Is(err, context.Canceled) || reads != 2 {
		t.Fatalf("ctx ended after the second read: %d reads, %v", reads, err)
	}

	f, err := os.Create(filepath.Join(dir, "allocs"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	small := []byte("ocfl_object_1.1\n")
	bytesPer := func(copyFn func()) float64 {
		var before, after runtimeMem
		before.read()
		for range 20 {
			copyFn()
		}
		after.read()
		return float64(after.total-before.total) / 20
	}
	ours := bytesPer(func() { _, _ = Copy(ctx, f, onlyReader{bytes.NewReader(small)}) })
	theirs := bytesPer(func() { _, _ = io.Copy(f, onlyReader{bytes.NewReader(small)}) })
	if ours >= copyBufSize/4 || theirs < copyBufSize {
		t.Fatalf("bytes allocated a copy: %.0f with Copy, %.0f with io.Copy", ours, theirs)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// runtimeMem is the bytes this process allocated so far.
type runtimeMem struct{ total uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.total = s.TotalAlloc
}
