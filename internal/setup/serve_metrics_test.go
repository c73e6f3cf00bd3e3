package setup

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeMetricsAddr: --metrics-addr serves /metrics and the profiles
// without a credential on a second address; the API's address keeps
// /metrics for administrators and serves no profiles.
func TestServeMetricsAddr(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ops := fmt.Sprintf("http://127.0.0.1:%d", port)
	base, hc := startServe(t, ServeConfig{metricsAddr: fmt.Sprintf("127.0.0.1:%d", port)})
	var status int
	var body []byte
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if status, body, err = do(hc, http.MethodGet, ops+"/metrics", "", nil, nil); err == nil {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("the metrics address never answered: %v", err)
		}
	}
	if status != http.StatusOK || !strings.Contains(string(body), "shelfmark_commit_failures_total") {
		t.Errorf("%s/metrics: %d %.200s", ops, status, body)
	}
	if status, body, _ = do(hc, http.MethodGet, ops+"/debug/pprof/", "", nil, nil); status != http.StatusOK {
		t.Errorf("%s/debug/pprof/: %d %.200s", ops, status, body)
	}
	for path, want := range map[string]int{"/metrics": http.StatusUnauthorized, "/debug/pprof/": http.StatusNotFound} {
		if status, body, _ = do(hc, http.MethodGet, base+path, "", nil, nil); status != want {
			t.Errorf("%s%s: %d, want %d: %.200s", base, path, status, want, body)
		}
	}
}

// TestServeRefusesBadCORSOrigin: a --cors-origin that is not an origin
// stops serve before it listens.
func TestServeRefusesBadCORSOrigin(t *testing.T) {
	c := ServeConfig{addr: "127.0.0.1:0", data: t.TempDir(), durability: "safe", maxUpload: "1MiB", logLevel: "error",
		oai: oaiConfig{name: "Test", pageSize: 100}, corsOrigins: []string{"https://app.example/path"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := serve(ctx, c); err == nil || !strings.Contains(err.Error(), "--cors-origin") {
		t.Errorf("serve: %v", err)
	}
}
