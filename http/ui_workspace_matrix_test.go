package http

import (
	"net/url"
)

// uiWorkspaceRows are the matrix rows of the staff workspace
// (ui/workspace*.go): the list is a signed-in caller's (every work to
// administrators only); a change of many works takes a credential that
// writes, is started for any such caller and sends the browser to its
// run's page, where each work the policy refuses is listed with its
// reason (the engine decides per work: see TestUIWorkspaceChange); a run's
// page is shown to the user who started it only.
func (m *matrix) uiWorkspaceRows() []row {
	everyWork := func(w *who, _ *tset) int {
		switch {
		case w.bad:
			return 401
		case !w.signed:
			return 303
		case !w.admin:
			return 403
		}
		return 200
	}
	return []row{
		{"GET /workspace", []probe{
			{name: "my works", build: func(*cell) req { return req{method: "GET", path: "/workspace"} }, rule: signInPage(200)},
			{name: "every work", build: func(*cell) req { return req{method: "GET", path: "/workspace?in=all"} }, rule: everyWork},
			{name: "a collection's", build: func(*cell) req { return req{method: "GET", path: "/workspace?in=" + url.QueryEscape(string(m.C))} }, rule: signInPage(200)},
		}},
		{"POST /workspace/change", []probe{{target: "fresh", build: func(c *cell) req {
			return formReq("/workspace/change", url.Values{"apply": {"chosen"}, "id": {string(c.t.W)}, "change": {"private"}})
		}, rule: writer(303)}}},
		{"GET /workspace/runs/{run}", []probe{{build: func(*cell) req { return req{method: "GET", path: "/workspace/runs/nosuchrun"} }, rule: signInPage(404)}}},
	}
}
