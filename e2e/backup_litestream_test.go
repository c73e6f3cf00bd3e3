package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/blob/s3test"
	"github.com/shelfmark/shelfmark/internal/testkit/datadump"
	"github.com/shelfmark/shelfmark/storagetest"
)

// litestreamBinary finds the litestream binary ($SHELFMARK_LITESTREAM,
// else <build>/bin/litestream, else on PATH), or skips the test (fails
// under SHELFMARK_REQUIRE_TOOLS=1, as the test command sets, which builds
// it): Litestream is an optional companion (docs/backup.md), installed with
// go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18.
func litestreamBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SHELFMARK_LITESTREAM"), filepath.Join(buildDir(), "bin", "litestream")} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("litestream"); err == nil {
		return p
	}
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
		t.Fatal("litestream is not installed (the test command builds it: scripts/test.sh)")
	}
	t.Skip("litestream is not installed (optional: see docs/backup.md)")
	return ""
}

// TestBackupLitestream runs the companion procedure of docs/backup.md:
// litestream replicate beside shelfmark serve, to an S3 store (versitygw),
// while clients write; the database litestream restore brings back holds
// the repository as the server left it (the canonical dumps have no
// difference).
func TestBackupLitestream(t *testing.T) {
	bin := litestreamBinary(t)
	srv := s3test.Start(t)
	srv.CreateBucket(t, "litestream")
	orig := t.TempDir()
	preservedRepository(t, orig, 60)
	token := adminToken(t, orig)
	cfg := filepath.Join(t.TempDir(), "litestream.yml")
	conf := fmt.Sprintf(`dbs:
  - path: %s
    replica:
      url: s3://litestream/shelfmark-db
      endpoint: %s
      region: us-east-1
      access-key-id: %s
      secret-access-key: %s
      force-path-style: true
      sync-interval: 100ms
`, filepath.Join(orig, "shelfmark.db"), srv.Endpoint, s3test.AccessKey, s3test.SecretKey)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// the store is plain HTTP on loopback: no CA bundle (litestream's S3
	// client refuses AWS_CA_BUNDLE with its own HTTP client)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	var log bytes.Buffer
	ls := exec.Command(bin, "replicate", "-config", cfg)
	ls.Env = env
	ls.Stdout, ls.Stderr = &log, &log
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	lsDone := make(chan error, 1)
	go func() { lsDone <- ls.Wait() }()
	defer func() {
		_ = ls.Process.Kill()
		<-lsDone
	}()

	a := serveData(t, orig, filepath.Join(orig, "ocfl"))
	hc := withBearer(&http.Client{Timeout: 30 * time.Second}, token)
	for i := range 40 {
		body := fmt.Sprintf(`{"metadata": {"dcterms:title": "replicated %d"}}`, i)
		if status, resp, err := do(hc, http.MethodPost, a+"/api/v1/collections", "application/json", []byte(body), nil); err != nil || status != http.StatusCreated {
			t.Fatalf("create a collection: %d %s %v", status, resp, err)
		}
	}
	want := datadump.SQLite(t, orig)
	if !strings.Contains(want, "replicated 39") {
		t.Fatal("the writes are not in the original")
	}
	// litestream syncs what it has on a clean stop
	time.Sleep(time.Second)
	_ = ls.Process.Signal(syscall.SIGTERM)
	select {
	case <-lsDone:
		lsDone <- nil
	case <-time.After(60 * time.Second):
		t.Fatalf("litestream did not stop:\n%s", log.String())
	}
	restored := filepath.Join(t.TempDir(), "restored")
	rs := exec.Command(bin, "restore", "-config", cfg, "-o", filepath.Join(restored, "shelfmark.db"), filepath.Join(orig, "shelfmark.db"))
	rs.Env = env
	out, err := rs.CombinedOutput()
	if err != nil {
		t.Fatalf("litestream restore: %v\n%s\n%s", err, out, log.String())
	}
	if d := storagetest.DiffLines(want, datadump.SQLite(t, restored)); d != "" {
		t.Fatalf("the database litestream restored differs (- original, + restored):\n%s\n%s", d, log.String())
	}
	t.Logf("litestream replicate:\n%s", log.String())
}
