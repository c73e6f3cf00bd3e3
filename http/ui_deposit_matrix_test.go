package http

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// formPage turns the rule of a change into the rule of the GET of its
// form: a signed-out browser (401) is sent to sign in (303); a bad
// credential stays 401.
func formPage(r rule) rule {
	return func(w *who, t *tset) int {
		got := r(w, t)
		if got == 401 && !w.bad {
			return 303
		}
		return got
	}
}

// versionOf is the stored version of a target, as its forms carry it.
func (m *matrix) versionOf(id shelfmark.ID) string {
	res, err := m.e.repo.FindResource(context.Background(), id)
	if err != nil {
		m.e.t.Fatal(err)
	}
	return strconv.FormatInt(res.Version, 10)
}

// uiDepositRows are the matrix rows of the routes of ui_deposit.go and
// ui_edit*.go: the forms obey the rules of the API operations they call.
// The delete confirmation is shown to those who may edit the work (the
// engine answers whether they may delete it when the form is sent).
func (m *matrix) uiDepositRows() []row {
	get := func(p string) func(*cell) req { return func(*cell) req { return req{method: "GET", path: p} } }
	workGet := func(rest string) func(*cell) req {
		return func(c *cell) req { return req{method: "GET", path: "/works/" + string(c.t.W) + rest} }
	}
	rd, fr := "read", "fresh"
	return []row{
		{"GET /deposit", []probe{{build: get("/deposit"), rule: formPage(writer(200))}}},
		{"POST /deposit", []probe{{build: func(*cell) req {
			f := metaFields("title", "Matrix deposit")
			f.Set("collection", string(m.C2))
			f.Set("visibility", "public")
			return formReq("/deposit", f)
		}, rule: deposit(303, shelfmark.RoleDepositor)}}},
		{"GET /works/{id}/edit", []probe{{target: rd, build: workGet("/edit"), rule: formPage(writeTarget(200, 404, (*who).edits))}}},
		{"POST /works/{id}/edit", []probe{{target: fr, build: func(c *cell) req {
			f := metaFields("title", "Edited in the matrix")
			f.Set("version", m.versionOf(c.t.W))
			return formReq("/works/"+string(c.t.W)+"/edit", f)
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"GET /works/{id}/pages", []probe{{target: rd, build: workGet("/pages"), rule: formPage(writeTarget(200, 404, (*who).edits))}}},
		{"POST /works/{id}/order", []probe{{target: fr, build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/order", url.Values{"version": {m.versionOf(c.t.W)}, "id": {string(c.t.FS)}, "save": {"1"}})
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"POST /works/{id}/labels", []probe{{target: fr, build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/labels", url.Values{"version": {m.versionOf(c.t.W)}, "id": {string(c.t.FS)}, "label": {"p. 1"}})
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"POST /works/{id}/files", []probe{{target: fr, build: func(c *cell) req {
			return fileForm("/works/"+string(c.t.W)+"/files", "files", "added.txt", "an added page")
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"POST /works/{id}/pages/{page}/file", []probe{{target: fr, build: func(c *cell) req {
			return fileFormWith("/works/"+string(c.t.W)+"/pages/"+string(c.t.FS)+"/file", url.Values{"version": {m.versionOf(c.t.W)}}, "files", "replaced.txt", "a replaced page")
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"POST /works/{id}/thumbnail", []probe{{target: fr, build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/thumbnail", url.Values{"version": {m.versionOf(c.t.W)}, "page": {string(c.t.FS)}})
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"GET /works/{id}/access", []probe{{target: rd, build: workGet("/access"), rule: formPage(writeTarget(200, 404, (*who).edits))}}},
		{"POST /works/{id}/access", []probe{{target: fr, build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/access", url.Values{"version": {m.versionOf(c.t.W)}, "visibility": {"private"}})
		}, rule: writeTarget(303, 404, (*who).edits)}}},
		{"GET /works/{id}/delete", []probe{{target: rd, build: workGet("/delete"), rule: formPage(writeTarget(200, 404, (*who).deletesWork))}}},
		{"POST /works/{id}/delete", []probe{{target: fr, build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/delete", url.Values{"version": {m.versionOf(c.t.W)}})
		}, rule: writeTarget(303, 404, (*who).deletesWork)}}},
		{"GET /collections/new", []probe{{build: get("/collections/new"), rule: formPage(writer(200))}}},
		{"POST /collections/new", []probe{{build: func(*cell) req {
			f := metaFields("title", "Matrix collection")
			f.Set("parent", string(m.C2))
			f.Set("visibility", "public")
			return formReq("/collections/new", f)
		}, rule: deposit(303, shelfmark.RoleCurator)}}},
		{"GET /collections/{id}/edit", []probe{{build: get("/collections/" + string(m.C) + "/edit"), rule: formPage(editsCollection(200))}}},
		{"POST /collections/{id}/edit", []probe{{build: func(*cell) req {
			f := metaFields("title", "C") // its title as it is: nothing changes
			f.Set("version", m.versionOf(m.C))
			return formReq("/collections/"+string(m.C)+"/edit", f)
		}, rule: editsCollection(303)}}},
		{"POST /collections/{id}/files-default", []probe{{build: func(*cell) req {
			return formReq("/collections/"+string(m.C)+"/files-default", url.Values{"files_default": {"public"}})
		}, rule: editsCollection(303)}}},
		{"GET /collections/{id}/roles", []probe{{build: get("/collections/" + string(m.C) + "/roles"), rule: formPage(manages(200, false))}}},
		{"POST /collections/{id}/roles", []probe{{build: func(*cell) req {
			f := url.Values{}
			for _, g := range m.grants {
				kind, name, _ := strings.Cut(g.Principal, ":")
				f.Add("kind", kind)
				f.Add("name", name)
				f.Add("role", g.Role)
			}
			return formReq("/collections/"+string(m.C)+"/roles", f)
		}, rule: manages(303, true)}}},
	}
}

// editsCollection: changing the fixture's collection C (public), which
// takes the curator role on it (or an administrator) and a credential
// that writes.
func editsCollection(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.write:
			return 403
		case w.admin || w.role.Includes(shelfmark.RoleCurator):
			return ok
		}
		return 403
	}
}
