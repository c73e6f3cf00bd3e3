package http

// The harness of the access-policy tests (matrix_test.go, leak_test.go): the
// same stack as newEnv, on SQLite or on a fresh schema of the test
// PostgreSQL server, with the OAI-PMH provider mounted at /oai and its
// projector, users holding each role on a collection, and helpers to make
// resources through the engine as the system or as a user.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/sqlite"
)

// testDSNEnv names the test PostgreSQL server.
const testDSNEnv = "SHELFMARK_TEST_DATABASE_URL"

// policyEnv is a stack for the access-policy tests.
type policyEnv struct {
	*testEnv
	backend string
	store   shelfmark.Storage
	proj    *oai.Projector
	// keeper writes the preservation copy the server serves versions of
	// (versions_helpers_test.go)
	keeper *preserve.Preserver
}

// onBackends runs f on SQLite and, when SHELFMARK_TEST_DATABASE_URL is set,
// on PostgreSQL (each run on a stack, and a schema, of its own).
func onBackends(t *testing.T, f func(t *testing.T, backend string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, "sqlite") })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(testDSNEnv) == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not set", testDSNEnv)
			}
			t.Skipf("%s is not set: run scripts/postgres.sh start and export %s=$(scripts/postgres.sh url)", testDSNEnv, testDSNEnv)
		}
		f(t, "postgres")
	})
}

var policySchemaSeq atomic.Int64

// policySchema makes an empty schema, dropped when the test ends, and
// returns a DSN whose search_path is that schema.
func policySchema(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	dsn := os.Getenv(testDSNEnv)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("http%d_%d_%d", os.Getpid(), policySchemaSeq.Add(1), rand.IntN(1e6))
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		pool.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		pool.Close()
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// newPolicyEnv builds a stack on backend ("sqlite" or "postgres"), with
// the OAI-PMH provider at /oai.
func newPolicyEnv(t testing.TB, backend string, opts Options) *policyEnv {
	t.Helper()
	return newPolicyEnvSearchTimeout(t, backend, opts, 0)
}

// newPolicyEnvSearchTimeout is newPolicyEnv whose storage stops search
// statements at searchTimeout (0: the backend's default).
func newPolicyEnvSearchTimeout(t testing.TB, backend string, opts Options, searchTimeout time.Duration) *policyEnv {
	t.Helper()
	return newPolicyEnvTuned(t, backend, opts, envTuning{searchTimeout: searchTimeout})
}

// envTuning are the limits of a policy env's storage and repository that
// a test may lower (0: their defaults).
type envTuning struct {
	searchTimeout time.Duration // the storage's SearchTimeout
	maxListScan   int           // the repository's MaxListScan
}

// newPolicyEnvTuned is newPolicyEnv with the limits of tune.
func newPolicyEnvTuned(t testing.TB, backend string, opts Options, tune envTuning) *policyEnv {
	t.Helper()
	searchTimeout := tune.searchTimeout
	ctx := context.Background()
	tr := &tracer{}
	dir := t.TempDir()
	var (
		store shelfmark.Storage
		err   error
	)
	switch backend {
	case "sqlite":
		store, err = sqlite.Open(ctx, filepath.Join(dir, "shelfmark.db"), sqlite.Options{Tracer: tr.trace, Relaxed: true, ReadConns: 4, SearchTimeout: searchTimeout})
	case "postgres":
		store, err = postgres.Open(ctx, policySchema(t), postgres.Options{Tracer: tr.trace, Relaxed: true, MaxConns: 8, SearchTimeout: searchTimeout})
	default:
		t.Fatalf("no backend %q", backend)
	}
	if err != nil {
		t.Fatal(err)
	}
	blobDir := filepath.Join(dir, "blobs")
	blobs, err := blob.NewLocal(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewMetrics(store, nil)
	// the repository reads the server's clock when a test gives one
	// (opts.Now), so that a test can move both past a date
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{Observer: metrics, Now: opts.Now, MaxListScan: tune.maxListScan})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	formats := oai.DefaultRegistry()
	proj := oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{Logger: quiet, IDs: repo.IDs()})
	prov, err := oai.NewProvider(store, formats, oai.Config{RepositoryName: "Policy tests", AdminEmails: []string{"admin@example.org"},
		Domain: "repo.example.org", PageSize: 2, Logger: quiet, IDs: repo.IDs()})
	if err != nil {
		t.Fatal(err)
	}
	opts.Resources, opts.Blobs, opts.Storage, opts.Metrics, opts.Jobs, opts.OAI = repo, blobs, store, metrics, repo, prov
	noRateShares(&opts)
	keeper := newKeeper(t, dir, store, blobs, repo.IDs())
	opts.History = keeper.History(preserve.HistoryOptions{})
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	clock := &testClock{}
	accounts := newTestAccounts(t, repo, clock)
	opts.Accounts = accounts
	admin := newAdmin(t, accounts)
	srv := NewServer(opts)
	srv.limiter.now = clock.now
	// requests reach the server live holds, which reconfigure replaces
	var live func() *Server
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { live().ServeHTTP(w, r) })) // 127.0.0.1 only
	e := &testEnv{t: t, repo: repo, srv: srv, ts: ts, tr: tr, blobDir: blobDir, blobs: blobs,
		accounts: accounts, admin: admin, clock: clock,
		client: &http.Client{
			Transport:     &http.Transport{DisableCompression: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	e.live.Store(srv)
	live = e.live.Load
	t.Cleanup(func() {
		ts.Close()
		e.client.CloseIdleConnections()
		repo.Close()
		store.Close()
		blobs.Close()
	})
	return &policyEnv{testEnv: e, backend: backend, store: store, proj: proj, keeper: keeper}
}

// callerOf resolves a token into the caller the server would see.
func (e *policyEnv) callerOf(token string) *shelfmark.Caller {
	e.t.Helper()
	c, err := e.accounts.Authenticate(context.Background(), token)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// putBytes stores bytes in the blob store and returns the file that
// carries them.
func (e *policyEnv) putBytes(name, mediaType string, b []byte) *shelfmark.File {
	e.t.Helper()
	bl, err := e.blobs.Put(context.Background(), bytes.NewReader(b), shelfmark.PutOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return &shelfmark.File{Name: name, MediaType: mediaType, Size: bl.Size, SHA256: bl.Digests[shelfmark.SHA256], Use: "original"}
}

// createAll stores resources in one group commit as the caller on ctx
// (the system when it carries none), failing the test on any error.
func (e *policyEnv) createAll(ctx context.Context, nrs []*shelfmark.NewResource) []*shelfmark.Resource {
	e.t.Helper()
	out := make([]*shelfmark.Resource, 0, len(nrs))
	for len(nrs) > 0 {
		n := min(len(nrs), shelfmark.MaxPageSize)
		res, errs := e.repo.CreateResources(ctx, nrs[:n])
		for i, err := range errs {
			if err != nil {
				e.t.Fatalf("create %+v: %v", nrs[i], err)
			}
		}
		out = append(out, res...)
		nrs = nrs[n:]
	}
	return out
}

// grantRoles replaces the grants on a collection, through the API as the
// admin, and checks the answer.
func (e *policyEnv) grantRoles(coll shelfmark.ID, grants []api.GrantJSON) {
	e.t.Helper()
	b, err := json.Marshal(map[string]any{"grants": grants})
	if err != nil {
		e.t.Fatal(err)
	}
	e.do("PUT", "/api/v1/resources/"+string(coll)+"/roles", string(b), "Content-Type", "application/json").want(e.t, http.StatusOK)
}

// title is a dc:title statement.
func titled(s string) []shelfmark.Statement {
	return []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(s)}}
}

// openAPIOperations lists "METHOD /path" of every operation in the
// served OpenAPI document.
func openAPIOperations(t testing.TB, doc []byte) []string {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var ops []string
	for p, item := range d.Paths {
		for m := range item {
			switch m {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				ops = append(ops, strings.ToUpper(m)+" "+p)
			}
		}
	}
	return ops
}
