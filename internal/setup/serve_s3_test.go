package setup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/blob/s3test"
)

// TestServeS3: serve --storage s3://… keeps an uploaded file's bytes in
// the bucket under <prefix>/<sha[0:2]>/<sha>, serves a Range request from
// it byte for byte, redirects a full download to a presigned URL with
// --s3-redirect, and keeps a small file out of the bucket.
func TestServeS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "shelfmark")
	proxy := s3test.NewProxy(t, srv.Endpoint)
	base, hc := startServeAdmin(t, ServeConfig{content: BlobFlags{storage: "s3://shelfmark/e2e", endpoint: proxy.Endpoint,
		accessKey: s3test.AccessKey, secretKey: s3test.SecretKey, redirect: true}})
	w := createWork(t, hc, base, "s3")
	status, resp, _ := do(hc, http.MethodPost, base+"/api/v1/filesets", "application/json", []byte(`{"parent": "`+w.ID+`"}`), nil)
	if status != http.StatusCreated {
		t.Fatalf("create file set: %d %s", status, resp)
	}
	var fs struct{ ID string }
	_ = json.Unmarshal(resp, &fs)
	upload := func(name string, body []byte) string {
		t.Helper()
		status, resp, _ := do(hc, http.MethodPost, base+"/api/v1/resources/"+fs.ID+"/files?name="+name, "application/octet-stream", body, nil)
		if status != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", name, status, resp)
		}
		var f struct{ ID string }
		if err := json.Unmarshal(resp, &f); err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	big := make([]byte, 900<<10)
	for i := range big {
		big[i] = byte(i*31 + i>>9)
	}
	bigID, sum := upload("scan.tif", big), sha256.Sum256(big)
	bigSHA := hex.EncodeToString(sum[:])
	smallID := upload("note.txt", []byte("a small file stays in the database"))
	if keys := s3Keys(t, srv, "shelfmark", "e2e/"); len(keys) != 1 || keys[0] != "e2e/"+bigSHA[:2]+"/"+bigSHA {
		t.Fatalf("objects %q, want the large file's only (sha %s)", keys, bigSHA)
	}

	// a Range request streams from S3
	status, resp, _ = do(hc, http.MethodGet, base+"/api/v1/resources/"+bigID+"/content", "", nil, http.Header{"Range": {"bytes=300000-400009"}})
	if status != http.StatusPartialContent || !bytes.Equal(resp, big[300000:400010]) {
		t.Fatalf("range: %d, %d bytes", status, len(resp))
	}
	// a full download is a redirect to a presigned URL that serves it
	noFollow := *hc
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/resources/"+bigID+"/content", nil)
	r, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	loc := r.Header.Get("Location")
	if r.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(loc, proxy.Endpoint+"/shelfmark/e2e/") {
		t.Fatalf("full download: %s, Location %q", r.Status, loc)
	}
	status, resp, _ = do(&http.Client{Timeout: 30 * time.Second}, http.MethodGet, loc, "", nil, nil)
	if status != http.StatusOK || !bytes.Equal(resp, big) {
		t.Fatalf("presigned URL: %d, %d bytes", status, len(resp))
	}
	// the requests to S3 show in /metrics
	status, resp, _ = do(hc, http.MethodGet, base+"/metrics", "", nil, nil)
	for _, want := range []string{`shelfmark_s3_requests_total{op="PutObject",result="ok"} 1`, `shelfmark_s3_requests_total{op="HeadObject",result="not_found"} 1`,
		`shelfmark_s3_request_seconds_count{op="HeadBucket"}`} {
		if status != http.StatusOK || !strings.Contains(string(resp), want) {
			t.Errorf("/metrics: %d, no %s", status, want)
		}
	}
	// a small file is streamed from the database
	status, resp, _ = do(hc, http.MethodGet, base+"/api/v1/resources/"+smallID+"/content", "", nil, nil)
	if status != http.StatusOK || string(resp) != "a small file stays in the database" {
		t.Fatalf("small file: %d %q", status, resp)
	}
	// with the S3 store down, /readyz says the content store is not
	// available but stays ready (the rest is served), and an upload of a
	// large file is 503 with the reason
	proxy.SetFault(s3test.Down, 0)
	status, resp, _ = do(hc, http.MethodGet, base+"/readyz", "", nil, nil)
	if status != http.StatusOK || !strings.Contains(string(resp), "content store: not available") {
		t.Errorf("/readyz with S3 down: %d %s", status, resp)
	}
	status, resp, _ = do(hc, http.MethodPost, base+"/api/v1/resources/"+fs.ID+"/files?name=later.bin", "application/octet-stream", big[1:], nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(string(resp), "S3 content store failed") {
		t.Errorf("upload with S3 down: %d %s", status, resp)
	}
	proxy.SetFault(s3test.Pass, 0)
	status, resp, _ = do(hc, http.MethodGet, base+"/readyz", "", nil, nil)
	if status != http.StatusOK {
		t.Errorf("/readyz with S3 back: %d %s", status, resp)
	}
}
