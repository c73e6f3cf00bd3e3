package kit

import (
	"io"
	"sync"
)

// ReaderAt gives random access to a blob: its own ReadAt when it has one
// (a local file, at no cost), else a reader that seeks and reads under a
// lock, so concurrent reads of one blob are served one at a time.
func ReaderAt(rs io.ReadSeeker) io.ReaderAt {
	if ra, ok := rs.(io.ReaderAt); ok {
		return ra
	}
	return &seekReaderAt{rs: rs}
}

// seekReaderAt reads at an offset by seeking first.
type seekReaderAt struct {
	mu sync.Mutex
	rs io.ReadSeeker
}

// ReadAt seeks to off and reads len(p) bytes, under the lock.
func (s *seekReaderAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.rs.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(s.rs, p)
}
