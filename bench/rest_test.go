package bench

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestRunRestAuth: the rest scenario sends its token with every request to
// a server that refuses anonymous writes, measures the same steps against
// a listener that reads no credential in alternating rounds, and reports
// both sides and their ratio; the server looks the token up in the
// database once, however many requests carry it.
func TestRunRestAuth(t *testing.T) {
	ctx := context.Background()
	var lookups atomic.Int64
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "rest.db"), sqlite.Options{Relaxed: true,
		Tracer: func(q string, _ int64) {
			if strings.Contains(q, "FROM tokens WHERE hash") {
				lookups.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := shelfmark.LoadIDCodec(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{IDs: ids})
	t.Cleanup(func() { repo.Close(); db.Close(); blobs.Close() })
	// a clock that stands still: the cache of authenticated tokens never
	// runs out, so every lookup after the first would be one per request
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Now: func() time.Time { return now }})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		t.Fatal(err)
	}
	token, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	// the fixed caller is resolved by another service, so that the
	// server's cache is empty when the run starts
	caller, err := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{CacheTTL: -1}).Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	opts := shttp.Options{Resources: repo, Blobs: blobs, Storage: db, Accounts: acc}
	authSrv := httptest.NewServer(shttp.NewServer(opts))
	defer authSrv.Close()
	opts.Authenticator = FixedCaller{caller}
	noauthSrv := httptest.NewServer(shttp.NewServer(opts))
	defer noauthSrv.Close()

	// without the token, every write is refused
	rep, err := RunRest(ctx, RestConfig{Target: authSrv.URL + "/api/v1/works", Clients: []int{1}, StepDuration: 50 * time.Millisecond, Triples: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 0 || rep.Errors == 0 || rep.Steps[0].ErrorCodes["401"] != rep.Errors {
		t.Fatalf("anonymous run: %d works, errors %v", rep.Items, rep.Steps[0].ErrorCodes)
	}

	lookups.Store(0)
	rep, err = RunRest(ctx, RestConfig{Target: authSrv.URL + "/api/v1/works", Token: token, NoAuthTarget: noauthSrv.URL + "/api/v1/works",
		Clients: []int{1, 2}, StepDuration: 300 * time.Millisecond, Round: 100 * time.Millisecond, Triples: 5})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.Items < 6 {
		t.Fatalf("%d works, %d errors: %+v", rep.Items, rep.Errors, rep.Steps)
	}
	a := rep.AuthCost
	if a == nil || a.Auth.Items != rep.Items || a.NoAuth.Items < 6 || a.NoAuth.Errors != 0 || a.Rounds != 6 || a.RoundSeconds != 0.1 {
		t.Fatalf("comparison %+v", a)
	}
	if a.RateRatio <= 0 || a.P50Ratio <= 0 || a.P99Ratio <= 0 || a.Auth.LatencyMS.P50 <= 0 || a.NoAuth.LatencyMS.P99 <= 0 ||
		a.RateRatioLow <= 0 || a.RateRatioLow > a.RateRatioHigh {
		t.Fatalf("ratios %+v", a)
	}
	var stepItems int64
	for _, st := range rep.Steps {
		if st.AuthCost == nil || st.AuthCost.Rounds != 3 || st.AuthCost.Auth.Items != st.Items || st.AuthCost.NoAuth.Items < 3 {
			t.Fatalf("step %+v: comparison %+v", st, st.AuthCost)
		}
		stepItems += st.AuthCost.NoAuth.Items
	}
	if stepItems != a.NoAuth.Items {
		t.Errorf("noauth steps sum to %d works, the run says %d", stepItems, a.NoAuth.Items)
	}
	// both sides created their works as the token's user
	var created int64
	for before := int64(0); ; {
		page, err := acc.Audit(ctx, shelfmark.AuditQuery{Actor: "admin", Before: before, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if e.Action == "create" && e.Outcome == shelfmark.AuditOK {
				if e.Token != caller.Token || e.User != caller.User {
					t.Fatalf("audit %+v: want user %d token %d", e, caller.User, caller.Token)
				}
				created++
			}
			before = e.Key
		}
	}
	if created != a.Auth.Items+a.NoAuth.Items {
		t.Errorf("%d works created by admin in the audit trail, the run says %d + %d", created, a.Auth.Items, a.NoAuth.Items)
	}
	if n := lookups.Load(); n != 1 {
		t.Errorf("%d token lookups in the database for %d authenticated requests, want 1", n, rep.Items)
	}
}

// TestAuthCostInterval: the interval of the rate ratio comes from the
// paired rounds' ratios: none when there is one pair, a point when every
// pair agrees, and around their geometric mean otherwise.
func TestAuthCostInterval(t *testing.T) {
	a := AuthCost{Auth: Side{RatePerS: 90}, NoAuth: Side{RatePerS: 100}}
	a.ratios([]float64{math.Log(0.9)})
	if a.RateRatio != 0.9 || a.RateRatioLow != 0 || a.RateRatioHigh != 0 {
		t.Fatalf("one pair: %+v", a)
	}
	a.ratios([]float64{math.Log(0.9), math.Log(0.9), math.Log(0.9)})
	if math.Abs(a.RateRatioLow-0.9) > 1e-12 || math.Abs(a.RateRatioHigh-0.9) > 1e-12 {
		t.Fatalf("pairs that agree: %+v", a)
	}
	// ratios 0.8 and 1.25: logarithms ±0.223, mean 0, sd 0.316, half-width
	// 1.96·0.316/√2 = 0.437
	a.ratios([]float64{math.Log(0.8), math.Log(1.25)})
	if math.Abs(a.RateRatioLow-math.Exp(-0.4374)) > 1e-3 || math.Abs(a.RateRatioHigh-math.Exp(0.4374)) > 1e-3 {
		t.Fatalf("pairs that differ: %+v", a)
	}
}

// BenchmarkEnvelope serves requests in process through the server's
// envelope with a token (auth) and with a fixed caller that reads no
// credential (noauth): the difference per request is what authenticating
// a request costs, without the network and the load generator. healthz is
// the envelope alone; work reads a work of 54 statements.
//
//	go test -tags sqlite_fts5 -run '^$' -bench Envelope -count 5 ./bench/
func BenchmarkEnvelope(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "env.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		b.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(b.TempDir(), "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	ids, err := shelfmark.LoadIDCodec(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{IDs: ids})
	b.Cleanup(func() { repo.Close(); db.Close(); blobs.Close() })
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		b.Fatal(err)
	}
	token, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin})
	if err != nil {
		b.Fatal(err)
	}
	caller, err := acc.Authenticate(ctx, token)
	if err != nil {
		b.Fatal(err)
	}
	work, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: patentStatements(1, 0, 54)})
	if err != nil {
		b.Fatal(err)
	}
	opts := shttp.Options{Resources: repo, Blobs: blobs, Storage: db, Accounts: acc}
	auth := shttp.NewServer(opts)
	opts.Authenticator = FixedCaller{caller}
	noauth := shttp.NewServer(opts)
	for _, path := range []struct{ name, path string }{{"healthz", "/healthz"}, {"work", "/api/v1/resources/" + string(work.ID)}} {
		for _, side := range []struct {
			name  string
			srv   http.Handler
			token string
		}{{"auth", auth, token}, {"noauth", noauth, ""}} {
			b.Run(path.name+"/"+side.name, func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, path.path, nil)
				if side.token != "" {
					req.Header.Set("Authorization", "Bearer "+side.token)
				}
				for b.Loop() {
					w := httptest.NewRecorder()
					side.srv.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("%s: %d %s", path.path, w.Code, w.Body)
					}
				}
			})
		}
	}
}
