package setup

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServeOAI: `serve` mounts the provider at /oai and runs the projector,
// so a work created over the REST API becomes harvestable without anything
// else, under the domain of --base-url.
func TestServeOAI(t *testing.T) {
	base, hc := startServeAdmin(t, ServeConfig{baseURL: "https://repo.example.org"})
	w := createWork(t, hc, base, "oai")
	var status int
	var resp []byte
	var err error
	id := "oai:repo.example.org:" + w.ID
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		status, resp, err = do(hc, http.MethodGet, base+"/oai?verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape(id), "", nil, nil)
		if err != nil || status != 200 {
			t.Fatalf("GetRecord: %d %s %v", status, resp, err)
		}
		if strings.Contains(string(resp), "<dc:title xml:lang=\"en\">Work oai</dc:title>") {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the work never became harvestable: %s", resp)
		}
	}
	status, resp, _ = do(hc, http.MethodGet, base+"/oai?verb=Identify", "", nil, nil)
	if status != 200 || !strings.Contains(string(resp), "<baseURL>https://repo.example.org/oai</baseURL>") {
		t.Errorf("Identify: %d %s", status, resp)
	}
}

// startServe runs serve (on a free loopback port, in a temporary data
// directory, with c's other settings) until the test ends, and returns its
// base URL and a client.
func startServe(t *testing.T, c ServeConfig) (string, *http.Client) {
	t.Helper()
	base, _ := serveInTemp(t, c)
	return base, &http.Client{Timeout: 10 * time.Second}
}

// startServeAdmin is startServe whose client sends, with every request, an
// administrator's token created against the data directory once the server
// is ready (as `shelfmark token create --user admin` would).
func startServeAdmin(t *testing.T, c ServeConfig) (string, *http.Client) {
	t.Helper()
	base, data := serveInTemp(t, c)
	waitServing(t, base)
	return base, withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
}

// serveInTemp runs serve as startServe says and returns its base URL and
// data directory.
func serveInTemp(t *testing.T, c ServeConfig) (string, string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	c.addr, c.data, c.durability, c.maxUpload, c.logLevel = fmt.Sprintf("127.0.0.1:%d", port), t.TempDir(), "safe", "1MiB", "error"
	c.oai = oaiConfig{name: "Test", pageSize: 100}
	go func() { done <- serve(ctx, c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return fmt.Sprintf("http://127.0.0.1:%d", port), c.data
}
