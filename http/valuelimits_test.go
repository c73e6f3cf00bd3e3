package http

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestValueLimits sends a literal, an IRI and a language tag just over
// their documented limits through every path that takes metadata (JSON,
// Turtle, JSON-LD, batch, groups, PUT and PATCH): each is refused with 400
// naming the predicate and the limit, and nothing is stored; values at the
// limit are stored.
func TestValueLimits(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{}`)
	self := "/api/v1/resources/" + string(work.ID)
	long := strings.Repeat("a", shelfmark.MaxLiteralBytes+1)
	longIRI := "http://example.org/" + strings.Repeat("i", shelfmark.MaxIRIBytes)
	longLang := "en-" + strings.Repeat("x", shelfmark.MaxLangTagBytes)
	const title = "http://purl.org/dc/terms/title"
	type bad struct {
		name, method, path, ctype, body string
		pred                            string
		limit                           int
	}
	cases := []bad{
		{"JSON literal", "POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:title": "` + long + `"}}`, title, shelfmark.MaxLiteralBytes},
		{"JSON IRI object", "POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:subject": {"@id": "` + longIRI + `"}}}`, "http://purl.org/dc/terms/subject", shelfmark.MaxIRIBytes},
		{"JSON predicate", "POST", "/api/v1/works", "application/json", `{"metadata": {"` + longIRI + `": "x"}}`, longIRI[:80], shelfmark.MaxIRIBytes},
		{"JSON datatype", "POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:date": {"@value": "1", "@type": "` + longIRI + `"}}}`, "http://purl.org/dc/terms/date", shelfmark.MaxIRIBytes},
		{"JSON language", "POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:title": {"@value": "x", "@language": "` + longLang + `"}}}`, title, shelfmark.MaxLangTagBytes},
		{"Turtle literal", "POST", "/api/v1/works", "text/turtle", `<> <` + title + `> """` + long + `""" .`, title, shelfmark.MaxLiteralBytes},
		{"Turtle IRI", "PUT", self, "text/turtle", `<> <http://purl.org/dc/terms/subject> <` + longIRI + `> .`, "http://purl.org/dc/terms/subject", shelfmark.MaxIRIBytes},
		{"JSON-LD literal", "POST", "/api/v1/works", "application/ld+json", `{"@id": "", "` + title + `": "` + long + `"}`, title, shelfmark.MaxLiteralBytes},
		{"PUT literal", "PUT", self, "application/json", `{"metadata": {"dcterms:title": "` + long + `"}}`, title, shelfmark.MaxLiteralBytes},
		{"PATCH literal", "PATCH", self, "application/json", `{"add": {"dcterms:title": "` + long + `"}}`, title, shelfmark.MaxLiteralBytes},
	}
	before := e.counts()
	check := func(name string, eb *apiError, pred string, limit int) {
		t.Helper()
		if !strings.Contains(eb.Message, pred) || !strings.Contains(eb.Message, fmt.Sprint(limit)) {
			t.Errorf("%s: message %.300q names neither the predicate %.80q nor the limit %d", name, eb.Message, pred, limit)
		}
		if eb.Details["limit"] != float64(limit) {
			t.Errorf("%s: details %v, want limit %d", name, eb.Details, limit)
		}
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, c.body, "Content-Type", c.ctype)
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		check(c.name, eb, c.pred, c.limit)
		r.wantNoDataWrites(t)
	}
	// batch and groups answer per item.
	var out struct {
		Results []struct {
			Status int       `json:"status"`
			Error  *apiError `json:"error"`
		} `json:"results"`
	}
	for name, rq := range map[string][2]string{
		"batch":  {"/api/v1/batch", `{"resources": [{"kind": "work", "metadata": {"dcterms:title": "` + long + `"}}]}`},
		"groups": {"/api/v1/groups", `{"groups": [{"resources": [{"ref": "w", "kind": "work", "metadata": {"dcterms:title": "` + long + `"}}]}]}`},
	} {
		out.Results = nil
		r := e.do("POST", rq[0], rq[1], "Content-Type", "application/json").want(t, http.StatusOK)
		r.json(t, &out)
		if len(out.Results) != 1 || out.Results[0].Status != http.StatusBadRequest || out.Results[0].Error == nil || out.Results[0].Error.Code != shelfmark.EINVALID {
			t.Fatalf("%s: %.500s", name, r.Body)
		}
		check(name, out.Results[0].Error, title, shelfmark.MaxLiteralBytes)
		r.wantNoDataWrites(t)
	}
	e.wantCounts(before)

	// At the limits, everything is stored.
	atLimit := strings.Repeat("b", shelfmark.MaxLiteralBytes)
	iri := "http://example.org/" + strings.Repeat("i", shelfmark.MaxIRIBytes-len("http://example.org/"))
	lang := "en-" + strings.Repeat("x", 8) + "-" + strings.Repeat("y", shelfmark.MaxLangTagBytes-12)
	e.do("PUT", self, `{"metadata": {"dcterms:title": [`+`"`+atLimit+`", {"@value": "t", "@language": "`+lang+`"}], "dcterms:subject": {"@id": "`+iri+`"}}}`,
		"Content-Type", "application/json").want(t, http.StatusOK)
	got := e.get(work.ID)
	for _, s := range []string{atLimit, iri, lang} {
		if !strings.Contains(string(got.Metadata), s) {
			t.Errorf("value of %d bytes not stored", len(s))
		}
	}
	// Removing a value works whatever its size (it may predate the limits).
	e.do("PATCH", self, `{"remove": {"dcterms:title": "`+long+`"}}`, "Content-Type", "application/json").want(t, http.StatusOK)
}
