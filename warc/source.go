package warc

import (
	"errors"
	"io"
)

// source reads an io.ReaderAt sequentially through one reused buffer; it
// is an io.ByteReader, so a gzip reader over it reads no byte past the
// end of a member and pos is the exact end of what was consumed.
type source struct {
	r    io.ReaderAt
	size int64
	buf  []byte // the bytes of [base, base+len(buf))
	base int64
	pos  int64
}

const sourceBuf = 256 << 10

func newSource(r io.ReaderAt, size int64) *source {
	return &source{r: r, size: size, buf: make([]byte, 0, sourceBuf)}
}

// seek sets the position of the next read.
func (s *source) seek(pos int64) { s.pos = pos }

// fill loads the buffer at pos.
func (s *source) fill() error {
	if s.pos >= s.size {
		return io.EOF
	}
	n := min(int64(cap(s.buf)), s.size-s.pos)
	b := s.buf[:n]
	got, err := s.r.ReadAt(b, s.pos)
	if got == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	s.buf = b[:got]
	s.base = s.pos
	return nil
}

func (s *source) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.pos < s.base || s.pos >= s.base+int64(len(s.buf)) {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.buf[s.pos-s.base:])
	s.pos += int64(n)
	return n, nil
}

func (s *source) ReadByte() (byte, error) {
	i := s.pos - s.base
	if i < 0 || i >= int64(len(s.buf)) {
		if err := s.fill(); err != nil {
			return 0, err
		}
		i = 0
	}
	s.pos++
	return s.buf[i], nil
}

// stream is the byte stream of one record (the file for a plain WARC,
// the decompressed member for a gzipped one). It counts the bytes read,
// copies those in [capFrom, capTo) into capture and serves at most
// maxRead bytes a call.
type stream struct {
	r              io.Reader
	n              int64
	maxRead        int
	capFrom, capTo int64
	capture        []byte
}

func (s *stream) reset(r io.Reader, maxRead int) {
	s.r, s.n, s.maxRead = r, 0, maxRead
	s.capFrom, s.capTo = 0, 0
	s.capture = s.capture[:0]
}

func (s *stream) Read(p []byte) (int, error) {
	if s.maxRead > 0 && len(p) > s.maxRead {
		p = p[:s.maxRead]
	}
	n, err := s.r.Read(p)
	if n > 0 && s.capTo > s.capFrom {
		lo, hi := max(s.n, s.capFrom), min(s.n+int64(n), s.capTo)
		if lo < hi {
			s.capture = append(s.capture, p[lo-s.n:hi-s.n]...)
		}
	}
	s.n += int64(n)
	return n, err
}
