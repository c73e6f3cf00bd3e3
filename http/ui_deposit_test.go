package http

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// namedBytes is a file a form sends.
type namedBytes struct {
	name, mediaType string
	data            []byte
}

// postDeposit sends a multipart deposit form with its fields first and
// the files, in order, last, as a browser sends the form; csrf adds the
// token of the last page read.
func postDeposit(b *visitor, fields url.Values, files []namedBytes, csrf bool) *htmlPage {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if csrf {
		mw.WriteField(csrfField, b.csrf)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range fields[k] {
			mw.WriteField(k, v)
		}
	}
	for _, f := range files {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="files"; filename=%q`, f.name)}
		h["Content-Type"] = []string{f.mediaType}
		w, err := mw.CreatePart(h)
		if err != nil {
			b.t.Fatal(err)
		}
		w.Write(f.data)
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.e.ts.URL+"/deposit", &buf)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// metaFields are a form's metadata rows: pairs of field name and value.
func metaFields(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		v.Add("field", shelfmark.NSDC+pairs[i])
		v.Add("value", pairs[i+1])
		v.Add("kind", "")
	}
	return v
}

// locationID returns the work id of a redirect to /works/{id}.
func locationID(t *testing.T, p *htmlPage) shelfmark.ID {
	t.Helper()
	if p.Status != http.StatusSeeOther {
		t.Fatalf("status %d, want 303: %.800s", p.Status, p.Body)
	}
	m := regexp.MustCompile(`^/works/([^/?]+)`).FindStringSubmatch(p.Header.Get("Location"))
	if m == nil {
		t.Fatalf("Location %q is not a work page", p.Header.Get("Location"))
	}
	return shelfmark.ID(m[1])
}

// children lists a work's children in order, as the system sees them.
func children(t *testing.T, e *testEnv, id shelfmark.ID) []shelfmark.ID {
	t.Helper()
	var out []shelfmark.ID
	var after shelfmark.Cursor
	for {
		pg, err := e.repo.ListChildren(context.Background(), id, shelfmark.PageRequest{After: after, Limit: shelfmark.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range pg.Items {
			out = append(out, it.ID)
		}
		if pg.Next == "" {
			return out
		}
		after = pg.Next
	}
}

func find(t *testing.T, e *testEnv, id shelfmark.ID) *shelfmark.Resource {
	t.Helper()
	res, err := e.repo.FindResource(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func values(res *shelfmark.Resource, field string) []string {
	var out []string
	for _, st := range res.Metadata {
		if st.Predicate == shelfmark.NSDC+field {
			out = append(out, st.Object.Value)
		}
	}
	return out
}

// TestUIDepositWithoutScript: the multipart form (no script) stores the
// work, a file set and file per file in the order sent, and the metadata
// rows; a script in a value is stored as text and shown escaped; "add
// another field" comes back with one more row; a form without a title
// stores nothing.
func TestUIDepositWithoutScript(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/deposit")
	if p.Status != 200 || !strings.Contains(p.Body, `type="file"`) || !strings.Contains(p.Body, `enctype="multipart/form-data"`) {
		t.Fatalf("GET /deposit: %d %.500s", p.Status, p.Body)
	}
	rows := strings.Count(p.Body, `name="value"`)

	// "add another field" without script
	f := metaFields("title", "Kept title", "creator", "Ann")
	f.Set("add", "1")
	f.Set("visibility", "public")
	p = b.post("/deposit", f)
	if p.Status != 200 || strings.Count(p.Body, `name="value"`) != 3 || !strings.Contains(p.Body, `value="Kept title"`) {
		t.Fatalf("add a row: %d, %d rows (had %d) %.500s", p.Status, strings.Count(p.Body, `name="value"`), rows, p.Body)
	}

	// no title: the form again, nothing stored
	before := e.counts()
	f = metaFields("title", "  ", "creator", "Ann")
	f.Set("visibility", "public")
	p = postDeposit(b, f, nil, true)
	if p.Status != 400 || !strings.Contains(p.Body, "A title is required.") || !strings.Contains(p.Body, `value="Ann"`) {
		t.Fatalf("no title: %d %.800s", p.Status, p.Body)
	}
	e.wantCounts(before)

	// a visibility that is none of the three is refused; none is public
	f = metaFields("title", "Visible")
	f.Set("visibility", "secret")
	if p := postDeposit(b, f, nil, true); p.Status != 400 || !strings.Contains(p.Body, "is not one of public") {
		t.Errorf("visibility secret: %d", p.Status)
	}
	e.wantCounts(before)
	f.Del("visibility")
	if w := find(t, e, locationID(t, postDeposit(b, f, nil, true))); w.Visibility != shelfmark.Public {
		t.Errorf("no visibility: %s", w.Visibility)
	}

	title := `A book <script>alert("x")</script>`
	f = metaFields("title", title, "creator", "Ann", "creator", "Bob", "subject", "")
	f.Set("visibility", "authenticated")
	pages := []namedBytes{{"p1.png", "image/png", []byte("page one")}, {"p2.png", "image/png", []byte("page two")}, {"p3.png", "image/png", []byte("page three")}}
	p = postDeposit(b, f, pages, true)
	id := locationID(t, p)
	w := find(t, e, id)
	if got := values(w, "title"); !slices.Equal(got, []string{title}) {
		t.Errorf("title %q", got)
	}
	if got := values(w, "creator"); !slices.Equal(got, []string{"Ann", "Bob"}) {
		t.Errorf("creators %q", got)
	}
	if w.Visibility != shelfmark.Authenticated {
		t.Errorf("visibility %s", w.Visibility)
	}
	kids := children(t, e, id)
	if len(kids) != 3 {
		t.Fatalf("%d children, want 3", len(kids))
	}
	for i, k := range kids {
		fs := find(t, e, k)
		if fs.Position != i+1 {
			t.Errorf("file set %d at position %d", i+1, fs.Position)
		}
		files := children(t, e, k)
		if len(files) != 1 {
			t.Fatalf("file set %d has %d files", i+1, len(files))
		}
		file := find(t, e, files[0])
		if file.File.Name != pages[i].name || file.File.Size != int64(len(pages[i].data)) || file.File.MediaType != "image/png" {
			t.Errorf("file %d: %+v", i+1, file.File)
		}
	}
	// the reorder page names the pages by their files
	p = b.get("/works/" + string(id) + "/pages")
	if p.Status != 200 || !strings.Contains(p.Body, "p2.png") || strings.Index(p.Body, "p1.png") > strings.Index(p.Body, "p3.png") {
		t.Errorf("pages: %d %.1500s", p.Status, p.Body)
	}
	// the script is shown as text
	p = b.get("/works/" + string(id) + "/edit")
	if p.Status != 200 || strings.Contains(p.Body, "<script>alert") || !strings.Contains(p.Body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Fatalf("edit page: %d %.2000s", p.Status, p.Body)
	}
}

// TestUIDepositWithScript: what the script does: each file to POST
// /api/v1/blobs with the session cookie and the form token, then the
// form naming the stored bytes, into a collection the depositor holds
// the depositor role on; a viewer there is refused and nothing stored.
func TestUIDepositWithScript(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{"metadata": {"dc:title": "Letters"}}`)
	e.addUser("dora", shelfmark.ScopeWrite)
	e.addUser("vic", shelfmark.ScopeWrite)
	e.do("PUT", "/api/v1/resources/"+string(coll.ID)+"/roles", `{"grants": [{"principal": "user:dora", "role": "depositor"}, {"principal": "user:vic", "role": "viewer"}]}`,
		"Content-Type", "application/json").want(t, 200)

	b := newVisitor(t, e)
	b.signIn("dora", "dora-password")
	p := b.get("/deposit?collection=" + string(coll.ID))
	if p.Status != 200 || !strings.Contains(p.Body, "Letters") {
		t.Fatalf("GET /deposit: %d %.500s", p.Status, p.Body)
	}
	upload := func(data string, token string) *htmlPage {
		req, _ := http.NewRequest("POST", e.ts.URL+"/api/v1/blobs", strings.NewReader(data))
		req.Header.Set("Content-Type", "text/plain")
		if token != "" {
			req.Header.Set(csrfHeader, token)
		}
		return b.send(req)
	}
	up := upload("letter one", b.csrf)
	if up.Status != 201 {
		t.Fatalf("upload: %d %s", up.Status, up.Body)
	}
	var blob kit.BlobJSON
	if err := json.Unmarshal([]byte(up.Body), &blob); err != nil {
		t.Fatal(err)
	}
	f := metaFields("title", "Letter", "date", "1901")
	f.Set("collection", string(coll.ID))
	f.Set("visibility", "private")
	f.Add("file_sha256", blob.SHA256)
	f.Add("file_name", "letter.txt")
	f.Add("file_size", strconv.FormatInt(blob.Size, 10))
	f.Add("file_type", "text/plain")
	b.get("/deposit")
	id := locationID(t, b.post("/deposit", f))
	w := find(t, e, id)
	if !slices.Equal(w.MemberOf, []shelfmark.ID{coll.ID}) || w.Visibility != shelfmark.Private {
		t.Errorf("work: memberOf %v visibility %s", w.MemberOf, w.Visibility)
	}
	kids := children(t, e, id)
	if len(kids) != 1 || find(t, e, children(t, e, kids[0])[0]).File.SHA256 != blob.SHA256 {
		t.Errorf("children %v", kids)
	}
	// bytes the form names must be stored with the size it states
	f.Set("file_size", "3")
	b.get("/deposit")
	before := e.counts()
	if p := b.post("/deposit", f); p.Status != 409 || !strings.Contains(p.Body, "not 3 as stated") || !strings.Contains(p.Body, `value="Letter"`) {
		t.Errorf("wrong size: %d %.300s", p.Status, p.Body)
	}
	e.wantCounts(before)

	// a viewer of the collection may not deposit there
	v := newVisitor(t, e)
	v.signIn("vic", "vic-password")
	v.get("/deposit")
	f.Set("file_size", strconv.FormatInt(blob.Size, 10))
	f.Del(csrfField)
	p = v.post("/deposit", f)
	if p.Status != 403 || !strings.Contains(p.Body, `value="Letter"`) {
		t.Errorf("viewer's deposit: %d %.500s", p.Status, p.Body)
	}
	e.wantCounts(before)
}

// TestUIDepositTooLarge: a file over MaxUploadBytes is refused with a 413
// page, and nothing is stored: no resource, no blob.
func TestUIDepositTooLarge(t *testing.T) {
	e := newEnv(t, Options{MaxUploadBytes: 1000})
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/deposit")
	before := e.counts()
	f := metaFields("title", "Too big")
	f.Set("visibility", "public")
	p := postDeposit(b, f, []namedBytes{{"big.bin", "application/octet-stream", bytes.Repeat([]byte("x"), 1500)}}, true)
	if p.Status != 413 || !strings.Contains(p.Body, "<h1>") {
		t.Fatalf("oversized upload: %d %.500s", p.Status, p.Body)
	}
	e.wantCounts(before)
	if got := e.blobFiles(); len(got) != 0 {
		t.Errorf("blobs stored: %v", got)
	}
	e.wantTmpEmpty()
	// one that fits is taken
	id := locationID(t, postDeposit(b, f, []namedBytes{{"small.bin", "application/octet-stream", bytes.Repeat([]byte("x"), 1000)}}, true))
	if n := len(children(t, e, id)); n != 1 {
		t.Errorf("%d children", n)
	}
}

// TestUIDepositForged: forms without their token are refused (403) and
// change nothing: a multipart deposit (before any byte is stored), an
// edit, an order, an access change, a deletion and roles.
func TestUIDepositForged(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Forged target"}}`)
	coll := e.create("/api/v1/collections", `{"metadata": {"dc:title": "C"}}`)
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/deposit")
	before := e.counts()
	f := metaFields("title", "Forged")
	f.Set("visibility", "public")
	p := postDeposit(b, f, []namedBytes{{"a.txt", "text/plain", []byte("forged bytes")}}, false)
	if p.Status != 403 {
		t.Errorf("forged deposit: %d", p.Status)
	}
	if got := e.blobFiles(); len(got) != 0 {
		t.Errorf("blobs stored: %v", got)
	}
	ver := strconv.FormatInt(w.Version, 10)
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/deposit", f},
		{"/works/" + string(w.ID) + "/edit", func() url.Values { v := metaFields("title", "Changed"); v.Set("version", ver); return v }()},
		{"/works/" + string(w.ID) + "/order", url.Values{"version": {ver}}},
		{"/works/" + string(w.ID) + "/access", url.Values{"version": {ver}, "visibility": {"private"}}},
		{"/works/" + string(w.ID) + "/delete", url.Values{"version": {ver}}},
		{"/collections/" + string(coll.ID) + "/roles", url.Values{"kind": {"user"}, "name": {"admin"}, "role": {"viewer"}}},
	} {
		for _, tok := range []string{"", "forged-token"} {
			c.form.Set(csrfField, tok)
			if p := b.post(c.path, c.form); p.Status != 403 {
				t.Errorf("POST %s with token %q: %d", c.path, tok, p.Status)
			}
		}
	}
	e.wantCounts(before)
	if got := find(t, e, w.ID); got.Version != w.Version || titleOf(got) != "Forged target" {
		t.Errorf("work changed: version %d title %q", got.Version, titleOf(got))
	}
}

// TestUIEditConflict: a stale form (someone saved meanwhile) is not
// saved: a 409 page says so and shows both versions, and its form, over
// the new version, saves the user's values. Only the differences are
// written.
func TestUIEditConflict(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Original", "dc:creator": "Ann", "dc:subject": {"@value": "Briefe", "@language": "de"}}}`)
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/works/" + string(w.ID) + "/edit")
	if p.Status != 200 || !strings.Contains(p.Body, `name="version" value="`+strconv.FormatInt(w.Version, 10)+`"`) || !strings.Contains(p.Body, `value="lang:de"`) {
		t.Fatalf("edit page: %d %.1500s", p.Status, p.Body)
	}
	form := func(title string, version int64) url.Values {
		f := metaFields("title", title, "creator", "Ann")
		f.Add("field", shelfmark.NSDC+"subject")
		f.Add("value", "Briefe")
		f.Add("kind", "lang:de")
		f.Set("version", strconv.FormatInt(version, 10))
		return f
	}
	// someone else saves first
	e.do("PATCH", "/api/v1/resources/"+string(w.ID), `{"add": {"dc:title": "Theirs"}, "remove": {"dc:title": "Original"}}`,
		"Content-Type", "application/json").want(t, 200)
	p = b.post("/works/"+string(w.ID)+"/edit", form("Mine", w.Version))
	if p.Status != 409 {
		t.Fatalf("stale edit: %d %.1000s", p.Status, p.Body)
	}
	for _, want := range []string{"Theirs", "Mine", "was changed meanwhile", "Someone saved this work"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("conflict page lacks %q", want)
		}
	}
	if got := titleOf(find(t, e, w.ID)); got != "Theirs" {
		t.Errorf("stale form saved: title %q", got)
	}
	cur := find(t, e, w.ID).Version
	if !strings.Contains(p.Body, `name="version" value="`+strconv.FormatInt(cur, 10)+`"`) {
		t.Errorf("the conflict form does not carry the stored version %d", cur)
	}
	// re-applying mine over the stored version writes the title only
	mark := e.tr.mark()
	p = b.post("/works/"+string(w.ID)+"/edit", form("Mine", cur))
	if p.Status != 303 || p.Header.Get("Location") != "/works/"+string(w.ID)+"?notice=saved" {
		t.Fatalf("apply mine: %d %s", p.Status, p.Header.Get("Location"))
	}
	stmts := writes(e.tr.since(mark))
	got := find(t, e, w.ID)
	if titleOf(got) != "Mine" || !slices.Equal(values(got, "creator"), []string{"Ann"}) {
		t.Errorf("after: title %q creators %q", titleOf(got), values(got, "creator"))
	}
	for _, st := range got.Metadata {
		if st.Predicate == shelfmark.NSDC+"subject" && st.Object.Lang != "de" {
			t.Errorf("the subject lost its language: %+v", st.Object)
		}
	}
	fieldWrites := 0
	for _, s := range stmts {
		if strings.Contains(s, " fields ") {
			fieldWrites++
		}
	}
	if fieldWrites != 1 {
		t.Errorf("%d writes to fields, want 1 (the title's): %q", fieldWrites, stmts)
	}
}

// TestUIAccessAndDelete: visibility and embargo from the access form;
// both an embargo and a lease is refused with the engine's reason; the
// delete confirmation, then a tombstone that answers 410; a stale
// deletion is a 409 page.
func TestUIAccessAndDelete(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Access target"}}`)
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/works/" + string(w.ID) + "/access")
	ver := strconv.FormatInt(w.Version, 10)
	p := b.post("/works/"+string(w.ID)+"/access", url.Values{"version": {ver}, "visibility": {"private"}, "embargo": {"2099-01-31"}, "lease": {"2099-02-01"}})
	if p.Status != 400 || !strings.Contains(p.Body, "not both") {
		t.Errorf("embargo and lease: %d %.500s", p.Status, p.Body)
	}
	p = b.post("/works/"+string(w.ID)+"/access", url.Values{"version": {ver}, "visibility": {"private"}, "embargo": {"2099-01-31"}, "lease": {""}})
	if p.Status != 303 {
		t.Fatalf("access: %d %.500s", p.Status, p.Body)
	}
	got := find(t, e, w.ID)
	if got.Visibility != shelfmark.Private || got.Embargo == nil || got.Embargo.Format("2006-01-02") != "2099-01-31" {
		t.Errorf("access: %s %v", got.Visibility, got.Embargo)
	}
	e.do("GET", "/api/v1/resources/"+string(w.ID), nil, as("")...).want(t, 404)
	// stale access form
	p = b.post("/works/"+string(w.ID)+"/access", url.Values{"version": {ver}, "visibility": {"public"}})
	if p.Status != 409 || !strings.Contains(p.Body, "changed after you opened") {
		t.Errorf("stale access: %d %.500s", p.Status, p.Body)
	}

	p = b.get("/works/" + string(w.ID) + "/delete")
	if p.Status != 200 || !strings.Contains(p.Body, "Delete “Access target”?") {
		t.Fatalf("delete page: %d %.500s", p.Status, p.Body)
	}
	if p := b.post("/works/"+string(w.ID)+"/delete", url.Values{"version": {ver}}); p.Status != 409 {
		t.Errorf("stale delete: %d", p.Status)
	}
	p = b.post("/works/"+string(w.ID)+"/delete", url.Values{"version": {strconv.FormatInt(got.Version, 10)}})
	if p.Status != 303 || p.Header.Get("Location") != "/?notice=deleted" {
		t.Fatalf("delete: %d %s", p.Status, p.Header.Get("Location"))
	}
	e.do("GET", "/api/v1/resources/"+string(w.ID), nil).want(t, 410)
	if p := b.get("/works/" + string(w.ID)); p.Status != 410 {
		t.Errorf("the deleted work's page: %d", p.Status)
	}
	if p := b.get("/works/" + string(w.ID) + "/edit"); p.Status != 410 {
		t.Errorf("edit a deleted work: %d", p.Status)
	}
	if p := b.get("/?notice=deleted"); !strings.Contains(p.Body, "The work was deleted.") {
		t.Errorf("no notice after deleting")
	}
}

// TestUIReorder: without script, a move button sends the form and it
// comes back moved (unsaved); saving stores the whole order in one
// SetOrder. A long book is listed in bounded chunks, and saving a chunk
// puts its pages into the slots they held, leaving the others.
func TestUIReorder(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Long book"}}`)
	const n = 2*pagesChunk + 30
	nrs := make([]*shelfmark.NewResource, n)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	sets, errs := e.repo.CreateResources(context.Background(), nrs)
	var order []shelfmark.ID
	for i, s := range sets {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		order = append(order, s.ID)
	}
	if _, err := e.repo.SetOrder(context.Background(), w.ID, order, 0); err != nil {
		t.Fatal(err)
	}
	ver := find(t, e, w.ID).Version
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/works/" + string(w.ID) + "/pages") // the session is read once, then cached
	mark := e.tr.mark()
	p := b.get("/works/" + string(w.ID) + "/pages")
	firstStmts := len(e.tr.since(mark))
	if p.Status != 200 || strings.Count(p.Body, `name="id"`) != pagesChunk {
		t.Fatalf("pages: %d, %d items", p.Status, strings.Count(p.Body, `name="id"`))
	}
	next := regexp.MustCompile(`href="(/works/[^"]+/pages\?after=[^"]+)"`).FindStringSubmatch(p.Body)
	if next == nil {
		t.Fatal("no link to the next pages")
	}
	// the second chunk, in as many statements as the first
	mark = e.tr.mark()
	p = b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	if n := len(e.tr.since(mark)); n != firstStmts {
		t.Errorf("the second chunk took %d statements, the first %d: %q", n, firstStmts, e.tr.since(mark))
	}
	ids := regexp.MustCompile(`name="id" value="([^"]+)"`).FindAllStringSubmatch(p.Body, -1)
	if len(ids) != pagesChunk || shelfmark.ID(ids[0][1]) != order[pagesChunk] || !strings.Contains(p.Body, "Page 101") {
		t.Fatalf("second chunk: %d items, first %v", len(ids), ids[:1])
	}
	chunk := make([]string, len(ids))
	for i, m := range ids {
		chunk[i] = m[1]
	}
	after := regexp.MustCompile(`name="after" value="([^"]*)"`).FindStringSubmatch(p.Body)[1]
	form := url.Values{"version": {strconv.FormatInt(ver, 10)}, "id": chunk, "after": {after}, "offset": {"101"}}
	// without script: move the chunk's first page down, shown unsaved
	form.Set("down", chunk[0])
	p = b.post("/works/"+string(w.ID)+"/order", form)
	moved := regexp.MustCompile(`name="id" value="([^"]+)"`).FindAllStringSubmatch(p.Body, -1)
	if p.Status != 200 || len(moved) != pagesChunk || moved[0][1] != chunk[1] || moved[1][1] != chunk[0] || !strings.Contains(p.Body, "not saved yet") {
		t.Fatalf("move: %d %v", p.Status, moved[:2])
	}
	if got := children(t, e, w.ID); !slices.Equal(got, order) {
		t.Fatal("a move saved the order")
	}
	// save the chunk reversed
	form.Del("down")
	slices.Reverse(chunk)
	form["id"] = chunk
	form.Set("save", "1")
	p = b.post("/works/"+string(w.ID)+"/order", form)
	if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=ordersaved") {
		t.Fatalf("save: %d %.500s", p.Status, p.Body)
	}
	want := slices.Clone(order)
	slices.Reverse(want[pagesChunk : 2*pagesChunk])
	if got := children(t, e, w.ID); !slices.Equal(got, want) {
		t.Errorf("order after saving the second chunk is not the old order with that chunk reversed")
	}
	// the same form again is stale
	if p := b.post("/works/"+string(w.ID)+"/order", form); p.Status != 409 {
		t.Errorf("stale order: %d", p.Status)
	}
	// a move across chunks: the last page to place 2, saved at once
	ver = find(t, e, w.ID).Version
	far := url.Values{"version": {strconv.FormatInt(ver, 10)}, "from": {strconv.Itoa(n)}, "to": {"2"}}
	if p := b.post("/works/"+string(w.ID)+"/order", far); p.Status != 303 {
		t.Fatalf("move far: %d %.500s", p.Status, p.Body)
	}
	want = slices.Insert(want[:n-1:n-1], 1, want[n-1])
	if got := children(t, e, w.ID); !slices.Equal(got, want) {
		t.Errorf("after the far move: %v..., want %v...", got[:3], want[:3])
	}
	far.Set("version", strconv.FormatInt(find(t, e, w.ID).Version, 10))
	far.Set("to", strconv.Itoa(n+1))
	if p := b.post("/works/"+string(w.ID)+"/order", far); p.Status != 400 {
		t.Errorf("a place past the end: %d", p.Status)
	}
}

// TestUIRoles: a collection's manager (here the admin) grants roles with
// the form; a bad name is refused with the engine's reason; someone
// without the manager role is refused.
func TestUIRoles(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{"metadata": {"dc:title": "Maps"}}`)
	e.addUser("ann", shelfmark.ScopeWrite)
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/collections/" + string(coll.ID) + "/roles")
	if p.Status != 200 || !strings.Contains(p.Body, "Roles in “Maps”") {
		t.Fatalf("roles page: %d %.500s", p.Status, p.Body)
	}
	p = b.post("/collections/"+string(coll.ID)+"/roles", url.Values{"kind": {"user", "group"}, "name": {"ann", ""}, "role": {"depositor", "viewer"}, "add": {"1"}})
	if p.Status != 200 || strings.Count(p.Body, `name="name"`) != 3 {
		t.Errorf("add a row: %d, %d rows", p.Status, strings.Count(p.Body, `name="name"`))
	}
	p = b.post("/collections/"+string(coll.ID)+"/roles", url.Values{"kind": {"user", "group"}, "name": {"ann", "bad name!"}, "role": {"depositor", "viewer"}})
	if p.Status != 400 {
		t.Errorf("bad name: %d %.500s", p.Status, p.Body)
	}
	p = b.post("/collections/"+string(coll.ID)+"/roles", url.Values{"kind": {"user", "group"}, "name": {"ann", "staff"}, "role": {"depositor", "none"}})
	if p.Status != 303 {
		t.Fatalf("save roles: %d %.500s", p.Status, p.Body)
	}
	grants, err := e.accounts.Roles(context.Background(), coll.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) != 1 || grants[0].Principal != "user:ann" || grants[0].Role != shelfmark.RoleDepositor {
		t.Errorf("grants %+v", grants)
	}
	a := newVisitor(t, e)
	a.signIn("ann", "ann-password")
	if p := a.get("/collections/" + string(coll.ID) + "/roles"); p.Status != 403 {
		t.Errorf("a depositor reads the roles: %d", p.Status)
	}
	// signed out: sent to sign in
	if p := newVisitor(t, e).get("/collections/" + string(coll.ID) + "/roles"); p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/login?next=") {
		t.Errorf("signed out: %d %s", p.Status, p.Header.Get("Location"))
	}
}

// TestUINewCollection: a curator of a collection makes a collection in
// it; a depositor there may not (403, the form again), nor make a
// top-level one.
func TestUINewCollection(t *testing.T) {
	e := newEnv(t, Options{})
	parent := e.create("/api/v1/collections", `{"metadata": {"dc:title": "Archives"}}`)
	e.addUser("cora", shelfmark.ScopeWrite)
	e.addUser("dan", shelfmark.ScopeWrite)
	e.do("PUT", "/api/v1/resources/"+string(parent.ID)+"/roles", `{"grants": [{"principal": "user:cora", "role": "curator"}, {"principal": "user:dan", "role": "depositor"}]}`,
		"Content-Type", "application/json").want(t, 200)
	b := newVisitor(t, e)
	b.signIn("cora", "cora-password")
	p := b.get("/collections/new?parent=" + string(parent.ID))
	if p.Status != 200 || !strings.Contains(p.Body, "“Archives”") {
		t.Fatalf("new collection page: %d %.500s", p.Status, p.Body)
	}
	f := metaFields("title", "Letters of 1901", "description", "Sent and received.")
	f.Set("parent", string(parent.ID))
	f.Set("visibility", "public")
	p = b.post("/collections/new", f)
	if p.Status != 303 {
		t.Fatalf("make: %d %.500s", p.Status, p.Body)
	}
	id := shelfmark.ID(strings.TrimPrefix(strings.SplitN(p.Header.Get("Location"), "?", 2)[0], "/collections/"))
	c := find(t, e, id)
	if c.Kind != shelfmark.KindCollection || titleOf(c) != "Letters of 1901" || !slices.Equal(c.MemberOf, []shelfmark.ID{parent.ID}) {
		t.Errorf("made %s %q in %v", c.Kind, titleOf(c), c.MemberOf)
	}
	d := newVisitor(t, e)
	d.signIn("dan", "dan-password")
	d.get("/collections/new")
	before := e.counts()
	f.Del(csrfField)
	if p := d.post("/collections/new", f); p.Status != 403 || !strings.Contains(p.Body, `value="Letters of 1901"`) {
		t.Errorf("a depositor makes a collection: %d", p.Status)
	}
	f.Set("parent", "")
	f.Del(csrfField)
	if p := d.post("/collections/new", f); p.Status != 403 {
		t.Errorf("a depositor makes a top-level collection: %d", p.Status)
	}
	e.wantCounts(before)
}

// TestUIAccessPassedDate: the access form's dates are days; one the form
// sends back unchanged is left as stored: a lease whose date has passed
// before the access sweep ran, and an embargo with a time of day.
func TestUIAccessPassedDate(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Leased"}, "lease": "2099-01-01"}`)
	past := time.Now().Add(-48 * time.Hour).UTC().Truncate(24 * time.Hour)
	ctx := context.Background()
	err := e.db.Update(ctx, func(tx shelfmark.WriteTx) error {
		key, err := e.repo.IDs().Key(w.ID)
		if err != nil {
			return err
		}
		row, err := tx.Resource(ctx, key)
		if err != nil {
			return err
		}
		row.Lease, row.Effective.Lease = &past, &past // a work of its own: its effective access is its own
		return tx.UpdateResource(ctx, row)
	})
	if err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/works/" + string(w.ID) + "/access")
	if !strings.Contains(p.Body, `value="`+past.Format(time.DateOnly)+`"`) {
		t.Fatalf("the form does not show the lease: %.1500s", p.Body)
	}
	p = b.post("/works/"+string(w.ID)+"/access", url.Values{"version": {strconv.FormatInt(w.Version, 10)}, "visibility": {"authenticated"},
		"embargo": {""}, "lease": {past.Format(time.DateOnly)}})
	if p.Status != 303 {
		t.Fatalf("access with the lease unchanged: %d %.800s", p.Status, p.Body)
	}
	got := find(t, e, w.ID)
	if got.Visibility != shelfmark.Authenticated || got.Lease == nil || !got.Lease.Equal(past) {
		t.Errorf("visibility %s lease %v", got.Visibility, got.Lease)
	}

	// a date with a time of day, shown as its day, is kept to the second
	// when the form leaves it as it was
	w = e.create("/api/v1/works", `{"metadata": {"dc:title": "Embargoed"}, "embargo": "2099-01-01T12:30:00Z"}`)
	b.get("/works/" + string(w.ID) + "/access")
	p = b.post("/works/"+string(w.ID)+"/access", url.Values{"version": {strconv.FormatInt(w.Version, 10)}, "visibility": {"private"},
		"embargo": {"2099-01-01"}, "lease": {""}})
	if p.Status != 303 {
		t.Fatalf("access with the embargo unchanged: %d %.800s", p.Status, p.Body)
	}
	got = find(t, e, w.ID)
	if got.Visibility != shelfmark.Private || got.Embargo == nil || got.Embargo.UTC().Format(time.RFC3339) != "2099-01-01T12:30:00Z" {
		t.Errorf("visibility %s embargo %v", got.Visibility, got.Embargo)
	}
}

// TestUIDepositBusy: a multipart deposit takes one of the
// MaxConcurrentUploads slots the API's uploads share; with none free it
// is a 503 page with Retry-After, and nothing is stored.
func TestUIDepositBusy(t *testing.T) {
	e := newEnv(t, Options{MaxConcurrentUploads: 1})
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/deposit")
	e.srv.uploads <- struct{}{} // an upload in progress
	before := e.counts()
	f := metaFields("title", "Busy")
	f.Set("visibility", "public")
	p := postDeposit(b, f, []namedBytes{{"a.txt", "text/plain", []byte("bytes")}}, true)
	if p.Status != 503 || p.Header.Get("Retry-After") == "" {
		t.Errorf("busy: %d Retry-After %q", p.Status, p.Header.Get("Retry-After"))
	}
	e.wantCounts(before)
	<-e.srv.uploads
	locationID(t, postDeposit(b, f, []namedBytes{{"a.txt", "text/plain", []byte("bytes")}}, true))
}

// TestUIEditTooManyRows: a work with more statements than the form shows
// is not offered for editing there (the form would lose what it cannot
// show); the page says to use the API.
func TestUIEditTooManyRows(t *testing.T) {
	e := newEnv(t, Options{})
	subjects := make([]string, maxFormRows)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("subject %d", i)
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"dc:title": "Big record", "dc:subject": subjects}})
	w := e.create("/api/v1/works", string(body))
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	if p := b.get("/works/" + string(w.ID) + "/edit"); p.Status != 400 || !strings.Contains(p.Body, "through the API") {
		t.Errorf("edit a big record: %d", p.Status)
	}
}
