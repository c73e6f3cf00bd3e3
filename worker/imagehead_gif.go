package worker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// gifPages reads a GIF's logical screen and every frame's image
// descriptor, walking the whole file (each data block skipped by its
// length byte). libvips composes each frame on an RGBA canvas of the
// screen's size, so the screen and each frame count 4 channels; giflib
// (tesseract, through leptonica) holds every frame at once, a byte a
// pixel, so the frames together are checked too. A file that ends
// without its trailer ends its frames.
func gifPages(r *bufio.Reader) ([]imagePage, error) {
	head := make([]byte, 13)
	if _, err := io.ReadFull(r, head); err != nil || (string(head[:6]) != "GIF87a" && string(head[:6]) != "GIF89a") {
		return nil, errors.New("GIF: header cut short")
	}
	le := binary.LittleEndian
	pages := []imagePage{{width: int64(le.Uint16(head[6:])), height: int64(le.Uint16(head[8:])), channels: 4, sampleBytes: 1}}
	skipTable := func(packed byte) error {
		if packed&0x80 == 0 {
			return nil
		}
		_, err := r.Discard(3 << ((packed & 7) + 1))
		return err
	}
	if err := skipTable(head[10]); err != nil {
		return nil, fmt.Errorf("GIF: colour table: %w", err)
	}
	var frames, all int64
	desc := make([]byte, 9)
	for {
		b, err := r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("GIF: %w", err)
		}
		switch b {
		case 0x3B: // trailer
		case 0x21: // extension: label, then data blocks
			if _, err := r.ReadByte(); err != nil {
				return nil, fmt.Errorf("GIF: extension: %w", err)
			}
			if err := gifSkipBlocks(r); err != nil {
				return nil, err
			}
			continue
		case 0x2C: // image: left, top, width, height, packed
			if _, err := io.ReadFull(r, desc); err != nil {
				return nil, fmt.Errorf("GIF: image descriptor: %w", err)
			}
			if frames == maxImagePages {
				return nil, fmt.Errorf("GIF: more than %d frames", maxImagePages)
			}
			frames++
			w, h := int64(le.Uint16(desc[4:])), int64(le.Uint16(desc[6:]))
			pages = append(pages, imagePage{label: fmt.Sprintf("frame %d", frames), width: w, height: h, channels: 4, sampleBytes: 1})
			all += w * h
			if err := skipTable(desc[8]); err != nil {
				return nil, fmt.Errorf("GIF: frame %d: colour table: %w", frames, err)
			}
			if _, err := r.ReadByte(); err != nil { // LZW code size
				if err == io.EOF {
					break
				}
				return nil, fmt.Errorf("GIF: frame %d: %w", frames, err)
			}
			if err := gifSkipBlocks(r); err != nil {
				return nil, fmt.Errorf("frame %d: %w", frames, err)
			}
			continue
		default:
			return nil, fmt.Errorf("GIF: unknown block 0x%02x", b)
		}
		break
	}
	if frames > 1 {
		pages = append(pages, imagePage{label: fmt.Sprintf("the %d frames", frames), width: all, height: 1, channels: 1, sampleBytes: 1, total: true})
	}
	return pages, nil
}

// gifSkipBlocks skips data sub-blocks up to their terminator; a file that
// ends first ends them.
func gifSkipBlocks(r *bufio.Reader) error {
	for {
		n, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("GIF: %w", err)
		}
		if n == 0 {
			return nil
		}
		if _, err := r.Discard(int(n)); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("GIF: %w", err)
		}
	}
}
