package oai

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// python returns the interpreter of the test virtualenv that has sickle
// (scripts/testdeps.sh makes it).
func python(t testing.TB) string {
	py := os.Getenv("SHELFMARK_TEST_PYTHON")
	if py == "" {
		py = filepath.Join("..", ".build", "venv", "bin", "python")
	}
	if out, err := exec.Command(py, "-c", "import sickle").CombinedOutput(); err != nil {
		t.Fatalf("no Python with sickle at %s (run scripts/testdeps.sh or set SHELFMARK_TEST_PYTHON): %v %s", py, err, out)
	}
	return py
}

type sickleItem struct {
	ID      string
	Deleted bool
	Sets    []string
	HasMeta bool
}

func (s *sickleItem) UnmarshalJSON(b []byte) error {
	var v [4]json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for i, p := range []any{&s.ID, &s.Deleted, &s.Sets, &s.HasMeta} {
		if err := json.Unmarshal(v[i], p); err != nil {
			return err
		}
	}
	return nil
}

// TestSickleHarvest: a third-party harvester walks several thousand records
// by oai_dc, marcxml, a set and a from/until window, and gets each once.
func TestSickleHarvest(t *testing.T) {
	py := python(t)
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{})
		coll := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Maps")})
		t0 := e.clock.Now()
		batch1 := e.works(1500, "a", coll.ID)
		e.project()
		e.clock.Set(t0.Add(time.Hour))
		batch2 := e.works(1500, "b")
		marcIDs := e.ingestMARC(filepath.Join(pymarcDir(t), "test", "test.dat"))
		e.project()
		e.clock.Set(t0.Add(2 * time.Hour))
		batch3 := e.works(1000, "c")
		e.project()

		stamp := func(t time.Time) string { return t.Format("2006-01-02T15:04:05Z") }
		harvests := []map[string]any{
			{"name": "all", "verb": "ListRecords", "args": map[string]string{"metadataPrefix": "oai_dc"}},
			{"name": "ids", "verb": "ListIdentifiers", "args": map[string]string{"metadataPrefix": "oai_dc"}},
			{"name": "marc", "verb": "ListRecords", "args": map[string]string{"metadataPrefix": "marcxml"}},
			{"name": "set", "verb": "ListRecords", "args": map[string]string{"metadataPrefix": "oai_dc", "set": string(coll.ID)}},
			{"name": "window", "verb": "ListIdentifiers", "args": map[string]string{"metadataPrefix": "oai_dc",
				"from": stamp(t0.Add(30 * time.Minute)), "until": stamp(t0.Add(90 * time.Minute))}},
			{"name": "none", "verb": "ListIdentifiers", "args": map[string]string{"metadataPrefix": "oai_dc", "until": "2000-01-01"}},
		}
		in, _ := json.Marshal(harvests)
		cmd := exec.Command(py, filepath.Join("testdata", "harvest.py"), e.srv.URL+"/oai")
		cmd.Stdin = bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sickle: %v\n%s", err, stderr.String())
		}
		var got map[string][]sickleItem
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("sickle output: %v\n%s", err, out)
		}
		check := func(name string, want []shelfmark.ID, meta bool) {
			t.Helper()
			var ids []string
			for _, it := range got[name] {
				if it.Deleted {
					t.Errorf("%s: %s deleted", name, it.ID)
				}
				if meta && !it.HasMeta {
					t.Errorf("%s: %s without metadata", name, it.ID)
				}
				ids = append(ids, it.ID)
			}
			sorted := slices.Clone(ids)
			slices.Sort(sorted)
			if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
				t.Errorf("%s: a record came twice", name)
			}
			if w := e.oaiIDs(want...); !slices.Equal(sorted, w) {
				t.Errorf("%s: sickle got %d records, want %d", name, len(sorted), len(w))
			}
		}
		all := slices.Concat(batch1, batch2, marcIDs, batch3)
		check("all", all, true)
		check("ids", all, false)
		check("marc", marcIDs, true)
		check("set", batch1, true)
		check("window", slices.Concat(batch2, marcIDs), false)
		check("none", nil, false)
		for _, it := range got["set"] {
			if !slices.Equal(it.Sets, []string{string(coll.ID)}) {
				t.Fatalf("set record %s has setSpecs %v", it.ID, it.Sets)
			}
		}
		if len(all) < 4000 || !strings.Contains(string(out), "oai:repo.example.org:") {
			t.Fatalf("harvested too little: %d", len(all))
		}
	})
}
