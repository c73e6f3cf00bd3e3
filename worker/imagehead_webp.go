package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// webpPages reads a WebP's chunks: the canvas of its extended header
// (VP8X), the lossy (VP8) or lossless (VP8L) frame of a still image and
// every animation frame (ANMF), each with 4 channels when the file has alpha or
// is animated (libwebp composes animation frames in RGBA), else 3. It
// reads the chunk headers only, at most maxImagePages + 64 of them.
func webpPages(r io.ReaderAt, size int64) ([]imagePage, error) {
	head := make([]byte, 12)
	if _, err := r.ReadAt(head, 0); err != nil || string(head[:4]) != "RIFF" || string(head[8:]) != "WEBP" {
		return nil, errors.New("WebP: no RIFF header")
	}
	le := binary.LittleEndian
	u24 := func(b []byte) int64 { return int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16 }
	end := min(size, int64(le.Uint32(head[4:]))+8)
	var canvas *imagePage
	var frames []imagePage
	alpha := false
	chunk := make([]byte, 8+16)
	for off, n := int64(12), 0; off+8 <= end; n++ {
		if n == maxImagePages+64 {
			return nil, fmt.Errorf("WebP: more than %d chunks", maxImagePages+64)
		}
		k, err := r.ReadAt(chunk, off)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("WebP: %w", err)
		}
		data := chunk[8:k]
		length := int64(le.Uint32(chunk[4:]))
		switch string(chunk[:4]) {
		case "VP8X": // flags(1) reserved(3) width-1(3) height-1(3)
			if len(data) < 10 {
				return nil, errors.New("WebP: VP8X cut short")
			}
			alpha = alpha || data[0]&0x12 != 0 // alpha or animation
			canvas = &imagePage{width: u24(data[4:]) + 1, height: u24(data[7:]) + 1}
		case "ANMF": // x(3) y(3) width-1(3) height-1(3)…
			if len(data) < 12 {
				return nil, errors.New("WebP: ANMF cut short")
			}
			alpha = true
			frames = append(frames, imagePage{label: fmt.Sprintf("frame %d", len(frames)+1), width: u24(data[6:]) + 1, height: u24(data[9:]) + 1})
		case "VP8 ": // frame tag(3) start code(3) width(2) height(2), 14 bits each
			if len(data) < 10 || string(data[3:6]) != "\x9d\x01\x2a" {
				return nil, errors.New("WebP: VP8 frame header cut short")
			}
			frames = append(frames, imagePage{width: int64(le.Uint16(data[6:]) & 0x3FFF), height: int64(le.Uint16(data[8:]) & 0x3FFF)})
		case "VP8L": // 0x2F, then width-1(14 bits) height-1(14) alpha(1)
			if len(data) < 5 || data[0] != 0x2F {
				return nil, errors.New("WebP: VP8L header cut short")
			}
			bits := le.Uint32(data[1:])
			alpha = alpha || bits>>28&1 != 0
			frames = append(frames, imagePage{width: int64(bits&0x3FFF) + 1, height: int64(bits>>14&0x3FFF) + 1})
		}
		off += 8 + length + length&1
	}
	pages := frames
	if canvas != nil {
		pages = append([]imagePage{*canvas}, frames...)
	}
	if len(pages) == 0 {
		return nil, errors.New("WebP: no image")
	}
	ch := int64(3)
	if alpha {
		ch = 4
	}
	for i := range pages {
		pages[i].channels, pages[i].sampleBytes = ch, 1
	}
	if len(pages) > maxImagePages {
		return nil, fmt.Errorf("WebP: more than %d frames", maxImagePages)
	}
	return pages, nil
}
