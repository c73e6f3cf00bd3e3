package siegfried

import (
	"bytes"
	"errors"
	"image"
	_ "image/gif" // register the standard decoders for image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"io"
	"math"
	"regexp"
	"strconv"

	"golang.org/x/image/tiff"
)

const (
	// dimensionBudget bounds what reading an image's header may read
	// (a TIFF's IFD may lie anywhere; a JPEG's frame header follows its
	// APPn segments).
	dimensionBudget = 4 << 20
	// pdfWindow is how much of a PDF's start and of its end is scanned
	// for the page tree.
	pdfWindow = 1 << 20
	// maxPages bounds a believable /Count.
	maxPages = 10_000_000
)

// dimensions reads an image's width and height from its header. A
// format Go has no decoder for gives 0, 0 and no error.
func dimensions(ra io.ReaderAt, size int64, mediaType string) (int, int, error) {
	r := io.NewSectionReader(ra, 0, size)
	var cfg image.Config
	var err error
	if mediaType == "image/tiff" {
		// tiff.DecodeConfig uses io.ReaderAt when it has one and reads
		// just the header and first IFD; image.DecodeConfig would hide
		// the io.ReaderAt behind a bufio.Reader and read up to the IFD,
		// often at the end of the file.
		cfg, err = tiff.DecodeConfig(r)
	} else {
		cfg, _, err = image.DecodeConfig(r)
		if errors.Is(err, image.ErrFormat) {
			return 0, 0, nil
		}
	}
	if err != nil {
		return 0, 0, err
	}
	return cfg.Width, cfg.Height, nil
}

var (
	// pagesType finds a page tree node's type entry ("/Type /Pages", not
	// "/Type /Page").
	pagesType = regexp.MustCompile(`/Type\s*/Pages(?:[^A-Za-z0-9_.#-]|$)`)
	// pagesCount finds a direct /Count; group 2 is set when it is an
	// indirect reference ("/Count 12 0 R"), which is not read.
	pagesCount = regexp.MustCompile(`/Count\s+(\d+)(\s+\d+\s+R)?`)
	// mediaBoxes finds a direct /MediaBox array of four numbers.
	mediaBoxes = regexp.MustCompile(`/MediaBox\s*\[\s*(-?[0-9]*\.?[0-9]+)\s+(-?[0-9]*\.?[0-9]+)\s+(-?[0-9]*\.?[0-9]+)\s+(-?[0-9]*\.?[0-9]+)\s*\]`)
)

// pdfPages returns a PDF's page count: the largest /Count of a
// /Type /Pages object found in the first and the last pdfWindow bytes
// (the root of the page tree counts every page), 0 when none is found
// there (for instance when the page tree is inside a compressed object
// stream); and the size of its first page in points (1/72 inch), from
// the first /MediaBox in those bytes (most often page 1's, or the page
// tree's, which its pages inherit), 0 × 0 when none is found.
func pdfPages(ra io.ReaderAt, size int64) (pages, width, height int, err error) {
	var windows [][]byte
	if size <= 2*pdfWindow {
		b := make([]byte, size)
		if _, err := ra.ReadAt(b, 0); err != nil && err != io.EOF {
			return 0, 0, 0, err
		}
		windows = append(windows, b)
	} else {
		head, tail := make([]byte, pdfWindow), make([]byte, pdfWindow)
		if _, err := ra.ReadAt(head, 0); err != nil && err != io.EOF {
			return 0, 0, 0, err
		}
		if _, err := ra.ReadAt(tail, size-pdfWindow); err != nil && err != io.EOF {
			return 0, 0, 0, err
		}
		windows = append(windows, head, tail)
	}
	for _, w := range windows {
		pages = max(pages, pageTreeCount(w))
		if width == 0 {
			width, height = mediaBox(w)
		}
	}
	return pages, width, height, nil
}

// mediaBox returns the size, in points, of the first believable
// /MediaBox [x0 y0 x1 y1] in b (at most 200 inches a side).
func mediaBox(b []byte) (int, int) {
	for _, m := range mediaBoxes.FindAllSubmatch(b, -1) {
		var v [4]float64
		ok := true
		for i := range v {
			f, err := strconv.ParseFloat(string(m[i+1]), 64)
			ok = ok && err == nil
			v[i] = f
		}
		w, h := math.Round(math.Abs(v[2]-v[0])), math.Round(math.Abs(v[3]-v[1]))
		if ok && w >= 1 && h >= 1 && w <= 14400 && h <= 14400 {
			return int(w), int(h)
		}
	}
	return 0, 0
}

// pageTreeCount returns the largest direct /Count of the page tree nodes
// in b, looking for it within each node's object (from the preceding
// "obj" to the following "endobj", at most 4 KiB either side of the
// type entry).
func pageTreeCount(b []byte) int {
	const reach = 4 << 10
	best := 0
	for _, m := range pagesType.FindAllIndex(b, -1) {
		lo := max(0, m[0]-reach)
		if i := bytes.LastIndex(b[lo:m[0]], []byte("obj")); i >= 0 {
			lo += i + len("obj")
		}
		hi := min(len(b), m[1]+reach)
		if i := bytes.Index(b[m[1]:hi], []byte("endobj")); i >= 0 {
			hi = m[1] + i
		}
		for _, c := range pagesCount.FindAllSubmatch(b[lo:hi], -1) {
			if len(c[2]) > 0 {
				continue
			}
			if n, err := strconv.Atoi(string(c[1])); err == nil && n <= maxPages {
				best = max(best, n)
			}
		}
	}
	return best
}
