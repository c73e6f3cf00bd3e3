package http

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestUploadQuota: the bytes and uploads a user holds that no file names
// yet are capped per user, and the bytes of all users together: past a
// quota an upload is 507 with code quota, refused before its body is read
// when its length says so, cut off and kept nowhere when it does not;
// naming an upload in a file frees its share; a bulk upload is held to the
// same quota, with what is staged, and leaves nothing staged.
func TestUploadQuota(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		u := newUploadsEnv(t, backend, Options{UploadQuotaBytes: 64 << 10, UploadQuotaFiles: 3, UploadQuotaTotalBytes: 80 << 10})
		post := func(token string, body any, hdrs ...string) *response {
			t.Helper()
			return u.do("POST", "/api/v1/blobs", body, as(token, append([]string{"Content-Type", "application/octet-stream"}, hdrs...)...)...)
		}
		quota := func(r *response, which string) {
			t.Helper()
			eb := r.wantError(t, http.StatusInsufficientStorage, shelfmark.EQUOTA)
			if eb.Details["quota"] != which {
				t.Errorf("quota %v, want %s: %s", eb.Details["quota"], which, eb.Message)
			}
		}
		a, b := randomBytes(30<<10), randomBytes(30<<10)
		var first kit.BlobJSON
		post(u.dep, a).want(t, http.StatusCreated).json(t, &first)
		post(u.dep, b).want(t, http.StatusCreated)
		// 60 KiB held: 30 more are refused before the body is read, and,
		// sent without a length, cut off; neither is kept
		c := randomBytes(30 << 10)
		r := post(u.dep, c)
		quota(r, "user")
		r.wantNoDataWrites(t)
		quota(post(u.dep, unknownLength{bytes.NewReader(c)}), "user")
		if u.blobStored(hexSHA256(c)) {
			t.Error("the bytes of an upload past the quota were kept")
		}
		// three uploads held: a fourth is refused, however small
		post(u.dep, randomBytes(1<<10)).want(t, http.StatusCreated)
		quota(post(u.dep, []byte("tiny")), "files")
		// naming an upload in a file frees its share
		if res := u.attach(u.dep, first.SHA256, len(a)); res.Status != http.StatusCreated {
			t.Fatalf("naming the first upload: %+v %+v", res, res.Error)
		}
		post(u.dep, []byte("tiny")).want(t, http.StatusCreated)
		// all users together: 31 KiB held by dep, 40 by dep2; 20 more of
		// dep2's would pass 80
		post(u.dep2, randomBytes(40<<10)).want(t, http.StatusCreated)
		quota(post(u.dep2, randomBytes(20<<10)), "server")

		// a bulk upload past the quota: 507, nothing staged
		v := newVisitor(t, u.testEnv)
		v.signIn(u.depName, u.depName+"-password")
		v.get("/bulk")
		if p := v.upload("title\nW\n", zipOf(t, "big.bin", string(randomBytes(40<<10))), ""); p.Status != http.StatusInsufficientStorage {
			t.Errorf("a bulk upload past the quota: %d %.300s", p.Status, p.Body)
		}
		u.wantNothingStaged()
	})
}

// TestBulkPreviewsQuota: the server stages at most MaxBulkPreviews runs;
// past it an upload is 507 and stages nothing.
func TestBulkPreviewsQuota(t *testing.T) {
	u := newUploadsEnv(t, "sqlite", Options{MaxBulkPreviews: 2})
	b := newVisitor(t, u.testEnv)
	b.signIn(u.depName, u.depName+"-password")
	for range 2 {
		b.get("/bulk")
		runOf(t, b.upload("title\nW\n", nil, ""))
	}
	o := newVisitor(t, u.testEnv)
	o.signIn(u.dep2Name, u.dep2Name+"-password")
	o.get("/bulk")
	before := len(u.staged())
	if p := o.upload("title\nW\n", nil, ""); p.Status != http.StatusInsufficientStorage {
		t.Errorf("a third preview: %d %.300s", p.Status, p.Body)
	}
	if n := len(u.staged()); n != before {
		t.Errorf("%d runs staged, want %d", n, before)
	}
}
