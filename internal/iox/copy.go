package iox

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
)

// copyBufSize is the size of Copy's buffers.
const copyBufSize = 32 << 10

// copyBufs keeps Copy's buffers for the next copies.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Copy copies src to dst until src ends or either fails, and fails with
// ctx's error once ctx ends (checked between two reads, as ContextReader
// does). It returns the bytes copied.
//
// It reads through a buffer kept for the next copy. io.Copy into an
// *os.File from any reader but a file or a socket allocates a buffer of
// 32 KiB at every call (the file's ReadFrom falls back to a copy of its
// own), which for the small files of an OCFL version, seven to an object,
// was nearly all the garbage the preserver made. Bytes already in memory
// (a *bytes.Reader or *strings.Reader) are written in one call, with no
// buffer.
func Copy(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	switch r := src.(type) {
	case *bytes.Reader:
		return r.WriteTo(dst)
	case *strings.Reader:
		return r.WriteTo(dst)
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// dst without its ReadFrom and src without its WriteTo, so that
	// CopyBuffer uses the buffer given
	return io.CopyBuffer(writerOnly{dst}, ContextReader(ctx, src), *bp)
}

// writerOnly hides every method of a writer but Write.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }
