package api

// This file serves who may read a work's files apart from its record
// (GET and PUT /api/v1/resources/{id}/files-access: a visibility and an
// optional embargo that every page of the work takes) and a collection's
// default for the works deposited into it (GET and PUT
// /api/v1/resources/{id}/files-default). The engine decides who may read
// and set them (Resources.FilesAccess, SetFilesAccess,
// CollectionFilesDefault, SetCollectionFilesDefault).

import (
	"encoding/json"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// filesAccessJSON is the access of a work's files: its first page's own
// access, which every page takes from PUT.
type filesAccessJSON struct {
	ID shelfmark.ID `json:"id"`
	// Visibility is null for a work without pages (it has no files).
	Visibility *string `json:"visibility"`
	Embargo    *string `json:"embargo"`
	// Version is the work's, as its ETag states it (PUT's If-Match).
	Version int64 `json:"version"`
}

// writeFilesAccess writes the files' access of work res.
func (s *Handler) writeFilesAccess(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource) error {
	a, ok, err := s.deps.Resources.FilesAccess(r.Context(), res.ID)
	if err != nil {
		return err
	}
	out := filesAccessJSON{ID: res.ID, Version: res.Version}
	if ok {
		v := string(a.Visibility)
		out.Visibility = &v
		if a.Embargo != nil {
			e := kit.TimeString(*a.Embargo)
			out.Embargo = &e
		}
	}
	w.Header().Set("ETag", kit.ETag(res.Version))
	return kit.WriteJSON(w, http.StatusOK, out)
}

// getFilesAccess handles GET /api/v1/resources/{id}/files-access: who
// may read the files of a work the caller reads.
func (s *Handler) getFilesAccess(w http.ResponseWriter, r *http.Request) error {
	res, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(r.PathValue("id")))
	if err != nil {
		return err
	}
	if res.Kind != shelfmark.KindWork {
		return shelfmark.Errorf(shelfmark.EINVALID, "%s is a %s; the files with an access of their own are a work's.", res.ID, res.Kind)
	}
	return s.writeFilesAccess(w, r, res)
}

// putFilesAccess handles PUT /api/v1/resources/{id}/files-access:
// {"visibility": "private", "embargo": "2030-01-31"} gives every page of
// the work that access (an embargo is optional, and ahead), under
// If-Match (the work's version); it answers as GET.
func (s *Handler) putFilesAccess(w http.ResponseWriter, r *http.Request) error {
	id, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	var in struct {
		Visibility *string         `json:"visibility"`
		Embargo    json.RawMessage `json:"embargo"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if in.Visibility == nil {
		return shelfmark.Errorf(shelfmark.EINVALID, `visibility: the body must be {"visibility": "public"|"authenticated"|"private", "embargo": a date ahead or null}.`)
	}
	a := shelfmark.Access{Visibility: shelfmark.Visibility(*in.Visibility)}
	embargo, err := kit.OptionalTime("embargo", in.Embargo)
	if err != nil {
		return err
	}
	if embargo != nil {
		a.Embargo = *embargo
	}
	res, err := s.deps.Resources.SetFilesAccess(r.Context(), id, a, ifMatch)
	if err != nil {
		return err
	}
	return s.writeFilesAccess(w, r, res)
}

// filesDefaultJSON is who may read the files of the works deposited
// into a collection unless their depositor chooses otherwise.
type filesDefaultJSON struct {
	ID         shelfmark.ID `json:"id"`
	Visibility string       `json:"visibility"`
}

// getFilesDefault handles GET /api/v1/resources/{id}/files-default.
func (s *Handler) getFilesDefault(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	v, err := s.deps.Resources.CollectionFilesDefault(r.Context(), id)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, filesDefaultJSON{ID: id, Visibility: string(v)})
}

// putFilesDefault handles PUT /api/v1/resources/{id}/files-default:
// {"visibility": "authenticated"} (public, authenticated or private);
// it answers as GET.
func (s *Handler) putFilesDefault(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	var in struct {
		Visibility *string `json:"visibility"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if in.Visibility == nil {
		return shelfmark.Errorf(shelfmark.EINVALID, `visibility: the body must be {"visibility": "public"|"authenticated"|"private"}.`)
	}
	if err := s.deps.Resources.SetCollectionFilesDefault(r.Context(), id, shelfmark.Visibility(*in.Visibility)); err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, filesDefaultJSON{ID: id, Visibility: *in.Visibility})
}
