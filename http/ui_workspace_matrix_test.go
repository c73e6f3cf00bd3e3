package http

import (
	"bytes"
	"mime/multipart"
	"net/url"
)

// fileForm is a multipart form carrying one file under field.
func fileForm(path, field, name, content string) req {
	return fileFormWith(path, nil, field, name, content)
}

// fileFormWith is a multipart form carrying fields, then one file under
// field.
func fileFormWith(path string, fields url.Values, field, name, content string) req {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile(field, name)
	fw.Write([]byte(content))
	mw.Close()
	return req{"POST", path, b.String(), []string{"Content-Type", mw.FormDataContentType()}}
}

// csvForm is a multipart form carrying a batch edit's CSV.
func csvForm(path, content string) req { return fileForm(path, "csv", "works.csv", content) }

// uiWorkspaceRows are the matrix rows of the staff workspace
// (ui/workspace*.go): the list is a signed-in caller's (every work to
// administrators only); a change of many works takes a credential that
// writes, is started for any such caller and sends the browser to its
// run's page, where each work the policy refuses is listed with its
// reason (the engine decides per work: see TestUIWorkspaceChange); a run's
// page is shown to the user who started it only. Writing works out as CSV
// is a signed-in caller's, of the works they may read; reading a CSV back
// into a plan takes a credential that writes (the plan refuses each row
// the policy refuses).
func (m *matrix) uiWorkspaceRows() []row {
	return []row{
		{"GET /workspace", []probe{
			{name: "my works", build: func(*cell) req { return req{method: "GET", path: "/workspace"} }, rule: signInPage(200)},
			{name: "every work", build: func(*cell) req { return req{method: "GET", path: "/workspace?in=all"} }, rule: adminPage(200)}, // administrators' only
			{name: "a collection's", build: func(*cell) req { return req{method: "GET", path: "/workspace?in=" + url.QueryEscape(string(m.C))} }, rule: signInPage(200)},
		}},
		{"POST /workspace/change", []probe{{target: "fresh", build: func(c *cell) req {
			return formReq("/workspace/change", url.Values{"apply": {"chosen"}, "id": {string(c.t.W)}, "change": {"private"}})
		}, rule: writer(303)}}},
		{"GET /workspace/runs/{run}", []probe{{build: func(*cell) req { return req{method: "GET", path: "/workspace/runs/nosuchrun"} }, rule: signInPage(404)}}},
		{"POST /workspace/runs/{run}/apply", []probe{{build: func(*cell) req { return formReq("/workspace/runs/nosuchrun/apply", nil) }, rule: writer(404)}}},
		{"GET /workspace/export.csv", []probe{{build: func(*cell) req { return req{method: "GET", path: "/workspace/export.csv"} }, rule: signInPage(200)}}},
		{"POST /workspace/export.csv", []probe{{target: "read", build: func(c *cell) req {
			return formReq("/workspace/export.csv", url.Values{"apply": {"chosen"}, "id": {string(c.t.W)}})
		}, rule: writer(200)}}}, // a POST: the envelope takes a credential that writes
		{"POST /workspace/import", []probe{{build: func(*cell) req { return csvForm("/workspace/import", "id,title\n") }, rule: writer(303)}}},
	}
}
