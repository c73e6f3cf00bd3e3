package http

// Tests of who may send bytes and name them: a file of /api/v1/groups (or
// of the deposit form) names bytes by SHA-256 only when the caller sent
// them or may read a file holding them, with one answer for bytes not
// stored and bytes not the caller's; only a caller who may deposit
// somewhere sends bytes at all; a bulk ingest's zip is bounded by its
// unpacked size and its compression ratio; and the bytes of a refused
// deposit go at once. The quotas are in quota_test.go.

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/http/kit"
)

// uploadsEnv is a bulk stack with collections A (where dep deposits) and
// B (whose private work holds the file secret), and users without any
// deposit right: viewer (a viewer of A) and nobody.
type uploadsEnv struct {
	*bulkEnv
	A, B                 shelfmark.ID
	dep, viewer, nobody  string // tokens
	secret               *shelfmark.File
	secretBytes          []byte
	depName, nobodyName  string
	viewerName, dep2Name string
	dep2                 string
}

func newUploadsEnv(t *testing.T, backend string, opts Options) *uploadsEnv {
	be := newBulkEnv(t, backend, opts)
	u := &uploadsEnv{bulkEnv: be, depName: "dep", dep2Name: "dep2", viewerName: "viewer", nobodyName: "nobody"}
	ctx := context.Background()
	colls := be.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindCollection, Metadata: titled("A"), Visibility: shelfmark.Public},
		{Kind: shelfmark.KindCollection, Metadata: titled("B")},
	})
	u.A, u.B = colls[0].ID, colls[1].ID
	u.dep = be.addUser(u.depName, shelfmark.ScopeWrite)
	u.dep2 = be.addUser(u.dep2Name, shelfmark.ScopeWrite)
	u.viewer = be.addUser(u.viewerName, shelfmark.ScopeWrite)
	u.nobody = be.addUser(u.nobodyName, shelfmark.ScopeWrite)
	be.grantRoles(u.A, []api.GrantJSON{{Principal: "user:dep", Role: "depositor"}, {Principal: "user:dep2", Role: "depositor"}, {Principal: "user:viewer", Role: "viewer"}})
	u.secretBytes = []byte("the private bytes of a work of collection B")
	u.secret = be.putBytes("secret.txt", "text/plain", u.secretBytes)
	ws := be.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{u.B}}})
	fss := be.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: ws[0].ID}})
	f := *u.secret
	be.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fss[0].ID, File: &f}})
	return u
}

// groupResultJSON is the result of one group of POST /api/v1/groups.
type groupResultJSON struct {
	Status int                     `json:"status"`
	IDs    map[string]shelfmark.ID `json:"ids"`
	Error  *apiError               `json:"error"`
}

// attach posts a group as token: a public work in A, a file set, and a
// file naming sha with the stated size.
func (u *uploadsEnv) attach(token, sha string, size int) groupResultJSON {
	u.t.Helper()
	body := jsonBody(map[string]any{"groups": []any{map[string]any{"resources": []any{
		map[string]any{"ref": "w", "kind": "work", "visibility": "public", "memberOf": []shelfmark.ID{u.A}, "metadata": map[string]any{"dc:title": "Attached"}},
		map[string]any{"ref": "fs", "kind": "fileset", "parent": "w"},
		map[string]any{"ref": "f", "kind": "file", "parent": "fs", "file": map[string]any{"name": "a.txt", "mediaType": "text/plain", "sha256": sha, "size": size}},
	}}}})
	r := u.do("POST", "/api/v1/groups", body, as(token, "Content-Type", ctJSON)...)
	var ans struct {
		Results []groupResultJSON `json:"results"`
	}
	if r.Status != http.StatusOK {
		return groupResultJSON{Status: r.Status, Error: func() *apiError {
			var eb apiError
			json.Unmarshal(r.Body, &eb)
			return &eb
		}()}
	}
	r.json(u.t, &ans)
	if len(ans.Results) != 1 {
		u.t.Fatalf("groups: %s", r.Body)
	}
	return ans.Results[0]
}

// shape is a group's answer with the digest it names left out: what tells
// one refusal from another.
func shape(r groupResultJSON, sha string) string {
	if r.Error == nil {
		return fmt.Sprint(r.Status)
	}
	keys := make([]string, 0, len(r.Error.Details))
	for k, v := range r.Error.Details {
		keys = append(keys, fmt.Sprintf("%s=%v", k, strings.ReplaceAll(fmt.Sprint(v), sha, "SHA")))
	}
	return fmt.Sprintf("%d %s %s %v", r.Status, r.Error.Code, strings.ReplaceAll(r.Error.Message, sha, "SHA"), len(keys))
}

// blobStored reports whether the content store holds bytes with digest
// sha.
func (u *uploadsEnv) blobStored(sha string) bool {
	u.t.Helper()
	rc, err := u.blobs.Open(context.Background(), sha)
	if shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND {
		return false
	} else if err != nil {
		u.t.Fatal(err)
	}
	rc.Close()
	return true
}

// TestGroupsNameBytesByRight: a depositor of A cannot attach the bytes of
// a private file of B to a public work of A by their SHA-256: the answer
// is the one for bytes never stored (no size), also to a signed-in user
// with no rights; another user's upload is not the caller's either. The
// caller's own upload, and bytes of a file it may read, may be named.
func TestGroupsNameBytesByRight(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		u := newUploadsEnv(t, backend, Options{})
		unknown := hexSHA256([]byte("bytes never stored anywhere"))
		size := len(u.secretBytes)
		priv := u.attach(u.dep, u.secret.SHA256, size)
		unk := u.attach(u.dep, unknown, size)
		if priv.Status != http.StatusBadRequest || shape(priv, u.secret.SHA256) != shape(unk, unknown) {
			t.Errorf("the bytes of a private file of B: %s; never stored: %s (want the same answer)", shape(priv, u.secret.SHA256), shape(unk, unknown))
		}
		// a wrong size gets the same answer: the stored size is not told
		wrong := u.attach(u.dep, u.secret.SHA256, 3)
		if shape(wrong, u.secret.SHA256) != shape(u.attach(u.dep, unknown, 3), unknown) || wrong.Error == nil || wrong.Error.Details["stored_size"] != nil {
			t.Errorf("a wrong size for the bytes of B: %s", shape(wrong, u.secret.SHA256))
		}
		// a signed-in user with no rights: one answer (the work is refused)
		a, b := u.attach(u.nobody, u.secret.SHA256, size), u.attach(u.nobody, unknown, size)
		if a.Status != http.StatusForbidden || shape(a, u.secret.SHA256) != shape(b, unknown) {
			t.Errorf("no rights: %s and %s", shape(a, u.secret.SHA256), shape(b, unknown))
		}
		// nothing but B's file holds the bytes; anonymous callers read none
		var held []shelfmark.HeldFile
		if err := u.store.View(context.Background(), func(tx shelfmark.ReadTx) error {
			var err error
			held, err = tx.FilesHolding(context.Background(), u.secret.SHA256, 8)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(held) != 1 {
			t.Errorf("%d files hold B's private bytes, want 1", len(held))
		}

		// another depositor's upload is not the caller's
		var other kit.BlobJSON
		u.do("POST", "/api/v1/blobs", "bytes dep2 sent", as(u.dep2, "Content-Type", "text/plain")...).want(t, http.StatusCreated).json(t, &other)
		if r := u.attach(u.dep, other.SHA256, int(other.Size)); shape(r, other.SHA256) != shape(u.attach(u.dep, unknown, int(other.Size)), unknown) {
			t.Errorf("another user's upload: %s", shape(r, other.SHA256))
		}
		// the caller's own upload may be named, and read by everyone in a
		// public work
		mine := []byte("bytes dep sent herself")
		var own kit.BlobJSON
		u.do("POST", "/api/v1/blobs", mine, as(u.dep, "Content-Type", "text/plain")...).want(t, http.StatusCreated).json(t, &own)
		ok := u.attach(u.dep, own.SHA256, len(mine))
		if ok.Status != http.StatusCreated {
			t.Fatalf("the caller's own upload: %+v %+v", ok, ok.Error)
		}
		if got := u.do("GET", resPath(ok.IDs["f"], "/content"), nil, as("")...).want(t, http.StatusOK).Body; !bytes.Equal(got, mine) {
			t.Errorf("content %q", got)
		}
		// and named again, as a file the caller may read holds them
		if again := u.attach(u.dep, own.SHA256, len(mine)); again.Status != http.StatusCreated {
			t.Errorf("bytes of the caller's own file: %+v %+v", again, again.Error)
		}
		// the deposit form names bytes the same way
		b2 := newVisitor(t, u.testEnv)
		b2.signIn(u.depName, u.depName+"-password")
		b2.get("/deposit")
		f := metaFields("title", "Attached by form")
		f.Set("collection", string(u.A))
		f.Set("visibility", "public")
		f.Add("file_sha256", u.secret.SHA256)
		f.Add("file_name", "a.txt")
		f.Add("file_size", fmt.Sprint(size))
		f.Add("file_type", "text/plain")
		if p := b2.post("/deposit", f); p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "that you sent or may read") {
			t.Errorf("the deposit form naming B's bytes: %d %.300s", p.Status, p.Body)
		}
	})
}

// TestUploadsNeedDepositRight: a caller who may deposit nowhere (signed
// out, a viewer, a user without a role, a read-only credential) sends no
// bytes: POST /api/v1/blobs, the deposit form's files and a bulk upload
// are refused before anything is kept or staged.
func TestUploadsNeedDepositRight(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		u := newUploadsEnv(t, backend, Options{})
		body := []byte("bytes from someone who may deposit nowhere")
		sha := hexSHA256(body)
		readOnly := newToken(t, u.accounts, u.depName, shelfmark.ScopeRead)
		for _, tc := range []struct {
			who, token string
			status     int
		}{{"anonymous", "", 401}, {"viewer", u.viewer, 403}, {"nobody", u.nobody, 403}, {"read-only depositor", readOnly, 403}} {
			r := u.do("POST", "/api/v1/blobs", body, as(tc.token, "Content-Type", "text/plain")...)
			if r.Status != tc.status {
				t.Errorf("%s: POST /api/v1/blobs %d, want %d: %s", tc.who, r.Status, tc.status, r.Body)
			}
			r.wantNoDataWrites(t)
		}
		if u.blobStored(sha) {
			t.Error("the bytes of a refused upload were kept")
		}
		for _, name := range []string{u.viewerName, u.nobodyName} {
			v := newVisitor(t, u.testEnv)
			v.signIn(name, name+"-password")
			if p := v.get("/bulk"); p.Status != http.StatusForbidden {
				t.Errorf("%s: GET /bulk %d, want 403", name, p.Status)
			}
			if p := v.upload("title\nW\n", zipOf(t, "f.txt", string(body)), ""); p.Status != http.StatusForbidden {
				t.Errorf("%s: POST /bulk %d, want 403", name, p.Status)
			}
			u.wantNothingStaged()
			v.get("/deposit")
			f := metaFields("title", "Refused")
			f.Set("collection", string(u.A))
			if p := postDeposit(v, f, []namedBytes{{"f.txt", "text/plain", body}}, true); p.Status != http.StatusForbidden {
				t.Errorf("%s: deposit with a file %d, want 403", name, p.Status)
			}
			if u.blobStored(sha) {
				t.Errorf("%s: the bytes of a refused deposit were kept", name)
			}
		}
	})
}

// zeros writes n zero bytes to w.
func zeros(t *testing.T, w io.Writer, n int64) {
	t.Helper()
	if _, err := io.CopyN(w, zeroReader{}, n); err != nil {
		t.Fatal(err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bombZip is a zip of entries, each of size zero bytes, deflated.
func bombZip(t *testing.T, entries int, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range entries {
		w, err := zw.Create(fmt.Sprintf("f%d.bin", i))
		if err != nil {
			t.Fatal(err)
		}
		zeros(t, w, size)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lyingZip is a zip whose one entry declares 100 bytes and unpacks to
// size.
func lyingZip(t *testing.T, size int64) []byte {
	t.Helper()
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros(t, fw, size)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "f.bin", Method: zip.Deflate, CompressedSize64: uint64(raw.Len()), UncompressedSize64: 100})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw.Bytes())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUIBulkZipBomb: a zip that unpacks far beyond its size (one entry, or
// many each within the entry bound) is refused with 413 before anything
// is unpacked, and a zip whose entry holds more than it declares is
// refused too; nothing stays staged.
func TestUIBulkZipBomb(t *testing.T) {
	u := newUploadsEnv(t, "sqlite", Options{})
	b := newVisitor(t, u.testEnv)
	b.signIn(u.depName, u.depName+"-password")
	for _, tc := range []struct {
		name   string
		zip    []byte
		status int
	}{
		{"one entry of 256 MiB of zeros", bombZip(t, 1, 256<<20), http.StatusRequestEntityTooLarge},
		{"300 entries of 1 MiB of zeros", bombZip(t, 300, 1<<20), http.StatusRequestEntityTooLarge},
		{"an entry holding more than it declares", lyingZip(t, 64<<20), http.StatusBadRequest},
	} {
		b.get("/bulk")
		p := b.upload("title\nW\n", tc.zip, "")
		if p.Status != tc.status {
			t.Errorf("%s (%d bytes): %d, want %d: %.300s", tc.name, len(tc.zip), p.Status, tc.status, p.Body)
		}
		u.wantNothingStaged()
	}
}

// TestRefusedDepositsLeaveNoBytes: the bytes of a deposit the policy
// refuses are gone at once, not at the next collection: the deposit
// form's files for a collection the depositor may not deposit in, and a
// bulk item refused by the policy (unless a stored item holds the same
// bytes).
func TestRefusedDepositsLeaveNoBytes(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		u := newUploadsEnv(t, backend, Options{})
		b := newVisitor(t, u.testEnv)
		b.signIn(u.depName, u.depName+"-password")
		b.get("/deposit")
		page := []byte("a page deposited where dep may not deposit")
		f := metaFields("title", "Refused")
		f.Set("collection", string(u.B))
		if p := postDeposit(b, f, []namedBytes{{"p.txt", "text/plain", page}}, true); p.Status != http.StatusForbidden {
			t.Fatalf("deposit into B: %d %.300s", p.Status, p.Body)
		}
		if u.blobStored(hexSHA256(page)) {
			t.Error("the bytes of the refused deposit are still stored")
		}

		manifest := "source_identifier,title,file,parent\n" +
			"k1,Kept,k1.txt," + string(u.A) + "\n" +
			"r1,Refused,r1.txt," + string(u.B) + "\n" +
			"r2,Refused sharing bytes,k1.txt," + string(u.B) + "\n"
		z := zipOf(t, "k1.txt", "bytes of the kept item", "r1.txt", "bytes of the refused item")
		b.get("/bulk")
		run := runOf(t, b.upload(manifest, z, ""))
		b.get(run)
		if p := b.post(run+"/start", nil); p.Status != http.StatusSeeOther {
			t.Fatalf("start: %d %.500s", p.Status, p.Body)
		}
		if got := b.waitDone(run); got.Stored != 1 || got.Failed != 2 {
			t.Fatalf("the run: %+v", got)
		}
		if !u.blobStored(hexSHA256([]byte("bytes of the kept item"))) {
			t.Error("the bytes of the stored item (also named by a refused one) are gone")
		}
		if u.blobStored(hexSHA256([]byte("bytes of the refused item"))) {
			t.Error("the bytes of the refused item are still stored")
		}
	})
}
