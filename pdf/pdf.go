// Package pdf writes a PDF of JPEG page images as a stream: each page's
// image is copied into the output as it is added (embedded as DCTDecode,
// not decoded or re-encoded), and only the byte offsets of the objects
// written so far are kept, so a book of a thousand pages costs the memory
// of one JPEG header, not of the book. The page tree and cross-reference
// table are written by Close.
package pdf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
)

// DefaultDPI is the resolution at which a page's size is computed from
// its image's pixels when Options.DPI is zero.
const DefaultDPI = 150

// maxHeader bounds how much of a JPEG is read looking for its frame
// header (past Exif, ICC and other application segments).
const maxHeader = 1 << 20

// ErrNotJPEG is wrapped by the error of AddJPEG for data that is not a
// JPEG it can embed (no frame header, an unsupported kind, a bad size).
var ErrNotJPEG = errors.New("pdf: not a JPEG that can be embedded")

// Options describe the document.
type Options struct {
	// Title is the document's title (its Info dictionary).
	Title string
	// DPI is the resolution at which image pixels become page size
	// (0: DefaultDPI).
	DPI float64
}

// Writer writes a PDF to an io.Writer a page at a time. Its methods are
// not safe for concurrent use.
type Writer struct {
	w       *bufio.Writer
	n       int64   // bytes written so far
	offsets []int64 // offsets[i] is where object i+1 starts (0: not yet)
	pages   []int   // object numbers of the pages
	opts    Options
	started bool
	err     error
}

// Object numbers fixed in every document; pages' objects follow.
const (
	objCatalog = 1
	objPages   = 2
	objInfo    = 3
)

// NewWriter returns a Writer writing to w. Nothing is written until the
// first page is added.
func NewWriter(w io.Writer, opts Options) *Writer {
	if opts.DPI <= 0 {
		opts.DPI = DefaultDPI
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), offsets: make([]int64, objInfo), opts: opts}
}

// Pages is the number of pages added.
func (pw *Writer) Pages() int { return len(pw.pages) }

// Written is the number of bytes written so far (some may still be
// buffered).
func (pw *Writer) Written() int64 { return pw.n }

func (pw *Writer) write(s string) {
	if pw.err != nil {
		return
	}
	n, err := pw.w.WriteString(s)
	pw.n += int64(n)
	pw.err = err
}

func (pw *Writer) printf(format string, args ...any) { pw.write(fmt.Sprintf(format, args...)) }

// begin starts object num at the current offset.
func (pw *Writer) begin(num int) {
	for len(pw.offsets) < num {
		pw.offsets = append(pw.offsets, 0)
	}
	pw.offsets[num-1] = pw.n
	pw.printf("%d 0 obj\n", num)
}

func (pw *Writer) next() int {
	pw.offsets = append(pw.offsets, 0)
	return len(pw.offsets)
}

func (pw *Writer) start() {
	if pw.started {
		return
	}
	pw.started = true
	// a comment of bytes above 127 tells transfer programs it is binary
	pw.write("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	pw.begin(objCatalog)
	pw.printf("<< /Type /Catalog /Pages %d 0 R >>\nendobj\n", objPages)
}

// Image describes a JPEG as its frame header says.
type Image struct {
	Width, Height int
	Components    int  // 1 grey, 3 colour (YCbCr or RGB), 4 CMYK
	Adobe         bool // an Adobe APP14 segment (CMYK is then stored inverted)
}

// AddJPEG adds a page showing the JPEG of size bytes read from r, the
// page as large as its pixels at Options.DPI. The JPEG's header is read
// and checked before anything of the page is written: data that is not a
// JPEG it can embed is an error wrapping ErrNotJPEG, and the document is
// left as it was (the page can be skipped). An error reading r or writing
// after that leaves the document broken.
func (pw *Writer) AddJPEG(r io.Reader, size int64) (*Image, error) {
	if pw.err != nil {
		return nil, pw.err
	}
	head, img, err := readHeader(r)
	if err != nil {
		return nil, err
	}
	if size < int64(len(head)) {
		return nil, fmt.Errorf("%w: %d bytes declared, more read", ErrNotJPEG, size)
	}
	pw.start()
	imgObj, contentObj, pageObj := pw.next(), pw.next(), pw.next()

	pw.begin(imgObj)
	cs := "/DeviceRGB"
	decode := ""
	switch img.Components {
	case 1:
		cs = "/DeviceGray"
	case 4:
		cs = "/DeviceCMYK"
		if img.Adobe {
			decode = " /Decode [1 0 1 0 1 0 1 0]"
		}
	}
	pw.printf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8%s /Filter /DCTDecode /Length %d >>\nstream\n",
		img.Width, img.Height, cs, decode, size)
	if pw.err != nil {
		return nil, pw.err
	}
	n, err := pw.w.Write(head)
	pw.n += int64(n)
	if err != nil {
		pw.err = err
		return nil, err
	}
	m, err := io.CopyN(pw.w, r, size-int64(len(head)))
	pw.n += m
	if err != nil {
		if err == io.EOF {
			err = fmt.Errorf("pdf: the JPEG ended after %d of %d bytes: %w", int64(len(head))+m, size, io.ErrUnexpectedEOF)
		}
		pw.err = err
		return nil, err
	}
	pw.write("\nendstream\nendobj\n")

	w := float64(img.Width) * 72 / pw.opts.DPI
	h := float64(img.Height) * 72 / pw.opts.DPI
	content := fmt.Sprintf("q %s 0 0 %s 0 0 cm /Im0 Do Q\n", num(w), num(h))
	pw.begin(contentObj)
	pw.printf("<< /Length %d >>\nstream\n%sendstream\nendobj\n", len(content), content)

	pw.begin(pageObj)
	pw.printf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>\nendobj\n",
		objPages, num(w), num(h), imgObj, contentObj)
	pw.pages = append(pw.pages, pageObj)
	return img, pw.err
}

// Close writes the page tree, the document information, the
// cross-reference table and the trailer, and flushes. A document without
// pages is refused (nothing has been written then).
func (pw *Writer) Close() error {
	if pw.err != nil {
		return pw.err
	}
	if len(pw.pages) == 0 {
		return errors.New("pdf: a document needs at least one page")
	}
	pw.begin(objPages)
	pw.printf("<< /Type /Pages /Count %d /Kids [", len(pw.pages))
	for i, p := range pw.pages {
		if i%16 == 0 {
			pw.write("\n")
		}
		pw.printf("%d 0 R ", p)
	}
	pw.write("] >>\nendobj\n")
	pw.begin(objInfo)
	pw.write("<< /Producer (Shelfmark)")
	if pw.opts.Title != "" {
		pw.write(" /Title " + textString(pw.opts.Title))
	}
	pw.write(" >>\nendobj\n")
	xref := pw.n
	pw.printf("xref\n0 %d\n0000000000 65535 f\r\n", len(pw.offsets)+1)
	for _, off := range pw.offsets {
		pw.printf("%010d 00000 n\r\n", off)
	}
	pw.printf("trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(pw.offsets)+1, objCatalog, objInfo, xref)
	if pw.err != nil {
		return pw.err
	}
	pw.err = pw.w.Flush()
	if pw.err == nil {
		pw.err = errClosed
		return nil
	}
	return pw.err
}

var errClosed = errors.New("pdf: writer closed")

// num formats a length in points.
func num(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// textString is a PDF text string: literal PDFDocEncoding-compatible
// ASCII when it can be, else UTF-16BE with a byte-order mark, in hex.
func textString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
		return "(" + r.Replace(s) + ")"
	}
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// readHeader reads a JPEG's segments up to and including its frame header
// (SOF), returning the bytes read and what the frame says.
func readHeader(r io.Reader) ([]byte, *Image, error) {
	var head bytes.Buffer
	read := func(n int) ([]byte, error) {
		if head.Len()+n > maxHeader {
			return nil, fmt.Errorf("%w: no frame header in the first %d bytes", ErrNotJPEG, maxHeader)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, fmt.Errorf("%w: it ends before its frame header", ErrNotJPEG)
			}
			return nil, err
		}
		head.Write(b)
		return b, nil
	}
	soi, err := read(2)
	if err != nil {
		return nil, nil, err
	}
	if soi[0] != 0xff || soi[1] != 0xd8 {
		return nil, nil, fmt.Errorf("%w: no JPEG start marker", ErrNotJPEG)
	}
	img := &Image{}
	for {
		m, err := read(2)
		if err != nil {
			return nil, nil, err
		}
		for m[0] == 0xff && m[1] == 0xff { // fill bytes
			b, err := read(1)
			if err != nil {
				return nil, nil, err
			}
			m[1] = b[0]
		}
		if m[0] != 0xff {
			return nil, nil, fmt.Errorf("%w: a bad marker", ErrNotJPEG)
		}
		marker := m[1]
		if marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7) {
			continue // no length
		}
		lb, err := read(2)
		if err != nil {
			return nil, nil, err
		}
		length := int(lb[0])<<8 | int(lb[1])
		if length < 2 {
			return nil, nil, fmt.Errorf("%w: a bad segment length", ErrNotJPEG)
		}
		body, err := read(length - 2)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case marker == 0xee && len(body) >= 5 && string(body[:5]) == "Adobe":
			img.Adobe = true
		case marker == 0xc0 || marker == 0xc1 || marker == 0xc2:
			// baseline, extended or progressive Huffman: what DCTDecode reads
			if len(body) < 6 {
				return nil, nil, fmt.Errorf("%w: a short frame header", ErrNotJPEG)
			}
			if body[0] != 8 {
				return nil, nil, fmt.Errorf("%w: %d bits per sample", ErrNotJPEG, body[0])
			}
			img.Height = int(body[1])<<8 | int(body[2])
			img.Width = int(body[3])<<8 | int(body[4])
			img.Components = int(body[5])
			if img.Width == 0 || img.Height == 0 {
				return nil, nil, fmt.Errorf("%w: %d×%d pixels", ErrNotJPEG, img.Width, img.Height)
			}
			if img.Components != 1 && img.Components != 3 && img.Components != 4 {
				return nil, nil, fmt.Errorf("%w: %d colour components", ErrNotJPEG, img.Components)
			}
			return head.Bytes(), img, nil
		case marker >= 0xc3 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc:
			return nil, nil, fmt.Errorf("%w: lossless or arithmetic-coded JPEG (marker %#x)", ErrNotJPEG, marker)
		case marker == 0xd9 || marker == 0xda:
			return nil, nil, fmt.Errorf("%w: image data before a frame header", ErrNotJPEG)
		}
	}
}
