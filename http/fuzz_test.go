package http

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// serve runs one request through the Server's handler, without a network.
func serve(e *testEnv, method, path, ctype string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.admin)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, req)
	return w
}

// checkFuzzResponse fails on a 5xx and on a body that is not JSON, or an
// error body without code and message.
func checkFuzzResponse(t *testing.T, w *httptest.ResponseRecorder, body []byte) {
	t.Helper()
	if w.Code >= 500 {
		t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.Bytes())
	}
	if !json.Valid(w.Body.Bytes()) {
		t.Fatalf("status %d for %q: the response is not JSON: %q", w.Code, body, w.Body.Bytes())
	}
	if w.Code >= 400 {
		if why := checkErrorBody(w.Header().Get("Content-Type"), w.Body.Bytes()); why != "" {
			t.Fatalf("status %d for %q: %s: %q", w.Code, body, why, w.Body.Bytes())
		}
	}
}

var turtleSeeds = []string{
	turtleBody,
	"",
	"   \n# only a comment\n",
	`<> <http://purl.org/dc/terms/title> "t" .`,
	`@base <http://example.org/x/> . <> <p> <q> .`,
	`PREFIX dc: <http://purl.org/dc/elements/1.1/> <> dc:title 'single' ; dc:date 1.5e3, true, -0.5 .`,
	`<> <http://purl.org/dc/terms/title> """long
string"""@en-GB .`,
	`<> <http://purl.org/dc/terms/title> "a\u00e9\U0001F600\n\t\"" .`,
	`<> <http://p/> () .`,
	`<> <http://p/> ( <http://a> ) .`,
	`<> <http://p/> _:b .`,
	`<> <http://p/> [ <http://q> "x" ] .`,
	`<http://elsewhere/> <http://p/> "x" .`,
	`<> a <http://pcdm.org/models#Object> .`,
	`<> <http://p/> "x"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .`,
	`<> <http://p/> "x"@-bad .`,
	".0",
	"<> <http://p/> .0 .",
	"<> <http://p/> \"\xff\" .",
	"\uFEFF<> <http://p/> \"bom\" .",
	`@prefix : <http://e/> . <> :p\.q :o\~ .`,
	`<> <http://p/> <http://a b> .`,
	`<> <http://p/> "unterminated`,
	// Found by fuzzing: a relative IRI with a bare "%".
	`<> <A%>"".`,
	`<> <http://p/> <http://e/%zz> , <http://e/%41> .`,
}

// survives reports whether one statement, alone, comes back from the rdf
// package's writer and reader for mt unchanged. The fuzz test compares
// whole documents only where each statement does: the rdf package has
// known losses of its own (reported, outside this package), which are
// not the HTTP layer's to find again and again:
//   - JSON-LD: json-gold silently drops IRIs with a "%" not followed by two
//     hex digits (<http://e/A%>);
//   - plain JSON: an IRI such as <A:> or <ark:/1/p> is written as a key or
//     @id that ParseJSONMetadata then reads as an unknown prefix.
func survives(mt, subject string, st shelfmark.Statement) bool {
	var buf bytes.Buffer
	if err := rdf.Write(&buf, mt, subject, []shelfmark.Statement{st}); err != nil {
		return false
	}
	var back []shelfmark.Statement
	if mt == "application/json" {
		var err error
		if back, err = rdf.ParseJSONMetadata(buf.Bytes()); err != nil {
			return false
		}
	} else {
		trs, err := rdf.Parse(&buf, mt, "")
		if err != nil {
			return false
		}
		for _, tr := range trs {
			back = append(back, shelfmark.Statement{Predicate: tr.Predicate, Object: tr.Object})
		}
	}
	return len(back) == 1 && back[0] == st
}

func FuzzCreateTurtle(f *testing.F) {
	e := newEnv(f, Options{MaxBodyBytes: 64 << 10})
	for _, s := range turtleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := serve(e, "POST", "/api/v1/works", "text/turtle", body)
		checkFuzzResponse(t, w, body)
		if w.Code != http.StatusCreated {
			if w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.Bytes())
			}
			return
		}
		// What was accepted reads back, in every format, as what the
		// document said.
		var res resource
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		iri := "http://example.com/api/v1/resources/" + string(res.ID)
		triples, err := rdf.Parse(bytes.NewReader(body), "text/turtle", iri)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", body, err)
		}
		want := make([]shelfmark.Statement, len(triples))
		for i, tr := range triples {
			want[i] = shelfmark.Statement{Predicate: tr.Predicate, Object: tr.Object}
		}
		want = shelfmark.DedupeStatements(want)
		for _, mt := range readTypes {
			lossy := func(st shelfmark.Statement) bool { return !survives(mt, iri, st) }
			if (mt == "application/json" || mt == "application/ld+json") && slices.ContainsFunc(want, lossy) {
				continue // a known loss of the rdf package: see survives
			}
			req := httptest.NewRequest("GET", "/api/v1/resources/"+string(res.ID), nil)
			req.Header.Set("Accept", mt)
			rw := httptest.NewRecorder()
			e.srv.ServeHTTP(rw, req)
			if rw.Code != http.StatusOK {
				t.Fatalf("GET %s as %s: %d %s", res.ID, mt, rw.Code, rw.Body.Bytes())
			}
			var got []shelfmark.Statement
			if mt == "application/json" {
				var back resource
				if err := json.Unmarshal(rw.Body.Bytes(), &back); err != nil {
					t.Fatal(err)
				}
				if got, err = rdf.ParseJSONMetadata(back.Metadata); err != nil {
					t.Fatalf("%s: %v", back.Metadata, err)
				}
			} else {
				trs, err := rdf.Parse(bytes.NewReader(rw.Body.Bytes()), mt, "")
				if err != nil {
					t.Fatalf("document %q stored, served as %s does not parse: %v\n%s", body, mt, err, rw.Body.Bytes())
				}
				for _, tr := range trs {
					if tr.Subject.Value != iri {
						t.Fatalf("served as %s: subject %v", mt, tr.Subject)
					}
					got = append(got, shelfmark.Statement{Predicate: tr.Predicate, Object: tr.Object})
				}
			}
			if gs, ws := canon(got), canon(want); !slices.Equal(gs, ws) {
				t.Fatalf("document %q read back as %s:\n got %q\nwant %q", body, mt, gs, ws)
			}
		}
	})
}

var patchSeeds = []string{
	`{"add": {"dcterms:title": "t"}}`,
	`{"add": {"dcterms:title": [{"@value": "x", "@language": "en"}, {"@id": "http://example.org/a"}]}, "remove": {"dcterms:title": "t"}}`,
	`{"remove": {"http://purl.org/dc/terms/date": {"@value": "2020", "@type": "xsd:gYear"}}}`,
	`{"visibility": "private", "embargo": "2030-01-31"}`,
	`{"embargo": null, "visibility": "public"}`,
	`{"embargo": "2030-01-31T12:00:00.5+02:00"}`,
	`{"visibility": "nope"}`,
	`{"add": {"@id": "x"}}`,
	`{"add": {"dcterms:title": {"@value": "x", "@language": "en", "@type": "xsd:string"}}}`,
	`{"add": {"dcterms:title": [[]]}}`,
	`{"add": {"dcterms:title": 1}}`,
	`{"add": {"unknown:title": "x"}}`,
	`{"add": {"urn:x:y": {"@id": "urn:a:b"}}}`,
	`{"add": null, "remove": null, "embargo": ""}`,
	`{"add": {}} {"add": {}}`,
	`{"extra": 1}`,
	`[]`,
	`"string"`,
	``,
	`{`,
	"{\"add\": {\"dcterms:title\": \"\xff\"}}",
	`{"add": {"dcterms:title": "\ud800"}}`,
}

func FuzzPatchJSON(f *testing.F) {
	e := newEnv(f, Options{MaxBodyBytes: 64 << 10})
	w := serve(e, "POST", "/api/v1/works", "application/json", []byte(`{"metadata": {"dcterms:title": "t"}}`))
	if w.Code != http.StatusCreated {
		f.Fatalf("create: %d %s", w.Code, w.Body.Bytes())
	}
	var work resource
	if err := json.Unmarshal(w.Body.Bytes(), &work); err != nil {
		f.Fatal(err)
	}
	path := "/api/v1/resources/" + string(work.ID)
	for _, s := range patchSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := serve(e, "PATCH", path, "application/json", body)
		checkFuzzResponse(t, w, body)
		switch w.Code {
		case http.StatusOK:
			// The resource reads back; then its metadata is reset so it
			// does not grow from one input to the next.
			rw := serve(e, "GET", path, "", nil)
			if rw.Code != http.StatusOK || !json.Valid(rw.Body.Bytes()) {
				t.Fatalf("after PATCH %q: GET %d %s", body, rw.Code, rw.Body.Bytes())
			}
			if rw := serve(e, "PUT", path, "application/json", []byte(`{"metadata": {"dcterms:title": "t"}}`)); rw.Code != http.StatusOK {
				t.Fatalf("reset: %d %s", rw.Code, rw.Body.Bytes())
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.Bytes())
		}
	})
}
