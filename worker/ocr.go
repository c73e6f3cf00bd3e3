package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OCRLanguage is the tesseract language OCR reads.
const OCRLanguage = "eng"

// OCR runs tesseract on a page image once, producing both hOCR and plain
// text (`tesseract in outbase -l eng hocr txt`, in a temporary directory
// removed afterwards), with OMP_THREAD_LIMIT=1 (tesseract's OpenMP threads
// cost about five times the CPU for no gain here) and at idle CPU
// priority whatever Tools.Limits.Idle says. The text is valid UTF-8 with
// page breaks as newlines and surrounding space trimmed. An empty or
// unreadable image → Permanent error; no tesseract → an error wrapping
// ErrToolMissing.
func (t Tools) OCR(ctx context.Context, path string) (hocr []byte, text string, err error) {
	in, err := toolOpenInput(ctx, path, "image/*") // tesseract sniffs the format itself
	if err != nil {
		return nil, "", err
	}
	if in.size == 0 {
		return nil, "", Permanent(fmt.Errorf("worker: OCR of %s: empty file", path))
	}
	switch format, err := toolImageFormat(in.path); {
	case err != nil:
		return nil, "", err
	case format == "" || format == "heif":
		return nil, "", Permanent(fmt.Errorf("worker: OCR of %s: not a recognised image format", path))
	default:
		if _, err := t.checkPixels(in.path, format); err != nil {
			return nil, "", fmt.Errorf("worker: OCR of %s: %w", path, err)
		}
	}
	if t.Tesseract == "" {
		return nil, "", fmt.Errorf("worker: OCR of %s: tesseract: %w", path, ErrToolMissing)
	}
	dir, err := t.toolMkdirTemp("shelfmark-ocr-*")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "page")
	l := t.toolLimits()
	l.Idle = true
	if _, err := RunTool(ctx, l, []string{"OMP_THREAD_LIMIT=1"}, t.Tesseract,
		in.path, base, "-l", OCRLanguage, "hocr", "txt"); err != nil {
		return nil, "", fmt.Errorf("worker: OCR of %s: %w", path, toolClassify(err))
	}
	hocr, err = toolReadOutput(base+".hocr", l)
	if err != nil {
		return nil, "", fmt.Errorf("worker: OCR of %s: hOCR: %w", path, err)
	}
	txt, err := toolReadOutput(base+".txt", l)
	if err != nil {
		return nil, "", fmt.Errorf("worker: OCR of %s: text: %w", path, err)
	}
	text = strings.ToValidUTF8(string(txt), "\uFFFD")
	text = strings.TrimSpace(strings.ReplaceAll(text, "\f", "\n"))
	return hocr, text, nil
}
