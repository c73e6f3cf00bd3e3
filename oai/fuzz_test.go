package oai

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzToken: no text makes decodeToken panic, and only what encode made
// (under the same key) is accepted.
func FuzzToken(f *testing.F) {
	key := []byte("test key")
	good := (&token{Verb: "ListRecords", Prefix: "oai_dc", Set: "a:b", After: 12, Max: 99, Cursor: 100, Total: 5000}).encode(key)
	f.Add(good)
	f.Add(good[:len(good)-2])
	f.Add("")
	f.Add("AAAA")
	f.Add((&token{Verb: "ListSets", Total: -1}).encode(key))
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := decodeToken(s, key)
		if err != nil {
			return
		}
		if again := tok.encode(key); again != s {
			t.Fatalf("accepted %q, which encodes back as %q", s, again)
		}
		if _, err := decodeToken(s, []byte("another key")); err == nil {
			t.Fatalf("%q accepted under another key", s)
		}
	})
}

// FuzzArgs: any query string gets a well-formed OAI-PMH response (200,
// text/xml) and never a panic; a response with an error has a known code.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{"verb=Identify", "verb=ListRecords&metadataPrefix=oai_dc", "verb=ListRecords&resumptionToken=AAAA",
		"verb=GetRecord&identifier=oai:repo.example.org:b2x8k4m1q&metadataPrefix=oai_dc", "verb=ListSets", "verb=ListMetadataFormats&identifier=x",
		"verb=ListIdentifiers&metadataPrefix=oai_dc&from=2020-01-01&until=2020-01-02&set=a:b", "%zz", "verb=Identify;x=1", "verb=&verb="} {
		f.Add(s)
	}
	e := newEnv(f, "sqlite", Config{PageSize: 3})
	e.works(10, "w")
	e.project()
	codes := map[string]bool{errBadArgument: true, errBadResumption: true, errBadVerb: true, errCannotDisseminate: true,
		errIDDoesNotExist: true, errNoRecordsMatch: true, errNoMetadataFormats: true, errNoSetHierarchy: true}
	f.Fuzz(func(t *testing.T, q string) {
		for _, method := range []string{"GET", "POST"} {
			var r *http.Request
			if method == "GET" {
				r = httptest.NewRequest("GET", "/oai", nil)
				r.URL.RawQuery = q
			} else {
				r = httptest.NewRequest("POST", "/oai", strings.NewReader(q))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r = r.WithContext(ctx)
			w := httptest.NewRecorder()
			e.prov.ServeHTTP(w, r)
			cancel()
			if w.Code != 200 {
				t.Fatalf("%s %q: status %d: %s", method, q, w.Code, w.Body.String())
			}
			d := xml.NewDecoder(bytes.NewReader(w.Body.Bytes()))
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s %q: response is not well-formed: %v\n%s", method, q, err, w.Body.String())
				}
				if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "error" {
					for _, a := range se.Attr {
						if a.Name.Local == "code" && !codes[a.Value] {
							t.Fatalf("%q: unknown error code %q", q, a.Value)
						}
					}
				}
			}
		}
	})
}
