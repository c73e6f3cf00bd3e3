package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestBenchRestServer: bench rest's token works on the server it starts,
// which refuses anonymous writes on its address; its second listener
// reads no credential and acts as the token's user, only on a loopback
// address, and serve has no way to open it.
func TestBenchRestServer(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	token, err := benchToken(ctx, "", data, "relaxed")
	if err != nil {
		t.Fatal(err)
	}
	addr, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	noauth, err := freeAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SHELFMARK_NOAUTH_TOKEN", token)
	t.Setenv("SHELFMARK_DATABASE_URL", "")

	// refused before anything opens
	for _, args := range [][]string{
		{"rest-server", "--addr", addr, "--data", data, "--noauth-addr", "0.0.0.0:0"},
		{"rest-server", "--addr", addr, "--data", data, "--noauth-addr", "example.org:80"},
		{"serve", "--addr", addr, "--data", data, "--noauth-addr", noauth},
	} {
		// shelfmark's serve is setup's; the lab has no serve of its own
		root := newRootCommand()
		if serve, _ := setup.ServeCommand(); args[0] == "serve" {
			root = &cobra.Command{Use: "shelfmark"}
			root.AddCommand(serve)
		}
		root.SetArgs(args)
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if err := root.ExecuteContext(ctx); err == nil {
			t.Fatalf("%v: no error", args)
		}
	}

	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		root := newRootCommand()
		root.SetArgs([]string{"rest-server", "--addr", addr, "--noauth-addr", noauth, "--data", data, "--durability", "relaxed", "--log-level", "warn", "--workers=false"})
		done <- root.ExecuteContext(sctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("rest-server: %v", err)
		}
	}()
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	benchWaitReady(t, hc, "http://"+addr)
	post := func(base, token string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/works", bytes.NewReader([]byte(`{"metadata":{"http://purl.org/dc/terms/title":[{"@value":"A"}]}}`)))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("http://"+addr, ""); got != http.StatusUnauthorized {
		t.Errorf("anonymous write on the server's address: %d, want 401", got)
	}
	if got := post("http://"+addr, token); got != http.StatusCreated {
		t.Errorf("write with the bench token: %d, want 201", got)
	}
	if got := post("http://"+noauth, ""); got != http.StatusCreated {
		t.Errorf("write on the listener without authentication: %d, want 201", got)
	}
	// the listener does not read credentials at all: a bad one is not refused
	if got := post("http://"+noauth, "smk_not-a-token"); got != http.StatusCreated {
		t.Errorf("write with a bad token on the listener without authentication: %d, want 201", got)
	}
	// and it acts as the token's user: the audit trail names admin
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/audit?actor=admin", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), `"create"`) != 3 {
		t.Errorf("audit: %d %s", resp.StatusCode, body)
	}
}

// benchWaitReady polls base/readyz until it answers 200 (a minute at most,
// as the machine may be busy).
func benchWaitReady(t *testing.T, hc *http.Client, base string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		resp, err := hc.Get(base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s/readyz never answered 200", base)
}

// TestBenchRestSettles: bench rest waits, before a step, for the started
// server's preservation copy to take in the works of the step before (a
// work's copy is written seconds after its create), and reports the wait;
// the first step, on an empty store, waits for nothing.
func TestBenchRestSettles(t *testing.T) {
	bin := filepath.Join(testkit.Build(t, "shelfmark", "shelfmark-bench"), "shelfmark-bench")
	rep := runBench(t, bin, "rest", "--clients", "1,1", "--step", "300ms", "--warmup", "0s", "--compare-noauth=false", "--durability", "relaxed")
	if len(rep.Steps) != 2 || rep.Steps[0].Items == 0 || rep.Errors != 0 {
		t.Fatalf("steps %+v, %d errors", rep.Steps, rep.Errors)
	}
	if first, second := rep.Steps[0].SettleSeconds, rep.Steps[1].SettleSeconds; first >= 1 || second < 1 {
		t.Errorf("waited %.2f s before the first step and %.2f s before the second, for works the preserver takes once 5 s old", first, second)
	}
	if rep.Params["settle"] != true {
		t.Errorf("params %v", rep.Params)
	}
}
