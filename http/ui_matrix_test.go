package http

// The web interface's rows of the authorization matrix (matrix_test.go):
// every route of uiRoutes has one, saying what each kind of caller gets.
// A page a signed-out visitor may not see sends the browser to sign in
// (303); a resource the caller may not read is a 404 page, as in the API;
// a form posted without an API token needs its form token (403 without).

import (
	"net/url"
	"slices"
)

// uiRows are the rows of every file of pages.
func (m *matrix) uiRows() []row {
	return slices.Concat(m.uiFrameRows(), m.uiReadRows(), m.uiWorkRows(), m.uiDepositRows(), m.uiWorkspaceRows(), m.uiAccessRows(), m.uiBulkRows(), m.uiAdminRows(), m.iiifRows(), m.uiWebRows())
}

// formReq is a form post.
func formReq(path string, form url.Values) req {
	return req{"POST", path, form.Encode(), []string{"Content-Type", "application/x-www-form-urlencoded"}}
}

// signInPage is the rule of a page for signed-in callers: a signed-out
// visitor is sent to sign in.
func signInPage(ok int) rule {
	return func(w *who, _ *tset) int {
		switch {
		case w.bad:
			return 401
		case !w.signed:
			return 303
		}
		return ok
	}
}

// uiFrameRows: static files, signing in and out.
func (m *matrix) uiFrameRows() []row {
	return []row{
		{"GET /static/{file...}", []probe{{build: func(*cell) req { return req{method: "GET", path: "/static/app.css"} }, rule: public(200)}}},
		{"GET /login", []probe{{build: func(*cell) req { return req{method: "GET", path: "/login"} }, rule: public(200)}}},
		{"POST /login", []probe{{name: "wrong password", build: func(*cell) req {
			return formReq("/login", url.Values{"name": {"loginuser"}, "password": {"wrong"}})
		}, rule: func(w *who, _ *tset) int {
			switch {
			case w.bad:
				return 401
			case w.token == "":
				return 403 // a browser's form without its form token
			}
			return 401
		}}}},
		{"POST /logout", []probe{{build: func(*cell) req { return formReq("/logout", nil) }, rule: func(w *who, _ *tset) int {
			switch {
			case w.bad:
				return 401
			case w.token == "":
				return 403
			}
			return 303
		}}}},
	}
}
