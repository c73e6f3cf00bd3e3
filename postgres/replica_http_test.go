package postgres

// HTTP-level checks of read replicas: the real server on a DB with a
// replica. They run inside TestReplicaPaused and TestPrimaryUnreachable,
// which set the scene (replay paused, or the primary gone).

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
)

// replicaServer serves db over HTTP with every request made by a system
// caller (no credentials needed).
type replicaServer struct {
	t  *testing.T
	ts *httptest.Server
}

func newReplicaServer(t *testing.T, db *DB) *replicaServer {
	t.Helper()
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	metrics := shttp.NewMetrics(db, nil)
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{Observer: metrics})
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: db, Metrics: metrics, Jobs: repo,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Authenticator: systemAuth{}})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		repo.Close()
		blobs.Close()
	})
	return &replicaServer{t: t, ts: ts}
}

// do sends a request with header name, value pairs and returns the
// response with its body read.
func (s *replicaServer) do(method, path, body string, hdrs ...string) (*http.Response, string) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.ts.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdrs); i += 2 {
		req.Header.Add(hdrs[i], hdrs[i+1])
	}
	res, err := s.ts.Client().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return res, string(b)
}

// createWork creates a work and returns its id, the position header and
// the position cookie of the answer.
func (s *replicaServer) createWork() (id, header, cookie string) {
	s.t.Helper()
	res, body := s.do("POST", "/api/v1/works", `{}`)
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("POST /api/v1/works: %d %s", res.StatusCode, body)
	}
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.ID == "" {
		s.t.Fatalf("create answer %s: %v", body, err)
	}
	for _, c := range res.Cookies() {
		if c.Name == shttp.PositionCookie {
			cookie = c.Value
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
				s.t.Errorf("position cookie %+v", c)
			}
		}
	}
	return v.ID, res.Header.Get(shttp.PositionHeader), cookie
}

// checkReadYourWrites runs with the replica's replay paused and a lag
// bound the pause does not reach: a client's write, then its GET with the
// position (header or cookie) shows the write; without it, the GET is
// answered by the replica, which has not replayed the write.
func checkReadYourWrites(t *testing.T, db *DB) {
	s := newReplicaServer(t, db)
	id, header, cookie := s.createWork()
	if header == "" || header != cookie {
		t.Fatalf("write answer: position header %q, cookie %q", header, cookie)
	}
	path := "/api/v1/resources/" + id
	if res, body := s.do("GET", path, ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET without a position while replay is paused: %d %s; want 404 from the replica", res.StatusCode, body)
	}
	if res, body := s.do("GET", path, "", shttp.PositionHeader, header); res.StatusCode != http.StatusOK {
		t.Errorf("GET with the position header: %d %s", res.StatusCode, body)
	}
	if res, body := s.do("GET", path, "", "Cookie", shttp.PositionCookie+"="+cookie); res.StatusCode != http.StatusOK {
		t.Errorf("GET with the position cookie: %d %s", res.StatusCode, body)
	}
	// the web interface's page of the work, and a search, likewise
	if res, body := s.do("GET", "/works/"+id, "", "Cookie", shttp.PositionCookie+"="+cookie); res.StatusCode != http.StatusOK {
		t.Errorf("GET /works/%s with the position cookie: %d %s", id, res.StatusCode, truncateBody(body))
	}
	if res, body := s.do("GET", path, "", shttp.PositionHeader, "12/zz"); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"invalid"`) {
		t.Errorf("GET with a malformed position: %d %s", res.StatusCode, body)
	}
	res, body := s.do("GET", "/readyz", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "database: ok\n") || !strings.Contains(body, "replica: ok") {
		t.Errorf("/readyz: %d %q", res.StatusCode, body)
	}
	res, body = s.do("GET", "/metrics", "")
	for _, want := range []string{
		`shelfmark_db_reads_total{target="replica"}`, `shelfmark_db_reads_total{target="primary"}`,
		`shelfmark_db_replica_fallbacks_total{reason="position"}`, `shelfmark_db_replica_lag_seconds`,
		`shelfmark_db_replica_lag_bytes`, `shelfmark_db_replica_pool_in_use`, `shelfmark_db_replica_healthy 1`,
		`shelfmark_db_primary_reachable 1`,
	} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", res.StatusCode, want)
		}
	}
}

// checkPrimaryGoneHTTP runs with the primary unreachable: a write answers
// 503 with Retry-After, a GET of a replicated work is answered by the
// replica, and /readyz stays ready and says why.
func checkPrimaryGoneHTTP(t *testing.T, s *replicaServer, id string) {
	res, body := s.do("POST", "/api/v1/works", `{}`)
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, `"unavailable"`) {
		t.Errorf("a write with the primary gone: %d Retry-After %q %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if res, body := s.do("GET", "/api/v1/resources/"+id, ""); res.StatusCode != http.StatusOK {
		t.Errorf("a GET with the primary gone: %d %s", res.StatusCode, body)
	}
	res, body = s.do("GET", "/readyz", "")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "primary does not answer") {
		t.Errorf("/readyz with the primary gone: %d %q", res.StatusCode, body)
	}
}

func truncateBody(s string) string {
	if len(s) > 300 {
		return s[:300]
	}
	return s
}

// systemAuth makes every request of the replica tests the system's.
type systemAuth struct{}

func (systemAuth) Authenticate(*http.Request) (*shelfmark.Caller, error) {
	return shelfmark.SystemCaller("replica test"), nil
}
