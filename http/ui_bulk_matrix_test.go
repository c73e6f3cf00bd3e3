package http

// The matrix rows of the routes of ui_bulk.go. The bulk form and upload
// are for signed-in writers who may deposit somewhere: a signed-out
// browser is sent to sign in (303), a read-only credential is refused
// (403, by the envelope for the posts), and so is a user without the
// depositor role anywhere (403, before anything is staged); a run is seen
// by its owner and the administrators only, and is 404 to everyone else,
// as a run that does not exist.

import (
	"bytes"
	"context"
	"mime/multipart"
	"time"

	"github.com/shelfmark/shelfmark"
)

// multipartReq is a multipart form post of fields and files (name ->
// file name, content).
func multipartReq(path string, fields map[string]string, files map[string][2]string) req {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for k, f := range files {
		w, _ := mw.CreateFormFile(k, f[0])
		w.Write([]byte(f[1]))
	}
	mw.Close()
	return req{"POST", path, buf.String(), []string{"Content-Type", mw.FormDataContentType()}}
}

// uiBulkRows are the matrix rows of the routes of ui_bulk.go.
func (m *matrix) uiBulkRows() []row {
	e := m.e
	// the server's staging directory is the test's, and its runs end
	// before the stack closes (cleanups run last registered first)
	e.srv.ui.SetStagingDir(e.t.TempDir())
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		e.srv.ui.Close(ctx)
	})
	manifest := map[string][2]string{"manifest": {"m.csv", "title\nMatrix bulk work\n"}}
	// two runs of the admin's: one to look at, one to start
	adminCtx := shelfmark.WithCaller(context.Background(), e.callerOf(e.admin))
	seen, started := m.bulkRun(adminCtx), m.bulkRun(adminCtx)
	const unknown = "/bulk/nosuchrun"

	// page: a page for writers who may deposit somewhere
	page := func(ok int) rule {
		return func(w *who, t *tset) int {
			switch {
			case w.bad:
				return 401
			case !w.signed:
				return 303
			}
			return depositsSomewhere(ok)(w, t)
		}
	}
	// run: a run's page (or its progress, anon 401 as JSON) seen by the
	// admin only
	run := func(anon int, admin bool) rule {
		return func(w *who, _ *tset) int {
			switch {
			case w.bad:
				return 401
			case !w.signed:
				return anon
			case admin && w.admin:
				return 200
			}
			return 404
		}
	}
	// post: a form post about a run; ok for the admin
	post := func(ok int) rule {
		return func(w *who, _ *tset) int {
			switch {
			case w.bad || !w.signed:
				return 401
			case !w.write:
				return 403
			case ok != 0 && w.admin:
				return ok
			}
			return 404
		}
	}
	get := func(p string) func(*cell) req { return func(*cell) req { return req{method: "GET", path: p} } }
	form := func(p string) func(*cell) req { return func(*cell) req { return formReq(p, nil) } }
	return []row{
		{"GET /bulk", []probe{{build: get("/bulk"), rule: page(200)}}},
		{"POST /bulk", []probe{
			{name: "a manifest", build: func(*cell) req { return multipartReq("/bulk", nil, manifest) }, rule: depositsSomewhere(303)},
			{name: "a zip that climbs out", build: func(*cell) req {
				return multipartReq("/bulk", nil, map[string][2]string{"manifest": manifest["manifest"],
					"zip": {"f.zip", string(zipOf(e.t, "../evil.txt", "evil"))}})
			}, rule: depositsSomewhere(400)},
		}},
		{"GET /bulk/{run}", []probe{
			{name: "unknown", build: get(unknown), rule: signInPage(404)},
			{name: "the admin's", build: get(seen), rule: run(303, true)},
		}},
		{"GET /bulk/{run}/progress", []probe{
			{name: "unknown", build: get(unknown + "/progress"), rule: run(401, false)},
			{name: "the admin's", build: get(seen + "/progress"), rule: run(401, true)},
		}},
		{"POST /bulk/{run}/start", []probe{
			{name: "unknown", build: form(unknown + "/start"), rule: post(0)},
			{name: "the admin's", build: form(started + "/start"), rule: post(303)},
		}},
		{"POST /bulk/{run}/cancel", []probe{
			{name: "unknown", build: form(unknown + "/cancel"), rule: post(0)},
			{name: "the admin's", build: form(seen + "/cancel"), rule: post(303)},
		}},
	}
}

// bulkRun makes a run of one work as the caller on ctx, through the
// server's own staging, and returns its path.
func (m *matrix) bulkRun(ctx context.Context) string {
	e := m.e
	path, state, works, err := e.srv.ui.StageRun(ctx, "m.csv", "title\nMatrix bulk work\n")
	if err != nil {
		e.t.Fatal(err)
	}
	if state != bulkStatePreview || works != 1 {
		e.t.Fatalf("the matrix's run: %s, %d works", state, works)
	}
	return path
}
