package setup

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServeJobs: `serve` runs the background pipeline in process: a text
// file uploaded over the REST API is identified, its text extracted and
// searchable within seconds, and the queues it went through are empty
// again in /api/v1/jobs.
func TestServeJobs(t *testing.T) {
	base, hc := startServeAdmin(t, ServeConfig{workers: true})
	w := createWork(t, hc, base, "jobs")
	var status int
	var resp []byte
	var err error
	status, resp, _ = do(hc, http.MethodPost, base+"/api/v1/filesets", "application/json", []byte(`{"parent": "`+w.ID+`"}`), nil)
	if status != http.StatusCreated {
		t.Fatalf("create file set: %d %s", status, resp)
	}
	var fs struct{ ID string }
	_ = json.Unmarshal(resp, &fs)
	status, resp, _ = do(hc, http.MethodPost, base+"/api/v1/resources/"+fs.ID+"/files?name=notes.txt", "text/plain",
		[]byte("Field notes on the narwhal and the lighthouse keeper.\n"), nil)
	if status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, resp)
	}
	var hits struct {
		Hits []struct{ ID, Work, Kind, Snippet string }
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		status, resp, err = do(hc, http.MethodGet, base+"/api/v1/search?q="+url.QueryEscape("narwhal"), "", nil, nil)
		if err != nil || status != 200 {
			t.Fatalf("search: %d %s %v", status, resp, err)
		}
		if err := json.Unmarshal(resp, &hits); err != nil {
			t.Fatal(err)
		}
		if len(hits.Hits) > 0 {
			break
		}
		if time.Since(start) > 30*time.Second {
			_, jobs, _ := do(hc, http.MethodGet, base+"/api/v1/jobs", "", nil, nil)
			t.Fatalf("the file's text never became searchable; jobs: %s", jobs)
		}
	}
	if h := hits.Hits[0]; h.ID != fs.ID || h.Work != w.ID || h.Kind != "fileset" || !strings.Contains(h.Snippet, "<mark>narwhal</mark>") {
		t.Fatalf("hit %+v, want the file set %s of %s", h, fs.ID, w.ID)
	}
	// the file's format was identified and stored on it
	var file struct {
		Items []struct{ ID string }
	}
	_, resp, _ = do(hc, http.MethodGet, base+"/api/v1/resources/"+fs.ID+"/children", "", nil, nil)
	_ = json.Unmarshal(resp, &file)
	if len(file.Items) == 0 {
		t.Fatalf("children: %s", resp)
	}
	_, resp, _ = do(hc, http.MethodGet, base+"/api/v1/resources/"+file.Items[0].ID, "", nil, nil)
	if !strings.Contains(string(resp), `"pronom":"x-fmt/111"`) {
		t.Errorf("the original's format is not x-fmt/111: %s", resp)
	}
	_, resp, _ = do(hc, http.MethodGet, base+"/api/v1/jobs", "", nil, nil)
	if !strings.Contains(string(resp), `"queue":"characterize"`) {
		t.Errorf("jobs: %s", resp)
	}
}
