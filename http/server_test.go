package http

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// openAPIPath turns a ServeMux pattern path into an OpenAPI path: {name}
// stays, {name...} loses its dots and {$} (end of path) is dropped.
func openAPIPath(pattern string) string {
	p := strings.ReplaceAll(pattern, "{$}", "")
	return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\.\.\.\}`).ReplaceAllString(p, "{$1}")
}

type openAPIParam struct {
	Name     string `json:"name"`
	In       string `json:"in"`
	Required bool   `json:"required"`
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("GET", "/api/v1/openapi.json", nil).want(t, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if !json.Valid(r.Body) {
		t.Fatal("the OpenAPI document is not valid JSON")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage
	}
	r.json(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) == 0 {
		t.Fatalf("openapi %q with %d paths", doc.OpenAPI, len(doc.Paths))
	}

	registered := map[string]bool{}
	for _, rt := range e.srv.routes() {
		if rt.handler == nil || rt.method == "" || !strings.HasPrefix(rt.pattern, "/") {
			t.Errorf("route %+v", rt)
		}
		key := strings.ToLower(rt.method) + " " + openAPIPath(rt.pattern)
		if registered[key] {
			t.Errorf("route %s registered twice", key)
		}
		registered[key] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths {
		var shared []openAPIParam // parameters of the path item, for every operation
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		for m, op := range item {
			if !slices.Contains(httpMethods, m) {
				continue // parameters, summary...
			}
			key := m + " " + path
			documented[key] = true
			if !registered[key] {
				t.Errorf("the document has %s, which no route serves", key)
			}
			// Every {param} of the path is declared as a required path
			// parameter (on the operation or the path item).
			var o struct {
				Parameters []openAPIParam             `json:"parameters"`
				Responses  map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(op, &o); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			o.Parameters = append(o.Parameters, shared...)
			if len(o.Responses) == 0 {
				t.Errorf("%s has no responses", key)
			}
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
				if !slices.ContainsFunc(o.Parameters, func(p openAPIParam) bool { return p.Name == m[1] && p.In == "path" && p.Required }) {
					t.Errorf("%s does not declare the path parameter %s", key, m[1])
				}
			}
		}
	}
	for key := range registered {
		if !documented[key] {
			t.Errorf("the route %s is not in the document", key)
		}
	}
	if len(registered) != len(documented) {
		t.Errorf("%d routes, %d documented operations", len(registered), len(documented))
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("GET", "/healthz", nil).want(t, http.StatusOK)
	if string(r.Body) != "ok\n" {
		t.Errorf("healthz %q", r.Body)
	}
	r = e.do("GET", "/readyz", nil).want(t, http.StatusOK)
	if !strings.HasPrefix(string(r.Body), "database: ok\n") || !strings.HasSuffix(string(r.Body), "\nready\n") {
		t.Errorf("readyz %q", r.Body)
	}
	// Some traffic: creates (group commits), a read and two errors.
	coll := e.create("/api/v1/collections", `{}`)
	e.create("/api/v1/works", `{"memberOf": ["`+string(coll.ID)+`"]}`)
	e.get(coll.ID)
	e.do("GET", "/api/v1/resources/"+string(e.repo.IDs().Encode(shelfmark.MaxKey)), nil).want(t, http.StatusNotFound)
	e.do("POST", "/api/v1/works", "{", "Content-Type", "application/json").want(t, http.StatusBadRequest)

	r = e.do("GET", "/metrics", nil).want(t, http.StatusOK)
	text := string(r.Body)
	for _, want := range []string{
		`shelfmark_http_requests_total{code="201",method="POST",route="POST /api/v1/works"} 1`,
		`shelfmark_http_requests_total{code="201",method="POST",route="POST /api/v1/collections"} 1`,
		`shelfmark_http_requests_total{code="200",method="GET",route="GET /api/v1/resources/{id}"} 1`,
		`shelfmark_http_requests_total{code="404",method="GET",route="GET /api/v1/resources/{id}"} 1`,
		`shelfmark_http_requests_total{code="400",method="POST",route="POST /api/v1/works"} 1`,
		`shelfmark_http_requests_total{code="200",method="GET",route="GET /healthz"} 1`,
		`shelfmark_http_request_duration_seconds_count{method="GET",route="GET /readyz"} 1`,
		`shelfmark_commit_batch_operations_bucket{le="1"}`,
		`shelfmark_commit_duration_seconds_count`,
		`shelfmark_commit_failures_total 0`,
		`shelfmark_db_pool_in_use{backend="sqlite"}`,
		`shelfmark_db_pool_max_connections{backend="sqlite"}`,
		`shelfmark_db_wal_bytes{backend="sqlite"}`,
		`shelfmark_db_wal_checkpoints_total{backend="sqlite",result="busy"} 0`,
		`shelfmark_db_wal_passive_checkpoints_total{backend="sqlite",result="failed"} 0`,
		`shelfmark_db_wal_passive_checkpoints_total{backend="sqlite",result="catch_up"}`,
	} {
		if !strings.Contains(text, want+"\n") && !strings.Contains(text, want+" ") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Two creates were two group commits of one operation each.
	if got := metricValue(t, text, "shelfmark_commit_batch_operations_count"); got < 2 {
		t.Errorf("shelfmark_commit_batch_operations_count %v", got)
	}
	if got := metricValue(t, text, `shelfmark_db_pool_max_connections{backend="sqlite"}`); got < 1 {
		t.Errorf("max connections %v", got)
	}

	// With the database gone, the server is not ready.
	if err := e.closeDB(); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/readyz", nil).wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
	e.do("GET", "/healthz", nil).want(t, http.StatusOK)
}

// metricValue returns the value of the sample line starting with name.
func metricValue(t *testing.T, text, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no sample %s", name)
	return 0
}
