package http

// Tests of bulk ingest against a remote server: the Client drives the real
// ingest pipeline against a real Server (SQLite, local blob store) over
// loopback, and the three endpoints it uses are checked on their own.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
)

// The Client is what ingest.Run needs.
var (
	_ ingest.Repository   = (*Client)(nil)
	_ shelfmark.BlobStore = (*Client)(nil)
)

// newTestClient returns a Client of e's server.
func newTestClient(t *testing.T, e *testEnv, opts ClientOptions) *Client {
	t.Helper()
	if opts.HTTPClient == nil {
		opts.HTTPClient = e.ts.Client()
	}
	if opts.Token == "" {
		opts.Token = e.admin
	}
	c, err := NewClient(e.ts.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// remoteTree writes a directory tree of three works and returns its root
// and the bytes of every file by its slash path.
func remoteTree(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	root := t.TempDir()
	files := map[string][]byte{
		"books/atlas/page_1.txt":  []byte("first page"),
		"books/atlas/page_2.txt":  []byte("second page"),
		"books/atlas/page_10.txt": []byte("tenth page, after the second"),
		"books/atlas/metadata.json": []byte(`{"dc:title": [{"@value": "Atlas of the Rhine", "@language": "en"}, {"@value": "Rheinatlas", "@language": "de"}],
			"dcterms:date": {"@value": "1899-05-01", "@type": "http://www.w3.org/2001/XMLSchema#date"},
			"dcterms:subject": {"@id": "http://id.loc.gov/authorities/subjects/sh85113993"}}`),
		"books/map/sheet.bin":    bytes.Repeat([]byte{0, 1, 2, 0xff}, 5000),
		"books/map/empty.dat":    {},
		"books/map/metadata.ttl": []byte("PREFIX dc: <http://purl.org/dc/elements/1.1/>\n<> dc:title \"A map\" ; dc:creator \"Someone\" .\n"),
		"letters/note.txt":       []byte("a note"),
	}
	for p, b := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, files
}

// treeKeys reads the directory tree at root and returns the source key of
// each of its works by the key an earlier version gave it ("dir:books/b1").
func treeKeys(t *testing.T, root string) map[string]string {
	t.Helper()
	src, err := ingest.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := map[string]string{}
	for {
		it, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[it.FormerKey] = it.Key
	}
}

// describeWork renders a stored work, its file sets, files and bytes
// without ids, so that two stores can be compared.
func (e *testEnv) describeWork(t *testing.T, id shelfmark.ID) string {
	t.Helper()
	var b strings.Builder
	w := e.get(id)
	fmt.Fprintf(&b, "%s %s member of %d metadata %s\n", w.Kind, w.Visibility, len(w.MemberOf), w.Metadata)
	for _, fs := range e.children(t, id) {
		r := e.get(fs.ID)
		fmt.Fprintf(&b, "  %d %s %s parent ok %v metadata %s\n", fs.Position, r.Kind, r.Visibility, r.Parent == id, r.Metadata)
		for _, f := range e.children(t, fs.ID) {
			fr := e.get(f.ID)
			body := e.do("GET", "/api/v1/resources/"+string(f.ID)+"/content", nil).want(t, http.StatusOK).Body
			sum := sha256.Sum256(body)
			fmt.Fprintf(&b, "    %s %+v parent ok %v bytes %d %x\n", fr.Kind, *fr.File, fr.Parent == fs.ID, len(body), sum)
		}
	}
	return b.String()
}

// TestRemoteIngest: ingest.Run with the Client stores a directory tree on
// a server as a local ingest stores it (works, metadata, file sets in
// natural order, files, bytes); a second run skips every item and adds
// nothing.
func TestRemoteIngest(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	local := newEnv(t, Options{})
	root, files := remoteTree(t)
	coll := e.create("/api/v1/collections", `{}`)
	localColl := local.create("/api/v1/collections", `{}`)
	c := newTestClient(t, e, ClientOptions{})

	run := func(repo ingest.Repository, blobs shelfmark.BlobStore, coll shelfmark.ID) *ingest.Stats {
		t.Helper()
		src, err := ingest.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		st, err := ingest.Run(ctx, repo, blobs, src, ingest.Options{Collection: coll, Workers: 3, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := run(c, c, coll.ID)
	if st.Stored != 3 || st.Skipped != 0 || st.Failed != 0 || st.Files != 6 {
		t.Fatalf("first run: %+v", st)
	}
	var want int64
	for p, b := range files {
		if !strings.HasSuffix(p, "metadata.json") && !strings.HasSuffix(p, "metadata.ttl") {
			want += int64(len(b))
		}
	}
	if st.Bytes != want {
		t.Errorf("%d bytes stored, want %d", st.Bytes, want)
	}
	if lst := run(local.repo, local.srv.opts.Blobs, localColl.ID); lst.Stored != 3 {
		t.Fatalf("local run: %+v", lst)
	}

	key := treeKeys(t, root)
	keys := []string{key["dir:books/atlas"], key["dir:books/map"], key["dir:letters"]}
	found, err := e.repo.FindSources(ctx, keys)
	if err != nil || len(found) != 3 {
		t.Fatalf("sources %v, %v", found, err)
	}
	localFound, err := local.repo.FindSources(ctx, keys)
	if err != nil || len(localFound) != 3 {
		t.Fatalf("local sources %v, %v", localFound, err)
	}
	for _, k := range keys {
		remote, loc := e.describeWork(t, found[k]), local.describeWork(t, localFound[k])
		if remote != loc {
			t.Errorf("%s stored remotely as\n%s\nlocally as\n%s", k, remote, loc)
		}
		if w := e.get(found[k]); len(w.MemberOf) != 1 || w.MemberOf[0] != coll.ID {
			t.Errorf("%s is a member of %v, want %s", k, w.MemberOf, coll.ID)
		}
	}
	// the order is natural, and the pages hold their bytes
	atlas := e.children(t, found[key["dir:books/atlas"]])
	for i, name := range []string{"page_1.txt", "page_2.txt", "page_10.txt"} {
		if atlas[i].Position != i+1 {
			t.Errorf("page %d at position %d", i+1, atlas[i].Position)
		}
		f := e.children(t, atlas[i].ID)
		if len(f) != 1 {
			t.Fatalf("page %d has %d files", i+1, len(f))
		}
		got := e.do("GET", "/api/v1/resources/"+string(f[0].ID)+"/content", nil).want(t, http.StatusOK).Body
		if fr := e.get(f[0].ID); fr.File.Name != name || !bytes.Equal(got, files["books/atlas/"+name]) {
			t.Errorf("page %d: %s holds %q", i+1, fr.File.Name, got)
		}
	}
	if !strings.Contains(e.describeWork(t, found[key["dir:books/atlas"]]), `"Rheinatlas"`) {
		t.Errorf("the metadata lost a value:\n%s", e.describeWork(t, found[key["dir:books/atlas"]]))
	}
	var members page
	e.do("GET", "/api/v1/resources/"+string(coll.ID)+"/members", nil).want(t, http.StatusOK).json(t, &members)
	if len(members.Items) != 3 {
		t.Errorf("the collection has %d members", len(members.Items))
	}

	before := e.counts()
	st = run(c, c, coll.ID)
	if st.Stored != 0 || st.Skipped != 3 || st.Failed != 0 || st.Files != 0 || st.Bytes != 0 {
		t.Errorf("second run: %+v", st)
	}
	e.wantCounts(before)
}

// sliceSource is an ingest.Source over items given in a test; an item with
// a key starting "bad:" is reported as an ItemError.
type sliceSource struct{ items []*ingest.Item }

func (s *sliceSource) Next(ctx context.Context) (*ingest.Item, error) {
	if len(s.items) == 0 {
		return nil, io.EOF
	}
	it := s.items[0]
	s.items = s.items[1:]
	if strings.HasPrefix(it.Key, "bad:") {
		return nil, &ingest.ItemError{Key: it.Key, Reason: "the source says it is bad"}
	}
	return it, nil
}

func (s *sliceSource) Close() error { return nil }

// bytesFile is a FileRef whose bytes are b.
func bytesFile(name string, b []byte) ingest.FileRef {
	return ingest.FileRef{Name: name, Size: int64(len(b)), MediaType: "text/plain",
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestRemoteIngestBadItems: a file whose stated SHA-256 is wrong, a file
// over the server's upload limit, an item naming a collection that does not
// exist and an item the source refuses each fail alone with their reason;
// refused bytes are not kept; the good items are stored; a re-run stores
// nothing more.
func TestRemoteIngestBadItems(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{MaxUploadBytes: 1000})
	c := newTestClient(t, e, ClientOptions{})
	title := []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("t")}}
	wrong := bytesFile("wrong.txt", []byte("these bytes are not the ones the manifest names"))
	wrong.SHA256 = hexSHA256([]byte("the bytes the manifest names"))
	missing := e.repo.IDs().Encode(shelfmark.MaxKey) // a valid id no resource has
	items := func() []*ingest.Item {
		return []*ingest.Item{
			{Key: "t:good", Metadata: title, Files: []ingest.FileRef{bytesFile("a.txt", []byte("good a")), bytesFile("b.txt", []byte("good b"))}},
			{Key: "t:wrong-sha", Metadata: title, Files: []ingest.FileRef{bytesFile("ok.txt", []byte("fine")), wrong}},
			{Key: "t:too-large", Metadata: title, Files: []ingest.FileRef{bytesFile("big.bin", bytes.Repeat([]byte("b"), 2000))}},
			{Key: "t:no-collection", Metadata: title, Collection: string(missing), Files: []ingest.FileRef{bytesFile("c.txt", []byte("orphan bytes"))}},
			{Key: "bad:source", Metadata: title},
			{Key: "t:good2", Metadata: title},
		}
	}
	st, err := ingest.Run(ctx, c, c, &sliceSource{items()}, ingest.Options{Workers: 2, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 2 || st.Failed != 4 || st.Skipped != 0 {
		t.Fatalf("stats %+v", st)
	}
	reasons := map[string]string{}
	for _, f := range st.Failures {
		reasons[f.Key] = f.Reason
	}
	for key, want := range map[string]string{
		// (the reason is the pipeline's; it names the file and the digest)
		"t:wrong-sha":     "wrong.txt: ",
		"t:too-large":     "big.bin: The content is larger than the limit of 1000 bytes",
		"t:no-collection": "memberOf: no resource has the id " + string(missing),
		"bad:source":      "the source says it is bad",
	} {
		if !strings.Contains(reasons[key], want) {
			t.Errorf("%s failed with %q, want it to say %q", key, reasons[key], want)
		}
	}
	// the refused bytes were not kept
	blobs := e.srv.opts.Blobs
	if !strings.Contains(reasons["t:wrong-sha"], "sha-256") {
		t.Errorf("t:wrong-sha failed with %q, which does not name the digest", reasons["t:wrong-sha"])
	}
	for _, b := range [][]byte{[]byte("these bytes are not the ones the manifest names"), bytes.Repeat([]byte("b"), 2000)} {
		if _, err := blobs.Open(ctx, hexSHA256(b)); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Errorf("refused bytes were kept: %v", err)
		}
	}
	found, err := e.repo.FindSources(ctx, []string{"t:good", "t:wrong-sha", "t:too-large", "t:no-collection", "t:good2"})
	if err != nil || len(found) != 2 || found["t:good"] == "" || found["t:good2"] == "" {
		t.Fatalf("stored sources %v, %v", found, err)
	}
	kids := e.children(t, found["t:good"])
	if len(kids) != 2 || kids[0].Position != 1 || kids[1].Position != 2 {
		t.Fatalf("t:good children %+v", kids)
	}

	before := e.counts()
	st, err = ingest.Run(ctx, c, c, &sliceSource{items()}, ingest.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 0 || st.Skipped != 2 || st.Failed != 4 {
		t.Errorf("second run: %+v", st)
	}
	e.wantCounts(before)
}

// groupsResponse is the answer of POST /api/v1/groups.
type groupsResponse struct {
	Results []struct {
		Status int                     `json:"status"`
		ID     shelfmark.ID            `json:"id"`
		IDs    map[string]shelfmark.ID `json:"ids"`
		Error  *apiError               `json:"error"`
	} `json:"results"`
}

// postBlob stores b with POST /api/v1/blobs and returns its SHA-256.
func (e *testEnv) postBlob(t *testing.T, b []byte) string {
	t.Helper()
	var ans struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	e.do("POST", "/api/v1/blobs", b).want(t, http.StatusCreated).json(t, &ans)
	if ans.SHA256 != hexSHA256(b) || ans.Size != int64(len(b)) {
		t.Fatalf("blob answer %+v for %d bytes", ans, len(b))
	}
	return ans.SHA256
}

// TestGroupsEndpoint: each group of POST /api/v1/groups is checked and
// stored on its own; the server mints every id and maps refs to them; bad
// groups fail with 400 (or 409 for a stated size) and store nothing; a
// source key stored before is 409 with the existing id.
func TestGroupsEndpoint(t *testing.T) {
	e := newEnv(t, Options{})
	page := []byte("page bytes")
	sha := e.postBlob(t, page)
	coll := e.create("/api/v1/collections", `{}`)
	file := func(sha string, size int) string {
		return fmt.Sprintf(`{"name": "p.txt", "mediaType": "text/plain", "sha256": %q, "size": %d}`, sha, size)
	}
	group := func(key, parentOfFile, kind, fileJSON string, order string) string {
		return `{"sourceKey": "` + key + `", "resources": [
			{"ref": "w", "kind": "` + kind + `", "metadata": {"dc:title": "W"}, "memberOf": ["` + string(coll.ID) + `"]},
			{"ref": "fs1", "kind": "fileset", "parent": "w", "metadata": {"dc:title": "p.txt"}},
			{"ref": "f1", "kind": "file", "parent": "` + parentOfFile + `", "file": ` + fileJSON + `}],
			"order": ` + order + `}`
	}
	cases := []struct {
		name, group string
		status      int
		code, says  string
	}{
		{"good", group("k:good", "fs1", "work", file(sha, len(page)), `["fs1"]`), 201, "", ""},
		{"forged parent ref", group("k:forged", "fs9", "work", file(sha, len(page)), `["fs1"]`), 400, shelfmark.EINVALID, `parent "fs9" is neither a ref of this group nor a resource id`},
		{"unknown kind", group("k:kind", "fs1", "book", file(sha, len(page)), `["fs1"]`), 400, shelfmark.EINVALID, `kind "book" is not one of`},
		{"missing blob", group("k:blob", "fs1", "work", file(hexSHA256([]byte("never sent")), 10), `["fs1"]`), 400, shelfmark.EINVALID, "POST them to /api/v1/blobs first"},
		{"wrong size", group("k:size", "fs1", "work", file(sha, len(page)+1), `["fs1"]`), 409, shelfmark.EDIGESTMISMATCH, fmt.Sprintf("are %d bytes long, not %d as stated", len(page), len(page)+1)},
		{"bad sha", group("k:sha", "fs1", "work", file("xyz", 1), `["fs1"]`), 400, shelfmark.EINVALID, "is not a SHA-256"},
		{"order names an unknown ref", group("k:order", "fs1", "work", file(sha, len(page)), `["fs1", "fs2"]`), 400, shelfmark.EINVALID, `order: "fs2" is not a ref of this group`},
		{"order names a grandchild", group("k:order2", "fs1", "work", file(sha, len(page)), `["f1"]`), 400, shelfmark.EINVALID, `order: "f1" is not a child`},
		{"parent later in the group", `{"resources": [{"ref": "fs", "kind": "fileset", "parent": "w"}, {"ref": "w", "kind": "work"}]}`, 400, shelfmark.EINVALID, "comes later in the group"},
		{"ref like an id", `{"resources": [{"ref": "` + string(e.repo.IDs().Encode(5)) + `", "kind": "work"}]}`, 400, shelfmark.EINVALID, "has the form of a resource id"},
		{"duplicate ref", `{"resources": [{"ref": "w", "kind": "work"}, {"ref": "w", "kind": "fileset", "parent": "w"}]}`, 400, shelfmark.EINVALID, "named twice"},
		{"client id", `{"resources": [{"ref": "w", "id": "` + string(e.repo.IDs().Encode(5)) + `", "kind": "work"}]}`, 400, shelfmark.EINVALID, `unknown field "id"`},
		{"file without bytes", `{"resources": [{"ref": "w", "kind": "work"}, {"ref": "fs", "kind": "fileset", "parent": "w"}, {"ref": "f", "kind": "file", "parent": "fs"}]}`, 400, shelfmark.EINVALID, "a file needs"},
		{"bad metadata", `{"resources": [{"ref": "w", "kind": "work", "metadata": {"dc:title": 5}}]}`, 400, shelfmark.EINVALID, `resource 1 (ref "w")`},
		{"missing parent id", `{"resources": [{"ref": "fs", "kind": "fileset", "parent": "` + string(e.repo.IDs().Encode(shelfmark.MaxKey)) + `"}]}`, 400, shelfmark.EINVALID, "parent"},
		{"good without key", `{"resources": [{"ref": "w", "kind": "work"}]}`, 201, "", ""},
		{"collection and member", `{"resources": [{"ref": "c", "kind": "collection"}, {"ref": "w", "kind": "work", "memberOf": ["c"], "visibility": "restricted", "embargo": "2100-01-01"}]}`, 201, "", ""},
	}
	var body strings.Builder
	body.WriteString(`{"groups": [`)
	for i, c := range cases {
		if i > 0 {
			body.WriteString(",")
		}
		body.WriteString(c.group)
	}
	body.WriteString("]}")
	before := e.counts()
	r := e.do("POST", "/api/v1/groups", body.String(), "Content-Type", "application/json").want(t, http.StatusOK)
	var ans groupsResponse
	r.json(t, &ans)
	if len(ans.Results) != len(cases) {
		t.Fatalf("%d results for %d groups", len(ans.Results), len(cases))
	}
	for i, c := range cases {
		res := ans.Results[i]
		if res.Status != c.status {
			t.Errorf("%s: status %d, want %d: %+v", c.name, res.Status, c.status, res.Error)
			continue
		}
		if c.status != 201 {
			if res.Error == nil || res.Error.Code != c.code || !strings.Contains(res.Error.Message, c.says) {
				t.Errorf("%s: error %+v, want %s saying %q", c.name, res.Error, c.code, c.says)
			}
			if res.ID != "" || res.IDs != nil {
				t.Errorf("%s: failed, yet ids %s %v", c.name, res.ID, res.IDs)
			}
		}
	}
	// the good groups, and nothing else, were stored
	after := e.counts()
	if after["resources"] != before["resources"]+6 || after["files"] != before["files"]+1 || after["memberships"] != before["memberships"]+2 {
		t.Errorf("rows before %v, after %v", before, after)
	}
	good := ans.Results[0]
	if good.ID != good.IDs["w"] || len(good.IDs) != 3 {
		t.Fatalf("good: id %s, ids %v", good.ID, good.IDs)
	}
	for ref, id := range good.IDs {
		if !e.repo.IDs().Valid(id) || id == shelfmark.ID(ref) {
			t.Errorf("ref %s got the id %q", ref, id)
		}
	}
	w := e.get(good.IDs["w"])
	fs := e.get(good.IDs["fs1"])
	f := e.get(good.IDs["f1"])
	if w.Kind != "work" || len(w.MemberOf) != 1 || w.MemberOf[0] != coll.ID || fs.Parent != w.ID || fs.Position != 1 || f.Parent != fs.ID || f.File.Size != int64(len(page)) || f.File.Digests["sha-256"] != sha || f.File.Use != "original" {
		t.Errorf("stored: %+v\n%+v\n%+v", w, fs, f)
	}
	if got := e.do("GET", "/api/v1/resources/"+string(f.ID)+"/content", nil).want(t, http.StatusOK).Body; !bytes.Equal(got, page) {
		t.Errorf("content %q", got)
	}
	// a membership of a collection made in the same group
	cm := ans.Results[len(cases)-1]
	if m := e.get(cm.IDs["w"]); cm.ID != cm.IDs["c"] || len(m.MemberOf) != 1 || m.MemberOf[0] != cm.IDs["c"] || m.Visibility != "authenticated" || m.Embargo == nil || !strings.HasPrefix(*m.Embargo, "2100-01-01") {
		t.Errorf("collection and member: %+v, member %+v", cm, m)
	}

	// the same source key again: 409 naming the stored root, nothing written
	r = e.do("POST", "/api/v1/groups", `{"groups": [`+cases[0].group+`]}`, "Content-Type", "application/json").want(t, http.StatusOK)
	r.wantNoDataWrites(t)
	ans = groupsResponse{}
	r.json(t, &ans)
	if res := ans.Results[0]; res.Status != 409 || res.ID != good.ID || res.Error == nil || res.Error.Code != shelfmark.ECONFLICT || res.Error.Details["id"] != string(good.ID) {
		t.Errorf("again: %+v %+v", res, res.Error)
	}

	// whole-request errors
	e.do("POST", "/api/v1/groups", `{"groups": []}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/groups", `{"groups": [`+strings.Repeat(`{},`, 1000)+`{}]}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/groups", `{"groups": [`+cases[0].group+`]}`, "Content-Type", "text/plain").wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
	e.do("POST", "/api/v1/groups", `{"groups": [`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
}

// TestBlobsEndpoint: POST /api/v1/blobs stores bytes and names them by
// SHA-256; the client's digests are verified (a mismatch is 409 and keeps
// nothing); the upload limit holds.
func TestBlobsEndpoint(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{MaxUploadBytes: 1000})
	blobs := e.srv.opts.Blobs
	b := []byte("some bytes to keep")
	sum := sha256.Sum256(b)
	m5 := md5.Sum(b)
	var ans struct {
		SHA256  string            `json:"sha256"`
		Size    int64             `json:"size"`
		Digests map[string]string `json:"digests"`
	}
	e.do("POST", "/api/v1/blobs?digests=md5", b, "Content-Type", "image/tiff", "Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":").
		want(t, http.StatusCreated).json(t, &ans)
	if ans.SHA256 != hex.EncodeToString(sum[:]) || ans.Size != int64(len(b)) || ans.Digests["md5"] != hex.EncodeToString(m5[:]) || ans.Digests["sha-256"] != ans.SHA256 {
		t.Errorf("answer %+v", ans)
	}
	rc, err := blobs.Open(ctx, ans.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, b) {
		t.Errorf("stored %q", got)
	}
	// the same bytes again: stored once, same answer
	e.postBlob(t, b)
	// a wrong digest: 409, nothing kept
	other := []byte("bytes that do not match")
	r := e.do("POST", "/api/v1/blobs", other, "Content-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":")
	eb := r.wantError(t, http.StatusConflict, shelfmark.EDIGESTMISMATCH)
	if eb.Details["computed"] != hexSHA256(other) {
		t.Errorf("details %v", eb.Details)
	}
	r.wantNoDataWrites(t) // the quota is read before the body, nothing is written
	r = e.do("POST", "/api/v1/blobs", other, "Digest", "md5="+hex.EncodeToString(m5[:]))
	r.wantError(t, http.StatusConflict, shelfmark.EDIGESTMISMATCH)
	if _, err := blobs.Open(ctx, hexSHA256(other)); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("the bytes of a mismatch were kept: %v", err)
	}
	// malformed digest fields and ?digests=
	e.do("POST", "/api/v1/blobs", other, "Content-Digest", "sha-256=:nope").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/blobs?digests=crc32", other).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	// over the upload limit, with and without a length
	big := bytes.Repeat([]byte("x"), 1001)
	e.do("POST", "/api/v1/blobs", big).wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
	e.do("POST", "/api/v1/blobs", unknownLength{bytes.NewReader(big)}).wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
	if _, err := blobs.Open(ctx, hexSHA256(big)); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("the bytes over the limit were kept: %v", err)
	}
}

// TestSourcesLookup: POST /api/v1/sources/lookup answers the keys stored
// before and refuses empty or oversized lists.
func TestSourcesLookup(t *testing.T) {
	e := newEnv(t, Options{})
	var ans groupsResponse
	e.do("POST", "/api/v1/groups", `{"groups": [{"sourceKey": "k:1", "resources": [{"ref": "w", "kind": "work"}]}]}`, "Content-Type", "application/json").
		want(t, http.StatusOK).json(t, &ans)
	var found struct {
		Found map[string]shelfmark.ID `json:"found"`
	}
	r := e.do("POST", "/api/v1/sources/lookup", `{"keys": ["k:1", "k:2"]}`, "Content-Type", "application/json").want(t, http.StatusOK)
	r.wantNoWrites(t)
	r.json(t, &found)
	if len(found.Found) != 1 || found.Found["k:1"] != ans.Results[0].ID {
		t.Errorf("found %v, stored %+v", found.Found, ans.Results)
	}
	r = e.do("POST", "/api/v1/sources/lookup", `{"keys": ["k:3"]}`, "Content-Type", "application/json").want(t, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) != `{"found":{}}` {
		t.Errorf("nothing found: %s", r.Body)
	}
	e.do("POST", "/api/v1/sources/lookup", `{"keys": []}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/sources/lookup", `{"keys": [`+strings.Repeat(`"k",`, 1000)+`"k"]}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/sources/lookup", `{"keys": ["k"]}`).wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
	e.do("POST", "/api/v1/sources/lookup", `{"keys": "k"}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
}

// countingTransport counts the requests per path and fails the first
// failFirst of them without sending them.
type countingTransport struct {
	next      http.RoundTripper
	failFirst atomic.Int64
	requests  atomic.Int64
	groups    atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	if strings.HasSuffix(req.URL.Path, "/groups") {
		c.groups.Add(1)
	}
	if c.failFirst.Add(-1) >= 0 {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errors.New("connection reset (simulated)")
	}
	return c.next.RoundTrip(req)
}

// TestClient: the Client's puts verify digests and limits, its errors
// carry the server's codes and messages, lookups are sent once more when
// no answer came, and batches are split to fit the server's body limit.
func TestClient(t *testing.T) {
	ctx := context.Background()
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://host/", "http://", "http://h/?q=1"} {
		if _, err := NewClient(bad, ClientOptions{}); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
	e := newEnv(t, Options{MaxBodyBytes: 4000})
	tr := &countingTransport{next: e.ts.Client().Transport}
	c, err := NewClient(e.ts.URL+"/api/v1/", ClientOptions{HTTPClient: &http.Client{Transport: tr}, Token: e.admin})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}

	// puts: digests computed while sending, Expect verified by the server
	b := []byte("client bytes")
	s1, m5 := sha1.Sum(b), md5.Sum(b)
	blob, err := c.Put(ctx, bytes.NewReader(b), shelfmark.PutOptions{Compute: []shelfmark.DigestAlgorithm{shelfmark.MD5, shelfmark.SHA1},
		Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA1, Value: s1[:]}}, Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	if blob.Size != int64(len(b)) || blob.Digests[shelfmark.SHA256] != hexSHA256(b) || blob.Digests[shelfmark.MD5] != hex.EncodeToString(m5[:]) || blob.Digests[shelfmark.SHA1] != hex.EncodeToString(s1[:]) {
		t.Errorf("blob %+v", blob)
	}
	if err := c.Sync(ctx); err != nil {
		t.Error(err)
	}
	_, err = c.Put(ctx, strings.NewReader("other bytes"), shelfmark.PutOptions{Expect: []shelfmark.Digest{{Algorithm: shelfmark.MD5, Value: m5[:]}}})
	if shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH || !strings.Contains(shelfmark.ErrorMessage(err), "md5 digest of the received bytes") {
		t.Errorf("mismatch: %v", err)
	}
	_, err = c.Put(ctx, strings.NewReader("eleven byte"), shelfmark.PutOptions{MaxSize: 10})
	if shelfmark.ErrorCode(err) != shelfmark.ETOOLARGE {
		t.Errorf("over MaxSize: %v", err)
	}
	if _, err := e.srv.opts.Blobs.Open(ctx, hexSHA256([]byte("eleven byte"))); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("bytes over MaxSize kept: %v", err)
	}
	_, err = c.Put(ctx, iotestErrReader{}, shelfmark.PutOptions{})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("a failing reader: %v", err)
	}
	if _, err := c.Open(ctx, blob.Digests[shelfmark.SHA256]); shelfmark.ErrorCode(err) != shelfmark.EUNSUPPORTED {
		t.Errorf("Open: %v", err)
	}

	// placeholder ids are unique and never real ids
	ids, _ := c.MintIDs(ctx, 3)
	more, _ := c.MintIDs(ctx, 2)
	seen := map[shelfmark.ID]bool{}
	for _, id := range append(ids, more...) {
		if id.Valid() || seen[id] {
			t.Errorf("placeholder %q", id)
		}
		seen[id] = true
	}

	// a lookup that got no answer is sent once more, not twice
	tr.failFirst.Store(1)
	if _, err := c.FindSources(ctx, []string{"k"}); err != nil {
		t.Errorf("lookup after one failure: %v", err)
	}
	tr.failFirst.Store(2)
	_, err = c.FindSources(ctx, []string{"k"})
	if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(err.Error(), "No answer from the server") {
		t.Errorf("lookup after two failures: %v", err)
	}
	tr.failFirst.Store(0)

	// groups: a batch over the server's 4,000-byte body limit is split; a
	// group too large alone fails alone
	meta := func(n int) []shelfmark.Statement {
		return []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(strings.Repeat("t", n))}}
	}
	var gs []*shelfmark.NewGroup
	for i := range 6 {
		id, _ := c.MintIDs(ctx, 1)
		n := 900
		if i == 3 {
			n = 5000
		}
		gs = append(gs, &shelfmark.NewGroup{SourceKey: fmt.Sprintf("split:%d", i), Resources: []*shelfmark.NewResource{{ID: id[0], Kind: shelfmark.KindWork, Metadata: meta(n)}}})
	}
	ext := &shelfmark.NewGroup{Resources: []*shelfmark.NewResource{{ID: e.repo.IDs().Encode(7), Kind: shelfmark.KindWork}}}
	gs = append(gs, ext)
	tr.groups.Store(0)
	roots, errs := c.CreateGroups(ctx, gs)
	for i := range 6 {
		if i == 3 {
			if shelfmark.ErrorCode(errs[i]) != shelfmark.ETOOLARGE {
				t.Errorf("the large group: %v", errs[i])
			}
			continue
		}
		if errs[i] != nil || roots[i] == nil || roots[i].Kind != shelfmark.KindWork {
			t.Errorf("group %d: %v %+v", i, errs[i], roots[i])
			continue
		}
		if got := e.get(roots[i].ID); !strings.Contains(string(got.Metadata), strings.Repeat("t", 900)) {
			t.Errorf("group %d stored as %s", i, got.Metadata)
		}
	}
	if shelfmark.ErrorCode(errs[6]) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(errs[6]), "the server mints the ids") {
		t.Errorf("a group with a real id: %v", errs[6])
	}
	if n := tr.groups.Load(); n < 3 {
		t.Errorf("%d requests to /groups: the batch was not split", n)
	}
	// again: every group is a conflict naming the stored root
	roots2, errs := c.CreateGroups(ctx, gs[:3])
	for i, err := range errs {
		var se *shelfmark.Error
		if !errors.As(err, &se) || se.Code != shelfmark.ECONFLICT || se.Details["id"] != string(roots[i].ID) || roots2[i] != nil {
			t.Errorf("group %d again: %v", i, err)
		}
	}

	// a server that is gone: clear errors, code unavailable
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	gc, err := NewClient(gone.URL, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := gc.Ready(ctx); err == nil || !strings.Contains(err.Error(), "is not ready") {
		t.Errorf("Ready of a closed server: %v", err)
	}
	_, err = gc.Put(ctx, strings.NewReader("x"), shelfmark.PutOptions{})
	if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(shelfmark.ErrorMessage(err), gone.URL) {
		t.Errorf("Put to a closed server: %v", err)
	}
	_, errs = gc.CreateGroups(ctx, gs[:1])
	if shelfmark.ErrorCode(errs[0]) != shelfmark.EUNAVAILABLE {
		t.Errorf("CreateGroups on a closed server: %v", errs[0])
	}
	// a server without the endpoints (or a proxy): its answer is the reason
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer old.Close()
	oc, _ := NewClient(old.URL, ClientOptions{})
	_, err = oc.FindSources(ctx, []string{"k"})
	if shelfmark.ErrorCode(err) != shelfmark.EINTERNAL || !strings.Contains(shelfmark.ErrorMessage(err), "502 Bad Gateway") {
		t.Errorf("a proxy's error: %v", err)
	}
}

// iotestErrReader fails its first read.
type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
