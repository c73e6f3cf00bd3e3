package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// GrantJSON is one grant of a role.
type GrantJSON struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
}

// rolesJSON is the body of the roles routes.
type rolesJSON struct {
	Resource *shelfmark.ID `json:"resource"` // null: the repository
	Grants   []GrantJSON   `json:"grants"`
}

// rolesTarget returns the collection a roles route names ("": the
// repository).
func rolesTarget(r *http.Request) (shelfmark.ID, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if id == "" {
		return "", nil
	}
	if err := id.Check(); err != nil {
		return "", err
	}
	return id, nil
}

func (s *Handler) writeRoles(w http.ResponseWriter, r *http.Request, acc shelfmark.AccountService, id shelfmark.ID) error {
	grants, err := acc.Roles(r.Context(), id)
	if err != nil {
		return err
	}
	out := rolesJSON{Grants: make([]GrantJSON, len(grants))}
	if id != "" {
		out.Resource = &id
	}
	for i, g := range grants {
		out.Grants[i] = GrantJSON{Principal: g.Principal, Role: string(g.Role)}
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// getRoles handles GET /api/v1/resources/{id}/roles and GET
// /api/v1/roles (the repository's).
func (s *Handler) getRoles(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.rolesRequest(r)
	if err != nil {
		return err
	}
	return s.writeRoles(w, r, acc, id)
}

// putRoles handles PUT /api/v1/resources/{id}/roles and PUT
// /api/v1/roles: {"grants": [{"principal": "user:ann", "role":
// "curator"}]} replaces every grant there.
func (s *Handler) putRoles(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.rolesRequest(r)
	if err != nil {
		return err
	}
	var in struct {
		Grants *[]GrantJSON `json:"grants"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if in.Grants == nil {
		return shelfmark.Errorf(shelfmark.EINVALID, `The body must be {"grants": [{"principal": "user:NAME" or "group:NAME", "role": "manager"|"curator"|"depositor"|"viewer"}]}.`)
	}
	grants := make([]shelfmark.Grant, len(*in.Grants))
	for i, g := range *in.Grants {
		kind, name, _ := strings.Cut(g.Principal, ":")
		if (kind != "user" && kind != "group") || name == "" || len(name) > kit.MaxNameBytes {
			return &shelfmark.Error{Code: shelfmark.EINVALID, Message: `grants[` + strconv.Itoa(i) + `].principal must be "user:NAME" or "group:NAME", not ` + strconv.Quote(g.Principal) + `.`,
				Details: map[string]any{"index": i}}
		}
		if !shelfmark.Role(g.Role).Valid() {
			return &shelfmark.Error{Code: shelfmark.EINVALID, Message: `grants[` + strconv.Itoa(i) + `].role must be manager, curator, depositor or viewer, not ` + strconv.Quote(g.Role) + `.`,
				Details: map[string]any{"index": i}}
		}
		grants[i] = shelfmark.Grant{Principal: g.Principal, Role: shelfmark.Role(g.Role)}
	}
	if err := acc.SetRoles(r.Context(), id, grants); err != nil {
		return err
	}
	return s.writeRoles(w, r, acc, id)
}

// rolesRequest reads what both roles routes need: the account service,
// a signed-in caller, and the collection named ("": the repository).
func (s *Handler) rolesRequest(r *http.Request) (shelfmark.AccountService, shelfmark.ID, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, "", err
	}
	if _, err := kit.SignedIn(r, r.Pattern); err != nil {
		return nil, "", err
	}
	id, err := rolesTarget(r)
	return acc, id, err
}
