package http

// Tests of the bulk ingest pages: the preview of a manifest and its files
// (a zip or a folder under an import root), what is refused before
// anything is stored, the run and its live progress, and who may see a
// run.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// bulkEnv is a stack with a staging directory, an import root, a
// collection C where the user "writer" is a depositor and a public
// collection D where she holds no role.
type bulkEnv struct {
	*policyEnv
	staging, root string
	C, D          shelfmark.ID
	writer        string // the writer's API token
}

func newBulkEnv(t *testing.T, backend string, opts Options) *bulkEnv {
	t.Helper()
	be := &bulkEnv{staging: t.TempDir(), root: t.TempDir()}
	opts.StagingDir, opts.ImportRoots = be.staging, []string{be.root}
	be.policyEnv = newPolicyEnv(t, backend, opts)
	colls := be.createAll(context.Background(), []*shelfmark.NewResource{
		{Kind: shelfmark.KindCollection, Metadata: titled("C")},
		{Kind: shelfmark.KindCollection, Metadata: titled("D"), Visibility: shelfmark.Public},
	})
	be.C, be.D = colls[0].ID, colls[1].ID
	be.writer = be.addUser("writer", shelfmark.ScopeWrite)
	be.addUser("other", shelfmark.ScopeWrite)
	be.grantRoles(be.C, []api.GrantJSON{{Principal: "user:writer", Role: "depositor"}})
	// other may deposit elsewhere (bulk uploads take the right to deposit
	// somewhere), and sees nothing of C
	be.grantRoles(be.D, []api.GrantJSON{{Principal: "user:other", Role: "depositor"}})
	return be
}

// signedIn returns a visitor signed in as name (whose password is
// name-password, or the admin's).
func (be *bulkEnv) signedIn(name string) *visitor {
	b := newVisitor(be.t, be.testEnv)
	pw := name + "-password"
	if name == "admin" {
		pw = adminPassword
	}
	b.signIn(name, pw)
	b.get("/bulk")
	return b
}

// staged lists the runs' directories in the process's staging directory.
func (be *bulkEnv) staged() []string {
	be.t.Helper()
	dirs, err := filepath.Glob(filepath.Join(be.staging, "*", "*"))
	if err != nil {
		be.t.Fatal(err)
	}
	return dirs
}

// wantNothingStaged checks that the staging directory holds no run.
func (be *bulkEnv) wantNothingStaged() {
	be.t.Helper()
	for _, d := range be.staged() {
		be.t.Errorf("staging holds %s", d)
	}
}

// wantNotStored checks that none of the source keys were stored and that
// the content store holds no bytes.
func (be *bulkEnv) wantNotStored(keys ...string) {
	be.t.Helper()
	found, err := be.repo.FindSources(context.Background(), keys)
	if err != nil {
		be.t.Fatal(err)
	}
	if len(found) > 0 {
		be.t.Errorf("stored: %v", found)
	}
	if blobs := be.blobFiles(); len(blobs) > 0 {
		be.t.Errorf("the content store holds %d blobs", len(blobs))
	}
}

// zipOf makes a zip of name, content pairs.
func zipOf(t testing.TB, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		w, err := zw.Create(entries[i])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, entries[i+1])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload posts the bulk form: a manifest, and a zip or a path.
func (b *visitor) upload(manifest string, zipBytes []byte, path string) *htmlPage {
	b.t.Helper()
	files := map[string]map[string][]byte{"manifest": {"manifest.csv": []byte(manifest)}}
	if zipBytes != nil {
		files["zip"] = map[string][]byte{"files.zip": zipBytes}
	}
	fields := url.Values{}
	if path != "" {
		fields.Set("path", path)
	}
	return b.postMultipart("/bulk", fields, files)
}

var runPath = regexp.MustCompile(`^/bulk/([a-z2-7]+)$`)

// runOf returns the run path a 303 answer points to.
func runOf(t testing.TB, p *htmlPage) string {
	t.Helper()
	if p.Status != http.StatusSeeOther {
		t.Fatalf("upload: %d, want 303; %.2000s", p.Status, p.Body)
	}
	loc := p.Header.Get("Location")
	if !runPath.MatchString(loc) {
		t.Fatalf("upload went to %q", loc)
	}
	return loc
}

// progressOf reads a run's progress as its page's script does.
func (b *visitor) progress(run string) (int, bulkProgressJSON) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.e.ts.URL+run+"/progress", nil)
	req.Header.Set("Accept", "application/json")
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out bulkProgressJSON
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			b.t.Fatal(err)
		}
	}
	return res.StatusCode, out
}

// waitDone polls a run's progress until it ends (a generous deadline; the
// poll assumes nothing of the machine's speed).
func (b *visitor) waitDone(run string) bulkProgressJSON {
	b.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		status, p := b.progress(run)
		if status != http.StatusOK {
			b.t.Fatalf("progress: %d", status)
		}
		if p.Done {
			return p
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the run has not ended: %+v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantIn(t testing.TB, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

// TestUIBulkIngest: a manifest with a zip of its files is previewed
// (nothing stored), then started; the progress reaches done, the works
// the writer may deposit are stored as hers and the one the policy
// refuses fails with its reason; another user sees no run.
func TestUIBulkIngest(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		b := be.signedIn("writer")
		manifest := "source_identifier,title,file,parent\n" +
			"b1,Book one,b1/p1.txt|b1/p2.txt," + string(be.C) + "\n" +
			"b2,Book two,b2.txt," + string(be.C) + "\n" +
			"b3,Book three,,\n" + // in no collection: that takes a role on the repository, which she lacks
			"b4,Not hers,b2.txt," + string(be.D) + "\n"
		z := zipOf(t, "b1/p1.txt", "page one", "b1/p2.txt", "page two", "b2.txt", "book two")
		run := runOf(t, b.upload(manifest, z, ""))
		p := b.get(run)
		if p.Status != http.StatusOK {
			t.Fatalf("preview: %d %.1000s", p.Status, p.Body)
		}
		wantIn(t, p.Body, "Preview of manifest.csv", `<dd id="bulk-new">4</dd>`, "Book one", "p2.txt", "Files: 2 (16 B)", "<dd>4</dd>", "Works: 3; collections: 2",
			`<dd id="bulk-failed">0</dd>`, `action="`+run+`/start"`)
		be.wantNotStored("csv:b1", "csv:b2", "csv:b3", "csv:b4")

		// another user, and a forged start, see nothing
		o := be.signedIn("other")
		for _, path := range []string{run, run + "/progress"} {
			if got := o.get(path).Status; got != http.StatusNotFound {
				t.Errorf("another user GET %s: %d, want 404", path, got)
			}
		}
		if got := o.post(run+"/start", nil).Status; got != http.StatusNotFound {
			t.Errorf("another user starts the run: %d, want 404", got)
		}
		if got := b.post(run+"/start", url.Values{"csrf": {"forged"}}).Status; got != http.StatusForbidden {
			t.Errorf("start without the form token: %d, want 403", got)
		}
		be.wantNotStored("csv:b1")

		b.get(run)
		if p := b.post(run+"/start", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("start: %d %.1000s", p.Status, p.Body)
		}
		if p := b.post(run+"/start", nil); p.Status != http.StatusConflict {
			t.Errorf("second start: %d, want 409", p.Status)
		}
		got := b.waitDone(run)
		if got.State != "done" || got.Stored != 2 || got.Failed != 2 || got.Files != 3 || got.Processed != 4 || got.Total != 4 || got.Percent != 100 {
			t.Errorf("progress at the end: %+v", got)
		}
		reasons := map[string]string{}
		for _, f := range got.Failures {
			reasons[f.Key] = f.Reason
		}
		if !strings.Contains(reasons["b4"], "depositor role") || !strings.Contains(reasons["b3"], "role on the repository") {
			t.Errorf("failures %+v: want b3 and b4 refused by the access policy", got.Failures)
		}
		found, err := be.repo.FindSources(context.Background(), []string{"csv:b1", "csv:b2", "csv:b3", "csv:b4"})
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 2 || found["csv:b1"] == "" || found["csv:b2"] == "" {
			t.Fatalf("stored %v, want b1 and b2", found)
		}
		w := be.do("GET", resPath(found["csv:b1"], "/children"), nil).want(t, http.StatusOK)
		if kids := listed(w); len(kids) != 2 {
			t.Errorf("b1 has %d file sets, want 2", len(kids))
		}
		// the work is the writer's: a depositor may change the works she
		// deposited
		be.do("PATCH", resPath(found["csv:b1"], ""), `{"add": {"dcterms:subject": "patched"}}`,
			as(be.writer, "Content-Type", ctJSON)...).want(t, http.StatusOK)
		p = b.get(run)
		wantIn(t, p.Body, "Done", "Works read: 4 of 4. Stored: 2, skipped (stored before): 0, failed: 2", "depositor role")
		if strings.Contains(p.Body, `action="`+run+`/cancel"`) {
			t.Error("a finished run offers to stop it")
		}
		be.wantNothingStaged() // the run's staged files are gone once it ended
		// the admin sees it, on the page and in the dashboard's list
		a := be.signedIn("admin")
		if got := a.get(run).Status; got != http.StatusOK {
			t.Errorf("admin GET %s: %d", run, got)
		}
		runs := be.srv.ui.IngestRuns()
		if len(runs) != 1 || runs[0].User != "writer" || runs[0].State != "done" || runs[0].Done != 2 || runs[0].Failed != 2 || runs[0].Total != 4 {
			t.Errorf("ingestRuns: %+v", runs)
		}
		// a second upload of the same manifest: everything stored is skipped
		b.get("/bulk")
		run2 := runOf(t, b.upload(manifest, z, ""))
		p = b.get(run2)
		wantIn(t, p.Body, `<dd id="bulk-new">2</dd>`, "stored before")
		if runs := be.srv.ui.IngestRuns(); len(runs) != 2 || runs[0].ID != strings.TrimPrefix(run2, "/bulk/") {
			t.Errorf("ingestRuns is not newest first: %+v", runs)
		}
	})
}

// TestUIBulkBadRows: a manifest with bad rows shows each with its row
// number and reason, and counts the good ones; nothing is stored. A file
// that is not CSV is a 400 page.
func TestUIBulkBadRows(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	b := be.signedIn("writer")
	manifest := "source_identifier,title,file\n" +
		"g1,Good one,a.txt\n" +
		"bad1,Missing file,nothere.txt\n" +
		"g2,Good two,\n" +
		"bad2,Too long,a.txt,extra\n" +
		"g1,Again,a.txt\n" +
		"bad3,Escapes,../outside.txt\n"
	run := runOf(t, b.upload(manifest, zipOf(t, "a.txt", "A"), ""))
	p := b.get(run)
	wantIn(t, p.Body, `<dd id="bulk-new">2</dd>`, `<dd id="bulk-failed">4</dd>`, "Works with errors, which would not be stored: 4. Works that would be stored: 2.",
		`<td class="num">3</td><td><code>bad1</code></td><td><code>nothere.txt</code></td><td>file nothere.txt does not exist</td>`,
		`<td class="num">5</td><td><code>bad2</code></td>`, "the row has 4 cells but the header only 3",
		`<td class="num">6</td><td><code>g1</code></td>`, "already used at row 2",
		`<td class="num">7</td><td><code>bad3</code></td>`, "escapes the input root",
		"Good one", "Good two")
	be.wantNotStored("csv:g1", "csv:g2")

	// in German
	b.lang = "de"
	p = b.get(run)
	wantIn(t, p.Body, "Werke mit Fehlern, die nicht gespeichert würden: 4. Werke, die gespeichert würden: 2.", "Zeile")
	b.lang = ""

	for name, bad := range map[string]string{
		"binary":      "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"stray quote": "title,file\n\"unclosed,a.txt\nx\"y,z\n",
		"empty":       "",
	} {
		b.get("/bulk")
		p := b.upload(bad, nil, "")
		if p.Status != http.StatusBadRequest {
			t.Errorf("%s manifest: %d, want 400", name, p.Status)
		}
		wantIn(t, p.Body, "<h1>")
	}
	if dirs := be.staged(); len(dirs) != 1 {
		t.Errorf("staging holds %q, want the one run's", dirs)
	}
	if n := len(be.srv.ui.IngestRuns()); n != 1 {
		t.Errorf("%d runs kept, want 1", n)
	}
}

// TestUIBulkRefused: zip entries that climb out or are absolute or links,
// paths outside the import root (also through a link), oversized uploads
// and zips, and forms without their token are refused before anything is
// staged or stored.
func TestUIBulkRefused(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{MaxBulkUploadBytes: 64 << 10, MaxBulkExpandBytes: 256 << 10})
	b := be.signedIn("writer")
	manifest := "source_identifier,title,file\nx1,X,a.txt\n"
	outside := t.TempDir()

	// a zip with a symbolic link entry
	var link bytes.Buffer
	zw := zip.NewWriter(&link)
	h := &zip.FileHeader{Name: "a.txt"}
	h.SetMode(os.ModeSymlink | 0o777)
	w, _ := zw.CreateHeader(h)
	io.WriteString(w, "/etc/passwd")
	zw.Close()
	big := make([]byte, 100<<10)
	rand.Read(big)
	bomb := zipOf(t, "a.txt", strings.Repeat("0", 300<<10))

	for _, c := range []struct {
		name   string
		zip    []byte
		status int
		says   string
	}{
		{"zip slip", zipOf(t, "a.txt", "A", "../evil.txt", "evil"), 400, "climbs out"},
		{"zip slip deeper", zipOf(t, "d/../../evil.txt", "evil"), 400, "climbs out"},
		{"absolute entry", zipOf(t, "/tmp/evil.txt", "evil"), 400, "absolute path"},
		{"link entry", link.Bytes(), 400, "symbolic link"},
		{"not a zip", []byte("plain text, not a zip"), 400, "not a zip"},
		{"oversized upload", zipOf(t, "a.txt", string(big)), 413, "larger than"},
		{"zip bomb", bomb, 413, "unpacks to more"},
	} {
		b.get("/bulk")
		p := b.upload(manifest, c.zip, "")
		if p.Status != c.status {
			t.Errorf("%s: %d, want %d; %.500s", c.name, p.Status, c.status, p.Body)
		}
		wantIn(t, p.Body, c.says)
	}
	if evil, _ := filepath.Glob(filepath.Join(be.staging, "*", "evil.txt")); len(evil) > 0 {
		t.Errorf("the zip slip wrote %s beside the runs", evil)
	}

	// server paths
	os.WriteFile(filepath.Join(outside, "a.txt"), []byte("A"), 0o644)
	os.Symlink(outside, filepath.Join(be.root, "escape"))
	os.Mkdir(filepath.Join(be.root, "books"), 0o755)
	os.WriteFile(filepath.Join(be.root, "books", "a.txt"), []byte("A"), 0o644)
	for _, c := range []struct {
		name, path, says string
	}{
		{"outside the root", outside, "not inside an import root"},
		{"climbing out", be.root + "/books/../..", "not inside an import root"},
		{"relative", "books", "absolute path"},
		{"link out of the root", filepath.Join(be.root, "escape"), "symbolic link"},
		{"missing", filepath.Join(be.root, "nothere"), "cannot be read"},
	} {
		b.get("/bulk")
		p := b.upload(manifest, nil, c.path)
		if p.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400; %.500s", c.name, p.Status, p.Body)
		}
		wantIn(t, p.Body, c.says)
	}
	b.get("/bulk")
	if p := b.upload(manifest, zipOf(t, "a.txt", "A"), filepath.Join(be.root, "books")); p.Status != http.StatusBadRequest {
		t.Errorf("a zip and a path: %d, want 400", p.Status)
	}

	// forms without their token
	b.get("/bulk")
	p := b.postMultipart("/bulk", url.Values{"csrf": {"forged"}}, map[string]map[string][]byte{"manifest": {"m.csv": []byte(manifest)}})
	if p.Status != http.StatusForbidden {
		t.Errorf("forged token: %d, want 403", p.Status)
	}
	p = b.postMultipart("/bulk", url.Values{"csrf": {""}}, map[string]map[string][]byte{"manifest": {"m.csv": []byte(manifest)}})
	if p.Status != http.StatusForbidden {
		t.Errorf("no token: %d, want 403", p.Status)
	}
	be.wantNothingStaged()
	be.wantNotStored("csv:x1")
	if n := len(be.srv.ui.IngestRuns()); n != 0 {
		t.Errorf("%d runs kept, want none", n)
	}

	// the good path works
	b.get("/bulk")
	run := runOf(t, b.upload(manifest, nil, filepath.Join(be.root, "books")))
	wantIn(t, b.get(run).Body, `<dd id="bulk-new">1</dd>`, `<dd id="bulk-failed">0</dd>`, "Files from the server folder")
	// discarding it removes its staged manifest, never the server's files
	if p := b.post(run+"/cancel", nil); p.Status != http.StatusSeeOther {
		t.Errorf("discard: %d", p.Status)
	}
	be.wantNothingStaged()
	if _, err := os.Stat(filepath.Join(be.root, "books", "a.txt")); err != nil {
		t.Errorf("the import root's file: %v", err)
	}
	wantIn(t, b.get(run).Body, "Cancelled")

	// a link put in the folder's place after the preview leads nowhere
	b.get("/bulk")
	run = runOf(t, b.upload(manifest, nil, filepath.Join(be.root, "books")))
	if err := os.Rename(filepath.Join(be.root, "books"), filepath.Join(be.root, "books.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(be.root, "books")); err != nil {
		t.Fatal(err)
	}
	b.get(run)
	if p := b.post(run+"/start", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("start: %d", p.Status)
	}
	if got := b.waitDone(run); got.State != "failed" || got.Stored != 0 || !strings.Contains(got.Error, "symbolic link") {
		t.Errorf("a run whose folder became a link out of the root: %+v", got)
	}
	be.wantNotStored("csv:x1")
}

// TestUIBulkSignedOut: the form sends a signed-out browser to sign in; an
// unknown run is 404.
func TestUIBulkSignedOut(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	b := newVisitor(t, be.testEnv)
	p := b.get("/bulk")
	if p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/login?next=%2Fbulk" {
		t.Errorf("signed out GET /bulk: %d to %q", p.Status, p.Header.Get("Location"))
	}
	if p := b.get("/bulk/abcdef"); p.Status != http.StatusSeeOther {
		t.Errorf("signed out GET /bulk/abcdef: %d, want 303", p.Status)
	}
	w := be.signedIn("writer")
	if p := w.get("/bulk/abcdef"); p.Status != http.StatusNotFound {
		t.Errorf("unknown run: %d, want 404", p.Status)
	}
	p = w.get("/bulk")
	wantIn(t, p.Body, `enctype="multipart/form-data"`, `name="manifest"`, `name="zip"`, `name="path"`, be.root)
}

// TestUIBulkStreamsBody: the upload streams to the staging directory
// without holding the memory budget of parsed bodies, so an upload of
// unknown length far above MaxBodyBytes is taken (with an API token, as a
// script would send it).
func TestUIBulkStreamsBody(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{MaxBodyBytes: 4 << 10, MaxParseBytes: 4 << 10, ParseWait: time.Millisecond})
	big := make([]byte, 64<<10)
	rand.Read(big)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("manifest", "m.csv")
	io.WriteString(w, "source_identifier,title,file\nbig,Big,big.bin\n")
	w, _ = mw.CreateFormFile("zip", "f.zip")
	w.Write(zipOf(t, "big.bin", string(big)))
	mw.Close()
	r := be.do("POST", "/bulk", unknownLength{&body}, as(be.writer, "Content-Type", mw.FormDataContentType())...)
	if r.Status != http.StatusSeeOther || !runPath.MatchString(r.Header.Get("Location")) {
		t.Fatalf("chunked upload: %d %s %.500s", r.Status, r.Header.Get("Location"), r.Body)
	}
}

// TestUIBulkPreviewsBounded: a user keeps at most MaxBulkPreviewsPerUser
// previews staged; older ones are discarded with their files.
func TestUIBulkPreviewsBounded(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	b := be.signedIn("writer")
	keep := be.srv.opts.MaxBulkPreviewsPerUser
	var runs []string
	for i := 0; i < keep+2; i++ {
		b.get("/bulk")
		runs = append(runs, runOf(t, b.upload("title\nW\n", nil, "")))
	}
	if dirs := be.staged(); len(dirs) != keep {
		t.Errorf("%d runs staged, want %d", len(dirs), keep)
	}
	wantIn(t, b.get(runs[0]).Body, "Cancelled")
	if p := b.post(runs[1]+"/start", nil); p.Status != http.StatusConflict {
		t.Errorf("starting a discarded preview: %d, want 409", p.Status)
	}
	wantIn(t, b.get(runs[2]).Body, `<dd id="bulk-new">1</dd>`)
}

// TestUIBulkCheckInBackground: a manifest whose check outlasts the
// upload's wait is checked on in the background: the browser goes to the
// run's page at once, which becomes the preview when the check is done;
// a manifest found unreadable there says why on its page, and its staged
// files go.
func TestUIBulkCheckInBackground(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	be.srv.ui.SetBulkPace(-1, 0) // never wait: every check goes on in the background
	b := be.signedIn("writer")
	waitChecked := func(run string) bulkProgressJSON {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			status, p := b.progress(run)
			if status != http.StatusOK {
				t.Fatalf("progress: %d", status)
			}
			if p.State != "checking" {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("the check has not ended: %+v", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	run := runOf(t, b.upload("source_identifier,title\na,A\nb,B\n", nil, ""))
	if p := waitChecked(run); p.State != "preview" || p.Done || p.Total != 2 {
		t.Errorf("after the check: %+v", p)
	}
	wantIn(t, b.get(run).Body, `<dd id="bulk-new">2</dd>`)

	b.get("/bulk")
	bad := runOf(t, b.upload("title,file\n\"unclosed,a.txt\nx\"y,z\n", nil, ""))
	if p := waitChecked(bad); p.State != "invalid" || !p.Done || !strings.Contains(p.Error, "not valid CSV") {
		t.Errorf("after the check of a bad manifest: %+v", p)
	}
	p := b.get(bad)
	if p.Status != http.StatusOK {
		t.Errorf("the bad manifest's page: %d", p.Status)
	}
	wantIn(t, p.Body, "The manifest cannot be read", "not valid CSV")
	if strings.Contains(p.Body, `/start"`) {
		t.Error("a manifest that cannot be read offers to start")
	}
	if dirs := be.staged(); len(dirs) != 1 {
		t.Errorf("staged %q, want the good run's only", dirs)
	}
	for _, v := range be.srv.ui.IngestRuns() {
		if v.ID == strings.TrimPrefix(bad, "/bulk/") && v.State != "failed" {
			t.Errorf("the dashboard lists the bad manifest as %q, want failed", v.State)
		}
	}
}

// TestUIBulkCancel: a running ingest stops at the stop button; the works
// stored so far stay, the rest is not stored, and the run says cancelled.
func TestUIBulkCancel(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	be.srv.ui.SetBulkPace(0, 20) // works a second: the run lasts long enough to be stopped
	b := be.signedIn("writer")
	var m strings.Builder
	m.WriteString("source_identifier,title,parent\n")
	for i := range 2000 {
		fmt.Fprintf(&m, "w%d,Work %d,%s\n", i, i, be.C)
	}
	run := runOf(t, b.upload(m.String(), nil, ""))
	b.get(run)
	if p := b.post(run+"/start", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("start: %d", p.Status)
	}
	p := b.get(run)
	wantIn(t, p.Body, `action="`+run+`/cancel"`, "Stop the ingest")
	if p := b.post(run+"/cancel", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("stop: %d", p.Status)
	}
	got := b.waitDone(run)
	if got.State != "cancelled" || got.Stored >= 2000 || got.Failed != 0 {
		t.Errorf("after the stop: %+v", got)
	}
	found, err := be.repo.FindSources(context.Background(), []string{"csv:w1999"})
	if err != nil || len(found) != 0 {
		t.Errorf("the last work was stored: %v %v", found, err)
	}
	wantIn(t, b.get(run).Body, "Cancelled")
	if p := b.post(run+"/cancel", nil); p.Status != http.StatusConflict {
		t.Errorf("stopping a stopped run: %d, want 409", p.Status)
	}
}

// TestUIBulkChecksBounded: a user with bulkMaxRunning manifests being
// checked is refused another (429) until one is done; others are not.
func TestUIBulkChecksBounded(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	writer := be.callerOf(be.writer)
	// runs whose check has not ended, as a large manifest's would be
	if err := be.srv.ui.HoldChecks(writer.User, bulkMaxRunning); err != nil {
		t.Fatal(err)
	}
	b := be.signedIn("writer")
	p := b.upload("title\nW\n", nil, "")
	if p.Status != http.StatusTooManyRequests {
		t.Errorf("another upload while %d checks run: %d, want 429", bulkMaxRunning, p.Status)
	}
	wantIn(t, p.Body, "being checked")
	be.wantNothingStaged()
	o := be.signedIn("other")
	runOf(t, o.upload("title\nW\n", nil, ""))
}

// TestUIBulkCollection: every work of a manifest goes into the collection
// the form names (where the writer may deposit, though her rows name
// none); a collection she may not see is refused before anything is
// staged.
func TestUIBulkCollection(t *testing.T) {
	be := newBulkEnv(t, "sqlite", Options{})
	b := be.signedIn("writer")
	manifest := "source_identifier,title\nc1,One\nc2,Two\n"
	p := b.postMultipart("/bulk", url.Values{"collection": {string(be.C)}}, map[string]map[string][]byte{"manifest": {"m.csv": []byte(manifest)}})
	run := runOf(t, p)
	wantIn(t, b.get(run).Body, `<dd id="bulk-new">2</dd>`, "Works: 2; collections: 1", "Every work goes into the collection", string(be.C))
	if p := b.post(run+"/start", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("start: %d", p.Status)
	}
	if got := b.waitDone(run); got.State != "done" || got.Stored != 2 {
		t.Fatalf("the run: %+v", got)
	}
	members := listed(be.do("GET", resPath(be.C, "/members?limit=10"), nil).want(t, http.StatusOK))
	if len(members) != 2 {
		t.Errorf("C has %d members, want the 2 works", len(members))
	}
	b.get("/bulk")
	p = b.postMultipart("/bulk", url.Values{"collection": {"nosuchcollection"}}, map[string]map[string][]byte{"manifest": {"m.csv": []byte(manifest)}})
	if p.Status != http.StatusBadRequest {
		t.Errorf("an unknown collection: %d, want 400", p.Status)
	}
	wantIn(t, p.Body, "no collection")
	if dirs := be.staged(); len(dirs) != 0 {
		t.Errorf("staged %q", dirs)
	}
}
