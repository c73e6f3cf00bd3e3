package http

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

//go:embed openapi.json
var openapiSource []byte

// openapiDoc is the document served: openapi.json with the answers any
// operation of a kind can give added to each such operation (see
// commonResponses), so that no operation, old or new, leaves one out. It
// is built on first use, so that programs that only use the client do not
// build it.
var openapiDoc = sync.OnceValue(func() []byte {
	doc, err := completeOpenAPI(openapiSource)
	if err != nil {
		panic(fmt.Sprintf("http: openapi.json: %v", err))
	}
	return doc
})

// openapi serves the OpenAPI document of the API.
func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openapiDoc())
	return err
}

// commonResponses names, by status, the shared responses (under
// components/responses) that an operation can give because of what it
// is, whatever its handler does:
//   - every request: a bad credential (401), a body that comes too slowly
//     (408) or has no Content-Type (415: any request may carry a body),
//     too many failed credential checks (429), a fault of the server
//     (500), shutting down, overload or a cancelled request (503);
//   - every operation under /api/v1 and /metrics: a caller or origin
//     not allowed (403);
//   - a request body: malformed (400), too large (413);
//   - a change (POST, PUT, PATCH, DELETE): a rule broken (400), no space
//     left (507);
//   - a resource in the path: absent or not visible (404), deleted (410);
//   - an If-Match parameter: a stale or malformed entity tag (412).
func commonResponses(method, path string, op map[string]any) map[string]string {
	out := map[string]string{"401": "Unauthorized", "408": "Timeout", "415": "Unsupported", "429": "TooMany", "500": "Internal", "503": "Unavailable"}
	if strings.HasPrefix(path, "/api/v1/") || path == "/metrics" {
		if path != "/api/v1/openapi.json" {
			out["403"] = "Forbidden"
		}
	}
	if _, ok := op["requestBody"]; ok {
		out["400"], out["413"] = "BadRequest", "TooLarge"
	}
	if method != "get" {
		out["400"], out["507"] = "BadRequest", "StorageFull"
	}
	if strings.Contains(path, "/resources/{id}") {
		out["404"], out["410"] = "NotFound", "Gone"
	}
	params, _ := op["parameters"].([]any)
	if slices.ContainsFunc(params, func(p any) bool {
		m, _ := p.(map[string]any)
		return m["in"] == "header" && strings.EqualFold(fmt.Sprint(m["name"]), "If-Match")
	}) {
		out["412"] = "Precondition"
	}
	return out
}

// completeOpenAPI adds to every operation of doc the common responses it
// does not describe itself, and marks its optional query parameters as
// taking an empty value (see emptyIsAbsent).
func completeOpenAPI(src []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	components, _ := doc["components"].(map[string]any)
	shared, _ := components["responses"].(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, ok := op.(map[string]any)
			if !ok || !slices.Contains(httpMethodNames, method) {
				continue
			}
			responses, _ := o["responses"].(map[string]any)
			if responses == nil {
				return nil, fmt.Errorf("%s %s has no responses", method, path)
			}
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				if m, ok := p.(map[string]any); ok && m["in"] == "query" && m["required"] != true && emptyIsAbsent(fmt.Sprint(m["name"])) {
					m["allowEmptyValue"] = true
				}
			}
			for status, name := range commonResponses(method, path, o) {
				if _, ok := shared[name]; !ok {
					return nil, fmt.Errorf("no components/responses/%s", name)
				}
				if _, ok := responses[status]; !ok {
					responses[status] = map[string]any{"$ref": "#/components/responses/" + name}
				}
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// emptyIsAbsent reports whether an optional query parameter sent empty
// (?limit=) is read as if absent, as every handler reads its parameters
// (url.Values.Get gives "" for both), but memberOf: each of its values
// names a collection, and an empty one names none (400).
func emptyIsAbsent(name string) bool { return name != "memberOf" }

// httpMethodNames are the operation keys of an OpenAPI path item.
var httpMethodNames = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
