package http

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

const (
	dcterms = "http://purl.org/dc/terms/"
	xsd     = "http://www.w3.org/2001/XMLSchema#"
	schema  = "http://schema.org/"
	lcsh    = "http://id.loc.gov/authorities/subjects/sh85076502"
	// description has quotes, non-ASCII letters and a line break, which
	// every syntax escapes its own way.
	description = "plain with \"quotes\", ünïcödé\nand a second line"
)

// expected is the metadata the create bodies below carry, for the resource
// whose IRI is self on the server at base. withSelfRefs adds the
// statements whose objects are relative to the resource (<#part>, <>),
// which only RDF bodies can express before the id exists.
func expected(base, self string, withSelfRefs bool) []shelfmark.Statement {
	st := []shelfmark.Statement{
		{Predicate: shelfmark.NSRDF + "type", Object: shelfmark.NewIRI(shelfmark.NSPCDM + "Object")},
		{Predicate: dcterms + "title", Object: shelfmark.NewLangLiteral("Le titre", "fr-ca")},
		{Predicate: dcterms + "title", Object: shelfmark.NewLangLiteral("The title", "en")},
		{Predicate: dcterms + "date", Object: shelfmark.NewTypedLiteral("2020-05-01", xsd+"date")},
		{Predicate: schema + "numberOfPages", Object: shelfmark.NewTypedLiteral("42", xsd+"integer")},
		{Predicate: dcterms + "description", Object: shelfmark.NewLiteral(description)},
		{Predicate: dcterms + "isPartOf", Object: shelfmark.NewIRI(base + "/api/v1/resources/sibling")},
		{Predicate: dcterms + "subject", Object: shelfmark.NewIRI(lcsh)},
	}
	if withSelfRefs {
		st = append(st,
			shelfmark.Statement{Predicate: dcterms + "relation", Object: shelfmark.NewIRI(self + "#part")},
			shelfmark.Statement{Predicate: dcterms + "relation", Object: shelfmark.NewIRI(self)},
		)
	}
	return st
}

const turtleBody = `@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix schema: <http://schema.org/> .
@prefix pcdm: <http://pcdm.org/models#> .

<> a pcdm:Object ;
   dcterms:title "Le titre"@fr-CA , "The title"@en ;
   dcterms:date "2020-05-01"^^xsd:date ;
   schema:numberOfPages 42 ;
   dcterms:description """plain with "quotes", ünïcödé
and a second line""" ;
   dcterms:isPartOf <sibling> ;
   dcterms:subject <http://id.loc.gov/authorities/subjects/sh85076502> ;
   dcterms:relation <#part> , <> .
`

const nTriplesBody = `<> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://pcdm.org/models#Object> .
<> <http://purl.org/dc/terms/title> "Le titre"@fr-CA .
<> <http://purl.org/dc/terms/title> "The title"@en .
<> <http://purl.org/dc/terms/date> "2020-05-01"^^<http://www.w3.org/2001/XMLSchema#date> .
<> <http://schema.org/numberOfPages> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<> <http://purl.org/dc/terms/description> "plain with \"quotes\", \u00FCn\u00EFc\u00F6d\u00E9\nand a second line" .
<> <http://purl.org/dc/terms/isPartOf> <sibling> .
<> <http://purl.org/dc/terms/subject> <http://id.loc.gov/authorities/subjects/sh85076502> .
<> <http://purl.org/dc/terms/relation> <#part> .
<> <http://purl.org/dc/terms/relation> <> .
`

const jsonLDBody = `{
  "@context": {
    "dcterms": "http://purl.org/dc/terms/",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "schema": "http://schema.org/"
  },
  "@id": "",
  "@type": "http://pcdm.org/models#Object",
  "dcterms:title": [{"@value": "Le titre", "@language": "fr-CA"}, {"@value": "The title", "@language": "en"}],
  "dcterms:date": {"@value": "2020-05-01", "@type": "xsd:date"},
  "schema:numberOfPages": 42,
  "dcterms:description": "plain with \"quotes\", ünïcödé\nand a second line",
  "dcterms:isPartOf": {"@id": "sibling"},
  "dcterms:subject": {"@id": "http://id.loc.gov/authorities/subjects/sh85076502"},
  "dcterms:relation": [{"@id": "#part"}, {"@id": ""}]
}`

// jsonMetadata is the application/json form of expected(base, _, false).
func jsonMetadata(base string) string {
	return `{
    "rdf:type": {"@id": "pcdm:Object"},
    "dcterms:title": [{"@value": "Le titre", "@language": "fr-CA"}, {"@value": "The title", "@language": "en"}],
    "dcterms:date": {"@value": "2020-05-01", "@type": "xsd:date"},
    "http://schema.org/numberOfPages": {"@value": "42", "@type": "http://www.w3.org/2001/XMLSchema#integer"},
    "dcterms:description": "plain with \"quotes\", ünïcödé\nand a second line",
    "dcterms:isPartOf": {"@id": "` + base + `/api/v1/resources/sibling"},
    "dcterms:subject": {"@id": "http://id.loc.gov/authorities/subjects/sh85076502"}
  }`
}

// canon renders statements as sorted strings, to compare graphs.
func canon(st []shelfmark.Statement) []string {
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = fmt.Sprintf("%s %d %q @%s ^^%s", s.Predicate, s.Object.Kind, s.Object.Value, s.Object.Lang, s.Object.Datatype)
	}
	slices.Sort(out)
	return out
}

func wantStatements(t *testing.T, what string, got, want []shelfmark.Statement) {
	t.Helper()
	g, w := canon(got), canon(want)
	if !slices.Equal(g, w) {
		t.Errorf("%s: statements differ\n got: %s\nwant: %s", what, strings.Join(g, "\n      "), strings.Join(w, "\n      "))
	}
}

// readAs reads a resource's metadata in a media type and parses it with
// the rdf package, checking that every statement is about the resource.
func (e *testEnv) readAs(t *testing.T, id shelfmark.ID, mt string) []shelfmark.Statement {
	t.Helper()
	r := e.do("GET", "/api/v1/resources/"+string(id), nil, "Accept", mt).want(t, http.StatusOK)
	ct := r.Header.Get("Content-Type")
	if base, _, _ := strings.Cut(ct, ";"); base != mt {
		t.Errorf("Accept %s: Content-Type %q", mt, ct)
	}
	if r.Header.Get("ETag") == "" || r.Header.Get("Vary") != "Accept" {
		t.Errorf("Accept %s: ETag %q, Vary %q", mt, r.Header.Get("ETag"), r.Header.Get("Vary"))
	}
	if mt == "application/json" {
		var res resource
		r.json(t, &res)
		if res.ID != id {
			t.Errorf("id %s, want %s", res.ID, id)
		}
		st, err := rdf.ParseJSONMetadata(res.Metadata)
		if err != nil {
			t.Fatalf("metadata %s: %v", res.Metadata, err)
		}
		return st
	}
	triples, err := rdf.Parse(bytes.NewReader(r.Body), mt, "")
	if err != nil {
		t.Fatalf("Accept %s: the response does not parse: %v\n%s", mt, err, r.Body)
	}
	st := make([]shelfmark.Statement, len(triples))
	for i, tr := range triples {
		if tr.Subject != shelfmark.NewIRI(e.iri(id)) {
			t.Errorf("Accept %s: statement about %v, want <%s>", mt, tr.Subject, e.iri(id))
		}
		st[i] = shelfmark.Statement{Predicate: tr.Predicate, Object: tr.Object}
	}
	return st
}

var readTypes = []string{"application/json", "text/turtle", "application/n-triples", "application/ld+json"}

func TestCreateEveryFormatAndNegotiate(t *testing.T) {
	e := newEnv(t, Options{})
	parent := e.create("/api/v1/works", `{"metadata": {}}`)
	for _, kind := range []string{"collection", "work", "fileset"} {
		for _, format := range []string{"application/json", "text/turtle", "application/n-triples", "application/ld+json"} {
			t.Run(kind+"/"+format, func(t *testing.T) {
				path := "/api/v1/" + kind + "s"
				var body string
				switch format {
				case "application/json":
					p := ""
					if kind == "fileset" {
						p = `"parent": "` + string(parent.ID) + `", `
					}
					body = `{` + p + `"visibility": "restricted", "metadata": ` + jsonMetadata(e.ts.URL) + `}`
				case "text/turtle":
					body = turtleBody
				case "application/n-triples":
					body = nTriplesBody
				case "application/ld+json":
					body = jsonLDBody
				}
				if format != "application/json" {
					q := url.Values{"visibility": {"restricted"}}
					if kind == "fileset" {
						q.Set("parent", string(parent.ID))
					}
					path += "?" + q.Encode()
				}
				r := e.do("POST", path, body, "Content-Type", format+"; charset=utf-8").want(t, http.StatusCreated)
				var res resource
				r.json(t, &res)
				// the old name "restricted" is read as "authenticated"
				if res.Kind != kind || res.Visibility != "authenticated" || res.Version != 1 || !res.ID.Valid() {
					t.Errorf("created %+v", res)
				}
				if r.Header.Get("Location") != "/api/v1/resources/"+string(res.ID) || r.Header.Get("ETag") != `"1"` {
					t.Errorf("Location %q, ETag %q", r.Header.Get("Location"), r.Header.Get("ETag"))
				}
				if kind == "fileset" && res.Parent != parent.ID {
					t.Errorf("parent %q, want %s", res.Parent, parent.ID)
				}
				want := expected(e.ts.URL, e.iri(res.ID), format != "application/json")
				created, err := rdf.ParseJSONMetadata(res.Metadata)
				if err != nil {
					t.Fatal(err)
				}
				wantStatements(t, "201 body", created, want)
				for _, mt := range readTypes {
					wantStatements(t, "Accept "+mt, e.readAs(t, res.ID, mt), want)
				}
				// The language tag is stored lower-cased and the datatypes
				// keep their IRIs in the plain JSON form.
				var meta map[string]json.RawMessage
				if err := json.Unmarshal(e.get(res.ID).Metadata, &meta); err != nil {
					t.Fatal(err)
				}
				if got := string(meta["dcterms:date"]); got != `{"@value":"2020-05-01","@type":"xsd:date"}` {
					t.Errorf("dcterms:date %s", got)
				}
				if got := string(meta["dcterms:title"]); got != `[{"@value":"Le titre","@language":"fr-ca"},{"@value":"The title","@language":"en"}]` {
					t.Errorf("dcterms:title %s", got)
				}
			})
		}
	}
	t.Run("Accept", func(t *testing.T) {
		// q-values and wildcards pick among the four types.
		for accept, want := range map[string]string{
			"":       "application/json",
			"*/*":    "application/json",
			"text/*": "text/turtle",
			"text/turtle;q=0.5, application/n-triples": "application/n-triples",
			"image/png, application/ld+json;q=0.1":     "application/ld+json",
		} {
			r := e.do("GET", "/api/v1/resources/"+string(parent.ID), nil, "Accept", accept).want(t, http.StatusOK)
			if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); ct != want {
				t.Errorf("Accept %q: %s, want %s", accept, ct, want)
			}
		}
		for _, accept := range []string{"image/png", "text/html, image/*", "application/json;q=0"} {
			r := e.do("GET", "/api/v1/resources/"+string(parent.ID), nil, "Accept", accept)
			eb := r.wantError(t, http.StatusNotAcceptable, shelfmark.ENOTACCEPTABLE)
			r.wantNoStatements(t) // refused before the database is asked
			if fmt.Sprint(eb.Details["available"]) != "[application/json application/ld+json text/turtle application/n-triples]" {
				t.Errorf("Accept %q: details %v", accept, eb.Details)
			}
		}
	})
}

// TestCreateRDFRejectsOtherSubjects checks that an RDF body may only speak
// of the new resource.
func TestCreateRDFRejectsOtherSubjects(t *testing.T) {
	e := newEnv(t, Options{})
	before := e.counts()
	body := "<> <http://purl.org/dc/terms/title> \"ok\" .\n<other> <http://purl.org/dc/terms/title> \"no\" .\n"
	r := e.do("POST", "/api/v1/works", body, "Content-Type", "application/n-triples")
	eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	if eb.Details["statement"] != float64(2) || eb.Details["subject"] != e.ts.URL+"/api/v1/resources/other" {
		t.Errorf("details %v", eb.Details)
	}
	r.wantNoWrites(t)
	e.wantCounts(before)
}

// position returns the 1-based line and column (in characters) of the
// first occurrence of marker in body, where a test puts its syntax error.
func position(t *testing.T, body, marker string) (int, int) {
	t.Helper()
	i := strings.Index(body, marker)
	if i < 0 || strings.Count(body, marker) != 1 {
		t.Fatalf("marker %q must occur once", marker)
	}
	line := strings.Count(body[:i], "\n") + 1
	start := strings.LastIndex(body[:i], "\n") + 1
	return line, utf8.RuneCountInString(body[start:i]) + 1
}

func TestMalformedBodiesNamePosition(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{"metadata": {"dcterms:title": "kept"}}`)
	workPath := "/api/v1/resources/" + string(work.ID)
	cases := []struct {
		name, method, path, ctype, body, marker string
	}{
		{"turtle bad object", "POST", "/api/v1/works", "text/turtle",
			"@prefix dcterms: <http://purl.org/dc/terms/> .\n\n<> dcterms:title \"Ünïcödé\"@en ;\n   dcterms:creator \"Ä\" , ?who .\n", "?who"},
		{"turtle missing dot", "POST", "/api/v1/collections", "text/turtle",
			"@prefix dcterms: <http://purl.org/dc/terms/> .\n<> dcterms:title \"a\"\n<> dcterms:title \"b\" .\n", "<> dcterms:title \"b\""},
		{"turtle unknown prefix", "PUT", workPath, "text/turtle",
			"@prefix dcterms: <http://purl.org/dc/terms/> .\n\n<> dcterms:title \"ü\" ;\n  nope:title \"x\" .\n", "nope:title"},
		{"turtle blank node", "POST", "/api/v1/works", "text/turtle",
			"<> <http://purl.org/dc/terms/creator>\n    _:b1 .\n", "_:b1"},
		{"json-ld missing comma", "POST", "/api/v1/works", "application/ld+json",
			"{\n  \"@context\": {\"dcterms\": \"http://purl.org/dc/terms/\"},\n  \"@id\": \"\",\n  \"dcterms:title\": \"Ünïcödé\" \"x\"\n}\n", "\"x\""},
		{"json-ld bad value", "PUT", workPath, "application/ld+json",
			"{\n  \"@id\": \"\",\n  \"http://purl.org/dc/terms/title\": [\"ä\", ?]\n}", "?]"},
		{"json bad value", "POST", "/api/v1/works", "application/json",
			"{\n  \"visibility\": \"public\",\n  \"metadata\": {\n    \"dcterms:title\": \"Ünïcödé\",\n    \"dcterms:creator\": ?\n  }\n}\n", "?"},
		{"json missing comma", "POST", "/api/v1/collections", "application/json",
			"{\n  \"visibility\": \"public\"\n  \"metadata\": {}\n}", "\"metadata\""},
		{"json trailing comma", "PUT", workPath, "application/json",
			"{\"metadata\": {\n  \"dcterms:title\": \"ä\",\n}}", "}}"},
		{"json trailing data", "PATCH", workPath, "application/json",
			"{\"add\": {}}\n\n  {\"remove\": {}}", "{\"remove\""},
		{"json patch", "PATCH", workPath, "application/json",
			"{\n\t\"add\": {\"dcterms:title\": \"ä\"},\n\t\"remove\": {\"dcterms:title\" \"kept\"}\n}", "\"kept\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.counts()
			r := e.do(c.method, c.path, c.body, "Content-Type", c.ctype)
			eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
			line, col := position(t, c.body, c.marker)
			if eb.Details["line"] != float64(line) || eb.Details["column"] != float64(col) {
				t.Errorf("details %v, want line %d column %d; message %q", eb.Details, line, col, eb.Message)
			}
			if !strings.Contains(eb.Message, fmt.Sprintf("line %d, column %d", line, col)) {
				t.Errorf("message %q does not name line %d, column %d", eb.Message, line, col)
			}
			r.wantNoWrites(t)
			e.wantCounts(before)
		})
	}
	t.Run("json wrong type", func(t *testing.T) {
		// encoding/json places type errors at the end of the value: the
		// line is exact, the column is within the value or just past it.
		body := "{\n  \"metadata\": {},\n  \"visibility\": 12345\n}"
		r := e.do("POST", "/api/v1/works", body, "Content-Type", "application/json")
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		line, col := position(t, body, "12345")
		if c, ok := eb.Details["column"].(float64); eb.Details["line"] != float64(line) || !ok || int(c) < col || int(c) > col+5 {
			t.Errorf("details %v, want line %d, column %d to %d", eb.Details, line, col, col+5)
		}
		if !strings.Contains(eb.Message, "visibility must be string") {
			t.Errorf("message %q", eb.Message)
		}
		r.wantNoWrites(t)
	})
	t.Run("json ends early", func(t *testing.T) {
		body := "{\n  \"visibility\": \"public\",\n  \"metadata\": {\"dcterms:title\": \"ü\""
		r := e.do("POST", "/api/v1/works", body, "Content-Type", "application/json")
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		// The fault is the end of the body: line 3, after its last character.
		if eb.Details["line"] != float64(3) || eb.Details["column"] != float64(utf8.RuneCountInString(`  "metadata": {"dcterms:title": "ü"`)+1) {
			t.Errorf("details %v", eb.Details)
		}
		r.wantNoWrites(t)
	})
	// The work is as it was.
	if got := string(e.get(work.ID).Metadata); got != `{"dcterms:title":"kept"}` || e.get(work.ID).Version != 1 {
		t.Errorf("work changed: %s", got)
	}
}

func TestUnknownAndMistypedIDs(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	unknown := e.repo.IDs().Encode(shelfmark.MaxKey)
	// A mistyped id: the last character changed, so the check fails.
	good := string(coll.ID)
	last := "b"
	if good[8] == 'b' {
		last = "c"
	}
	mistyped := good[:8] + last
	if shelfmark.ID(mistyped).Valid() {
		t.Fatalf("%s should not be valid", mistyped)
	}
	// An adjacent transposition is caught too.
	transposed := good[:3] + good[4:5] + good[3:4] + good[5:]
	for _, id := range []string{string(unknown), mistyped, transposed, "short", "aaaaaaaaa"} {
		if id == transposed && (good[3] == good[4] || shelfmark.ID(id).Valid()) {
			continue
		}
		for _, rq := range []struct{ method, path, ctype, body string }{
			{"GET", "/api/v1/resources/" + id, "", ""},
			{"PUT", "/api/v1/resources/" + id, "application/json", `{"metadata": {}}`},
			{"PATCH", "/api/v1/resources/" + id, "application/json", `{"add": {"dcterms:title": "x"}}`},
			{"DELETE", "/api/v1/resources/" + id, "", ""},
			{"GET", "/api/v1/resources/" + id + "/members", "", ""},
			{"POST", "/api/v1/resources/" + id + "/members", "application/json", `{"members": ["` + good + `"]}`},
			{"DELETE", "/api/v1/resources/" + id + "/members/" + good, "", ""},
			{"GET", "/api/v1/resources/" + id + "/children", "", ""},
			{"PUT", "/api/v1/resources/" + id + "/order", "application/json", `{"children": []}`},
			{"POST", "/api/v1/resources/" + id + "/files", "application/octet-stream", "bytes"},
			{"GET", "/api/v1/resources/" + id + "/content", "", ""},
		} {
			var hdrs []string
			if rq.ctype != "" {
				hdrs = []string{"Content-Type", rq.ctype}
			}
			var body any
			if rq.body != "" {
				body = rq.body
			}
			before := e.blobFiles()
			r := e.do(rq.method, rq.path, body, hdrs...)
			r.wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
			if id == string(unknown) {
				r.wantNoDataWrites(t)
			} else {
				// Rejected by the check character: the database was not
				// touched at all.
				r.wantNoStatements(t)
				if after := e.blobFiles(); !slices.Equal(before, after) {
					t.Errorf("%s %s stored bytes: %q", rq.method, rq.path, after)
				}
			}
		}
	}
	// A malformed member id in a path names a missing resource too.
	r := e.do("DELETE", "/api/v1/resources/"+good+"/members/"+mistyped, nil)
	r.wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	r.wantNoStatements(t)
	// An unknown path is a JSON 404 (wrong methods: TestWrongMethod).
	e.do("GET", "/api/v2/nothing", nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
}

func TestDeletedResourceIsGone(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	work := e.create("/api/v1/works", `{"memberOf": ["`+string(coll.ID)+`"], "metadata": {"dcterms:title": "w"}}`)
	other := e.create("/api/v1/works", `{}`)
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	up := e.do("POST", "/api/v1/resources/"+string(fs.ID)+"/files?name=a.txt", "hello", "Content-Type", "text/plain").want(t, http.StatusCreated)
	var file resource
	up.json(t, &file)

	// A stale If-Match does not delete.
	e.do("DELETE", "/api/v1/resources/"+string(work.ID), nil, "If-Match", `"7"`).wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)
	e.do("DELETE", "/api/v1/resources/"+string(work.ID), nil, "If-Match", `"1"`).want(t, http.StatusNoContent)
	e.do("DELETE", "/api/v1/resources/"+string(coll.ID), nil).want(t, http.StatusNoContent)

	for _, id := range []shelfmark.ID{work.ID, coll.ID, fs.ID, file.ID} {
		p := "/api/v1/resources/" + string(id)
		for _, rq := range []struct{ method, path, ctype, body string }{
			{"GET", p, "", ""},
			{"PUT", p, "application/json", `{"metadata": {}}`},
			{"PUT", p, "text/turtle", `<> <http://purl.org/dc/terms/title> "t" .`},
			{"PATCH", p, "application/json", `{"add": {"dcterms:title": "x"}}`},
			{"DELETE", p, "", ""},
			{"GET", p + "/members", "", ""},
			{"POST", p + "/members", "application/json", `{"members": ["` + string(other.ID) + `"]}`},
			{"DELETE", p + "/members/" + string(other.ID), "", ""},
			{"GET", p + "/children", "", ""},
			{"PUT", p + "/order", "application/json", `{"children": []}`},
			{"GET", p + "/content", "", ""},
			{"POST", p + "/files", "application/octet-stream", "bytes"},
		} {
			var hdrs []string
			var body any
			if rq.ctype != "" {
				hdrs, body = []string{"Content-Type", rq.ctype}, rq.body
			}
			r := e.do(rq.method, rq.path, body, hdrs...)
			eb := r.wantError(t, http.StatusGone, shelfmark.EGONE)
			if _, ok := eb.Details["deleted"].(string); !ok {
				t.Errorf("%s %s: details %v", rq.method, rq.path, eb.Details)
			}
			r.wantNoDataWrites(t)
		}
	}
	// Nothing may be created under a deleted parent or in a deleted collection.
	e.do("POST", "/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", "/api/v1/works", `{"memberOf": ["`+string(coll.ID)+`"]}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
}

func TestETagAndIfMatch(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{"metadata": {"dcterms:title": "one"}}`)
	p := "/api/v1/resources/" + string(work.ID)

	r := e.do("GET", p, nil).want(t, http.StatusOK)
	if r.Header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", r.Header.Get("ETag"))
	}
	r = e.do("PATCH", p, `{"add": {"dcterms:title": "two"}}`, "Content-Type", "application/json", "If-Match", `"1"`).want(t, http.StatusOK)
	var res resource
	r.json(t, &res)
	if r.Header.Get("ETag") != `"2"` || res.Version != 2 {
		t.Fatalf("after PATCH: ETag %q, version %d", r.Header.Get("ETag"), res.Version)
	}
	want := `{"dcterms:title":["one","two"]}`
	if string(res.Metadata) != want {
		t.Errorf("metadata %s", res.Metadata)
	}

	for _, ifMatch := range []string{`"1"`, `"3"`, `W/"2"`, `2`, `"x"`} {
		r = e.do("PATCH", p, `{"add": {"dcterms:title": "three"}, "remove": {"dcterms:title": "one"}}`, "Content-Type", "application/json", "If-Match", ifMatch)
		r.wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)
		if r.Header.Get("ETag") != "" {
			t.Errorf("If-Match %s: an error carries ETag %q", ifMatch, r.Header.Get("ETag"))
		}
		r.wantNoDataWrites(t)
		r = e.do("PUT", p, `{"metadata": {}}`, "Content-Type", "application/json", "If-Match", ifMatch)
		r.wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)
		r.wantNoDataWrites(t)
		r = e.do("PUT", p+"/order", `{"children": []}`, "Content-Type", "application/json", "If-Match", ifMatch)
		r.wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)
		r.wantNoDataWrites(t)
	}
	// The stale request for version 1 says which version is current.
	eb := e.do("PATCH", p, `{"add": {"dcterms:title": "x"}}`, "Content-Type", "application/json", "If-Match", `"1"`).wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)
	if eb.Details["current_version"] != float64(2) {
		t.Errorf("details %v", eb.Details)
	}
	got := e.get(work.ID)
	if string(got.Metadata) != want || got.Version != 2 {
		t.Errorf("after refused PATCHes: version %d, metadata %s", got.Version, got.Metadata)
	}

	// The current tag matches, and so does *.
	e.do("PATCH", p, `{"add": {"dcterms:title": "three"}}`, "Content-Type", "application/json", "If-Match", `"2"`).want(t, http.StatusOK)
	e.do("PATCH", p, `{"remove": {"dcterms:title": "three"}}`, "Content-Type", "application/json", "If-Match", `*`).want(t, http.StatusOK)

	r = e.do("GET", p, nil, "If-None-Match", `"4"`)
	if r.Status != http.StatusNotModified || len(r.Body) != 0 || r.Header.Get("ETag") != `"4"` {
		t.Errorf("If-None-Match current: %d, ETag %q, body %q", r.Status, r.Header.Get("ETag"), r.Body)
	}
	e.do("GET", p, nil, "If-None-Match", `"3"`).want(t, http.StatusOK)
	e.do("GET", p, nil, "If-None-Match", `*`).want(t, http.StatusNotModified)
	// A PATCH that changes nothing keeps the version.
	r = e.do("PATCH", p, `{"add": {"dcterms:title": "one"}}`, "Content-Type", "application/json").want(t, http.StatusOK)
	if r.Header.Get("ETag") != `"4"` {
		t.Errorf("no-op PATCH: ETag %q", r.Header.Get("ETag"))
	}
}

func TestUnsupportedMediaType(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	work := e.create("/api/v1/works", `{}`)
	cp, wp := "/api/v1/resources/"+string(coll.ID), "/api/v1/resources/"+string(work.ID)
	for _, rq := range []struct{ method, path, ctype, body string }{
		{"POST", "/api/v1/collections", "image/png", "\x89PNG"},
		{"POST", "/api/v1/works", "text/plain", `{"metadata": {}}`},
		{"POST", "/api/v1/filesets", "application/xml", `<x/>`},
		{"POST", "/api/v1/works", "application/rdf+xml", `<rdf:RDF/>`},
		{"POST", "/api/v1/batch", "text/csv", `a,b`},
		{"PUT", wp, "text/plain", `{"metadata": {}}`},
		{"PUT", wp, "", `{"metadata": {}}`},
		{"PATCH", wp, "text/turtle", `<> <http://purl.org/dc/terms/title> "x" .`},
		{"PATCH", wp, "", `{"add": {}}`},
		{"POST", cp + "/members", "text/plain", `{"members": ["` + string(work.ID) + `"]}`},
		{"POST", cp + "/members", "", `{"members": ["` + string(work.ID) + `"]}`},
		{"PUT", wp + "/order", "application/xml", `{"children": []}`},
		{"PUT", wp + "/order", "", `{"children": []}`},
	} {
		before := e.counts()
		var hdrs []string
		if rq.ctype != "" {
			hdrs = []string{"Content-Type", rq.ctype}
		}
		r := e.do(rq.method, rq.path, rq.body, hdrs...)
		r.wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
		r.wantNoWrites(t)
		e.wantCounts(before)
	}
	if got := e.get(work.ID); got.Version != 1 || string(got.Metadata) != "{}" {
		t.Errorf("work changed: %+v", got)
	}
	var members page
	e.do("GET", cp+"/members", nil).want(t, http.StatusOK).json(t, &members)
	if len(members.Items) != 0 {
		t.Errorf("members %v", members.Items)
	}
}

func TestReplaceAndPatch(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{"metadata": {"dcterms:title": "old", "dcterms:creator": "someone"}}`)
	p := "/api/v1/resources/" + string(work.ID)

	// PUT with JSON replaces the metadata and sets the access fields.
	r := e.do("PUT", p, `{"visibility": "private", "embargo": "2030-01-31", "metadata": {"dcterms:title": [{"@value": "neu", "@language": "DE"}, "new"]}}`,
		"Content-Type", "application/json").want(t, http.StatusOK)
	var res resource
	r.json(t, &res)
	if res.Visibility != "private" || res.Embargo == nil || *res.Embargo != "2030-01-31T00:00:00Z" || res.Version != 2 {
		t.Errorf("after PUT: %+v", res)
	}
	if string(res.Metadata) != `{"dcterms:title":[{"@value":"neu","@language":"de"},"new"]}` {
		t.Errorf("after PUT: metadata %s", res.Metadata)
	}
	// PUT without metadata is refused: it would mean "delete everything".
	e.do("PUT", p, `{"visibility": "public"}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)

	// PUT with Turtle replaces the metadata and leaves the access fields.
	r = e.do("PUT", p, "@prefix dcterms: <http://purl.org/dc/terms/> .\n<> dcterms:title \"turtle\"@en ; dcterms:extent 3.5 ; dcterms:isPartOf <../collections> .\n",
		"Content-Type", "text/turtle").want(t, http.StatusOK)
	res = resource{}
	r.json(t, &res)
	if res.Visibility != "private" || res.Embargo == nil || res.Version != 3 {
		t.Errorf("after Turtle PUT: %+v", res)
	}
	wantStatements(t, "after Turtle PUT", e.readAs(t, work.ID, "application/n-triples"), []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: shelfmark.NewLangLiteral("turtle", "en")},
		{Predicate: dcterms + "extent", Object: shelfmark.NewTypedLiteral("3.5", xsd+"decimal")},
		{Predicate: dcterms + "isPartOf", Object: shelfmark.NewIRI(e.ts.URL + "/api/v1/collections")},
	})
	// The same graph again changes nothing.
	r = e.do("PUT", p, "<> <http://purl.org/dc/terms/extent> \"3.5\"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n<> <http://purl.org/dc/terms/title> \"turtle\"@en .\n<> <http://purl.org/dc/terms/isPartOf> <"+e.ts.URL+"/api/v1/collections> .\n",
		"Content-Type", "application/n-triples").want(t, http.StatusOK)
	if r.Header.Get("ETag") != `"3"` {
		t.Errorf("PUT of the same graph: ETag %q", r.Header.Get("ETag"))
	}

	// PATCH adds and removes statements and changes the access fields.
	r = e.do("PATCH", p, `{"add": {"dcterms:subject": [{"@id": "`+lcsh+`"}, "maps"]}, "remove": {"dcterms:extent": {"@value": "3.5", "@type": "xsd:decimal"}}, "visibility": "public", "embargo": null}`,
		"Content-Type", "application/json").want(t, http.StatusOK)
	res = resource{}
	r.json(t, &res)
	if res.Visibility != "public" || res.Embargo != nil || res.Version != 4 {
		t.Errorf("after PATCH: %+v", res)
	}
	wantStatements(t, "after PATCH", e.readAs(t, work.ID, "text/turtle"), []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: shelfmark.NewLangLiteral("turtle", "en")},
		{Predicate: dcterms + "isPartOf", Object: shelfmark.NewIRI(e.ts.URL + "/api/v1/collections")},
		{Predicate: dcterms + "subject", Object: shelfmark.NewIRI(lcsh)},
		{Predicate: dcterms + "subject", Object: shelfmark.NewLiteral("maps")},
	})
	// Embargo as an RFC 3339 time, through merge-patch+json.
	r = e.do("PATCH", p, `{"embargo": "2031-02-03T04:05:06+01:00", "visibility": "restricted"}`, "Content-Type", "application/merge-patch+json").want(t, http.StatusOK)
	res = resource{}
	r.json(t, &res)
	if res.Embargo == nil || *res.Embargo != "2031-02-03T03:05:06Z" || res.Visibility != "authenticated" {
		t.Errorf("after embargo PATCH: %+v", res)
	}

	// Refused changes: nothing is written.
	for _, rq := range []struct{ method, ctype, body, code string }{
		{"PATCH", "application/json", `{"add": {"dcterms:title": "x"}, "colour": "red"}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"visibility": "secret"}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"embargo": "tomorrow"}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"embargo": 5}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"add": {"title": "no prefix"}}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"add": {"dcterms:title": 5}}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"add": ["dcterms:title"]}`, shelfmark.EINVALID},
		{"PATCH", "application/json", `{"add": {"dcterms:title": "x"}} {}`, shelfmark.EINVALID},
		{"PATCH", "application/json", ``, shelfmark.EINVALID},
		{"PUT", "application/json", `{"metadata": {}, "kind": "work"}`, shelfmark.EINVALID},
		{"PUT", "application/json", `{"metadata": {}, "parent": "` + string(work.ID) + `"}`, shelfmark.EINVALID},
		{"PUT", "text/turtle", `<http://example.org/x> <http://purl.org/dc/terms/title> "x" .`, shelfmark.EINVALID},
		{"PUT", "text/turtle; charset=latin1", `<> <http://purl.org/dc/terms/title> "x" .`, shelfmark.EUNSUPPORTED},
		{"PUT", "application/n-triples; charset=iso-8859-1", `<> <http://purl.org/dc/terms/title> "x" .`, shelfmark.EUNSUPPORTED},
	} {
		before := e.counts()
		r := e.do(rq.method, p, rq.body, "Content-Type", rq.ctype)
		status := http.StatusBadRequest
		if rq.code == shelfmark.EUNSUPPORTED {
			status = http.StatusUnsupportedMediaType
		}
		r.wantError(t, status, rq.code)
		r.wantNoWrites(t)
		e.wantCounts(before)
	}
	// The unknown field is named.
	eb := e.do("POST", "/api/v1/works", `{"metadata": {}, "colour": "red"}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	if !strings.Contains(eb.Message, `"colour"`) {
		t.Errorf("message %q does not name the field", eb.Message)
	}
	// RDF in another charset than UTF-8 is refused on create too.
	for _, ct := range []string{"text/turtle; charset=windows-1252", "application/ld+json; charset=utf-16"} {
		r := e.do("POST", "/api/v1/works", `<> <http://purl.org/dc/terms/title> "x" .`, "Content-Type", ct)
		r.wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
		r.wantNoWrites(t)
	}
	e.do("POST", "/api/v1/works", `<> <http://purl.org/dc/terms/title> "x" .`, "Content-Type", "text/turtle; charset=UTF-8").want(t, http.StatusCreated)
	// A kind that contradicts the path is refused.
	e.do("POST", "/api/v1/works", `{"kind": "collection"}`, "Content-Type", "application/json").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	if got := e.get(work.ID); got.Version != 5 {
		t.Errorf("version %d after refused changes", got.Version)
	}
}

func TestBatch(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	body := `{"resources": [
		{"kind": "work", "memberOf": ["` + string(coll.ID) + `"], "metadata": {"dcterms:title": "first"}},
		{"kind": "work", "visibility": "secret", "metadata": {"dcterms:title": "invalid"}},
		{"kind": "collection", "metadata": {"dcterms:title": "third"}}
	]}`
	before := e.counts()
	r := e.do("POST", "/api/v1/batch", body, "Content-Type", "application/json").want(t, http.StatusOK)
	var out struct {
		Results []struct {
			Status   int       `json:"status"`
			Resource *resource `json:"resource"`
			Error    *apiError `json:"error"`
		} `json:"results"`
	}
	r.json(t, &out)
	if len(out.Results) != 3 {
		t.Fatalf("results %s", r.Body)
	}
	for i, want := range []int{http.StatusCreated, http.StatusBadRequest, http.StatusCreated} {
		if got := out.Results[i].Status; got != want {
			t.Errorf("item %d: status %d, want %d", i, got, want)
		}
	}
	if res := out.Results[1]; res.Resource != nil || res.Error == nil || res.Error.Code != shelfmark.EINVALID || res.Error.Message == "" {
		t.Errorf("item 1: %+v", res)
	}
	for i, title := range map[int]string{0: "first", 2: "third"} {
		res := out.Results[i].Resource
		if res == nil || out.Results[i].Error != nil {
			t.Fatalf("item %d: %s", i, r.Body)
		}
		got := e.get(res.ID)
		if string(got.Metadata) != `{"dcterms:title":"`+title+`"}` {
			t.Errorf("item %d: stored %s", i, got.Metadata)
		}
	}
	if got := e.get(out.Results[0].Resource.ID); len(got.MemberOf) != 1 || got.MemberOf[0] != coll.ID {
		t.Errorf("memberOf %v", got.MemberOf)
	}
	after := e.counts()
	if after["resources"] != before["resources"]+2 || after["fields"] != before["fields"]+2 || after["memberships"] != before["memberships"]+1 {
		t.Errorf("rows before %v, after %v", before, after)
	}

	// A whole batch that is malformed, empty or of the wrong type stores nothing.
	for _, rq := range []struct{ body, code string }{
		{`{"resources": []}`, shelfmark.EINVALID},
		{`{"resources": [{"kind": "work"}], "extra": 1}`, shelfmark.EINVALID},
		{`{"resources": [`, shelfmark.EINVALID},
	} {
		r := e.do("POST", "/api/v1/batch", rq.body, "Content-Type", "application/json")
		r.wantError(t, http.StatusBadRequest, rq.code)
		r.wantNoWrites(t)
	}
	e.wantCounts(after)
	// Items that are all invalid: 200 with every item refused, nothing stored.
	r = e.do("POST", "/api/v1/batch", `{"resources": [{"kind": "nope"}, {"kind": "work", "colour": 1}, {"kind": "fileset"}]}`, "Content-Type", "application/json").want(t, http.StatusOK)
	out.Results = nil
	r.json(t, &out)
	for i, res := range out.Results {
		if res.Status != http.StatusBadRequest || res.Error == nil || res.Error.Code != shelfmark.EINVALID {
			t.Errorf("item %d: %+v", i, res)
		}
	}
	r.wantNoWrites(t)
	e.wantCounts(after)
}
