package http

// This file holds the harness of the API tests: a real stack per test
// (SQLite in a temporary directory with a statement tracer, a local blob
// store, the repository engine, the Server behind httptest on loopback) and
// a request helper that records every error body it sees, so TestMain can
// check that each one is JSON with a code and a message.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/argon2id"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/http/admission"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestMain runs the tests, then checks every error response the helper saw.
func TestMain(m *testing.M) {
	code := m.Run()
	if bad := badErrorBodies(); len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d error responses are not JSON with a non-empty code and message:\n", len(bad))
		for _, b := range bad {
			fmt.Fprintln(os.Stderr, "  "+b)
		}
		code = 1
	} else if testing.Verbose() {
		fmt.Printf("checked %d error responses: each is JSON with a code and a message\n", countErrors())
	}
	os.Exit(code)
}

// seenError is one error response, kept for TestMain.
type seenError struct {
	where  string // method, path and test
	status int
	ctype  string
	body   []byte
}

var (
	errorsMu   sync.Mutex
	errorsSeen []seenError
)

func recordError(e seenError) {
	errorsMu.Lock()
	errorsSeen = append(errorsSeen, e)
	errorsMu.Unlock()
}

func countErrors() int {
	errorsMu.Lock()
	defer errorsMu.Unlock()
	return len(errorsSeen)
}

// checkErrorBody returns why an error body is not a proper API error (or,
// for the web interface, an HTML page saying what happened), or "".
func checkErrorBody(ctype string, body []byte) string {
	if strings.HasPrefix(ctype, "text/html") {
		if !bytes.Contains(body, []byte(`<main id="main"`)) || !bytes.Contains(body, []byte("<h1>")) {
			return "an HTML error without the page frame and a heading"
		}
		return ""
	}
	if !strings.HasPrefix(ctype, "application/json") {
		return fmt.Sprintf("Content-Type %q", ctype)
	}
	var eb struct {
		Code    *string `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(body, &eb); err != nil {
		return fmt.Sprintf("not JSON (%v)", err)
	}
	if eb.Code == nil || *eb.Code == "" {
		return "no code"
	}
	if eb.Message == nil || *eb.Message == "" {
		return "no message"
	}
	return ""
}

// badErrorBodies lists the recorded error responses that are not JSON with
// a non-empty code and message.
func badErrorBodies() []string {
	errorsMu.Lock()
	defer errorsMu.Unlock()
	var bad []string
	for _, e := range errorsSeen {
		if why := checkErrorBody(e.ctype, e.body); why != "" {
			bad = append(bad, fmt.Sprintf("%s -> %d: %s: %.200q", e.where, e.status, why, e.body))
		}
	}
	return bad
}

// tracer records the SQL statements the backend runs.
type tracer struct {
	mu    sync.Mutex
	stmts []string
}

func (tr *tracer) trace(query string, _ int64) {
	q := strings.Join(strings.Fields(query), " ")
	tr.mu.Lock()
	tr.stmts = append(tr.stmts, q)
	tr.mu.Unlock()
}

func (tr *tracer) mark() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.stmts)
}

func (tr *tracer) since(mark int) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.stmts[mark:]...)
}

// sinceSorted is since, sorted: what a request that reads a book ran, as
// a manifest, a PDF or a search inside it reads the book's two halves at
// once (eachChild), so that the order of their statements between them
// varies while the statements do not.
func (tr *tracer) sinceSorted(mark int) []string {
	st := tr.since(mark)
	slices.Sort(st)
	return st
}

// keyReservation is the one write a failed request may make: reserving a
// block of keys for ids (rule R4), in a transaction of its own. Its
// placeholder is numbered or not: only the SQL around it is fixed.
var keyReservation = regexp.MustCompile(`^UPDATE counters SET value = value \+ \?\d* WHERE name = 'key' RETURNING value$`)

// seqReservation is what the engine's group commit runs first in every
// transaction, before it checks the operations it carries.
const seqReservation = "UPDATE counters SET value = value + ? WHERE name = 'seq' RETURNING value"

var writeRE = regexp.MustCompile(`(?i)^\s*(INSERT|UPDATE|DELETE|REPLACE)\b`)

// writes returns the statements among stmts that change the database,
// except the key block reservation.
func writes(stmts []string) []string {
	var out []string
	for _, s := range stmts {
		if writeRE.MatchString(s) && !keyReservation.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

// testEnv is one test's stack.
type testEnv struct {
	t      testing.TB
	dbPath string
	db     *sqlite.DB
	repo   *shelfmark.Repository
	srv    *Server
	// live is the server the test server hands requests to: srv, or the
	// one reconfigure built last
	live    atomic.Pointer[Server]
	ts      *httptest.Server
	client  *http.Client
	tr      *tracer
	blobDir string
	blobs   *blob.LocalStore
	dbOnce  sync.Once
	// accounts is the account service; admin the secret of an
	// admin-scoped token of the user "admin", which do and stream send
	// unless told otherwise (see request).
	accounts *shelfmark.Accounts
	admin    string
	// clock is the time of the accounts (token expiry) and of the
	// brute-force limiter, which tests move on instead of sleeping.
	clock *testClock
}

// testClock is the wall clock moved on by a test.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// advance moves the clock on by d.
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// closeDB closes the database (once: the cleanup calls it too).
func (e *testEnv) closeDB() error {
	var err error
	e.dbOnce.Do(func() { err = e.db.Close() })
	return err
}

// newEnv builds a fresh stack; opts may set limits (the services are
// filled in here).
func newEnv(t testing.TB, opts Options) *testEnv {
	t.Helper()
	tr := &tracer{}
	dbPath := filepath.Join(t.TempDir(), "shelfmark.db")
	// Relaxed: no fsync per commit, so the suite stays fast on a busy
	// machine; the statements run are the same.
	db, err := sqlite.Open(context.Background(), dbPath, sqlite.Options{Tracer: tr.trace, Relaxed: true, ReadConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	blobDir := filepath.Join(t.TempDir(), "blobs")
	blobs, err := blob.NewLocal(blobDir)
	if err != nil {
		t.Fatal(err)
	}
	metrics := NewMetrics(db, nil)
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{Observer: metrics})
	opts.Resources, opts.Blobs, opts.Storage, opts.Metrics, opts.Jobs = repo, blobs, db, metrics, repo
	noRateShares(&opts)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	clock := &testClock{}
	accounts := newTestAccounts(t, repo, clock)
	if opts.Accounts == nil {
		opts.Accounts = accounts
	}
	admin := newAdmin(t, accounts)
	srv := NewServer(opts)
	srv.limiter.now = clock.now
	var live func() *Server
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { live().ServeHTTP(w, r) })) // 127.0.0.1 only
	e := &testEnv{t: t, dbPath: dbPath, db: db, repo: repo, srv: srv, ts: ts, tr: tr, blobDir: blobDir, blobs: blobs,
		accounts: accounts, admin: admin, clock: clock,
		client: &http.Client{
			Transport: &http.Transport{DisableCompression: true},
			// Redirects are answers under test, not to be followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	e.live.Store(srv)
	live = e.live.Load
	t.Cleanup(func() {
		ts.Close()
		e.client.CloseIdleConnections()
		repo.Close()
		e.closeDB()
		blobs.Close()
	})
	return e
}

// noRateShares leaves admission's class budgets and queues on but takes
// away the anonymous rate shares and the shared budget of expensive
// requests, unless the test sets them: the harness's tests send a route's
// requests from one address as fast as they are answered, some at once,
// to check what they answer (admission_test.go checks the rates and the
// shared budget).
func noRateShares(opts *Options) {
	if opts.Admission.Expensive == 0 {
		opts.Admission.Expensive = 64
	}
	if opts.Admission.Rates != nil {
		return
	}
	opts.Admission.Rates = map[admission.Class]float64{}
	for _, c := range admission.Classes() {
		opts.Admission.Rates[c] = 0
	}
}

// reconfigure builds the server again with its options changed by
// change, as an operator restarting it with other settings would: the
// store, the content store, the accounts and the test server stay, and
// requests from then on reach the new server; the old one is shut down.
func (e *testEnv) reconfigure(change func(*Options)) {
	e.t.Helper()
	opts := e.srv.opts
	change(&opts)
	old := e.srv
	srv := NewServer(opts)
	srv.limiter.now = e.clock.now
	e.srv = srv
	e.live.Store(srv)
	if err := old.Shutdown(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// newTestAccounts returns an account service over repo with a cheap
// password hash (the tests check behaviour, not the hash's cost) and a
// cache that outlives any test, so that a request's statements are its
// route's, not its token check's.
func newTestAccounts(t testing.TB, repo *shelfmark.Repository, clock *testClock) *shelfmark.Accounts {
	t.Helper()
	hasher, err := argon2id.New(argon2id.Params{Memory: 64, Time: 1, Threads: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Hasher: hasher, CacheTTL: time.Hour, Now: clock.now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// newAdmin makes the user "admin" (password adminPassword) and an admin-scoped
// token for it, checked once so that it is in the accounts' cache, and
// returns the token.
func newAdmin(t testing.TB, accounts *shelfmark.Accounts) string {
	t.Helper()
	ctx := context.Background() // the process itself: the system
	if _, err := accounts.AddUser(ctx, "admin", adminPassword, true, nil); err != nil {
		t.Fatal(err)
	}
	return newToken(t, accounts, "admin", shelfmark.ScopeAdmin)
}

// adminPassword is the password of the test environment's admin.
const adminPassword = "admin-password"

// newToken makes a token for user with scope and warms the accounts'
// cache with it.
func newToken(t testing.TB, accounts *shelfmark.Accounts, user string, scope shelfmark.Scope) string {
	t.Helper()
	ctx := context.Background()
	secret, _, err := accounts.CreateToken(ctx, shelfmark.NewToken{User: user, Kind: shelfmark.TokenAPI, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	return secret
}

// addUser makes a user (not an administrator) in groups and returns a
// token of hers with scope.
func (e *testEnv) addUser(name string, scope shelfmark.Scope, groups ...string) string {
	e.t.Helper()
	if _, err := e.accounts.AddUser(context.Background(), name, name+"-password", false, groups); err != nil {
		e.t.Fatal(err)
	}
	return newToken(e.t, e.accounts, name, scope)
}

// as returns the headers that send a token (or, with "", no credential).
func as(token string, hdrs ...string) []string {
	if token == "" {
		return append([]string{"Authorization", ""}, hdrs...)
	}
	return append([]string{"Authorization", "Bearer " + token}, hdrs...)
}

// response is what the helper returns.
type response struct {
	Method, Path string
	Status       int
	Header       http.Header
	Body         []byte
	// Stmts are the SQL statements run while the request was served.
	Stmts []string
}

// unknownLength hides the length of a reader from net/http, so the body
// is sent chunked.
type unknownLength struct{ io.Reader }

// do sends a request. body is nil, a string, []byte, or an io.Reader (sent
// chunked unless contentLength >= 0 is given through hdrs as
// "Content-Length"); hdrs are name, value pairs (a name may repeat).
func (e *testEnv) do(method, path string, body any, hdrs ...string) *response {
	e.t.Helper()
	req := e.request(method, path, body, hdrs...)
	mark := e.tr.mark()
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading the response: %v", method, path, err)
	}
	r := &response{Method: method, Path: path, Status: res.StatusCode, Header: res.Header, Body: b, Stmts: e.tr.since(mark)}
	e.noteError(r)
	return r
}

// stream sends a request and returns the response with its body unread
// (the caller closes it); the error bodies of streamed responses are
// checked by the caller.
func (e *testEnv) stream(method, path string, body any, hdrs ...string) *http.Response {
	e.t.Helper()
	res, err := e.client.Do(e.request(method, path, body, hdrs...))
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return res
}

func (e *testEnv) request(method, path string, body any, hdrs ...string) *http.Request {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		e.t.Fatalf("do: body of type %T", body)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(hdrs)%2 != 0 {
		e.t.Fatalf("do: odd header list %q", hdrs)
	}
	// The admin's token goes with every request that brings no
	// credential of its own; "Authorization", "" sends none (anonymous).
	credentials := false
	for i := 0; i < len(hdrs); i += 2 {
		credentials = credentials || strings.EqualFold(hdrs[i], "Authorization") || strings.EqualFold(hdrs[i], "Cookie")
	}
	if !credentials && e.admin != "" {
		req.Header.Set("Authorization", "Bearer "+e.admin)
	}
	for i := 0; i < len(hdrs); i += 2 {
		if strings.EqualFold(hdrs[i], "Authorization") && hdrs[i+1] == "" {
			continue
		}
		if strings.EqualFold(hdrs[i], "Content-Length") {
			if _, err := fmt.Sscan(hdrs[i+1], &req.ContentLength); err != nil {
				e.t.Fatal(err)
			}
			continue
		}
		req.Header.Add(hdrs[i], hdrs[i+1])
	}
	return req
}

// noteError records an error response for TestMain and checks it now.
func (e *testEnv) noteError(r *response) {
	e.t.Helper()
	if r.Status < 400 || r.Method == http.MethodHead {
		return
	}
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/html") && (strings.HasPrefix(r.Path, "/api/") || strings.HasPrefix(r.Path, "/oai")) {
		e.t.Errorf("%s %s -> %d: an API error answered as HTML", r.Method, r.Path, r.Status)
	}
	recordError(seenError{where: fmt.Sprintf("%s %s (%s)", r.Method, r.Path, e.t.Name()), status: r.Status, ctype: ct, body: r.Body})
	if why := checkErrorBody(ct, r.Body); why != "" {
		e.t.Errorf("%s %s -> %d: error body: %s: %q", r.Method, r.Path, r.Status, why, r.Body)
	}
}

// apiError is the decoded body of an error response.
type apiError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// wantError checks the status and code of an error response and returns
// its body.
func (r *response) wantError(t testing.TB, status int, code string) *apiError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", r.Method, r.Path, r.Status, status, r.Body)
	}
	var eb apiError
	if err := json.Unmarshal(r.Body, &eb); err != nil {
		t.Fatalf("%s %s: error body is not JSON: %v: %q", r.Method, r.Path, err, r.Body)
	}
	if eb.Code != code {
		t.Fatalf("%s %s: code %q, want %q; body %s", r.Method, r.Path, eb.Code, code, r.Body)
	}
	if eb.Message == "" {
		t.Fatalf("%s %s: empty message", r.Method, r.Path)
	}
	return &eb
}

// want checks the status of a response.
func (r *response) want(t testing.TB, status int) *response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", r.Method, r.Path, r.Status, status, r.Body)
	}
	return r
}

// json decodes the body into v.
func (r *response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s %s: body is not the JSON expected: %v: %s", r.Method, r.Path, err, r.Body)
	}
}

// wantNoWrites checks that the request changed nothing in the database:
// no INSERT, UPDATE or DELETE but the key block reservation.
func (r *response) wantNoWrites(t testing.TB) {
	t.Helper()
	if w := writes(r.Stmts); len(w) > 0 {
		t.Errorf("%s %s -> %d ran writes: %q", r.Method, r.Path, r.Status, w)
	}
}

// wantNoDataWrites is wantNoWrites for a request that failed inside a
// group commit: the engine takes sequence numbers for a batch before it
// checks its operations, so the 'seq' counter may move (a gap in the
// sequence, reported separately); no table holding data may change.
func (r *response) wantNoDataWrites(t testing.TB) {
	t.Helper()
	var w []string
	for _, s := range writes(r.Stmts) {
		if s != seqReservation {
			w = append(w, s)
		}
	}
	if len(w) > 0 {
		t.Errorf("%s %s -> %d ran writes: %q", r.Method, r.Path, r.Status, w)
	}
}

// wantNoStatements checks that the request did not touch the database.
func (r *response) wantNoStatements(t testing.TB) {
	t.Helper()
	if len(r.Stmts) > 0 {
		t.Errorf("%s %s -> %d ran %d statements: %q", r.Method, r.Path, r.Status, len(r.Stmts), r.Stmts)
	}
}

// counts returns the number of rows of the data tables, read through a
// connection of its own.
func (e *testEnv) counts() map[string]int {
	e.t.Helper()
	conn, err := sql.Open("sqlite3", "file:"+e.dbPath+"?mode=ro&_query_only=1")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close()
	out := map[string]int{}
	for _, table := range []string{"resources", "fields", "memberships", "files"} {
		var n int
		if err := conn.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			e.t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// wantCounts checks that the data tables hold what they held before.
func (e *testEnv) wantCounts(before map[string]int) {
	e.t.Helper()
	if after := e.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		e.t.Errorf("rows changed: before %v, after %v", before, after)
	}
}

// blobFiles lists the SHA-256 of every blob stored, sorted.
func (e *testEnv) blobFiles() []string {
	e.t.Helper()
	var shas []string
	if err := e.blobs.Walk(context.Background(), func(sha string) error {
		shas = append(shas, sha)
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	sort.Strings(shas)
	return shas
}

// wantTmpEmpty checks that the blob store's tmp/ area holds nothing.
func (e *testEnv) wantTmpEmpty() {
	e.t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.blobDir, "tmp"))
	if err != nil {
		e.t.Fatal(err)
	}
	if len(entries) > 0 {
		names := make([]string, len(entries))
		for i, en := range entries {
			names[i] = en.Name()
		}
		e.t.Errorf("blob tmp/ holds %q", names)
	}
}

// resource is the JSON of a resource as the API returns it.
type resource struct {
	ID         shelfmark.ID      `json:"id"`
	Kind       string            `json:"kind"`
	Visibility string            `json:"visibility"`
	Embargo    *string           `json:"embargo"`
	Parent     shelfmark.ID      `json:"parent"`
	Position   int               `json:"position"`
	MemberOf   []shelfmark.ID    `json:"memberOf"`
	Metadata   json.RawMessage   `json:"metadata"`
	File       *api.FileJSON     `json:"file"`
	Version    int64             `json:"version"`
	Seq        int64             `json:"seq"`
	Created    string            `json:"created"`
	Modified   string            `json:"modified"`
	Links      map[string]string `json:"links"`
}

// pageItem is one resource in a listing.
type pageItem struct {
	ID       shelfmark.ID `json:"id"`
	Kind     string       `json:"kind"`
	Position int          `json:"position"`
	Version  int64        `json:"version"`
}

// page is a listing page.
type page struct {
	Items []pageItem `json:"items"`
	Next  string     `json:"next"`
}

// create posts a JSON body to a creation route and returns the resource.
func (e *testEnv) create(path, body string) *resource {
	e.t.Helper()
	r := e.do("POST", path, body, "Content-Type", "application/json").want(e.t, http.StatusCreated)
	var res resource
	r.json(e.t, &res)
	if got := r.Header.Get("Location"); got != "/api/v1/resources/"+string(res.ID) {
		e.t.Fatalf("Location %q for %s", got, res.ID)
	}
	return &res
}

// get reads a resource as JSON.
func (e *testEnv) get(id shelfmark.ID) *resource {
	e.t.Helper()
	r := e.do("GET", "/api/v1/resources/"+string(id), nil).want(e.t, http.StatusOK)
	var res resource
	r.json(e.t, &res)
	return &res
}

// iri is the IRI of a resource as the server names it.
func (e *testEnv) iri(id shelfmark.ID) string { return e.ts.URL + "/api/v1/resources/" + string(id) }
