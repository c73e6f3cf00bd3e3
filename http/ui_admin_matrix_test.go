package http

import (
	"net/url"
	"time"

	"github.com/shelfmark/shelfmark"
)

// adminPage is the rule of an administration page: a signed-out browser
// is sent to sign in, a signed-in caller who is no administrator (with an
// admin-scoped credential) gets 403.
func adminPage(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad:
			return 401
		case !w.signed:
			return 303
		case !w.admin:
			return 403
		}
		return ok
	}
}

// uiAdminRows are the matrix rows of the routes of ui_admin.go and
// ui_admin_accounts.go. Their forms, sent with an API token, need no form
// token; anonymous ones are refused by the envelope (401), read-scoped
// ones too (403), the other callers who are no administrators by the
// page (403).
func (m *matrix) uiAdminRows() []row {
	// the event stream of the admin's cell ends at once
	m.e.srv.ui.SetEventTimes(50*time.Millisecond, 0)
	get := func(path string) func(*cell) req { return func(*cell) req { return req{method: "GET", path: path} } }
	form := func(path string, f url.Values) func(*cell) req { return func(*cell) req { return formReq(path, f) } }
	q := shelfmark.QueueOCR
	return []row{
		{"GET /admin", []probe{{build: get("/admin"), rule: adminPage(200)}}},
		{"GET /admin/events", []probe{{build: get("/admin/events"), rule: adminPage(200)}}},
		{"GET /admin/jobs/{queue}", []probe{{build: get("/admin/jobs/" + q + "?state=failed"), rule: adminPage(200)}}},
		{"POST /admin/queues/{queue}/pause", []probe{{build: form("/admin/queues/"+q+"/pause", nil), rule: adminOnly(303)}}},
		{"POST /admin/queues/{queue}/resume", []probe{{build: form("/admin/queues/"+q+"/resume", nil), rule: adminOnly(303)}}},
		{"POST /admin/queues/{queue}/retry", []probe{{build: form("/admin/queues/"+q+"/retry", nil), rule: adminOnly(303)}}},
		{"GET /admin/users", []probe{{build: get("/admin/users"), rule: adminPage(200)}}},
		{"POST /admin/users", []probe{{build: form("/admin/users", url.Values{"name": {"matrixadded"}, "password": {"matrix-password"}}), rule: adminOnly(303)}}},
		{"POST /admin/users/{name}/disabled", []probe{{build: form("/admin/users/loginuser/disabled", url.Values{"disabled": {"0"}}), rule: adminOnly(303)}}},
		{"POST /admin/users/{name}/groups", []probe{{build: form("/admin/users/loginuser/groups", url.Values{"groups": {""}}), rule: adminOnly(303)}}},
		{"GET /admin/tokens", []probe{{build: get("/admin/tokens?user=viewer"), rule: adminPage(200)}}},
		{"POST /admin/tokens", []probe{{build: form("/admin/tokens", url.Values{"user": {"viewer"}, "scope": {"read"}, "expires": {"1d"}}), rule: adminOnly(201)}}},
		{"POST /admin/tokens/{id}/revoke", []probe{{build: func(c *cell) req {
			return formReq("/admin/tokens/"+m.spareToken(&who{})+"/revoke", url.Values{"user": {"viewer"}})
		}, rule: adminOnly(303)}}},
		{"GET /admin/audit", []probe{{build: get("/admin/audit"), rule: adminPage(200)}}},
		{"GET /admin/fixity", []probe{{build: get("/admin/fixity?failed=1"), rule: adminPage(200)}}},
		{"GET /admin/usage", []probe{{build: get("/admin/usage?from=2026-01&to=2026-12"), rule: adminPage(200)}}},
		{"GET /admin/usage.csv", []probe{{build: get("/admin/usage.csv"), rule: adminPage(200)}}},
	}
}
