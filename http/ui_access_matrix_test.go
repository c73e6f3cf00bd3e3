package http

import (
	"net/url"

	"github.com/shelfmark/shelfmark"
)

// uiAccessRows are the matrix rows of the requests for access
// (ui/access_requests.go, ui/access_files.go): asking is for a signed-in
// reader of the record with a credential that writes, and the matrix's
// works show their files to whoever reads them, so the engine answers a
// conflict (409) where it would record a request; ending a reader's access
// takes the manager role on the work (the fixture's principal holds none,
// so a manager gets 404); the list of requests is any signed-in caller's
// (it holds those the caller may decide); deciding a request that does not
// exist is 404 for every caller that may write.
func (m *matrix) uiAccessRows() []row {
	return []row{
		{"POST /works/{id}/access-requests", []probe{{target: "read", build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/access-requests", url.Values{"message": {"For my thesis."}})
		}, rule: writeTarget(409, 404, func(*who, *tset) bool { return true })}}},
		{"POST /works/{id}/access/revoke", []probe{{target: "read", build: func(c *cell) req {
			return formReq("/works/"+string(c.t.W)+"/access/revoke", url.Values{"principal": {"user:nobody"}})
		}, rule: func(w *who, t *tset) int {
			switch {
			case w.bad || !w.signed:
				return 401
			case !w.write:
				return 403
			case !w.reads(t):
				return 404
			case w.admin || w.role.Includes(shelfmark.RoleManager):
				return 404 // no such grant
			}
			return 403
		}}}},
		{"GET /access-requests", []probe{{build: func(*cell) req { return req{method: "GET", path: "/access-requests"} }, rule: signInPage(200)}}},
		{"POST /access-requests/{key}", []probe{{build: func(*cell) req {
			return formReq("/access-requests/999999", url.Values{"decision": {"refuse"}})
		}, rule: writer(404)}}},
	}
}
