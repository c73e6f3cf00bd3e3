package iiif

// This file serves a work as one PDF (GET /iiif/{id}/pdf, the manifest's
// rendering): a page for each of its pages (file sets) in the work's
// order, showing the page's access copy (else its original when that is a
// JPEG), embedded as it is stored (package pdf copies the JPEG's bytes;
// nothing is decoded or re-encoded). The PDF is written while it is sent:
// the work's children are read a page of children at a time (with their
// files, in one more read), and each image is copied from the blob store
// into the response, so a book of 1,200 pages costs the memory of one
// buffer and the reads of its images once, never the whole book. It is
// made on request, as the caller may read the work, rather than kept: see
// docs/iiif.md.

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
	"github.com/shelfmark/shelfmark/pdf"
)

// iiifDownloadExtRoom is how many bytes the name of a work as one file leaves
// free in a file name, for its extension (".pdf", ".zip").
const iiifDownloadExtRoom = 80

// iiifRendering is the manifest's rendering entry: the work as one PDF.
func (s *Handler) iiifRendering(base string, res *shelfmark.Resource) []map[string]any {
	return []map[string]any{{"id": base + "/iiif/" + string(res.ID) + "/pdf", "type": "Text",
		"label": s.iiifLabels("iiif.pdf"), "format": "application/pdf"}}
}

// iiifPDF handles GET /iiif/{id}/pdf: the work as one PDF, a page for
// each of its pages the caller may read that has a JPEG image. A work
// without one is 404; so is what is not a work.
func (s *Handler) iiifPDF(w http.ResponseWriter, r *http.Request) error {
	res, err := s.iiifWork(r, "pdf")
	if err != nil {
		return err
	}
	title, _ := labels.Title(res.Metadata, "")
	out := &iiifDownload{w: w, res: res, name: iiifDownloadName(title, res.ID, ".pdf"), mediaType: "application/pdf",
		now: s.deps.Now(), caller: shelfmark.CallerFrom(r.Context())}
	pw := pdf.NewWriter(out, pdf.Options{Title: title})
	if err := s.writeWorkPDF(r, res, pw); err != nil {
		if !out.started {
			return err
		}
		// the status and part of the PDF are sent: the client must not
		// take what it got for the whole
		s.deps.Logger.Warn("PDF of a work broken off", "work", res.ID, "pages", pw.Pages(), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// writeWorkPDF adds the work's pages to pw, read a page of children at a
// time (eachChild), and closes it.
func (s *Handler) writeWorkPDF(r *http.Request, res *shelfmark.Resource, pw *pdf.Writer) error {
	err := s.eachChild(r.Context(), res.ID, false, func(it *shelfmark.Resource, _ int, files []*shelfmark.Resource) error {
		f := kit.PageJPEG(files)
		if it.Kind != shelfmark.KindFileSet || f == nil {
			return nil // no image yet, or not a JPEG: no page
		}
		return s.addPDFPage(r, pw, f)
	})
	if err != nil {
		return err
	}
	if pw.Pages() == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s has no page images (JPEG access copies) to make a PDF of, or none you may read.", res.ID)
	}
	return pw.Close()
}

// addPDFPage copies one image into the PDF. An image that is not a JPEG
// the PDF can hold (its header says so before anything is written) is
// left out.
func (s *Handler) addPDFPage(r *http.Request, pw *pdf.Writer, f *shelfmark.Resource) error {
	rc, err := s.deps.Blobs.Open(r.Context(), f.File.SHA256)
	if err != nil {
		return fmt.Errorf("PDF page %s: %w", f.ID, err)
	}
	defer rc.Close()
	if _, err := pw.AddJPEG(rc, f.File.Size); err != nil {
		if errors.Is(err, pdf.ErrNotJPEG) {
			s.deps.Logger.Warn("PDF of a work: page image left out", "file", f.ID, "err", err)
			return nil
		}
		return fmt.Errorf("PDF page %s: %w", f.ID, err)
	}
	return nil
}

// iiifDownloadName is the download name of a work as one file: its
// title (else its id), made safe as a file name, and ext.
func iiifDownloadName(title string, id shelfmark.ID, ext string) string {
	name := strings.TrimSpace(title)
	if name == "" {
		name = string(id)
	}
	name = strings.NewReplacer("/", "-", "\\", "-").Replace(name) // not a path
	name = strings.TrimRight(shelfmark.SafeFileName(name, shelfmark.MaxFileNameBytes-iiifDownloadExtRoom), ". ")
	if name == "" {
		name = string(id)
	}
	return name + ext
}

// iiifDownload sends the headers of a work as one file (a PDF, a ZIP)
// with its first bytes, so that an error before anything is written is
// still an error response.
type iiifDownload struct {
	w         http.ResponseWriter
	res       *shelfmark.Resource
	name      string
	mediaType string
	now       time.Time         // the time of the request
	caller    *shelfmark.Caller // who asked (shareHeaders)
	started   bool
}

// Write sends the headers with the first bytes, then the bytes.
func (o *iiifDownload) Write(p []byte) (int, error) {
	if !o.started {
		o.started = true
		h := o.w.Header()
		h.Set("Content-Type", o.mediaType)
		cd := kit.ContentDisposition(o.name, o.mediaType)
		if rest, ok := strings.CutPrefix(cd, "inline"); ok {
			cd = "attachment" + rest // a download, not a page to show in place
		}
		h.Set("Content-Disposition", cd)
		h.Set("X-Content-Type-Options", "nosniff")
		shareHeaders(h, o.caller, o.res, o.now)
		o.w.WriteHeader(http.StatusOK)
	}
	return o.w.Write(p)
}

var _ io.Writer = (*iiifDownload)(nil)
