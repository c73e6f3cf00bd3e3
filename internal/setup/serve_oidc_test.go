package setup

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	shttp "github.com/shelfmark/shelfmark/http"
)

// TestServeOIDCFlags: the --oidc-* flags (and their environment
// variables, which keep the client secret out of the process list) reach
// the server, and settings that are not valid stop serve before it opens
// anything.
func TestServeOIDCFlags(t *testing.T) {
	// run runs serve with args and returns its error and the client
	// secret it was given.
	run := func(args ...string) (string, error) {
		serve, _ := ServeCommand()
		serve.SetOut(io.Discard)
		serve.SetErr(io.Discard)
		serve.SetArgs(append([]string{"--data", t.TempDir(), "--addr", "127.0.0.1:0"}, args...))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := serve.ExecuteContext(ctx)
		return serve.Flags().Lookup("oidc-client-secret").Value.String(), err
	}
	if _, err := run("--oidc-issuer", "ftp://idp.example", "--oidc-client-id", "x"); err == nil || !strings.Contains(err.Error(), "--oidc-") || !strings.Contains(err.Error(), "ftp://idp.example") {
		t.Errorf("an ftp issuer: %v", err)
	}
	if _, err := run("--oidc-issuer", "https://idp.example"); err == nil || !strings.Contains(err.Error(), "client id") {
		t.Errorf("no client id: %v", err)
	}
	t.Setenv("SHELFMARK_OIDC_ISSUER", "ftp://env.example")
	t.Setenv("SHELFMARK_OIDC_CLIENT_SECRET", "s3cret")
	secret, err := run("--oidc-client-id", "x")
	if err == nil || !strings.Contains(err.Error(), "ftp://env.example") {
		t.Errorf("the issuer from the environment: %v", err)
	}
	if secret != "s3cret" {
		t.Errorf("the client secret from the environment: %q", secret)
	}
}

// TestServeOIDCLogin: with an issuer, serve sends /auth/oidc/login to the
// provider's authorization endpoint, with the callback under --base-url.
func TestServeOIDCLogin(t *testing.T) {
	var idp *httptest.Server
	idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": idp.URL, "authorization_endpoint": idp.URL + "/authorize",
			"token_endpoint": idp.URL + "/token", "jwks_uri": idp.URL + "/jwks"})
	}))
	defer idp.Close()
	base, _ := startServe(t, ServeConfig{baseURL: "https://repo.example.org",
		sso: shttp.OIDCOptions{Issuer: idp.URL, ClientID: "repo", ClientSecret: "s3cret", UsernameClaim: "preferred_username", GroupsClaim: "groups"}})
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var res *http.Response
	var err error
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		if res, err = hc.Get(base + "/auth/oidc/login"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(loc, idp.URL+"/authorize?") ||
		!strings.Contains(loc, "redirect_uri=https%3A%2F%2Frepo.example.org%2Fauth%2Foidc%2Fcallback") {
		t.Errorf("login: %d %q", res.StatusCode, loc)
	}
}
