package http

import "github.com/shelfmark/shelfmark"

// accessRows are the matrix rows of the REST routes of a work's files
// (api/files_access.go, api/access_requests.go, api/pages.go). Reading
// the files' access is for whoever reads the work, setting it for those
// who may change the work; a collection's default is read by whoever
// reads the collection and set by its curators. Asking for the files is
// for a signed-in reader of the record with a credential that writes,
// and the matrix's works show their files to whoever reads them, so the
// engine answers a conflict (409) where it would record a request. The
// list of requests is any signed-in caller's (it holds the caller's own,
// or those the caller may decide); deciding a request that does not
// exist is 404 for every caller that may write. A work's grants, and
// ending one, take the manager role on the work (the fixture's principal
// holds none, so a manager ending it gets 404). Replacing a page's file
// and choosing the work's thumbnail are changes of the work.
func (m *matrix) accessRows() []row {
	rd, fr := "read", "fresh"
	return []row{
		{"GET /api/v1/resources/{id}/files-access", []probe{{target: rd, build: func(c *cell) req {
			return req{method: "GET", path: resPath(c.t.W, "/files-access")}
		}, rule: readTarget(200)}}},
		{"PUT /api/v1/resources/{id}/files-access", []probe{{target: fr, build: func(c *cell) req {
			return req{"PUT", resPath(c.t.W, "/files-access"), `{"visibility": "authenticated"}`, []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(200, 404, (*who).edits)}}},
		{"GET /api/v1/resources/{id}/files-default", []probe{{build: func(*cell) req {
			return req{method: "GET", path: resPath(m.C, "/files-default")}
		}, rule: public(200)}}},
		{"PUT /api/v1/resources/{id}/files-default", []probe{{build: func(*cell) req {
			return req{"PUT", resPath(m.C, "/files-default"), `{"visibility": "public"}`, []string{"Content-Type", ctJSON}}
		}, rule: deposit(200, shelfmark.RoleCurator)}}},
		{"POST /api/v1/resources/{id}/access-requests", []probe{{target: rd, build: func(c *cell) req {
			return req{"POST", resPath(c.t.W, "/access-requests"), `{"message": "For my thesis."}`, []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(409, 404, func(*who, *tset) bool { return true })}}},
		{"GET /api/v1/access-requests", []probe{
			{name: "mine", build: func(*cell) req { return req{method: "GET", path: "/api/v1/access-requests?mine=true"} }, rule: anySignedIn(200)},
			{name: "to decide", build: func(*cell) req { return req{method: "GET", path: "/api/v1/access-requests?state=granted"} }, rule: anySignedIn(200)},
		}},
		{"GET /api/v1/access-requests/{id}", []probe{{build: func(*cell) req {
			return req{method: "GET", path: "/api/v1/access-requests/999999"}
		}, rule: anySignedIn(404)}}},
		{"POST /api/v1/access-requests/{id}", []probe{{build: func(*cell) req {
			return req{"POST", "/api/v1/access-requests/999999", `{"decision": "refuse"}`, []string{"Content-Type", ctJSON}}
		}, rule: writer(404)}}},
		{"GET /api/v1/resources/{id}/access-grants", []probe{{target: rd, build: func(c *cell) req {
			return req{method: "GET", path: resPath(c.t.W, "/access-grants")}
		}, rule: managesWork(200, false)}}},
		{"DELETE /api/v1/resources/{id}/access-grants/{principal}", []probe{{target: rd, build: func(c *cell) req {
			return req{method: "DELETE", path: resPath(c.t.W, "/access-grants/user:nobody")}
		}, rule: managesWork(404, true)}}},
		{"PUT /api/v1/resources/{id}/pages/{page}/file", []probe{{target: fr, build: func(c *cell) req {
			return req{"PUT", resPath(c.t.W, "/pages/"+string(c.t.FS)+"/file?name=new.txt"), "replacing bytes", []string{"Content-Type", "text/plain"}}
		}, rule: writeTarget(201, 404, (*who).edits)}}},
		{"PUT /api/v1/resources/{id}/thumbnail", []probe{{target: fr, build: func(c *cell) req {
			return req{"PUT", resPath(c.t.W, "/thumbnail"), jsonBody(map[string]any{"page": c.t.FS}), []string{"Content-Type", ctJSON}}
		}, rule: writeTarget(200, 404, (*who).edits)}}},
	}
}

// managesWork: what takes the manager role on t's work (its requests'
// grants): anonymous callers are refused before the work is looked at, as
// for the roles, and so are read-scoped credentials when write is set;
// what the caller may not read is 404; a reader who does not manage it is
// refused (403).
func managesWork(ok int, write bool) rule {
	return func(w *who, t *tset) int {
		switch {
		case w.bad || !w.signed:
			return 401
		case write && !w.write:
			return 403
		case !w.reads(t):
			return 404
		case w.admin || w.role.Includes(shelfmark.RoleManager):
			return ok
		}
		return 403
	}
}
