package http

// Tests of the REST routes of a work's files: their access
// (…/files-access), a collection's default (…/files-default), the
// requests for access and the grants they give (…/access-requests,
// /api/v1/access-requests, …/access-grants), replacing a page's file
// (…/pages/{page}/file) and choosing a work's thumbnail page
// (…/thumbnail), on both backends.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// filesFixture is a collection with a managed work of two pages, each
// with a file, and the people around it.
type filesFixture struct {
	e                    *policyEnv
	C, W, P1, P2, F1, F2 shelfmark.ID
	// Other is a page of another work; Missing an id nothing has.
	Other, Missing shelfmark.ID
	// reader has no role; editor is a curator of C, keeper its manager.
	reader, editor, keeper string
	// repoClock is the clock of the repository and the server (not of
	// the accounts), which moves a grant past its end.
	repoClock *testClock
}

func newFilesFixture(t *testing.T, backend string) *filesFixture {
	rc := &testClock{}
	e := newPolicyEnv(t, backend, Options{Now: rc.now})
	ctx := context.Background()
	f := &filesFixture{e: e, repoClock: rc}
	f.C = e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Theses")}})[0].ID
	ws := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("A thesis on harbours")},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("Another work")}})
	f.W = ws[0].ID
	ps := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: f.W}, {Kind: shelfmark.KindFileSet, Parent: f.W},
		{Kind: shelfmark.KindFileSet, Parent: ws[1].ID}})
	f.P1, f.P2, f.Other = ps[0].ID, ps[1].ID, ps[2].ID
	fs := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFile, Parent: f.P1, File: e.putBytes("p1.txt", "text/plain", []byte("the first page"))},
		{Kind: shelfmark.KindFile, Parent: f.P2, File: e.putBytes("p2.txt", "text/plain", []byte("the second page"))}})
	f.F1, f.F2 = fs[0].ID, fs[1].ID
	f.Missing = e.repo.IDs().Encode(987654321)
	f.reader = e.addUser("reader", shelfmark.ScopeWrite)
	f.editor = e.addUser("editor", shelfmark.ScopeWrite)
	f.keeper = e.addUser("keeper", shelfmark.ScopeWrite)
	e.grantRoles(f.C, []api.GrantJSON{{Principal: "user:editor", Role: "curator"}, {Principal: "user:keeper", Role: "manager"}})
	return f
}

// jsonAs is the headers of a JSON request sent with token ("" anonymous).
func jsonAs(token string, hdrs ...string) []string {
	return as(token, append([]string{"Content-Type", ctJSON}, hdrs...)...)
}

// filesAccess is the body of …/files-access.
type filesAccess struct {
	ID         shelfmark.ID `json:"id"`
	Visibility *string      `json:"visibility"`
	Embargo    *string      `json:"embargo"`
	Version    int64        `json:"version"`
}

// TestAPIFilesAccess: a work's files are closed apart from its record
// through the API, and a collection's default set; bad input is a 400 in
// the API's error format that changes nothing.
func TestAPIFilesAccess(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newFilesFixture(t, backend)
		e := f.e
		path := resPath(f.W, "/files-access")
		var got filesAccess
		r := e.do("GET", path, nil, anonymously...).want(t, 200)
		r.json(t, &got)
		if got.ID != f.W || got.Visibility == nil || *got.Visibility != "public" || got.Embargo != nil || got.Version == 0 || r.Header.Get("ETag") != `"`+strconv.FormatInt(got.Version, 10)+`"` {
			t.Fatalf("files access of an open work: %s (ETag %s)", r.Body, r.Header.Get("ETag"))
		}
		version := got.Version
		until := time.Now().AddDate(1, 0, 0).UTC().Format(time.DateOnly)
		for _, bad := range []struct {
			body, ifMatch string
			status        int
			code          string
		}{
			{`{"visibility": "everyone"}`, "", 400, shelfmark.EINVALID},
			{`{"visibility": "private", "embargo": "2001-01-01"}`, "", 400, shelfmark.EINVALID},
			{`{"visibility": "private", "embargo": "soon"}`, "", 400, shelfmark.EINVALID},
			{`{"embargo": "` + until + `"}`, "", 400, shelfmark.EINVALID},
			{`{"visibility": "private", "lease": "` + until + `"}`, "", 400, shelfmark.EINVALID},
			{`{"visibility": "private"}`, `"` + strconv.FormatInt(version+7, 10) + `"`, 412, shelfmark.EPRECONDITION},
		} {
			hdrs := jsonAs(f.editor)
			if bad.ifMatch != "" {
				hdrs = append(hdrs, "If-Match", bad.ifMatch)
			}
			r := e.do("PUT", path, bad.body, hdrs...)
			r.wantError(t, bad.status, bad.code)
			r.wantNoDataWrites(t)
		}
		e.do("PUT", path, `{"visibility": "private"}`, jsonAs(f.reader)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("PUT", path, `{"visibility": "private"}`, jsonAs("")...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		e.do("PUT", resPath(f.Missing, "/files-access"), `{"visibility": "private"}`, jsonAs(f.editor)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("PUT", resPath(f.C, "/files-access"), `{"visibility": "private"}`, jsonAs(f.editor)...).wantError(t, 400, shelfmark.EINVALID)
		e.do("GET", resPath(f.C, "/files-access"), nil).wantError(t, 400, shelfmark.EINVALID)
		e.do("GET", resPath(f.Missing, "/files-access"), nil).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(f.F1, "/content"), nil, anonymously...).want(t, 200) // nothing was closed

		r = e.do("PUT", path, `{"visibility": "authenticated", "embargo": "`+until+`"}`, jsonAs(f.editor, "If-Match", `"`+strconv.FormatInt(version, 10)+`"`)...).want(t, 200)
		r.json(t, &got)
		if got.Visibility == nil || *got.Visibility != "authenticated" || got.Embargo == nil || !strings.HasPrefix(*got.Embargo, until) || got.Version != version+1 ||
			r.Header.Get("ETag") != `"`+strconv.FormatInt(version+1, 10)+`"` {
			t.Fatalf("PUT files access: %s", r.Body)
		}
		if again := e.do("GET", path, nil, as(f.reader)...).want(t, 200); string(again.Body) != string(r.Body) {
			t.Errorf("GET after PUT: %s, PUT answered %s", again.Body, r.Body)
		}
		// the record stays open; the pages and files close (embargoed:
		// private until the date, to the editor's signed-in reader too)
		e.do("GET", resPath(f.W, ""), nil, anonymously...).want(t, 200)
		for _, id := range []shelfmark.ID{f.P1, f.P2, f.F1} {
			e.do("GET", resPath(id, ""), nil, anonymously...).wantError(t, 404, shelfmark.ENOTFOUND)
		}
		e.do("GET", resPath(f.F2, "/content"), nil, as(f.reader)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(f.F2, "/content"), nil, as(f.editor)...).want(t, 200)

		// a work without pages has no files' access
		bare := e.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}}})[0]
		e.do("GET", resPath(bare.ID, "/files-access"), nil).want(t, 200).json(t, &got)
		if got.Visibility != nil || got.Embargo != nil {
			t.Errorf("files access of a work without pages: %+v", got)
		}

		// a collection's default
		dpath := resPath(f.C, "/files-default")
		var def struct {
			ID         shelfmark.ID `json:"id"`
			Visibility string       `json:"visibility"`
		}
		e.do("GET", dpath, nil, anonymously...).want(t, 200).json(t, &def)
		if def.ID != f.C || def.Visibility != "public" {
			t.Fatalf("default before any is set: %+v", def)
		}
		for _, bad := range []string{`{"visibility": "everyone"}`, `{}`, `{"visibility": "private", "embargo": null}`} {
			e.do("PUT", dpath, bad, jsonAs(f.editor)...).wantError(t, 400, shelfmark.EINVALID)
		}
		e.do("PUT", resPath(f.W, "/files-default"), `{"visibility": "private"}`, jsonAs(f.editor)...).wantError(t, 400, shelfmark.EINVALID)
		e.do("GET", resPath(f.W, "/files-default"), nil).wantError(t, 400, shelfmark.EINVALID)
		e.do("PUT", resPath(f.Missing, "/files-default"), `{"visibility": "private"}`, jsonAs(f.editor)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("PUT", dpath, `{"visibility": "private"}`, jsonAs(f.reader)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		r = e.do("PUT", dpath, `{"visibility": "authenticated"}`, jsonAs(f.editor)...).want(t, 200)
		if again := e.do("GET", dpath, nil, anonymously...).want(t, 200); string(again.Body) != string(r.Body) || !strings.Contains(string(r.Body), `"authenticated"`) {
			t.Errorf("GET after PUT: %s, PUT answered %s", again.Body, r.Body)
		}
	})
}

// accessRequest is the body of a request for access.
type accessRequest struct {
	ID      int64        `json:"id"`
	Work    shelfmark.ID `json:"work"`
	User    string       `json:"user"`
	Message string       `json:"message"`
	State   string       `json:"state"`
	Until   *string      `json:"until"`
	Reply   string       `json:"reply"`
}

// accessRequests is a page of requests for access.
type accessRequests struct {
	Items []accessRequest `json:"items"`
	Next  string          `json:"next"`
}

// TestAPIAccessRequests walks the requests for access through the API:
// the work's files closed, a reader asks; the manager lists, grants
// until a time (bad decisions are 400, a second one 409); the reader
// reads the files; the manager lists the grant and ends it, and the
// reader no longer does; asked again, refused with a reply, the reader
// still does not; granted for a moment, the reader does not once it has
// passed. Who may not is refused at each step.
func TestAPIAccessRequests(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newFilesFixture(t, backend)
		e := f.e
		stranger := e.addUser("stranger", shelfmark.ScopeWrite) // never asked
		reads := func(token string) int {
			t.Helper()
			return e.do("GET", resPath(f.F1, "/content"), nil, as(token)...).Status
		}
		// closed: the reader is answered about the file exactly as a
		// reader who never asked is, as for any file closed to her
		closed := func(when string) {
			t.Helper()
			got := e.do("GET", resPath(f.F1, "/content"), nil, as(f.reader)...)
			want := e.do("GET", resPath(f.F1, "/content"), nil, as(stranger)...)
			got.wantError(t, 404, shelfmark.ENOTFOUND)
			if want.Status != 404 || string(got.Body) != string(want.Body) {
				t.Fatalf("%s: the reader gets %d %s for the file, a reader who never asked %d %s", when, got.Status, got.Body, want.Status, want.Body)
			}
		}
		// the files are closed to all but staff
		e.do("PUT", resPath(f.W, "/files-access"), `{"visibility": "private"}`, jsonAs(f.editor)...).want(t, 200)
		closed("before asking")
		ask := resPath(f.W, "/access-requests")
		// who may not ask
		e.do("POST", ask, `{"message": "me"}`, jsonAs("")...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		e.do("POST", ask, `{"message": "me"}`, jsonAs(f.keeper)...).wantError(t, 409, shelfmark.ECONFLICT) // reads them already
		e.do("POST", resPath(f.Missing, "/access-requests"), `{"message": "me"}`, jsonAs(f.reader)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("POST", resPath(f.C, "/access-requests"), `{"message": "me"}`, jsonAs(f.reader)...).wantError(t, 400, shelfmark.EINVALID)
		e.do("POST", ask, `{"message": "`+strings.Repeat("x", shelfmark.MaxAccessRequestMessage+1)+`"}`, jsonAs(f.reader)...).wantError(t, 400, shelfmark.EINVALID)
		e.do("POST", ask, `{"note": "me"}`, jsonAs(f.reader)...).wantError(t, 400, shelfmark.EINVALID)

		var q accessRequest
		e.do("POST", ask, `{"message": "For my own thesis on ports."}`, jsonAs(f.reader)...).want(t, 201).json(t, &q)
		if q.ID == 0 || q.Work != f.W || q.User != "reader" || q.State != "open" || q.Message != "For my own thesis on ports." || q.Until != nil {
			t.Fatalf("the request: %+v", q)
		}
		var again accessRequest
		e.do("POST", ask, `{"message": "Again."}`, jsonAs(f.reader)...).want(t, 201).json(t, &again)
		if again.ID != q.ID {
			t.Errorf("asking twice made request %d besides %d", again.ID, q.ID)
		}

		list := func(token, query string) accessRequests {
			t.Helper()
			var p accessRequests
			e.do("GET", "/api/v1/access-requests"+query, nil, as(token)...).want(t, 200).json(t, &p)
			return p
		}
		if p := list(f.reader, "?mine=true&work="+string(f.W)); len(p.Items) != 1 || p.Items[0].ID != q.ID {
			t.Errorf("the reader's own requests: %+v", p)
		}
		if p := list(f.reader, ""); len(p.Items) != 0 {
			t.Errorf("the reader may decide %+v", p)
		}
		if p := list(f.editor, ""); len(p.Items) != 0 {
			t.Errorf("a curator may decide %+v", p)
		}
		if p := list(f.keeper, "?state=open&limit=1"); len(p.Items) != 1 || p.Items[0].ID != q.ID {
			t.Errorf("the manager's requests to decide: %+v", p)
		}
		for _, bad := range []string{"?state=maybe", "?mine=yes", "?limit=0", "?limit=201", "?before=x", "?mine=true&state=open", "?work=" + string(f.W), "?mine=true&work=nothing"} {
			e.do("GET", "/api/v1/access-requests"+bad, nil, as(f.keeper)...).wantError(t, 400, shelfmark.EINVALID)
		}
		e.do("GET", "/api/v1/access-requests", nil, anonymously...).wantError(t, 401, shelfmark.EUNAUTHORIZED)

		decide := "/api/v1/access-requests/" + strconv.FormatInt(q.ID, 10)
		// one request: to its reader and its work's manager; to another
		// user as to no request at all
		for _, token := range []string{f.reader, f.keeper} {
			var one accessRequest
			e.do("GET", decide, nil, as(token)...).want(t, 200).json(t, &one)
			if one.ID != q.ID || one.User != "reader" || one.State != "open" || one.Message != q.Message {
				t.Errorf("the request read by one of its own: %+v", one)
			}
		}
		other := e.do("GET", decide, nil, as(f.editor)...)
		other.wantError(t, 404, shelfmark.ENOTFOUND)
		none := e.do("GET", "/api/v1/access-requests/999999", nil, as(f.editor)...)
		if a, b := strings.ReplaceAll(string(other.Body), strconv.FormatInt(q.ID, 10), "N"), strings.ReplaceAll(string(none.Body), "999999", "N"); a != b {
			t.Errorf("the 404 for a request one may not see (%s) differs from the one for no request (%s)", other.Body, none.Body)
		}
		e.do("GET", decide, nil, anonymously...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		for _, missing := range []string{"abc", "0", "-1"} {
			e.do("GET", "/api/v1/access-requests/"+missing, nil, as(f.keeper)...).wantError(t, 404, shelfmark.ENOTFOUND)
		}
		in14 := time.Now().Add(14 * 24 * time.Hour).UTC().Format(time.RFC3339)
		e.do("POST", decide, `{"decision": "grant", "until": "`+in14+`"}`, jsonAs(f.reader)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("POST", decide, `{"decision": "grant", "until": "`+in14+`"}`, jsonAs(f.editor)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("POST", decide, `{"decision": "refuse"}`, jsonAs("")...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		for _, bad := range []string{
			`{"decision": "maybe"}`,
			`{"decision": "grant"}`,
			`{"decision": "grant", "until": "next week"}`,
			`{"decision": "grant", "until": "2001-01-01"}`,
			`{"decision": "grant", "until": "` + time.Now().Add(367*24*time.Hour).UTC().Format(time.RFC3339) + `"}`,
			`{"decision": "refuse", "until": "` + in14 + `"}`,
			`{"decision": "refuse", "reply": "` + strings.Repeat("x", shelfmark.MaxAccessRequestMessage+1) + `"}`,
		} {
			r := e.do("POST", decide, bad, jsonAs(f.keeper)...)
			r.wantError(t, 400, shelfmark.EINVALID)
		}
		for _, missing := range []string{"999999", "abc", "0"} {
			e.do("POST", "/api/v1/access-requests/"+missing, `{"decision": "refuse"}`, jsonAs(f.keeper)...).wantError(t, 404, shelfmark.ENOTFOUND)
		}
		closed("after decisions refused as bad input")
		var d accessRequest
		e.do("POST", decide, `{"decision": "grant", "until": "`+in14+`", "reply": "Two weeks."}`, jsonAs(f.keeper)...).want(t, 200).json(t, &d)
		if d.ID != q.ID || d.State != "granted" || d.Until == nil || !strings.HasPrefix(*d.Until, in14[:16]) || d.Reply != "Two weeks." {
			t.Fatalf("the grant: %+v", d)
		}
		e.do("POST", decide, `{"decision": "refuse"}`, jsonAs(f.keeper)...).wantError(t, 409, shelfmark.ECONFLICT)
		e.do("POST", decide, `{"decision": "grant", "until": "`+in14+`"}`, jsonAs(f.keeper)...).wantError(t, 409, shelfmark.ECONFLICT)
		if s := reads(f.reader); s != 200 {
			t.Fatalf("the reader does not read the files granted: %d", s)
		}
		e.do("POST", ask, `{"message": "More."}`, jsonAs(f.reader)...).wantError(t, 409, shelfmark.ECONFLICT) // reads them now
		if p := list(f.keeper, "?state=granted"); len(p.Items) != 1 || p.Items[0].State != "granted" {
			t.Errorf("the granted requests: %+v", p)
		}

		grants := resPath(f.W, "/access-grants")
		var gs struct {
			Resource shelfmark.ID          `json:"resource"`
			Grants   []api.AccessGrantJSON `json:"grants"`
		}
		e.do("GET", grants, nil, as(f.keeper)...).want(t, 200).json(t, &gs)
		if gs.Resource != f.W || len(gs.Grants) != 1 || gs.Grants[0].Principal != "user:reader" || gs.Grants[0].Role != "viewer" || !strings.HasPrefix(gs.Grants[0].Expires, in14[:16]) {
			t.Fatalf("the grants: %+v", gs)
		}
		e.do("GET", grants, nil, as(f.reader)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("GET", grants, nil, as(f.editor)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("GET", grants, nil, anonymously...).wantError(t, 401, shelfmark.EUNAUTHORIZED)
		e.do("GET", resPath(f.Missing, "/access-grants"), nil, as(f.keeper)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("DELETE", grants+"/user:reader", nil, as(f.editor)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("DELETE", grants+"/user:nobody", nil, as(f.keeper)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("DELETE", grants+"/user:reader", nil, as(f.keeper)...).want(t, 204)
		e.do("DELETE", grants+"/user:reader", nil, as(f.keeper)...).wantError(t, 404, shelfmark.ENOTFOUND)
		closed("after the grant was revoked")

		// asked again, refused with a reply
		var q2 accessRequest
		e.do("POST", ask, `{"message": "Please, again."}`, jsonAs(f.reader)...).want(t, 201).json(t, &q2)
		if q2.ID == q.ID {
			t.Fatal("a new request took the decided one's id")
		}
		e.do("POST", "/api/v1/access-requests/"+strconv.FormatInt(q2.ID, 10), `{"decision": "refuse", "reply": "Not before the defence."}`, jsonAs(f.keeper)...).want(t, 200).json(t, &d)
		if d.State != "refused" || d.Reply != "Not before the defence." || d.Until != nil {
			t.Fatalf("the refusal: %+v", d)
		}
		closed("after the refusal")
		if p := list(f.reader, "?mine=true"); len(p.Items) != 2 || p.Items[0].ID != q2.ID || p.Items[0].State != "refused" || p.Items[0].Reply != "Not before the defence." {
			t.Errorf("the reader's requests after the refusal: %+v", p)
		}

		// granted for an hour: once it has passed (the repository's clock
		// moved on), the files are closed again
		var q3 accessRequest
		e.do("POST", ask, `{"message": "Only a glance."}`, jsonAs(f.reader)...).want(t, 201).json(t, &q3)
		end := time.Now().Add(time.Hour)
		e.do("POST", "/api/v1/access-requests/"+strconv.FormatInt(q3.ID, 10), `{"decision": "grant", "until": "`+end.UTC().Format(time.RFC3339Nano)+`"}`, jsonAs(f.keeper)...).want(t, 200)
		if s := reads(f.reader); s != 200 {
			t.Fatalf("the reader does not read the files granted: %d", s)
		}
		f.repoClock.advance(2 * time.Hour)
		closed("after the grant expired")
		e.do("GET", grants, nil, as(f.keeper)...).want(t, 200).json(t, &gs)
		if len(gs.Grants) != 0 {
			t.Errorf("an expired grant is listed: %+v", gs)
		}
	})
}

// TestAPIReplacePageFileAndThumbnail: a page's file is replaced through
// the API under the upload rules of POST …/files, the old one leaving the
// work; a work's thumbnail page is chosen and taken back; bad input is a
// 400 (412 for a stale If-Match) that stores nothing.
func TestAPIReplacePageFileAndThumbnail(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		f := newFilesFixture(t, backend)
		e := f.e
		version := func() string { return `"` + strconv.FormatInt(find(t, e.testEnv, f.W).Version, 10) + `"` }
		put := resPath(f.W, "/pages/"+string(f.P1)+"/file?name=new.txt")
		text := []string{"Content-Type", "text/plain"}
		for _, bad := range []struct {
			path   string
			hdrs   []string
			status int
			code   string
		}{
			{resPath(f.W, "/pages/"+string(f.Other)+"/file"), as(f.editor, text...), 400, shelfmark.EINVALID},
			{resPath(f.W, "/pages/"+string(f.Missing)+"/file"), as(f.editor, text...), 400, shelfmark.EINVALID},
			{resPath(f.P1, "/pages/"+string(f.P1)+"/file"), as(f.editor, text...), 400, shelfmark.EINVALID},
			{put + "&use=tiles", as(f.editor, text...), 400, shelfmark.EINVALID},
			{resPath(f.W, "/pages/"+string(f.P1)+"/file?name=a%01b"), as(f.editor, text...), 400, shelfmark.EINVALID},
			{put, as(f.editor, "Content-Type", "text/plain", "If-Match", `"999"`), 412, shelfmark.EPRECONDITION},
			{resPath(f.Missing, "/pages/"+string(f.P1)+"/file"), as(f.editor, text...), 404, shelfmark.ENOTFOUND},
			{put, as(f.reader, text...), 403, shelfmark.EFORBIDDEN},
			{put, as("", text...), 401, shelfmark.EUNAUTHORIZED},
		} {
			r := e.do("PUT", bad.path, "replacing bytes", bad.hdrs...)
			r.wantError(t, bad.status, bad.code)
			r.wantNoDataWrites(t)
		}
		r := e.do("PUT", put, "replacing bytes", as(f.editor, "Content-Type", "text/plain", "If-Match", version())...).want(t, 201)
		var nf resource
		r.json(t, &nf)
		if nf.Kind != string(shelfmark.KindFile) || nf.Parent != f.P1 || r.Header.Get("Location") != "/api/v1/resources/"+string(nf.ID) || !strings.Contains(string(r.Body), `"name":"new.txt"`) {
			t.Fatalf("the new file: %s (Location %s)", r.Body, r.Header.Get("Location"))
		}
		if got := e.do("GET", resPath(nf.ID, "/content"), nil).want(t, 200); string(got.Body) != "replacing bytes" {
			t.Errorf("the new file's bytes: %q", got.Body)
		}
		e.do("GET", resPath(f.F1, ""), nil).wantError(t, 410, shelfmark.EGONE)
		if kids := children(t, e.testEnv, f.P1); len(kids) != 1 || kids[0] != nf.ID {
			t.Errorf("the page's files after the replacement: %v, want [%s]", kids, nf.ID)
		}

		// the thumbnail page
		thumb := resPath(f.W, "/thumbnail")
		for _, bad := range []struct {
			body    string
			ifMatch string
			status  int
			code    string
		}{
			{`{"page": "` + string(f.Other) + `"}`, "", 400, shelfmark.EINVALID},
			{`{"page": "` + string(f.Missing) + `"}`, "", 400, shelfmark.EINVALID},
			{`{"page": "nothing"}`, "", 400, shelfmark.EINVALID},
			{`{"page": 3}`, "", 400, shelfmark.EINVALID},
			{`{}`, "", 400, shelfmark.EINVALID},
			{`{"page": "` + string(f.P2) + `"}`, `"999"`, 412, shelfmark.EPRECONDITION},
		} {
			hdrs := jsonAs(f.editor)
			if bad.ifMatch != "" {
				hdrs = append(hdrs, "If-Match", bad.ifMatch)
			}
			r := e.do("PUT", thumb, bad.body, hdrs...)
			r.wantError(t, bad.status, bad.code)
			r.wantNoDataWrites(t)
		}
		e.do("PUT", thumb, `{"page": "`+string(f.P2)+`"}`, jsonAs(f.reader)...).wantError(t, 403, shelfmark.EFORBIDDEN)
		e.do("PUT", resPath(f.Missing, "/thumbnail"), `{"page": null}`, jsonAs(f.editor)...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("PUT", resPath(f.P1, "/thumbnail"), `{"page": null}`, jsonAs(f.editor)...).wantError(t, 400, shelfmark.EINVALID)
		before := version()
		r = e.do("PUT", thumb, `{"page": "`+string(f.P2)+`"}`, jsonAs(f.editor, "If-Match", before)...).want(t, 200)
		if !strings.Contains(string(r.Body), shelfmark.ResourceIRI(f.P2)) || r.Header.Get("ETag") == before {
			t.Fatalf("the work after its thumbnail page was chosen: %s (ETag %s)", r.Body, r.Header.Get("ETag"))
		}
		if w := find(t, e.testEnv, f.W); shelfmark.ThumbnailPageOf(w.Metadata) != f.P2 {
			t.Errorf("the thumbnail page stored: %q", shelfmark.ThumbnailPageOf(w.Metadata))
		}
		r = e.do("PUT", thumb, `{"page": null}`, jsonAs(f.editor)...).want(t, 200)
		if strings.Contains(string(r.Body), shelfmark.ResourceIRI(f.P2)) {
			t.Errorf("the choice taken back is still in the work: %s", r.Body)
		}
	})
}
