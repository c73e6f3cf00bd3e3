package iiif

// This file serves all of a work's files as one ZIP archive (GET
// /iiif/{id}/zip, the work page's "Download all"): the original files
// (and source records) of its pages (file sets) the caller may read, in
// the work's order,
// each named with its page's number before its own name (0001-p1.tif),
// stored as they are (images and PDFs are compressed already; nothing is
// deflated). Like the PDF (iiif_pdf.go) it is written while it is sent: a
// page of children at a time, each file copied from the blob store into
// the response, so a book of 1,200 pages costs the memory of one buffer.

import (
	"archive/zip"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// iiifZip handles GET /iiif/{id}/zip: the work's original files the
// caller may read, one archive. A work without one is 404; so is what is
// not a work.
func (s *Handler) iiifZip(w http.ResponseWriter, r *http.Request) error {
	res, err := s.iiifWork(r, "zip")
	if err != nil {
		return err
	}
	title, _ := labels.Title(res.Metadata, "")
	out := &iiifDownload{w: w, res: res, name: iiifDownloadName(title, res.ID, ".zip"), mediaType: "application/zip",
		now: s.deps.Now(), caller: shelfmark.CallerFrom(r.Context())}
	zw := zip.NewWriter(out)
	n, err := s.writeWorkZip(r, res, zw)
	if err == nil && n == 0 {
		err = shelfmark.Errorf(shelfmark.ENOTFOUND, "%s has no files to download, or none you may read.", res.ID)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		if !out.started {
			return err
		}
		// part of the archive is sent: the client must not take it for
		// the whole (a ZIP without its central directory is unreadable)
		s.deps.Logger.Warn("ZIP of a work broken off", "work", res.ID, "files", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// writeWorkZip adds the original files of the work's pages to zw, read a
// page of children at a time (eachChild), and returns how many.
func (s *Handler) writeWorkZip(r *http.Request, res *shelfmark.Resource, zw *zip.Writer) (int, error) {
	count := 0
	names := map[string]bool{}
	err := s.eachChild(r.Context(), res.ID, false, func(it *shelfmark.Resource, n int, files []*shelfmark.Resource) error {
		if it.Kind != shelfmark.KindFileSet {
			return nil
		}
		for _, f := range files {
			if f.File == nil || !f.File.Processed() {
				continue // derivatives, and bytes kept elsewhere
			}
			name := zipEntryName(n, f.File.Name, names)
			if err := s.addZipFile(r, zw, name, f); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	return count, err
}

// zipEntryName is the name of a page's file in the archive: the page's
// number (four digits or more) and the file's own name, its last path
// element, made unique among those given before (taken).
func zipEntryName(page int, name string, taken map[string]bool) string {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	if base == "." || base == "/" || base == ".." {
		base = "file"
	}
	out := fmt.Sprintf("%04d-%s", page, base)
	ext := path.Ext(out)
	for i := 2; taken[out]; i++ {
		out = fmt.Sprintf("%04d-%s-%d%s", page, strings.TrimSuffix(base, ext), i, ext)
	}
	taken[out] = true
	return out
}

// addZipFile copies one file into the archive, stored, with the time it
// was last changed.
func (s *Handler) addZipFile(r *http.Request, zw *zip.Writer, name string, f *shelfmark.Resource) error {
	rc, err := s.deps.Blobs.Open(r.Context(), f.File.SHA256)
	if err != nil {
		return fmt.Errorf("ZIP file %s: %w", f.ID, err)
	}
	defer rc.Close()
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: f.Modified.UTC()})
	if err != nil {
		return fmt.Errorf("ZIP file %s: %w", f.ID, err)
	}
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("ZIP file %s: %w", f.ID, err)
	}
	return nil
}
