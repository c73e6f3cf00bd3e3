package siegfried

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Block cache geometry: siegfried asks for small slices (4 KiB for its
// readers), served from 32 KiB blocks read on demand; at most maxBlocks
// stay cached (older ones are dropped, never overwritten, so slices
// already handed out stay valid).
const (
	blockSize = 32 << 10
	maxBlocks = 64
	// maxSlice bounds one Slice: siegfried asks for a few KiB at a time,
	// and a runaway request must not allocate the size of the file.
	maxSlice = 64 << 20
)

// errReleased is returned by reads after the identification ended (a
// siegfried goroutine finishing late, or a pooled buffer).
var errReleased = errors.New("source released after identification")

// source gives siegfried random access to the bytes being identified. It
// implements siegfried's "external source" interface (IsSlicer, Slice,
// EofSlice, Size), so that siegfried reads only the byte ranges its
// signatures need, whatever the reader: an *os.File or another
// io.ReaderAt is read with positioned reads, another io.ReadSeeker with a
// seek before each read. (Given an *os.File itself, siegfried would mmap
// the whole file, which neither a context nor a byte count can follow.)
//
// Every read first checks the context and fails once it has ended; the
// first failure is kept (see failure) because siegfried ignores many read
// errors. It counts the bytes it reads. Safe for concurrent use:
// siegfried's matchers read from several goroutines.
type source struct {
	ctx  context.Context
	size int64

	mu     sync.Mutex
	r      io.ReadSeeker // nil once released
	ra     io.ReaderAt   // r as an io.ReaderAt, or nil
	blocks map[int64][]byte
	order  []int64 // cached block numbers, oldest first
	pos    int64   // offset of Read
	n      int64   // bytes read from r
	reads  int     // reads made on r
	err    error   // first read failure other than io.EOF
}

func newSource(ctx context.Context, r io.ReadSeeker, size int64) *source {
	s := &source{ctx: ctx, size: size, r: r, blocks: make(map[int64][]byte)}
	s.ra, _ = r.(io.ReaderAt)
	return s
}

// IsSlicer tells siegfried to use Slice and EofSlice.
func (s *source) IsSlicer() bool { return true }

// Size is the length of the bytes.
func (s *source) Size() int64 { return s.size }

// Slice returns l bytes at off, fewer with io.EOF at the end. The slice
// must not be modified.
func (s *source) Slice(off int64, l int) ([]byte, error) {
	if off < 0 || l < 0 {
		return nil, fmt.Errorf("invalid slice %d+%d", off, l)
	}
	if off >= s.size {
		return nil, io.EOF
	}
	var eof error
	if int64(l) > s.size-off {
		l, eof = int(s.size-off), io.EOF
	}
	if l == 0 {
		return []byte{}, eof
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l > maxSlice {
		if s.err == nil {
			s.err = fmt.Errorf("slice of %d bytes at %d: larger than %d", l, off, maxSlice)
		}
		return nil, s.err
	}
	first, last := off/blockSize, (off+int64(l)-1)/blockSize
	if first == last {
		b, err := s.block(first)
		if err != nil {
			return nil, err
		}
		o := int(off - first*blockSize)
		return b[o : o+l : o+l], eof
	}
	out := make([]byte, l)
	for k, at := first, 0; k <= last; k++ {
		b, err := s.block(k)
		if err != nil {
			return nil, err
		}
		if k == first {
			b = b[off-first*blockSize:]
		}
		at += copy(out[at:], b)
	}
	return out, eof
}

// EofSlice returns l bytes ending off bytes before the end, fewer with
// io.EOF at the start.
func (s *source) EofSlice(off int64, l int) ([]byte, error) {
	if off < 0 || l < 0 {
		return nil, fmt.Errorf("invalid EOF slice %d+%d", off, l)
	}
	if off >= s.size {
		return nil, io.EOF
	}
	if int64(l) > s.size-off {
		b, err := s.Slice(0, int(s.size-off))
		if err == nil {
			err = io.EOF
		}
		return b, err
	}
	return s.Slice(s.size-off-int64(l), l)
}

// Read reads sequentially (siegfried requires an io.Reader; it does not
// read a slicer this way).
func (s *source) Read(p []byte) (int, error) {
	s.mu.Lock()
	off := s.pos
	s.mu.Unlock()
	n, err := s.ReadAt(p, off)
	s.mu.Lock()
	s.pos += int64(n)
	s.mu.Unlock()
	return n, err
}

// ReadAt reads len(p) bytes at off without caching them (for dimension
// and page reading), fewer with io.EOF at the end.
func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("invalid offset %d", off)
	}
	if off >= s.size {
		return 0, io.EOF
	}
	var eof error
	if int64(len(p)) > s.size-off {
		p, eof = p[:s.size-off], io.EOF
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.read(p, off); err != nil {
		return 0, err
	}
	return len(p), eof
}

// block returns block k, reading it if it is not cached. s.mu is held.
func (s *source) block(k int64) ([]byte, error) {
	if b, ok := s.blocks[k]; ok {
		return b, nil
	}
	start := k * blockSize
	b := make([]byte, min(blockSize, s.size-start))
	if err := s.read(b, start); err != nil {
		return nil, err
	}
	if s.blocks != nil {
		if len(s.order) >= maxBlocks {
			delete(s.blocks, s.order[0])
			s.order = s.order[1:]
		}
		s.blocks[k] = b
		s.order = append(s.order, k)
	}
	return b, nil
}

// read fills p from offset off, which the caller has checked lies within
// size. s.mu is held.
func (s *source) read(p []byte, off int64) error {
	if s.r == nil {
		return errReleased
	}
	if s.err != nil {
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return err
	}
	var n int
	var err error
	if s.ra != nil {
		n, err = s.ra.ReadAt(p, off)
		if n == len(p) {
			err = nil // io.ReaderAt may return io.EOF with a full read at the end
		}
	} else if _, err = s.r.Seek(off, io.SeekStart); err == nil {
		n, err = io.ReadFull(s.r, p)
	}
	s.n += int64(n)
	s.reads++
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("reading %d bytes at %d: the reader ends before the size given (%d bytes): %w", len(p), off, s.size, io.ErrUnexpectedEOF)
		} else {
			err = fmt.Errorf("reading %d bytes at %d: %w", len(p), off, err)
		}
		s.err = err
		return err
	}
	return nil
}

// failure returns the first read failure (nil if none).
func (s *source) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// release drops the cache and the reader: siegfried keeps the source in
// its buffer pool, and late reads must not touch the caller's reader.
func (s *source) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r, s.ra, s.blocks, s.order = nil, nil, nil, nil
}

// stats returns the number of bytes read from the reader and of reads.
func (s *source) stats() (n int64, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.reads
}

// budget is an io.ReaderAt over a source that fails once a fixed number
// of bytes has been read, bounding what dimension and page reading cost
// on a hostile or huge file. Not safe for concurrent use.
type budget struct {
	src  *source
	left int64
}

func newBudget(src *source, n int64) *budget { return &budget{src: src, left: n} }

// errBudget is returned by a budget that is spent.
var errBudget = errors.New("read budget spent")

func (b *budget) ReadAt(p []byte, off int64) (int, error) {
	if int64(len(p)) > b.left {
		return 0, fmt.Errorf("reading %d bytes at %d: %w", len(p), off, errBudget)
	}
	n, err := b.src.ReadAt(p, off)
	b.left -= int64(n)
	return n, err
}
