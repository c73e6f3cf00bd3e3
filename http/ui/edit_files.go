package ui

// This file serves the adding of files to a work after its deposit
// (POST /works/{id}/files, from the form on its pages page): each file
// sent becomes a page of its own (a file set holding the file as its
// original, titled with the file's name), after the pages the work has.
// The files are streamed to the content store under the caller's quotas
// as a deposit's are (readDepositMultipart, through receiveFiles, which
// the replacement of a page's file shares), and the derivatives, OCR and
// search follow as for any new file.

import (
	"context"
	"net/http"
	"net/url"

	"github.com/shelfmark/shelfmark"
)

// receiveFiles reads a multipart form that sends files to a work the
// caller may change (editableWork): only from a caller who may deposit
// somewhere, through one of the server's upload slots, each file streamed
// to the content store under the caller's quotas as a deposit's are
// (readDepositMultipart). store is given the work, the form's other
// fields and the files; should it (or the reading) fail, the bytes sent
// are discarded at once, so a refused form keeps none of them.
func (s *Handler) receiveFiles(w http.ResponseWriter, r *http.Request, store func(res *shelfmark.Resource, form url.Values, files []depositFile) error) (err error) {
	res, err := s.editableWork(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if err := s.deps.Resources.CheckDepositRight(ctx); err != nil {
		return err
	}
	release, err := s.opts.Uploads.Admit(ctx)
	if err != nil {
		return err
	}
	defer release()
	var sent sentFiles
	defer func() {
		if err != nil {
			sent.drop(context.WithoutCancel(ctx), s)
		}
	}()
	form, files, err := s.readDepositMultipart(w, r, &sent)
	if err != nil {
		return err
	}
	return store(res, form, files)
}

// filesPost handles POST /works/{id}/files: a multipart form with the
// files (field "files") and its form token. The pages are created in one
// group commit; should one be refused, those stored are taken back, the
// bytes sent are discarded, and the form's page says why.
func (s *Handler) filesPost(w http.ResponseWriter, r *http.Request) error {
	return s.receiveFiles(w, r, func(res *shelfmark.Resource, _ url.Values, files []depositFile) error {
		ctx := r.Context()
		if len(files) == 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "No file was sent: choose the files to add.")
		}
		ids, err := s.deps.Resources.MintIDs(ctx, 2*len(files))
		if err != nil {
			return err
		}
		access, err := s.addedPagesAccess(r, res.ID)
		if err != nil {
			return err
		}
		nrs := make([]*shelfmark.NewResource, 0, 2*len(files))
		for i, f := range files {
			fs := ids[2*i]
			nrs = append(nrs,
				&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: res.ID, Visibility: access.Visibility, Embargo: access.Embargo,
					Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(f.Name)}}},
				&shelfmark.NewResource{ID: ids[2*i+1], Kind: shelfmark.KindFile, Parent: fs, File: f.file()})
		}
		_, errs := s.deps.Resources.CreateResources(ctx, nrs)
		for _, e := range errs {
			if e != nil {
				s.takeBack(ctx, nrs, errs)
				return e
			}
		}
		http.Redirect(w, r, "/works/"+string(res.ID)+"/pages?notice=filesadded", http.StatusSeeOther)
		return nil
	})
}

// takeBack deletes the file sets of nrs that were stored (errs[i] nil)
// when another of them was refused, so that a refused form leaves no
// page without its file; a failure is logged.
func (s *Handler) takeBack(ctx context.Context, nrs []*shelfmark.NewResource, errs []error) {
	for i, nr := range nrs {
		if nr.Kind != shelfmark.KindFileSet || errs[i] != nil {
			continue
		}
		if err := s.deps.Resources.DeleteResource(context.WithoutCancel(ctx), nr.ID, 0); err != nil {
			s.log.Warn("files: a page of a refused form could not be taken back", "id", nr.ID, "err", err)
		}
	}
}
