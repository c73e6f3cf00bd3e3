package http

// The authorization matrix: every operation of the OpenAPI document (and
// the routes outside it, such as /oai) × every kind of caller × every kind
// of target, each cell with the status the access policy says it must
// answer. The table below has one row per operation; an operation of the
// document without a row fails the test, and so does a row without an
// operation, so that no endpoint is added without saying who may call it.
//
// The policy the rules encode (see policy.go): roles on a collection reach
// its members, manager > curator > depositor > viewer; administrators hold
// every role; what a caller may not read answers 404 exactly as a missing
// resource; a readable resource the caller may not change answers 403
// (401 for anonymous callers, who are refused every write before the
// target is looked at, as read-scoped credentials are with 403); a bad
// credential (expired, revoked) answers 401 on every route, public ones
// included; a resource named in a body rather than the path that the
// caller may not read is an invalid reference (400), as a missing one is.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// who is a column of the matrix: a kind of caller.
type who struct {
	name  string
	token string // "" for anonymous
	user  string // the user the credential belongs to
	// bad marks an expired or revoked credential.
	bad    bool
	signed bool
	admin  bool // an administrator with an admin-scoped token
	write  bool // the credential allows writes
	// role is the caller's role on the collections the targets are in.
	role shelfmark.Role
}

// target kinds: the visibilities a work in the collection can have.
type targetKind struct {
	name string
	// eff is the effective visibility now: public, authenticated or
	// private.
	eff shelfmark.Visibility
	// own: deposited by the depositor (who may then read and edit it).
	own  bool
	make func(nr *shelfmark.NewResource)
	// lapse, when set, is the lease or embargo to write into the rows
	// once made (the engine refuses dates in the past): the date passed
	// and the access sweep has not yet run.
	lapse *time.Time
}

// tset is one target: a work in a collection, its file set and file.
type tset struct {
	kind      *targetKind
	coll      shelfmark.ID // the collection the work is a member of
	W, FS, F  shelfmark.ID
	titleWord string
}

func (t *tset) String() string {
	if t == nil {
		return "-"
	}
	return t.kind.name + " work " + string(t.W)
}

// reads says whether w may read t.
func (w *who) reads(t *tset) bool {
	switch {
	case w.admin:
		return true
	case t.kind.eff == shelfmark.Public:
		return true
	case t.kind.eff == shelfmark.Authenticated && w.signed:
		return true
	}
	return w.role.Includes(shelfmark.RoleViewer) || (t.kind.own && w.user == "depositor")
}

// edits says whether w may change t (metadata, children, files; deleting
// a file set).
func (w *who) edits(t *tset) bool {
	if !w.write {
		return false
	}
	return w.admin || w.role.Includes(shelfmark.RoleCurator) || (t.kind.own && w.user == "depositor" && w.role.Includes(shelfmark.RoleDepositor))
}

// deletesWork says whether w may delete t's work: it takes a curator.
func (w *who) deletesWork(*tset) bool {
	return w.write && (w.admin || w.role.Includes(shelfmark.RoleCurator))
}

// rule computes the expected status of a cell.
type rule func(w *who, t *tset) int

// the rules of the kinds of operation.
func public(ok int) rule {
	return func(w *who, _ *tset) int {
		if w.bad {
			return 401
		}
		return ok
	}
}

func adminOnly(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.admin:
			return 403
		}
		return ok
	}
}

func anySignedIn(ok int) rule {
	return func(w *who, _ *tset) int {
		if w.bad || !w.signed {
			return 401
		}
		return ok
	}
}

// writer: any credential that allows writes (the envelope refuses the
// others before the route runs).
func writer(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.write:
			return 403
		}
		return ok
	}
}

func readTarget(ok int) rule {
	return func(w *who, t *tset) int {
		switch {
		case w.bad:
			return 401
		case !w.reads(t):
			return 404
		}
		return ok
	}
}

// writeTarget: a write to the resource the path names; unreadable is
// 404, or notFound when the resource is named in the body.
func writeTarget(ok, notFound int, may func(*who, *tset) bool) rule {
	return func(w *who, t *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.write:
			return 403
		case !w.reads(t):
			return notFound
		case !may(w, t):
			return 403
		}
		return ok
	}
}

// depositsSomewhere: sending bytes (an upload, a bulk ingest's staging),
// which takes the depositor role on some collection or on the repository
// (the fixture makes other a manager of D), or an administrator.
func depositsSomewhere(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.write:
			return 403
		case w.admin || w.role.Includes(shelfmark.RoleDepositor) || w.user == "other":
			return ok
		}
		return 403
	}
}

// deposit: creating in the collections, which takes want on them.
func deposit(ok int, want shelfmark.Role) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case !w.write:
			return 403
		case w.admin || w.role.Includes(want):
			return ok
		}
		return 403
	}
}

// manages: the roles (and audit trail) of a collection, for its managers
// and administrators; write also takes a write credential.
func manages(ok int, write bool) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case write && !w.write:
			return 403
		case w.admin || w.role.Includes(shelfmark.RoleManager):
			return ok
		}
		return 403
	}
}

// addMember: filing t's work into another collection takes the depositor
// role there and the right to edit the work.
func addMember(w *who, t *tset) int {
	switch {
	case w.bad || !w.signed:
		return 401
	case !w.write:
		return 403
	case w.admin:
		return 204
	case !w.role.Includes(shelfmark.RoleDepositor):
		return 403
	case !w.reads(t):
		return 400
	case !w.edits(t):
		return 403
	}
	return 204
}

// removeMember: unfiling t's work takes the curator role on the
// collection or the right to edit the work.
func removeMember(w *who, t *tset) int {
	switch {
	case w.bad || !w.signed:
		return 401
	case !w.write:
		return 403
	case w.admin:
		return 204
	case !w.reads(t):
		return 400
	case w.role.Includes(shelfmark.RoleCurator) || w.edits(t):
		return 204
	}
	return 403
}

// cell is what a probe's builder and checks see.
type cell struct {
	e *policyEnv
	m *matrix
	w *who
	t *tset
}

// req is one request of a cell.
type req struct {
	method, path string
	body         string
	hdrs         []string
}

// probe is one request shape of a row.
type probe struct {
	name string
	// target: "" (none; the cell runs once per caller), "read" (the
	// targets in the collection, shared by every cell) or "fresh" (a
	// target made for this cell alone, for writes).
	target string
	build  func(c *cell) req
	rule   rule
	// status, when set, reads the status that decides from the response
	// (the per-item status of bulk routes).
	status func(r *response) int
	// check, when set, checks a successful response further.
	check func(c *cell, r *response) string
}

// row is one operation.
type row struct {
	op     string
	probes []probe
}

// matrix is the fixture: collections, users, targets.
type matrix struct {
	e *policyEnv
	// C holds the read targets, C2 the fresh ones, C3 receives members;
	// each grants the same roles. D is another collection.
	C, C2, C3, D shelfmark.ID
	grants       []api.GrantJSON
	callers      []*who
	kinds        []*targetKind
	reads        []*tset
	fresh        map[string][]*tset // by target kind
	tokens       map[string]string  // a write token per user
}

func jsonBody(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

const ctJSON = "application/json"

// itemStatus reads results[0].status of a bulk answer (200 with a status
// per item); the answer's own status when it is not 200.
func itemStatus(r *response) int {
	if r.Status != http.StatusOK {
		return r.Status
	}
	var b struct {
		Results []struct {
			Status int `json:"status"`
		} `json:"results"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil || len(b.Results) != 1 {
		return -1
	}
	return b.Results[0].Status
}

// listed returns the ids of a listing page.
func listed(r *response) []shelfmark.ID {
	var p page
	if json.Unmarshal(r.Body, &p) != nil {
		return nil
	}
	var out []shelfmark.ID
	for _, it := range p.Items {
		out = append(out, it.ID)
	}
	return out
}

func resPath(id shelfmark.ID, rest string) string { return "/api/v1/resources/" + string(id) + rest }

// rows is the matrix's table: one row per operation of the OpenAPI
// document.
func (m *matrix) rows() []row {
	get := func(p string) func(*cell) req { return func(*cell) req { return req{method: "GET", path: p} } }
	rd, fr := "read", "fresh"
	rows := []row{
		{"GET /healthz", []probe{{build: get("/healthz"), rule: public(200)}}},
		{"GET /readyz", []probe{{build: get("/readyz"), rule: public(200)}}},
		{"GET /metrics", []probe{{build: get("/metrics"), rule: adminOnly(200)}}},
		{"GET /api/v1/openapi.json", []probe{{build: get("/api/v1/openapi.json"), rule: public(200)}}},
		{"POST /api/v1/collections", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/collections", jsonBody(map[string]any{"memberOf": []shelfmark.ID{m.C2}}), []string{"Content-Type", ctJSON}}
		}, rule: deposit(201, shelfmark.RoleCurator)}}},
		{"POST /api/v1/works", []probe{
			{name: "in a collection", build: func(*cell) req {
				return req{"POST", "/api/v1/works", jsonBody(map[string]any{"memberOf": []shelfmark.ID{m.C2}}), []string{"Content-Type", ctJSON}}
			}, rule: deposit(201, shelfmark.RoleDepositor)},
			{name: "child of the target", target: fr, build: func(c *cell) req {
				return req{"POST", "/api/v1/works", jsonBody(map[string]any{"parent": c.t.W}), []string{"Content-Type", ctJSON}}
			}, rule: writeTarget(201, 400, (*who).edits)},
		}},
		{"POST /api/v1/filesets", []probe{{target: fr, build: func(c *cell) req {
			return req{"POST", "/api/v1/filesets", jsonBody(map[string]any{"parent": c.t.W}), []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(201, 400, (*who).edits)}}},
		{"POST /api/v1/batch", []probe{
			{name: "in a collection", build: func(*cell) req {
				return req{"POST", "/api/v1/batch", jsonBody(map[string]any{"resources": []any{map[string]any{"kind": "work", "memberOf": []shelfmark.ID{m.C2}}}}), []string{"Content-Type", ctJSON}}
			}, rule: deposit(201, shelfmark.RoleDepositor), status: itemStatus},
			{name: "file set of the target", target: fr, build: func(c *cell) req {
				return req{"POST", "/api/v1/batch", jsonBody(map[string]any{"resources": []any{map[string]any{"kind": "fileset", "parent": c.t.W}}}), []string{"Content-Type", ctJSON}}
			}, rule: writeTarget(201, 400, (*who).edits), status: itemStatus},
		}},
		{"POST /api/v1/blobs", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/blobs", "blob bytes", []string{"Content-Type", "application/octet-stream"}}
		}, rule: depositsSomewhere(201)}}},
		{"POST /api/v1/groups", []probe{
			{name: "in a collection", build: func(*cell) req {
				return req{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"resources": []any{
					map[string]any{"ref": "w", "kind": "work", "memberOf": []shelfmark.ID{m.C2}}}}}}), []string{"Content-Type", ctJSON}}
			}, rule: deposit(201, shelfmark.RoleDepositor), status: itemStatus},
			{name: "file set of the target", target: fr, build: func(c *cell) req {
				return req{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"resources": []any{
					map[string]any{"ref": "fs", "kind": "fileset", "parent": c.t.W}}}}}), []string{"Content-Type", ctJSON}}
			}, rule: writeTarget(201, 400, (*who).edits), status: itemStatus},
		}},
		{"POST /api/v1/sources/lookup", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/sources/lookup", `{"keys": ["matrix-source"]}`, []string{"Content-Type", ctJSON}}
		}, rule: writer(200)}}},
		{"GET /api/v1/resources/{id}", []probe{
			{name: "work", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.W, "")} }, rule: readTarget(200)},
			{name: "file set", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.FS, "")} }, rule: readTarget(200),
				check: inheritedVisibility},
			{name: "file", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.F, "")} }, rule: readTarget(200),
				check: inheritedVisibility},
			{name: "work at a datetime (TimeGate)", target: rd, build: func(c *cell) req {
				return req{method: "GET", path: resPath(c.t.W, ""), hdrs: []string{"Accept-Datetime", "Thu, 01 Jan 2026 00:00:00 GMT"}}
			}, rule: readTarget(302)},
			{name: "work as Turtle", target: rd, build: func(c *cell) req {
				return req{method: "GET", path: resPath(c.t.W, ""), hdrs: []string{"Accept", "text/turtle"}}
			}, rule: readTarget(200)},
		}},
		{"PUT /api/v1/resources/{id}", []probe{{target: fr, build: func(c *cell) req {
			return req{"PUT", resPath(c.t.W, ""), `{"metadata": {"dcterms:title": "replaced"}}`, []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(200, 404, (*who).edits)}}},
		{"PATCH /api/v1/resources/{id}", []probe{
			{name: "metadata", target: fr, build: func(c *cell) req {
				return req{"PATCH", resPath(c.t.W, ""), `{"add": {"dcterms:subject": "patched"}}`, []string{"Content-Type", ctJSON}}
			}, rule: writeTarget(200, 404, (*who).edits)},
			{name: "visibility", target: fr, build: func(c *cell) req {
				return req{"PATCH", resPath(c.t.W, ""), `{"visibility": "public"}`, []string{"Content-Type", ctJSON}}
			}, rule: writeTarget(200, 404, (*who).edits)},
		}},
		{"DELETE /api/v1/resources/{id}", []probe{
			{name: "work", target: fr, build: func(c *cell) req { return req{method: "DELETE", path: resPath(c.t.W, "")} },
				rule: writeTarget(204, 404, (*who).deletesWork)},
			{name: "file set", target: fr, build: func(c *cell) req { return req{method: "DELETE", path: resPath(c.t.FS, "")} },
				rule: writeTarget(204, 404, (*who).edits)},
		}},
		{"GET /api/v1/resources/{id}/members", []probe{{build: func(*cell) req { return req{method: "GET", path: resPath(m.C, "/members?limit=100")} },
			rule: public(200), check: m.checkMembers}}},
		{"POST /api/v1/resources/{id}/members", []probe{{target: fr, build: func(c *cell) req {
			return req{"POST", resPath(m.C3, "/members"), jsonBody(map[string]any{"members": []shelfmark.ID{c.t.W}}), []string{"Content-Type", ctJSON}}
		}, rule: addMember}}},
		{"DELETE /api/v1/resources/{id}/members/{member}", []probe{{target: fr, build: func(c *cell) req {
			return req{method: "DELETE", path: resPath(c.t.coll, "/members/"+string(c.t.W))}
		}, rule: removeMember}}},
		{"GET /api/v1/resources/{id}/children", []probe{
			{name: "work", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.W, "/children")} },
				rule: readTarget(200), check: func(c *cell, r *response) string {
					if got := listed(r); !slices.Equal(got, []shelfmark.ID{c.t.FS}) {
						return fmt.Sprintf("children %v, want [%s]", got, c.t.FS)
					}
					return ""
				}},
			{name: "file set", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.FS, "/children")} },
				rule: readTarget(200)},
		}},
		{"PUT /api/v1/resources/{id}/order", []probe{{target: fr, build: func(c *cell) req {
			return req{"PUT", resPath(c.t.W, "/order"), jsonBody(map[string]any{"children": []shelfmark.ID{c.t.FS}}), []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(200, 404, (*who).edits)}}},
		{"POST /api/v1/resources/{id}/files", []probe{{target: fr, build: func(c *cell) req {
			return req{"POST", resPath(c.t.FS, "/files?name=up.txt"), "uploaded bytes", []string{"Content-Type", "text/plain"}}
		}, rule: writeTarget(201, 404, (*who).edits)}}},
		{"GET /api/v1/resources/{id}/content", []probe{
			{target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.F, "/content")} }, rule: readTarget(200)},
			{name: "range", target: rd, build: func(c *cell) req {
				return req{method: "GET", path: resPath(c.t.F, "/content"), hdrs: []string{"Range", "bytes=0-3"}}
			}, rule: readTarget(206)},
		}},
		{"GET /api/v1/resources/{id}/versions", []probe{
			{name: "work", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.W, "/versions")} }, rule: readTarget(200),
				check: oneMemento},
			{name: "file", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.F, "/versions")} }, rule: readTarget(200),
				check: oneMemento},
		}},
		{"GET /api/v1/resources/{id}/versions/{v}", []probe{{target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.W, "/versions/1")} },
			rule: readTarget(200)}}},
		{"GET /api/v1/resources/{id}/versions/{v}/content", []probe{{target: rd, build: func(c *cell) req {
			return req{method: "GET", path: resPath(c.t.F, "/versions/1/content")}
		}, rule: readTarget(200)}}},
		{"POST /api/v1/resources/{id}/versions/{v}/restore", []probe{{target: fr, build: func(c *cell) req {
			c.e.preserveAt(time.Now(), c.t.W) // its first version, to restore
			return req{method: "POST", path: resPath(c.t.W, "/versions/1/restore")}
		}, rule: writeTarget(200, 404, (*who).deletesWork)}}},
		{"GET /api/v1/resources/{id}/events", []probe{
			{name: "work", target: rd, build: func(c *cell) req { return req{method: "GET", path: resPath(c.t.W, "/events")} }, rule: readTarget(200)},
			{name: "file xml", target: rd, build: func(c *cell) req {
				return req{method: "GET", path: resPath(c.t.F, "/events"), hdrs: []string{"Accept", "application/xml"}}
			}, rule: readTarget(200)},
		}},
		{"GET /api/v1/search", []probe{{target: rd, build: func(c *cell) req {
			return req{method: "GET", path: "/api/v1/search?q=" + c.t.titleWord}
		}, rule: public(200), check: func(c *cell, r *response) string {
			// search finds the work exactly when the caller may read it
			// (shelfmark.SearchReader), and a caller's results are no
			// shared cache's to keep
			if cc := r.Header.Get("Cache-Control"); c.w.signed && !c.w.bad && cc != "no-store" {
				return "a signed-in caller's search is cached: Cache-Control " + cc
			}
			var b searchBody
			if err := json.Unmarshal(r.Body, &b); err != nil {
				return err.Error()
			}
			found := false
			for _, h := range b.Hits {
				found = found || h.Work == c.t.W
			}
			if want := c.w.reads(c.t); found != want {
				return fmt.Sprintf("search finds the work: %v, want %v", found, want)
			}
			return ""
		}}}},
		{"GET /api/v1/jobs", []probe{{build: get("/api/v1/jobs"), rule: adminOnly(200)}}},
		{"GET /api/v1/jobs/{queue}", []probe{{build: get("/api/v1/jobs/" + shelfmark.QueueCharacterize), rule: adminOnly(200)}}},
		{"POST /api/v1/jobs/{queue}/{action}", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/jobs/" + shelfmark.QueueCharacterize + "/resume", "", nil}
		}, rule: adminOnly(200)}}},
		{"POST /api/v1/login", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/login", `{"name": "loginuser", "password": "loginuser-password"}`, []string{"Content-Type", ctJSON}}
		}, rule: public(200)}}},
		{"POST /api/v1/logout", []probe{{build: func(*cell) req { return req{method: "POST", path: "/api/v1/logout"} }, rule: public(204)}}},
		{"GET /api/v1/me", []probe{{build: get("/api/v1/me"), rule: anySignedIn(200)}}},
		{"GET /api/v1/tokens", []probe{{build: get("/api/v1/tokens"), rule: anySignedIn(200)}}},
		{"POST /api/v1/tokens", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/tokens", `{"note": "matrix", "expires": "1d"}`, []string{"Content-Type", ctJSON}}
		}, rule: writer(201)}}},
		{"DELETE /api/v1/tokens/{id}", []probe{{build: func(c *cell) req {
			return req{method: "DELETE", path: "/api/v1/tokens/" + m.spareToken(c.w)}
		}, rule: writer(204)}}},
		{"GET /api/v1/roles", []probe{{build: get("/api/v1/roles"), rule: adminOnly(200)}}},
		{"PUT /api/v1/roles", []probe{{build: func(*cell) req {
			return req{"PUT", "/api/v1/roles", `{"grants": []}`, []string{"Content-Type", ctJSON}}
		}, rule: adminOnly(200)}}},
		{"GET /api/v1/resources/{id}/roles", []probe{{build: func(*cell) req { return req{method: "GET", path: resPath(m.C, "/roles")} },
			rule: manages(200, false)}}},
		{"PUT /api/v1/resources/{id}/roles", []probe{{build: func(*cell) req {
			return req{"PUT", resPath(m.C, "/roles"), jsonBody(map[string]any{"grants": m.grants}), []string{"Content-Type", ctJSON}}
		}, rule: manages(200, true)}}},
		{"GET /api/v1/usage", []probe{
			{name: "the repository", build: get("/api/v1/usage?begin_date=2026-01&end_date=2026-12"), rule: adminOnly(200)},
			{name: "a work", target: "read", build: func(c *cell) req {
				return req{method: "GET", path: "/api/v1/usage?begin_date=2026-01&end_date=2026-12&item_id=" + string(c.t.W)}
			}, rule: readTarget(200)},
		}},
		{"GET /api/v1/audit", []probe{
			{name: "whole repository", build: get("/api/v1/audit?limit=5"), rule: adminOnly(200)},
			{name: "of the collection", build: func(*cell) req { return req{method: "GET", path: "/api/v1/audit?limit=5&resource=" + string(m.C)} },
				rule: manages(200, false)},
		}},
		// single sign-on is off on this server: its routes are missing
		{"GET /auth/oidc/login", []probe{{build: get("/auth/oidc/login"), rule: public(404)}}},
		{"GET /auth/oidc/callback", []probe{{build: get("/auth/oidc/callback?code=x&state=y"), rule: public(404)}}},
	}
	rows = append(rows, m.accessRows()...) // a work's files (access_matrix_test.go)
	return append(rows, m.webRows()...)    // web archives (web_matrix_test.go)
}

// extraRows are the routes the OpenAPI document does not describe.
func (m *matrix) extraRows() []row {
	return []row{
		{"GET /oai", []probe{
			{name: "Identify", build: func(*cell) req { return req{method: "GET", path: "/oai?verb=Identify"} }, rule: public(200)},
			{name: "GetRecord", target: "read", build: func(c *cell) req {
				return req{method: "GET", path: "/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier=oai:repo.example.org:" + string(c.t.W)}
			}, rule: public(200), check: func(c *cell, r *response) string {
				// OAI-PMH shows public works only, to everyone
				found := strings.Contains(string(r.Body), "<record>")
				if want := c.t.kind.eff == shelfmark.Public; found != want {
					return fmt.Sprintf("GetRecord gives the record: %v, want %v", found, want)
				}
				return ""
			}},
		}},
		{"POST /oai", []probe{{name: "Identify", build: func(*cell) req {
			return req{"POST", "/oai", "verb=Identify", []string{"Content-Type", "application/x-www-form-urlencoded"}}
		}, rule: public(200)}}},
	}
}

// oneMemento: the TimeMap of a read target lists its one version.
func oneMemento(_ *cell, r *response) string {
	var tm api.TimeMapJSON
	if err := json.Unmarshal(r.Body, &tm); err != nil {
		return err.Error()
	}
	if len(tm.Mementos) != 1 || tm.Mementos[0].Version != 1 {
		return fmt.Sprintf("mementos %+v, want version 1", tm.Mementos)
	}
	return ""
}

// inheritedVisibility: the file set and file of a work that is
// authenticated or private say so (they are as hidden as their work).
func inheritedVisibility(c *cell, r *response) string {
	var res resource
	if err := json.Unmarshal(r.Body, &res); err != nil {
		return err.Error()
	}
	switch c.t.kind.name {
	case "authenticated", "private", "own private":
		if want := string(c.t.kind.eff); res.Visibility != want {
			return fmt.Sprintf("reports visibility %q, want %q (its work's)", res.Visibility, want)
		}
	}
	return ""
}

// checkMembers: the members of C the caller sees are the read targets it
// may read.
func (m *matrix) checkMembers(c *cell, r *response) string {
	var want []shelfmark.ID
	for _, t := range m.reads {
		if c.w.reads(t) {
			want = append(want, t.W)
		}
	}
	got := listed(r)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("members %v, want %v", got, want)
	}
	return ""
}

// spareToken makes a token of w's user (or, for callers without a user of
// their own, of the viewer) for w to revoke.
func (m *matrix) spareToken(w *who) string {
	user := w.user
	if user == "" {
		user = "viewer"
	}
	_, tok, err := m.e.accounts.CreateToken(context.Background(), shelfmark.NewToken{User: user, Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeRead})
	if err != nil {
		m.e.t.Fatal(err)
	}
	return strconv.FormatInt(tok.Key, 10)
}

// newMatrix builds the fixture.
func newMatrix(t *testing.T, backend string) *matrix {
	e := newPolicyEnv(t, backend, Options{MaxAuthFailures: 1 << 30})
	m := &matrix{e: e, fresh: map[string][]*tset{}, tokens: map[string]string{}}
	ctx := context.Background()
	colls := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindCollection, Metadata: titled("C")}, {Kind: shelfmark.KindCollection, Metadata: titled("C2")},
		{Kind: shelfmark.KindCollection, Metadata: titled("C3")}, {Kind: shelfmark.KindCollection, Metadata: titled("D")},
	})
	m.C, m.C2, m.C3, m.D = colls[0].ID, colls[1].ID, colls[2].ID, colls[3].ID
	for _, u := range []string{"viewer", "depositor", "curator", "manager", "other"} {
		m.tokens[u] = e.addUser(u, shelfmark.ScopeWrite)
	}
	m.tokens["admin"] = e.admin
	if _, err := e.accounts.AddUser(ctx, "loginuser", "loginuser-password", false, nil); err != nil {
		t.Fatal(err)
	}
	// roles are granted the way a manager would, through the API
	m.grants = []api.GrantJSON{{Principal: "user:curator", Role: "curator"}, {Principal: "user:depositor", Role: "depositor"}, {Principal: "user:manager", Role: "manager"}, {Principal: "user:viewer", Role: "viewer"}}
	for _, c := range []shelfmark.ID{m.C, m.C2, m.C3} {
		e.grantRoles(c, m.grants)
	}
	e.grantRoles(m.D, []api.GrantJSON{{Principal: "user:other", Role: "manager"}})

	// the bad credentials are the curator's
	expiring, _, err := e.accounts.CreateToken(ctx, shelfmark.NewToken{User: "curator", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeWrite,
		Expires: ptr(e.clock.now().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/api/v1/me", nil, as(expiring)...).want(t, http.StatusOK)
	revoked, tok, err := e.accounts.CreateToken(ctx, shelfmark.NewToken{User: "curator", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeWrite})
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/api/v1/me", nil, as(revoked)...).want(t, http.StatusOK)
	e.do("DELETE", "/api/v1/tokens/"+strconv.FormatInt(tok.Key, 10), nil, as(m.tokens["curator"])...).want(t, http.StatusNoContent)
	e.clock.advance(2 * time.Hour)
	curatorRead := newToken(t, e.accounts, "curator", shelfmark.ScopeRead)

	m.callers = []*who{
		{name: "anonymous"},
		{name: "viewer", user: "viewer", token: m.tokens["viewer"], signed: true, write: true, role: shelfmark.RoleViewer},
		{name: "depositor", user: "depositor", token: m.tokens["depositor"], signed: true, write: true, role: shelfmark.RoleDepositor},
		{name: "curator", user: "curator", token: m.tokens["curator"], signed: true, write: true, role: shelfmark.RoleCurator},
		{name: "manager", user: "manager", token: m.tokens["manager"], signed: true, write: true, role: shelfmark.RoleManager},
		{name: "admin", user: "admin", token: e.admin, signed: true, write: true, admin: true},
		{name: "manager of another collection", user: "other", token: m.tokens["other"], signed: true, write: true},
		{name: "expired token", token: expiring, bad: true},
		{name: "revoked token", token: revoked, bad: true},
		{name: "read-scoped curator", user: "curator", token: curatorRead, signed: true, role: shelfmark.RoleCurator},
	}

	now := time.Now()
	future, past := now.Add(30*24*time.Hour), now.Add(-time.Hour)
	// works held by a private and an embargoed work outside the
	// collections: public themselves, as hidden as what holds them
	holders := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Metadata: titled("matrix private holder")},
		{Kind: shelfmark.KindWork, Embargo: &future, Metadata: titled("matrix embargoed holder")},
	})
	m.kinds = []*targetKind{
		{name: "public", eff: shelfmark.Public, make: func(nr *shelfmark.NewResource) { nr.Visibility = shelfmark.Public }},
		{name: "authenticated", eff: shelfmark.Authenticated, make: func(nr *shelfmark.NewResource) { nr.Visibility = shelfmark.Authenticated }},
		{name: "private", eff: shelfmark.Private, make: func(nr *shelfmark.NewResource) { nr.Visibility = shelfmark.Private }},
		{name: "embargoed", eff: shelfmark.Private, make: func(nr *shelfmark.NewResource) { nr.Embargo = &future }},
		{name: "leased", eff: shelfmark.Public, make: func(nr *shelfmark.NewResource) { nr.Lease = &future }},
		{name: "lease ended", eff: shelfmark.Private, make: func(nr *shelfmark.NewResource) { nr.Lease = &future }, lapse: &past},
		{name: "own private", eff: shelfmark.Private, own: true, make: func(nr *shelfmark.NewResource) { nr.Visibility = shelfmark.Private }},
		{name: "under a private work", eff: shelfmark.Private, make: func(nr *shelfmark.NewResource) { nr.Parent = holders[0].ID }},
		{name: "under an embargoed work", eff: shelfmark.Private, make: func(nr *shelfmark.NewResource) { nr.Parent = holders[1].ID }},
	}
	m.reads = m.makeTargets(m.C, 1, true)
	for _, ts := range m.reads { // the versions the versions rows read
		e.preserveAt(time.Now(), ts.W)
	}
	// one fresh target per write cell
	n := 0
	for _, r := range slices.Concat(m.rows(), m.uiRows()) {
		for _, p := range r.probes {
			if p.target == "fresh" {
				n += len(m.callers)
			}
		}
	}
	for _, ts := range m.makeTargets(m.C2, n, false) {
		m.fresh[ts.kind.name] = append(m.fresh[ts.kind.name], ts)
	}
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Logger: e.srv.log}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	return m
}

// makeTargets makes n targets of every kind in coll: a work, its file set
// and a file with bytes; the own ones as the depositor.
func (m *matrix) makeTargets(coll shelfmark.ID, n int, titled bool) []*tset {
	e := m.e
	sys := context.Background()
	dep := shelfmark.WithCaller(sys, e.callerOf(m.tokens["depositor"]))
	file := e.putBytes("f.txt", "text/plain", []byte("file bytes of a matrix target"))
	tiles := e.putBytes("f.tiles.zip", "application/zip", matrixTiles(e.t))
	tiles.Use = shelfmark.UseTiles
	access := e.putBytes("f.jpg", "image/jpeg", matrixJPEG(e.t))
	access.Use = shelfmark.UseAccess
	var out []*tset
	for _, k := range m.kinds {
		ctx := sys
		if k.own {
			ctx = dep
		}
		works := make([]*shelfmark.NewResource, n)
		for i := range works {
			works[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll}}
			k.make(works[i])
		}
		word := ""
		if titled {
			word = "matrixtarget" + strings.ReplaceAll(k.name, " ", "")
			for _, w := range works {
				w.Metadata = []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(word)}}
			}
		}
		ws := e.createAll(ctx, works)
		if k.lapse != nil {
			m.lapse(ws, *k.lapse)
		}
		sets := make([]*shelfmark.NewResource, n)
		for i := range sets {
			sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: ws[i].ID}
		}
		fss := e.createAll(ctx, sets)
		files := make([]*shelfmark.NewResource, n)
		for i := range files {
			f := *file
			files[i] = &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fss[i].ID, File: &f}
		}
		fs := e.createAll(ctx, files)
		for i := range files { // the page's deep-zoom tiles (iiif_image.go)
			f := *tiles
			files[i] = &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fss[i].ID, File: &f}
		}
		e.createAll(ctx, files)
		for i := range files { // the page's access copy (iiif_pdf.go)
			f := *access
			files[i] = &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fss[i].ID, File: &f}
		}
		e.createAll(ctx, files)
		for i := range ws {
			out = append(out, &tset{kind: k, coll: coll, W: ws[i].ID, FS: fss[i].ID, F: fs[i].ID, titleWord: word})
		}
	}
	return out
}

// lapse writes a lease that has ended into the rows of works, and into
// the effective access of everything below them, as the store holds them
// between the date and the access sweep.
func (m *matrix) lapse(works []*shelfmark.Resource, at time.Time) {
	ctx := context.Background()
	err := m.e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		var keys []int64
		for _, w := range works {
			key, err := m.e.repo.IDs().Key(w.ID)
			if err != nil {
				return err
			}
			row, err := tx.Resource(ctx, key)
			if err != nil {
				return err
			}
			row.Lease, row.Effective.Lease = &at, &at
			if err := tx.UpdateResource(ctx, row); err != nil {
				return err
			}
			keys = append(keys, key)
		}
		for len(keys) > 0 {
			below, err := tx.AccessDependents(ctx, keys)
			if err != nil {
				return err
			}
			keys = keys[:0]
			for _, r := range below {
				r.Effective.Lease = &at
				keys = append(keys, r.Key)
			}
			if err := tx.SetEffectiveAccess(ctx, below); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		m.e.t.Fatal(err)
	}
}

// takeFresh returns an unused fresh target of kind k.
func (m *matrix) takeFresh(k *targetKind) *tset {
	q := m.fresh[k.name]
	if len(q) == 0 {
		m.e.t.Fatalf("no fresh %s target left", k.name)
	}
	m.fresh[k.name] = q[1:]
	return q[0]
}

// run runs one cell and returns its mismatch, or "".
func (m *matrix) run(op string, p probe, w *who, t *tset) string {
	c := &cell{e: m.e, m: m, w: w, t: t}
	rq := p.build(c)
	hdrs := as(w.token, rq.hdrs...)
	var body any
	if rq.body != "" {
		body = rq.body
	}
	r := m.e.do(rq.method, rq.path, body, hdrs...)
	got := r.Status
	if p.status != nil && r.Status < 300 {
		got = p.status(r)
	}
	want := p.rule(w, t)
	why := ""
	switch {
	case got != want:
		why = fmt.Sprintf("got %d, want %d", got, want)
	case got < 300 && p.check != nil:
		why = p.check(c, r)
	}
	if why == "" {
		why = cacheLeak(op, w, r) // matrix_cache_test.go
	}
	if why == "" {
		return ""
	}
	label := op
	if p.name != "" {
		label += " (" + p.name + ")"
	}
	return fmt.Sprintf("%s as %s on %s: %s %s: %s; body %.300s", label, w.name, t, rq.method, rq.path, why, r.Body)
}

func TestAuthorizationMatrix(t *testing.T) {
	doc, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	ops := openAPIOperations(t, doc)
	onBackends(t, func(t *testing.T, backend string) {
		start := time.Now()
		m := newMatrix(t, backend)
		rows := m.rows()
		// the table and the document name the same operations
		have := map[string]bool{}
		for _, r := range rows {
			if have[r.op] {
				t.Errorf("two rows for %s", r.op)
			}
			have[r.op] = true
		}
		inDoc := map[string]bool{}
		for _, op := range ops {
			inDoc[op] = true
			if !have[op] {
				t.Errorf("the OpenAPI document has %s, which has no row in the authorization matrix: add one saying who may call it", op)
			}
		}
		for _, r := range rows {
			if !inDoc[r.op] {
				t.Errorf("the matrix has a row for %s, which the OpenAPI document does not describe", r.op)
			}
		}
		// the web interface's routes and their rows
		uiRows := m.uiRows()
		uiHave := map[string]bool{}
		for _, r := range uiRows {
			if uiHave[r.op] {
				t.Errorf("two rows for %s", r.op)
			}
			uiHave[r.op] = true
		}
		uiRoutes := map[string]bool{}
		for _, rt := range m.e.srv.uiRoutes() {
			op := rt.method + " " + rt.pattern
			uiRoutes[op] = true
			if !uiHave[op] {
				t.Errorf("the web interface has %s, which has no row in the authorization matrix: add one saying who may call it", op)
			}
		}
		for _, r := range uiRows {
			if !uiRoutes[r.op] {
				t.Errorf("the matrix has a row for %s, which the web interface does not serve", r.op)
			}
		}
		cells := 0
		var bad []string
		for _, r := range slices.Concat(rows, m.extraRows(), uiRows) {
			for _, p := range r.probes {
				for _, w := range m.callers {
					switch p.target {
					case "":
						cells++
						if why := m.run(r.op, p, w, nil); why != "" {
							bad = append(bad, why)
						}
					case "read":
						for _, tg := range m.reads {
							cells++
							if why := m.run(r.op, p, w, tg); why != "" {
								bad = append(bad, why)
							}
						}
					case "fresh":
						for _, k := range m.kinds {
							cells++
							if why := m.run(r.op, p, w, m.takeFresh(k)); why != "" {
								bad = append(bad, why)
							}
						}
					}
				}
			}
		}
		sort.Strings(bad)
		for _, b := range bad {
			t.Error(b)
		}
		t.Logf("%s: %d rows (+%d outside the document, +%d of the web interface), %d callers, %d target kinds: %d cells in %v; %d mismatches",
			backend, len(rows), len(m.extraRows()), len(uiRows), len(m.callers), len(m.kinds), cells, time.Since(start).Round(time.Millisecond), len(bad))
	})
}
