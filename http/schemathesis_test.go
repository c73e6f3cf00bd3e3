package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// schemathesisSeed makes the generated requests the same on every run, so
// a failure seen once is seen again.
const schemathesisSeed = "20261123"

// schemathesisExamples bounds the requests generated per operation in
// the fuzzing phase, so that both runs take about a minute and a half on a
// busy 2-core machine.
const schemathesisExamples = "15"

// schemathesisConfig (schemathesis.toml) sets the checks. Every check is
// on (schemathesis' default) but two are refined:
//   - negative_data_rejection: a request the document does not allow must
//     be refused with a 4xx. Besides the statuses schemathesis expects,
//     410 (the resource is deleted: any request about it is refused), 412
//     (If-Match is evaluated before the body is read, as RFC 9110 13.2.1
//     has it), 408 and 413 refuse such a request too. POST /api/v1/batch
//     and /api/v1/groups check each item on its own: an item the document
//     does not allow fails alone, with status 400 in its result of a 200
//     answer, so the check does not apply there.
//   - positive_data_acceptance (a request the document allows must
//     succeed) is off: the document cannot say that a member must be a
//     work, an order's children the work's own, a parent a stored
//     resource, a search a word, and so on, so such requests are refused
//     with 400 although their shape is right.
const schemathesisConfig = `
[checks]
negative_data_rejection.expected-statuses = [400, 401, 403, 404, 405, 406, 408, 409, 410, 412, 413, 415, 422, 428, 429]
positive_data_acceptance.enabled = false

[[operations]]
include-path-regex = "^/api/v1/(batch|groups)$"
checks.negative_data_rejection.enabled = false
`

// schemathesisBin finds the schemathesis command: SHELFMARK_SCHEMATHESIS,
// else the one in the test virtualenv (scripts/testdeps.sh installs it in
// $SHELFMARK_BUILD_DIR/venv, next to SHELFMARK_TEST_PYTHON), else PATH.
func schemathesisBin(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("SHELFMARK_SCHEMATHESIS"); p != "" {
		candidates = append(candidates, p)
	}
	if py := os.Getenv("SHELFMARK_TEST_PYTHON"); py != "" {
		candidates = append(candidates, filepath.Join(filepath.Dir(py), "schemathesis"))
	}
	if dir := os.Getenv("SHELFMARK_BUILD_DIR"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "venv", "bin", "schemathesis"))
	}
	for _, c := range candidates {
		if info, err := os.Stat(c); err == nil && !info.IsDir() {
			return c
		}
	}
	if p, err := exec.LookPath("schemathesis"); err == nil {
		return p
	}
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
		t.Fatal("schemathesis is not installed (scripts/testdeps.sh installs it) and SHELFMARK_REQUIRE_TOOLS=1")
	}
	t.Skip("schemathesis is not installed (scripts/testdeps.sh installs it in .build/venv)")
	return ""
}

// TestSchemathesis runs schemathesis against the OpenAPI document a real
// server serves, with its checks: each answer's status must be one the
// document lists for the operation, its Content-Type one it declares, its
// body valid against the declared schema, never a 5xx, a request the
// document does not allow refused, and so on. Requests come from the
// document's schemas (valid and deliberately invalid ones), with a fixed
// seed, so a run is the same every time.
func TestSchemathesis(t *testing.T) {
	bin := schemathesisBin(t)
	// schemathesis sends invalid credentials to every operation (to check
	// their 401) among the admin's good requests, all from one address,
	// and a good credential forgives an address nothing: the brute-force
	// limit is lifted here (auth_test.go and auth_spray_test.go test it).
	e := newEnv(t, Options{MaxAuthFailures: 1 << 30})
	// Some stored resources, so generated requests are not all about
	// absent ones.
	coll := e.create("/api/v1/collections", `{"metadata": {"dc:title": "A collection"}}`)
	work := e.create("/api/v1/works", `{"memberOf": ["`+string(coll.ID)+`"], "metadata": {"dc:title": "A work"}}`)
	e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	// Anonymous: what anyone may do, and the 401 of everything else; the
	// coverage phase (each parameter's boundaries, each body's variants)
	// is enough for that.
	t.Run("anonymous", func(t *testing.T) { runSchemathesis(t, bin, e.ts.URL, "--phases", "coverage") })
	// An administrator: the logic behind every operation, in every phase.
	t.Run("admin", func(t *testing.T) { runSchemathesis(t, bin, e.ts.URL, "-H", "Authorization: Bearer "+e.admin) })
}

// runSchemathesis runs schemathesis against the server at base, with
// extra arguments (for example -H "name: value"), and fails the test with
// its report if it finds anything.
func runSchemathesis(t *testing.T, bin, base string, extra ...string) {
	t.Helper()
	args := []string{"run", base + "/api/v1/openapi.json",
		"--max-examples", schemathesisExamples,
		"--seed", schemathesisSeed,
		// One worker: hypothesis' lambda descriptions race in Python
		// 3.11 with more ("AST constructor recursion depth mismatch").
		"--workers", "1",
		"--continue-on-failure",
		"--generation-database", "none",
		// Credentials are the test's to give (-H), never made up: made-up
		// tokens would only meet the brute-force limiter.
		"--generation-with-security-parameters", "false",
		"--request-timeout", "60",
		"--no-color",
		"--suppress-health-check", "all",
	}
	args = append(args, extra...)
	dir := t.TempDir() // its reports and caches stay out of the tree
	if err := os.WriteFile(filepath.Join(dir, "schemathesis.toml"), []byte(schemathesisConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir // schemathesis reads schemathesis.toml from there
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s: %s", bin, strings.Join(redactAuth(args), " "), time.Since(start).Round(time.Second))
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		t.Fatalf("schemathesis found mismatches between the document and the server:\n%s", out)
	case err != nil:
		t.Fatalf("schemathesis: %v\n%s", err, out)
	case testing.Verbose():
		t.Logf("%s", out)
	}
}

// redactAuth hides credentials in a logged command line.
func redactAuth(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.HasPrefix(strings.ToLower(a), "authorization:") {
			out[i] = "Authorization: Bearer …"
		}
	}
	return out
}

// TestBodiesOutsideTheDocument: requests whose bodies the document does
// not allow, which the server used to take (schemathesis found them), are
// refused with 400 and change nothing.
func TestBodiesOutsideTheDocument(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{"metadata": {"dc:title": "A work"}}`)
	res := "/api/v1/resources/" + string(work.ID)
	before := e.counts()
	for _, c := range []struct{ method, path, ctype, body string }{
		// null is no JSON object: it used to create a resource, or change
		// nothing and answer 200
		{"POST", "/api/v1/works", "application/json", `null`},
		{"POST", "/api/v1/collections", "application/json", ` null`},
		{"PATCH", res, "application/json", `null`},
		{"PUT", res, "application/json", `[]`},
		{"PUT", res + "/order", "application/json", `null`},
		{"POST", "/api/v1/sources/lookup", "application/json", `"k"`},
		// the children of an order are required: null used to clear it
		{"PUT", res + "/order", "application/json", `{"children": null}`},
		// a source key is a string: null was looked up as ""
		{"POST", "/api/v1/sources/lookup", "application/json", `{"keys": [null]}`},
		{"POST", "/api/v1/sources/lookup", "application/json", `{"keys": ["k", ""]}`},
		// pause and resume ignored their body, whatever it was
		{"POST", "/api/v1/jobs/ocr/pause", "application/json", `[null, null]`},
		{"POST", "/api/v1/jobs/ocr/pause", "application/json", `{"ids": [{}]}`},
		{"POST", "/api/v1/jobs/ocr/resume", "application/json", `{"ids": [1]}`},
		{"POST", "/api/v1/jobs/ocr/retry", "application/json", `{"ids": [0]}`},
	} {
		r := e.do(c.method, c.path, c.body, "Content-Type", c.ctype)
		r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
	var q struct {
		Queues []struct {
			Queue  string `json:"queue"`
			Paused bool   `json:"paused"`
		} `json:"queues"`
	}
	e.do("GET", "/api/v1/jobs", nil).want(t, http.StatusOK).json(t, &q)
	for _, qu := range q.Queues {
		if qu.Paused {
			t.Errorf("queue %s paused by a refused request", qu.Queue)
		}
	}
	// What the document allows still works: null for an absent field, an
	// empty order, a pause without a body.
	e.do("PATCH", res, `{"visibility": null, "add": {"dc:subject": "x"}}`, "Content-Type", "application/json").want(t, http.StatusOK)
	e.do("POST", "/api/v1/works", `{"kind": null, "parent": null, "memberOf": null, "metadata": null, "visibility": null}`, "Content-Type", "application/json").want(t, http.StatusCreated)
	e.do("PUT", res+"/order", `{"children": []}`, "Content-Type", "application/json").want(t, http.StatusOK)
	e.do("POST", "/api/v1/jobs/ocr/pause", nil).want(t, http.StatusOK)
	e.do("POST", "/api/v1/jobs/ocr/resume", `{}`, "Content-Type", "application/json").want(t, http.StatusOK)
}

// TestOpenAPICommonResponses: the document served lists, on every
// operation, the answers any operation of its kind can give, and says of
// its optional query parameters that they may be sent empty.
func TestOpenAPICommonResponses(t *testing.T) {
	e := newEnv(t, Options{})
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"components"`
	}
	e.do("GET", "/api/v1/openapi.json", nil).want(t, http.StatusOK).json(t, &doc)
	for path, item := range doc.Paths {
		for method, raw := range item {
			if !slices.Contains(httpMethods, method) {
				continue
			}
			var op struct {
				RequestBody *json.RawMessage `json:"requestBody"`
				Parameters  []struct {
					openAPIParam
					AllowEmptyValue bool `json:"allowEmptyValue"`
				} `json:"parameters"`
				Responses map[string]struct {
					Ref string `json:"$ref"`
				} `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			want := []string{"401", "408", "415", "429", "500", "503"}
			if op.RequestBody != nil {
				want = append(want, "400", "413")
			}
			if method != "get" {
				want = append(want, "400", "507")
			}
			if strings.Contains(path, "{id}") && strings.HasPrefix(path, "/api/v1/resources/") {
				want = append(want, "404", "410")
			}
			for _, p := range op.Parameters {
				if p.Name == "If-Match" {
					want = append(want, "412")
				}
				if p.In == "query" && !p.Required && p.AllowEmptyValue != (p.Name != "memberOf") {
					t.Errorf("%s %s: query parameter %s: allowEmptyValue %v", method, path, p.Name, p.AllowEmptyValue)
				}
			}
			for _, status := range want {
				resp, ok := op.Responses[status]
				if !ok {
					t.Errorf("%s %s does not list %s", method, path, status)
				} else if name, ok := strings.CutPrefix(resp.Ref, "#/components/responses/"); ok && doc.Components.Responses[name] == nil {
					t.Errorf("%s %s: %s refers to %s, which the document lacks", method, path, status, resp.Ref)
				}
			}
		}
	}
}

// TestUnroutedMethodAnswers405: a method no route of the path takes is
// answered 405 with Allow, whoever sends it and however: not 401 to an
// anonymous caller, nor 415 to a body without a media type (schemathesis
// found 401 for PUT /api/v1/login).
func TestUnroutedMethodAnswers405(t *testing.T) {
	e := newEnv(t, Options{})
	for _, c := range []struct {
		method, path, body, allow string
		hdrs                      []string
	}{
		{"PUT", "/api/v1/login", `{"name": "admin", "password": "x"}`, "POST", []string{"Content-Type", "application/json"}},
		{"TRACE", "/api/v1/login", "", "POST", nil},
		{"DELETE", "/auth/oidc/login", "", "GET, HEAD", nil},
		{"PATCH", "/api/v1/works", "{}", "POST", nil},
		{"DELETE", "/api/v1/jobs", "", "GET, HEAD", nil},
	} {
		for _, who := range []string{"", "Bearer " + e.admin} {
			r := e.do(c.method, c.path, c.body, append([]string{"Authorization", who}, c.hdrs...)...)
			r.wantError(t, http.StatusMethodNotAllowed, EMETHOD)
			if got := r.Header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
		}
	}
}

// TestSearchTextWithUnicodeSpaces: a search text with spaces other than
// ASCII's (no-break, em, ideographic, next line) is read like one with
// plain spaces. The parser used to stop moving at such a space, and the
// request spun a core forever (schemathesis found it with U+00A0).
func TestSearchTextWithUnicodeSpaces(t *testing.T) {
	e := newEnv(t, Options{})
	search := func(q string) *response {
		t.Helper()
		done := make(chan *response, 1)
		go func() { done <- e.do("GET", "/api/v1/search?q="+url.QueryEscape(q), nil) }()
		select {
		case r := <-done:
			return r
		case <-time.After(2 * time.Minute): // not a speed limit: the old parser never answered
			t.Fatalf("q=%q: no answer in 2 minutes", q)
			return nil
		}
	}
	want := search("shelf mark").want(t, http.StatusOK).Body
	for _, space := range []string{"\u00a0", "\u2003", "\u3000", "\u0085", "\u00a0\u00a0 "} {
		if got := search(space+"shelf"+space+"mark"+space).want(t, http.StatusOK).Body; string(got) != string(want) {
			t.Errorf("%q: %s, want %s", space, got, want)
		}
		// spaces alone are no text: everything, as an empty q
		if got, all := search(space).want(t, http.StatusOK).Body, search("").want(t, http.StatusOK).Body; string(got) != string(all) {
			t.Errorf("%q: %s, want what an empty q gives, %s", space, got, all)
		}
		search(space+"*").wantError(t, http.StatusBadRequest, shelfmark.EINVALID) // no words
	}
}
