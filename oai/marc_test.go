package oai

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/marc"
)

// pymarcDir is the unpacked pymarc 5.4.0 source distribution, whose test/
// folder holds real Library of Congress records (scripts/testdeps.sh).
func pymarcDir(t testing.TB) string {
	dir := os.Getenv("SHELFMARK_PYMARC_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".build", "testdata", "pymarc-5.4.0")
	}
	if _, err := os.Stat(filepath.Join(dir, "test", "test.dat")); err != nil {
		t.Fatalf("pymarc test records not found in %s (run scripts/testdeps.sh): %v", dir, err)
	}
	return dir
}

// ingestMARC loads a MARC file through the ingest pipeline and returns the
// ids of its works in file order (a record whose source key came earlier
// is listed once).
func (e *env) ingestMARC(path string) []shelfmark.ID {
	e.t.Helper()
	keys := e.marcKeys(path)
	src, err := ingest.OpenMARC(path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer src.Close()
	if _, err := ingest.Run(e.ctx, e.repo, e.blobs, src, ingest.Options{}); err != nil {
		e.t.Fatal(err)
	}
	found, err := e.repo.FindSources(e.ctx, keys)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []shelfmark.ID
	seen := map[shelfmark.ID]bool{}
	for _, k := range keys {
		id, ok := found[k]
		if !ok {
			e.t.Fatalf("%s: record %s was not stored", path, k)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// marcKeys lists the source keys of the good records of a file, in order.
func (e *env) marcKeys(path string) []string {
	src, err := ingest.OpenMARC(path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer src.Close()
	var keys []string
	for {
		it, err := src.Next(e.ctx)
		var ie *ingest.ItemError
		switch {
		case err == io.EOF:
			return keys
		case errors.As(err, &ie):
			continue
		case err != nil:
			e.t.Fatal(err)
		}
		keys = append(keys, it.Key)
	}
}

// marcJSON is a record in MARC-in-JSON, as pymarc's test files hold it.
type marcJSON struct {
	Leader string                       `json:"leader"`
	Fields []map[string]json.RawMessage `json:"fields"`
}

type marcJSONData struct {
	Ind1      string              `json:"ind1"`
	Ind2      string              `json:"ind2"`
	Subfields []map[string]string `json:"subfields"`
}

// TestMARCRoundTrip: real Library of Congress records (pymarc's test
// files: ISO 2709 in MARC-8 and UTF-8, and MARCXML) ingested, harvested as
// marcxml, and compared field by field with pymarc's own reading of the
// same files.
func TestMARCRoundTrip(t *testing.T) {
	dir := pymarcDir(t)
	py := python(t)
	files := []string{"test.dat", "marc8.dat", "diacritic.dat", "utf8_with_leader_flag.dat", "batch.xml"}
	want := map[string][]marcJSON{}
	for _, f := range files {
		out, err := exec.Command(py, filepath.Join("testdata", "marcjson.py"), dir, filepath.Join(dir, "test", f)).Output()
		if err != nil {
			t.Fatalf("pymarc on %s: %v", f, err)
		}
		var recs []marcJSON
		if err := json.Unmarshal(out, &recs); err != nil {
			t.Fatal(err)
		}
		want[f] = recs
	}
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		for _, f := range files {
			// one repository per file: the same record (same 001) comes in
			// several of them, and a repository stores it once
			e := open(t, Config{})
			ids := e.ingestMARC(filepath.Join(dir, "test", f))
			e.project()
			if len(ids) != len(want[f]) {
				t.Fatalf("%s: %d works, pymarc reads %d records", f, len(ids), len(want[f]))
			}
			for i, id := range ids {
				body := e.get("verb=GetRecord&metadataPrefix=marcxml&identifier=" + url.QueryEscape("oai:repo.example.org:"+string(id)))
				p := wantOK(t, body)
				rec, err := marc.NewXMLReader(strings.NewReader(p.Record[0].Metadata.Inner)).Next()
				if err != nil {
					t.Fatalf("%s record %d: harvested marcxml does not read back: %v", f, i+1, err)
				}
				compareJSON(t, f, i+1, rec, want[f][i])
				// and its oai_dc comes from the crosswalk
				dc := wantOK(t, e.get("verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape("oai:repo.example.org:"+string(id))))
				if !strings.Contains(dc.Record[0].Metadata.Inner, "<dc:title>") {
					t.Errorf("%s record %d: oai_dc without a title: %s", f, i+1, dc.Record[0].Metadata.Inner)
				}
			}
		}
	})
}

// compareJSON compares a record with pymarc's MARC-in-JSON of it, field by
// field and subfield by subfield (the leader's length and base address
// differ legitimately and are skipped, as is leader/09, which is "a" after
// conversion to UTF-8).
func compareJSON(t *testing.T, file string, n int, rec *marc.Record, want marcJSON) {
	t.Helper()
	lead := func(s string) string {
		if len(s) != 24 {
			return s
		}
		return s[5:9] + s[10:12] + s[17:]
	}
	if lead(rec.Leader) != lead(want.Leader) {
		t.Errorf("%s record %d: leader %q, pymarc %q", file, n, rec.Leader, want.Leader)
	}
	if len(rec.Fields) != len(want.Fields) {
		t.Fatalf("%s record %d: %d fields, pymarc %d", file, n, len(rec.Fields), len(want.Fields))
	}
	for i, f := range rec.Fields {
		for tag, v := range want.Fields[i] {
			if f.Tag != tag {
				t.Fatalf("%s record %d field %d: tag %s, pymarc %s", file, n, i, f.Tag, tag)
			}
			var s string
			if json.Unmarshal(v, &s) == nil {
				if f.Value != s {
					t.Errorf("%s record %d %s: %q, pymarc %q", file, n, tag, f.Value, s)
				}
				continue
			}
			var d marcJSONData
			if err := json.Unmarshal(v, &d); err != nil {
				t.Fatal(err)
			}
			if string(f.Ind1) != d.Ind1 || string(f.Ind2) != d.Ind2 {
				t.Errorf("%s record %d %s: indicators %q%q, pymarc %q%q", file, n, tag, f.Ind1, f.Ind2, d.Ind1, d.Ind2)
			}
			if len(f.Subfields) != len(d.Subfields) {
				t.Fatalf("%s record %d %s: %d subfields, pymarc %d", file, n, tag, len(f.Subfields), len(d.Subfields))
			}
			for j, sf := range f.Subfields {
				for code, val := range d.Subfields[j] {
					if string(sf.Code) != code || sf.Value != val {
						t.Errorf("%s record %d %s $%s: %+q, pymarc $%s %+q", file, n, tag, string(sf.Code), sf.Value, code, val)
					}
				}
			}
		}
	}
}
