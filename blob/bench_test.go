package blob

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// The two benchmarks below store the same 1 MiB (made unique per iteration,
// so that Put never takes its dedupe shortcut) in a directory of the same
// file system, so their ratio is the cost of Put (SHA-256, temporary file,
// directory syncs, rename) over the bare minimum for durable bytes:
//
//	go test -run '^$' -bench '1MiB$' -benchtime 200x -count 5 ./blob/

const benchSize = 1 << 20

func BenchmarkPut1MiB(b *testing.B) {
	s, err := NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	in := data(benchSize, 0)
	ctx := context.Background()
	b.SetBytes(benchSize)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.LittleEndian.PutUint64(in, uint64(i))
		if _, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawWrite1MiB(b *testing.B) {
	dir := b.TempDir()
	in := data(benchSize, 0)
	b.SetBytes(benchSize)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.LittleEndian.PutUint64(in, uint64(i))
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(in); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
