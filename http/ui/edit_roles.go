package ui

// This file serves the roles of a collection: who (a user or a group) holds
// which role there. The account service decides who may see and set them
// (its managers and administrators), as for GET and PUT
// /api/v1/resources/{id}/roles.

import (
	"net/http"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// roleRow is one grant of the roles form.
type roleRow struct {
	// Kind is "user" or "group"; Name the user's or group's name.
	Kind, Name, Role string
}

// rolesData is the content of the roles page.
type rolesData struct {
	Collection *shelfmark.Resource
	Title      string
	Rows       []roleRow
	Roles      []string
	Error      string
}

// rolesCollection checks the caller may see the roles of the path's
// collection, and loads it.
func (s *Handler) rolesCollection(r *http.Request) (*shelfmark.Resource, []shelfmark.Grant, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, nil, err
	}
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no collection %.80q.", r.PathValue("id"))
	}
	if !shelfmark.CallerFrom(r.Context()).Authenticated() {
		return nil, nil, shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Sign in to see the roles of a collection.")
	}
	grants, err := acc.Roles(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.deps.Resources.FindResource(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	return res, grants, nil
}

func allRoles() []string {
	out := make([]string, len(shelfmark.Roles))
	for i, r := range shelfmark.Roles {
		out[i] = string(r)
	}
	return out
}

// rolesPage handles GET /collections/{id}/roles.
func (s *Handler) rolesPage(w http.ResponseWriter, r *http.Request) error {
	res, grants, err := s.rolesCollection(r)
	if err != nil {
		return err
	}
	d := &rolesData{Collection: res, Title: titleOf(res), Roles: allRoles()}
	for _, g := range grants {
		kind, name, _ := strings.Cut(g.Principal, ":")
		d.Rows = append(d.Rows, roleRow{Kind: kind, Name: name, Role: string(g.Role)})
	}
	d.Rows = append(d.Rows, roleRow{Kind: "user", Role: string(shelfmark.RoleDepositor)})
	p := s.page(w, r, "roles.title", d.Title)
	p.Data = d
	return s.render(w, r, http.StatusOK, "roles", p)
}

// rolesPost handles POST /collections/{id}/roles: the rows replace every
// grant on the collection (a row without a name, or with the role
// "none", grants nothing); "add" shows the form again with one more row.
func (s *Handler) rolesPost(w http.ResponseWriter, r *http.Request) error {
	res, _, err := s.rolesCollection(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	kinds, names, roles := f["kind"], f["name"], f["role"]
	if len(kinds) != len(names) || len(roles) != len(names) {
		return shelfmark.Errorf(shelfmark.EINVALID, "The form's rows are incomplete.")
	}
	if len(names) > maxFormRows {
		return shelfmark.Errorf(shelfmark.EINVALID, "The form has %d rows; at most %d are taken.", len(names), maxFormRows)
	}
	d := &rolesData{Collection: res, Title: titleOf(res), Roles: allRoles()}
	var grants []shelfmark.Grant
	for i := range names {
		row := roleRow{Kind: kinds[i], Name: strings.TrimSpace(names[i]), Role: roles[i]}
		d.Rows = append(d.Rows, row)
		if row.Name == "" || row.Role == "none" {
			continue
		}
		if row.Kind != "user" && row.Kind != "group" {
			return shelfmark.Errorf(shelfmark.EINVALID, "Row %d: %.20q is neither user nor group.", i+1, row.Kind)
		}
		grants = append(grants, shelfmark.Grant{Principal: row.Kind + ":" + row.Name, Role: shelfmark.Role(row.Role)})
	}
	p := s.page(w, r, "roles.title", d.Title)
	p.Data = d
	if f.Get("add") != "" {
		d.Rows = append(d.Rows, roleRow{Kind: "user", Role: string(shelfmark.RoleDepositor)})
		return s.render(w, r, http.StatusOK, "roles", p)
	}
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	err = acc.SetRoles(r.Context(), res.ID, grants)
	switch shelfmark.ErrorCode(err) {
	case "":
		http.Redirect(w, r, "/collections/"+string(res.ID)+"/roles?notice=rolessaved", http.StatusSeeOther)
		return nil
	case shelfmark.EINVALID:
		d.Error = shelfmark.ErrorMessage(err)
		return s.render(w, r, http.StatusBadRequest, "roles", p)
	}
	return err
}
