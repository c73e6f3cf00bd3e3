// Package siegfried identifies file formats in process with PRONOM
// signatures (rule R6), adapting github.com/richardlehane/siegfried.
//
// The embedded signature file, shelfmark.sig, is built by
// scripts/gen-signature.sh with `roy build -bof 32768 -eof 16384`: byte
// signatures look only at the first 32 KiB and the last 16 KiB of a file,
// so identifying a 2 GB TIFF reads what identifying a 2 KB one does.
// Container signatures (ZIP and OLE2 based formats) are included.
//
// Identify reads through a wrapper that fetches only the byte ranges
// siegfried asks for (positioned reads on an *os.File or any io.ReaderAt,
// seek and read otherwise), counts them and refuses to read once the
// context has ended. It then reads an image's dimensions (image/jpeg,
// image/png, image/gif and golang.org/x/image/tiff, header only) and a
// PDF's page count (the page tree's /Count in the first and last MiB),
// both within a fixed read budget. Nothing runs outside the process.
package siegfried

//go:generate bash ../scripts/gen-signature.sh

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	sf "github.com/richardlehane/siegfried"
	"github.com/richardlehane/siegfried/pkg/core"
	"github.com/richardlehane/siegfried/pkg/pronom"

	"github.com/shelfmark/shelfmark"
)

// signature is the siegfried signature file built by
// scripts/gen-signature.sh.
//
//go:embed shelfmark.sig
var signature []byte

// maxNote bounds the length of Format.Note in bytes.
const maxNote = 240

// Identifier identifies formats; safe for concurrent use.
//
// One siegfried instance serves every goroutine without a lock: its
// matchers are immutable once loaded (lazily built parts are guarded by
// sync.Once), each identification gets its own recorders and read
// buffer (taken from a mutex-guarded pool), which is how siegfried's own
// `sf -multi` uses it.
type Identifier struct {
	sf *sf.Siegfried
}

// New returns an Identifier that loads the embedded signature file.
// Loading takes some 30 ms and a few MB: make one and share it.
func New() (*Identifier, error) {
	s, err := sf.LoadReader(bytes.NewReader(signature))
	if err != nil {
		return nil, fmt.Errorf("siegfried: loading the embedded signature file: %w", err)
	}
	return &Identifier{sf: s}, nil
}

// Identify identifies the bytes of r (name is the original file name,
// used only as a hint the way siegfried uses it; size is the length or
// -1). The bytes are those from offset 0, whatever r's current offset.
//
// It reads at most the signature's BOF/EOF windows plus what
// dimension/page reading needs, and gives up with an error wrapping
// context.DeadlineExceeded when ctx's deadline passes (context.Canceled
// when it is canceled): every read of r checks ctx first and fails once
// it has ended.
//
// A file no signature matches (including a zero-byte file) returns
// Format{PRONOM: shelfmark.FormatUnknown, Note: ...} and a nil error.
//
// When r is an io.ReaderAt (an *os.File is), only positioned reads are
// made and r's offset is left alone; otherwise r is read after seeks and
// its offset afterwards is unspecified. When ctx ends Identify returns at
// once; a read already in progress may finish in the background, but no
// new read starts.
func (id *Identifier) Identify(ctx context.Context, r io.ReadSeeker, name string, size int64) (*shelfmark.Format, error) {
	f, _, err := id.identify(ctx, r, name, size)
	return f, err
}

// identify is Identify, also returning the source it read through (nil
// when it read nothing) so that tests can count the bytes read.
func (id *Identifier) identify(ctx context.Context, r io.ReadSeeker, name string, size int64) (*shelfmark.Format, *source, error) {
	fail := func(err error) error { return fmt.Errorf("siegfried: identifying %q: %w", name, err) }
	if err := ctx.Err(); err != nil {
		return nil, nil, fail(err)
	}
	if r == nil {
		return nil, nil, fail(errors.New("nil reader"))
	}
	if size < 0 {
		n, err := sizeOf(r)
		if err != nil {
			return nil, nil, fail(fmt.Errorf("finding the size: %w", err))
		}
		size = n
	}
	if size == 0 {
		return &shelfmark.Format{PRONOM: shelfmark.FormatUnknown, Note: "empty file"}, nil, nil
	}
	src := newSource(ctx, r, size)
	type result struct {
		f   *shelfmark.Format
		err error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res = result{err: fmt.Errorf("panic in identification: %v", p)}
			}
			src.release()
			done <- res
		}()
		res.f, res.err = id.run(src, name)
	}()
	select {
	case res := <-done:
		// siegfried ignores many read errors; a refused or failed read
		// makes the result unreliable.
		if err := src.failure(); err != nil {
			return nil, src, fail(err)
		}
		if res.err != nil {
			return nil, src, fail(res.err)
		}
		return res.f, src, nil
	case <-ctx.Done():
		return nil, src, fail(ctx.Err())
	}
}

// sizeOf returns the length of r by seeking to its end and back.
func sizeOf(r io.ReadSeeker) (int64, error) {
	cur, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := r.Seek(cur, io.SeekStart); err != nil {
		return 0, err
	}
	return end, nil
}

// run identifies the bytes of src and reads the details of images and
// PDFs.
func (id *Identifier) run(src *source, name string) (*shelfmark.Format, error) {
	ids, err := id.sf.Identify(src, name, "")
	if len(ids) == 0 {
		if err != nil {
			return nil, err
		}
		return &shelfmark.Format{PRONOM: shelfmark.FormatUnknown, Note: "no identification"}, nil
	}
	f := format(ids[0])
	if err != nil { // a matcher's complaint, such as a ZIP it could not read
		f.Note = addNote(f.Note, "siegfried: "+err.Error())
	}
	if !f.Known() {
		return f, nil
	}
	switch mt := f.MediaType; {
	case mt == "application/pdf":
		pages, w, h, err := pdfPages(newBudget(src, pdfWindow*2), src.size)
		switch {
		case err != nil:
			f.Note = addNote(f.Note, "page count not read: "+err.Error())
		case pages == 0:
			f.Note = addNote(f.Note, "page count not found (no /Type /Pages with /Count in the first and last MiB; the page tree may be in a compressed object stream)")
		}
		f.Pages, f.Width, f.Height = pages, w, h
	case strings.HasPrefix(mt, "image/"):
		w, h, err := dimensions(newBudget(src, dimensionBudget), src.size, mt)
		if err != nil {
			f.Note = addNote(f.Note, "dimensions not read: "+err.Error())
		}
		f.Width, f.Height = w, h
	}
	return f, nil
}

// format converts a siegfried identification.
func format(id core.Identification) *shelfmark.Format {
	var f shelfmark.Format
	if p, ok := id.(pronom.Identification); ok {
		f = shelfmark.Format{PRONOM: p.ID, Name: p.Name, Version: p.Version, MediaType: firstMIME(p.MIME),
			Note: note(strings.Join(p.Basis, "; "), p.Warning)}
	} else { // not a PRONOM identifier: use the field order of pronom.Identification.Values
		v := append(id.Values(), make([]string, 8)...)
		f = shelfmark.Format{PRONOM: v[1], Name: v[2], Version: v[3], MediaType: firstMIME(v[4]), Note: note(v[6], v[7])}
	}
	if !id.Known() || f.PRONOM == "" {
		f.PRONOM = shelfmark.FormatUnknown
		f.Name, f.Version, f.MediaType = "", "", ""
	}
	return &f
}

// firstMIME returns the first of a comma-separated list of media types
// (PRONOM gives several for some formats, such as XML).
func firstMIME(s string) string {
	s, _, _ = strings.Cut(s, ",")
	return strings.TrimSpace(s)
}

// note joins siegfried's basis and warning.
func note(basis, warning string) string {
	if warning != "" {
		return addNote(basis, "warning: "+warning)
	}
	return truncate(basis)
}

// addNote appends s to a note, keeping it short.
func addNote(n, s string) string {
	if n != "" {
		n += "; "
	}
	return truncate(n + s)
}

func truncate(s string) string {
	if len(s) <= maxNote {
		return s
	}
	s = s[:maxNote-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
