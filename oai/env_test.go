package oai

// The harness of the provider tests: a real stack per backend (SQLite in a
// temporary directory, or a fresh schema of the test PostgreSQL server), a
// local blob store, the repository engine, a projector and the provider
// behind httptest on loopback, with one clock for both so datestamps are
// known; and xmllint validation of every response a test fetched.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

const dsnEnv = "SHELFMARK_TEST_DATABASE_URL"

// clock is a settable time shared by the projector and the provider.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// env is one stack under test.
type env struct {
	t       testing.TB
	ctx     context.Context
	store   shelfmark.Storage
	blobs   *blob.LocalStore
	repo    *shelfmark.Repository
	proj    *Projector
	prov    *Provider
	srv     *httptest.Server
	clock   *clock
	dir     string
	queries atomic.Int64 // statements run, when traced
	// traced holds the statements run (text and rows) while tracing is on.
	traceMu sync.Mutex
	tracing bool
	traced  []string
	// responses holds every response body fetched, validated at Cleanup.
	responses [][]byte
	respMu    sync.Mutex
}

// backends runs f once per backend: SQLite always, PostgreSQL when the
// test database is configured (scripts/test.sh always configures it).
func backends(t *testing.T, f func(t *testing.T, open func(testing.TB, Config) *env)) {
	t.Run("sqlite", func(t *testing.T) { f(t, func(tb testing.TB, c Config) *env { return newEnv(tb, "sqlite", c) }) })
	t.Run("postgres", func(t *testing.T) {
		if os.Getenv(dsnEnv) == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not set", dsnEnv)
			}
			t.Skipf("%s is not set: run scripts/postgres.sh start and export %s=$(scripts/postgres.sh url)", dsnEnv, dsnEnv)
		}
		f(t, func(tb testing.TB, c Config) *env { return newEnv(tb, "postgres", c) })
	})
}

func newEnv(t testing.TB, backend string, cfg Config) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, ctx: ctx, dir: t.TempDir(), clock: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	tracer := func(q string, rows int64) {
		e.queries.Add(1)
		e.traceMu.Lock()
		if e.tracing {
			e.traced = append(e.traced, fmt.Sprintf("%4d rows  %s", rows, strings.Join(strings.Fields(q), " ")))
		}
		e.traceMu.Unlock()
	}
	var err error
	switch backend {
	case "sqlite":
		e.store, err = sqlite.Open(ctx, filepath.Join(e.dir, "db.sqlite"), sqlite.Options{Tracer: tracer})
	case "postgres":
		e.store, err = postgres.Open(ctx, testkit.Schema(t, os.Getenv(dsnEnv)), postgres.Options{Tracer: tracer})
	}
	if err != nil {
		t.Fatal(err)
	}
	e.blobs, err = blob.NewLocal(filepath.Join(e.dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	e.repo = shelfmark.NewRepository(e.store, shelfmark.RepositoryOptions{Now: e.clock.Now})
	formats := DefaultRegistry()
	e.proj = NewProjector(e.store, e.blobs, formats, ProjectorOptions{Now: e.clock.Now})
	cfg.Now = e.clock.Now
	if cfg.Domain == "" {
		cfg.Domain = "repo.example.org"
	}
	e.prov, err = NewProvider(e.store, formats, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/oai", e.prov)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.srv.Close()
		e.repo.Close()
		e.blobs.Close()
		e.store.Close()
		e.validate()
	})
	return e
}

// statements runs fn and returns the statements it ran, each with the
// number of rows it returned.
func (e *env) statements(fn func()) []string {
	e.traceMu.Lock()
	e.tracing, e.traced = true, nil
	e.traceMu.Unlock()
	fn()
	e.traceMu.Lock()
	defer e.traceMu.Unlock()
	e.tracing = false
	return e.traced
}

// project brings the view up to date.
func (e *env) project() {
	e.t.Helper()
	if _, err := e.proj.CatchUp(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// get fetches /oai with a query string and returns the body.
func (e *env) get(query string) string {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + "/oai?" + query)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.read(resp)
}

// post sends the arguments in a form body.
func (e *env) post(form string) string {
	e.t.Helper()
	resp, err := http.Post(e.srv.URL+"/oai", "application/x-www-form-urlencoded", strings.NewReader(form))
	if err != nil {
		e.t.Fatal(err)
	}
	return e.read(resp)
}

func (e *env) read(resp *http.Response) string {
	e.t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/xml") {
		e.t.Fatalf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	e.respMu.Lock()
	e.responses = append(e.responses, b)
	e.respMu.Unlock()
	return string(b)
}

// schemaDir is where the OAI-PMH schemas are (testdata/schemas, copies of
// the shared oai-schemas folder).
func schemaDir(t testing.TB) string {
	dir := os.Getenv("SHELFMARK_OAI_SCHEMAS")
	if dir == "" {
		dir = filepath.Join("testdata", "schemas")
	}
	if _, err := os.Stat(filepath.Join(dir, "OAI-PMH.xsd")); err != nil {
		t.Fatalf("OAI-PMH schemas not found in %s (set SHELFMARK_OAI_SCHEMAS): %v", dir, err)
	}
	return dir
}

// xmllint validates files against the OAI-PMH schema (with oai_dc, MARC 21
// slim and oai-identifier imported) offline, and fails the test with
// xmllint's messages.
func xmllint(t testing.TB, files ...string) {
	t.Helper()
	if len(files) == 0 {
		return
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Fatal("xmllint is not installed: run scripts/testdeps.sh")
	}
	dir := schemaDir(t)
	for len(files) > 0 {
		n := min(len(files), 200)
		cmd := exec.Command("xmllint", append([]string{"--nonet", "--noout", "--schema", filepath.Join(dir, "OAI-PMH.xsd")}, files[:n]...)...)
		cmd.Env = append(os.Environ(), "XML_CATALOG_FILES="+filepath.Join(dir, "catalog.xml"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("xmllint: %v\n%s", err, truncate(string(out), 4000))
		}
		files = files[n:]
	}
}

// validate checks every response the env fetched against the schemas.
func (e *env) validate() {
	e.respMu.Lock()
	defer e.respMu.Unlock()
	if len(e.responses) == 0 {
		return
	}
	dir, err := os.MkdirTemp("", "oai-responses")
	if err != nil {
		e.t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var files []string
	for i, b := range e.responses {
		f := filepath.Join(dir, fmt.Sprintf("r%05d.xml", i))
		if err := os.WriteFile(f, b, 0o600); err != nil {
			e.t.Fatal(err)
		}
		files = append(files, f)
	}
	xmllint(e.t, files...)
	if testing.Verbose() {
		e.t.Logf("xmllint: %d responses valid", len(files))
	}
}
