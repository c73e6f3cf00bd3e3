package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Default limits of one child process, used where Tools.Limits leaves
// one zero. A child is bounded by the CPU time it uses and by stalling,
// not by the time it waits for a CPU: at idle priority (OCR) it only runs
// when the CPU is otherwise free, which on a machine held busy by ingest
// may be hours later.
const (
	// DefaultCPULimit is the CPU time (user + system, of the child and
	// everything it starts) after which it is killed: far above what a
	// page takes (OCR of a generated page, rendering included, about
	// 1.5 s; the derivatives of a 2500×3500 page about 0.3 s), so only a
	// runaway tool reaches it.
	DefaultCPULimit = 5 * time.Minute
	// DefaultStall is how long a child may use no CPU with none of its
	// threads runnable (hung on a lock, a pipe, a network file) before it
	// is killed.
	DefaultStall = 2 * time.Minute
	// DefaultTimeout is the wall-clock ceiling of a child, the last
	// resort against what sampling /proc cannot see. In the job runner
	// the attempt's own ceiling (QueueConfig.Timeout, 30 min to an hour
	// by default) comes first: a machine held busy for longer than that
	// fails the attempt, which is retried later.
	DefaultTimeout = 6 * time.Hour
)

// ErrToolMissing is wrapped by the errors of operations that need an
// external program that is absent and have no pure-Go fallback (such as
// rendering a PDF without pdftoppm). Installing the program fixes it, so
// it is not Permanent.
var ErrToolMissing = errors.New("external program not installed")

// Tools are the external programs found on PATH; an empty path means
// absent (the pure-Go fallback is used where there is one). The zero
// Tools is usable: every tool is absent, children get the default limits
// and temporary files go to os.TempDir().
type Tools struct {
	Vipsthumbnail string // libvips thumbnailer: image derivatives
	Vips          string // libvips: tile pyramids (dzsave)
	Pdftoppm      string // poppler: renders a PDF's first page
	Pdftotext     string // poppler: a PDF's text layer
	Tesseract     string // OCR

	// Limits are the default limits of each child process. A zero
	// CPU, Stall or Timeout means DefaultCPULimit, DefaultStall or
	// DefaultTimeout; the context's deadline applies when it is
	// earlier. OCR runs at idle priority (unless OCRNice is set); the
	// other tools do when Limits.Idle is set.
	Limits Limits

	// DeriveNice, when above 0, runs the derivative tools (thumbnails,
	// access copies, a PDF's first page) at this nice value under the
	// normal scheduler instead of at idle priority: at nice 10 a tool
	// gets about a tenth of the CPU share of each busy foreground thread,
	// so derivatives keep coming, slowly, while ingest holds the CPU,
	// where SCHED_IDLE would give them next to nothing.
	DeriveNice int

	// OCRNice, when above 0, runs OCR (tesseract, and pdftoppm rendering
	// a PDF's pages for it) at this nice value under the normal scheduler
	// instead of at idle priority. serve and worker leave it 0, so OCR
	// never takes CPU from anything else (it can then wait as long as the
	// machine stays busy); tests set it, so that they finish on a machine
	// kept busy by other work.
	OCRNice int

	// TempDir is where temporary files and directories are made (each
	// removed when its call returns); empty means os.TempDir().
	TempDir string

	// MaxPixels is the largest image (width × height) derivatives and
	// OCR accept, read from the header of every image a file holds
	// before any decoder runs; 0 means DefaultMaxPixels.
	MaxPixels int64

	// MaxImageBytes is the most bytes one image may take decoded
	// (width × height × channels × bytes a sample, from the header of
	// every image a file holds) for derivatives and OCR to accept it;
	// 0 means DefaultBytesPerPixel bytes for each pixel of MaxPixels.
	MaxImageBytes int64
}

// FindTools looks the external programs up on PATH and returns Tools with
// default limits (DefaultCPULimit, DefaultStall, DefaultTimeout, normal
// priority for derivatives and text, 64 MiB of output) and the system's
// temporary directory.
func FindTools() Tools {
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			return ""
		}
		return p
	}
	return Tools{
		Vipsthumbnail: look("vipsthumbnail"),
		Vips:          look("vips"),
		Pdftoppm:      look("pdftoppm"),
		Pdftotext:     look("pdftotext"),
		Tesseract:     look("tesseract"),
		Limits:        Limits{CPU: DefaultCPULimit, Stall: DefaultStall, Timeout: DefaultTimeout},
	}
}

// toolLimits returns the per-call limits with the defaults filled in.
func (t Tools) toolLimits() Limits {
	l := t.Limits
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.CPU <= 0 {
		l.CPU = DefaultCPULimit
	}
	if l.Stall <= 0 {
		l.Stall = DefaultStall
	}
	return l
}

// deriveLimits are the limits of a derivative tool: toolLimits, at
// DeriveNice rather than idle when it is set.
func (t Tools) deriveLimits() Limits {
	l := t.toolLimits()
	if t.DeriveNice > 0 {
		l.Idle, l.Nice = false, t.DeriveNice
	}
	return l
}

// ocrLimits are the limits of OCR and of the page rendering OCR needs:
// toolLimits at idle priority, or at OCRNice when it is set.
func (t Tools) ocrLimits() Limits {
	l := t.toolLimits()
	l.Idle, l.Nice = true, 0
	if t.OCRNice > 0 {
		l.Idle, l.Nice = false, t.OCRNice
	}
	return l
}

// DefaultDeriveNice is the nice value of derivative tools in serve and
// worker (Tools.DeriveNice).
const DefaultDeriveNice = 10

// toolMkdirTemp makes a private temporary directory for one call.
func (t Tools) toolMkdirTemp(pattern string) (string, error) {
	dir, err := os.MkdirTemp(t.TempDir, pattern) // "" means os.TempDir()
	if err != nil {
		return "", fmt.Errorf("worker: temporary directory: %w", err)
	}
	return dir, nil
}

// toolInput is an opened-for-inspection input file.
type toolInput struct {
	path      string // absolute, so a child never takes it for an option
	size      int64
	mediaType string // normalised: lower case, without parameters
}

// toolOpenInput checks that path is a readable regular file and
// normalises mediaType; an empty or unparsable mediaType is sniffed from
// the file's first bytes.
func toolOpenInput(ctx context.Context, path, mediaType string) (*toolInput, error) {
	if err := toolCtxErr(ctx); err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("worker: input %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("worker: input: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, Permanent(fmt.Errorf("worker: input %s: not a regular file", path))
	}
	in := &toolInput{path: abs, size: fi.Size(), mediaType: toolNormalizeMediaType(mediaType)}
	if in.mediaType == "" || in.mediaType == "application/octet-stream" {
		in.mediaType, err = toolSniff(abs)
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// toolNormalizeMediaType lower-cases a MIME type and drops parameters.
func toolNormalizeMediaType(mt string) string {
	if t, _, err := mime.ParseMediaType(mt); err == nil {
		return t
	}
	mt, _, _ = strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// toolSniff guesses a file's media type from its first 512 bytes.
func toolSniff(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("worker: input: %w", err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("worker: input %s: %w", path, err)
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "image/tiff", nil
	case bytes.HasPrefix(head, []byte("\x00\x00\x00\x0cjP  \r\n\x87\n")):
		return "image/jp2", nil
	}
	return toolNormalizeMediaType(http.DetectContentType(head)), nil
}

// toolImageFormat names the format of an image file from its magic
// number: "jpeg", "png", "gif", "tiff", "webp", "bmp", "jp2", "heif" or
// "pnm"; "" for anything else. Only files recognised here are given to
// the image tools: libvips would otherwise try its ImageMagick loader, and
// tesseract reads a text file as a list of image paths to open.
func toolImageFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("worker: input: %w", err)
	}
	defer f.Close()
	head := make([]byte, 16)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", fmt.Errorf("worker: input %s: %w", path, err)
	}
	head = head[:n]
	has := func(off int, magic string) bool {
		return len(head) >= off+len(magic) && string(head[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "\xff\xd8\xff"):
		return "jpeg", nil
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "png", nil
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "gif", nil
	case has(0, "II*\x00"), has(0, "MM\x00*"), has(0, "II+\x00"), has(0, "MM\x00+"):
		return "tiff", nil
	case has(0, "RIFF") && has(8, "WEBP"):
		return "webp", nil
	case has(0, "BM") && len(head) >= 14:
		return "bmp", nil
	case has(0, "\x00\x00\x00\x0cjP  \r\n\x87\n"), has(0, "\xff\x4f\xff\x51"):
		return "jp2", nil
	case has(4, "ftypheic"), has(4, "ftypheix"), has(4, "ftypmif1"), has(4, "ftypmsf1"), has(4, "ftypavif"):
		return "heif", nil
	case len(head) >= 3 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6' &&
		(head[2] == ' ' || head[2] == '\t' || head[2] == '\n' || head[2] == '\r'):
		return "pnm", nil
	}
	return "", nil
}

// toolIsXML reports whether a media type is an XML document.
func toolIsXML(mt string) bool {
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}
