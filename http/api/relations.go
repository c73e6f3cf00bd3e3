package api

import (
	"context"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// summaryJSON is a resource in a listing.
type summaryJSON struct {
	ID         shelfmark.ID   `json:"id"`
	Kind       shelfmark.Kind `json:"kind"`
	Visibility string         `json:"visibility"`
	Position   int            `json:"position,omitempty"`
	Version    int64          `json:"version"`
	Modified   string         `json:"modified"`
}

// pageJSON is one page of a listing.
type pageJSON struct {
	Items []summaryJSON `json:"items"`
	Next  string        `json:"next,omitempty"`
}

// writePage writes one keyset page of a listing, with the link to the
// next page in its body and in a Link header.
func (s *Handler) writePage(w http.ResponseWriter, r *http.Request, p *shelfmark.Page) error {
	out := pageJSON{Items: make([]summaryJSON, len(p.Items))}
	for i, it := range p.Items {
		out.Items[i] = summaryJSON{ID: it.ID, Kind: it.Kind, Visibility: string(it.Visibility), Position: it.Position, Version: it.Version, Modified: kit.TimeString(it.Modified)}
	}
	if p.Next != "" {
		q := r.URL.Query()
		q.Set("after", string(p.Next))
		next := r.URL.Path + "?" + q.Encode()
		out.Next = next
		w.Header().Add("Link", "<"+next+`>; rel="next"`)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// listMembers handles GET …/members?after=&limit=.
func (s *Handler) listMembers(w http.ResponseWriter, r *http.Request) error {
	return s.list(w, r, s.deps.Resources.ListMembers)
}

// list serves one keyset page of a listing.
func (s *Handler) list(w http.ResponseWriter, r *http.Request, fn func(context.Context, shelfmark.ID, shelfmark.PageRequest) (*shelfmark.Page, error)) error {
	p, err := kit.PageRequest(r)
	if err != nil {
		return err
	}
	page, err := fn(r.Context(), shelfmark.ID(r.PathValue("id")), p)
	if err != nil {
		return err
	}
	return s.writePage(w, r, page)
}

// addMembers handles POST …/members {"members": [ids]}.
func (s *Handler) addMembers(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	var b struct {
		Members []shelfmark.ID `json:"members"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		return err
	}
	if err := s.deps.Resources.AddMembers(r.Context(), id, b.Members); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// removeMember handles DELETE …/members/{member}.
func (s *Handler) removeMember(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	member := shelfmark.ID(r.PathValue("member"))
	if err := member.Check(); err != nil {
		return err
	}
	if err := s.deps.Resources.RemoveMembers(r.Context(), id, []shelfmark.ID{member}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listChildren handles GET …/children?after=&limit=.
func (s *Handler) listChildren(w http.ResponseWriter, r *http.Request) error {
	return s.list(w, r, s.deps.Resources.ListChildren)
}

// putOrder handles PUT …/order {"children": [ids]}.
func (s *Handler) putOrder(w http.ResponseWriter, r *http.Request) error {
	id, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	var b struct {
		Children *[]shelfmark.ID `json:"children"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		return err
	}
	if b.Children == nil {
		return shelfmark.Errorf(shelfmark.EINVALID, `children: name the children in order, {"children": [ids]} ([] for no order).`)
	}
	res, err := s.deps.Resources.SetOrder(r.Context(), id, *b.Children, ifMatch)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", kit.ETag(res.Version))
	return kit.WriteJSON(w, http.StatusOK, map[string]any{"id": res.ID, "version": res.Version, "children": len(*b.Children)})
}
