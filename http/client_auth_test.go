package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestClientSendsToken: with ClientOptions.Token, every request carries
// "Authorization: Bearer TOKEN"; without it, none.
func TestClientSendsToken(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	for _, tc := range []struct{ token, want string }{{"smk_secret", "Bearer smk_secret"}, {"", ""}} {
		got = nil
		c, err := NewClient(srv.URL, ClientOptions{Token: tc.token})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Ready(context.Background()) // the answers are not what Ready wants; the headers are what counts
		mu.Lock()
		if len(got) == 0 {
			t.Fatal("no request reached the server")
		}
		for _, h := range got {
			if h != tc.want {
				t.Fatalf("token %q: Authorization %q, want %q", tc.token, h, tc.want)
			}
		}
		mu.Unlock()
	}
}
