package setup

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeHistory: with the preservation copy on (the default), `serve`
// serves a work's versions: its TimeMap lists the version the preserver
// wrote and the resource links to it; with the copy off, the versions
// routes answer 404 saying so, and the resource has no TimeMap link.
func TestServeHistory(t *testing.T) {
	t.Run("on", func(t *testing.T) {
		base, data := serveInTemp(t, ServeConfig{preservation: preservationFlags{window: 50 * time.Millisecond}})
		waitServing(t, base)
		hc := withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
		w := createWork(t, hc, base, "versioned")
		var tm struct {
			Mementos []struct {
				Version int    `json:"version"`
				URL     string `json:"url"`
			} `json:"mementos"`
		}
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			status, body, err := do(hc, http.MethodGet, base+"/api/v1/resources/"+w.ID+"/versions", "", nil, nil)
			if err == nil && status == 200 {
				if err := json.Unmarshal(body, &tm); err != nil {
					t.Fatal(err)
				}
				if len(tm.Mementos) > 0 {
					break
				}
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("no version served: %d %s %v", status, body, err)
			}
		}
		if tm.Mementos[0].Version != 1 || !strings.HasSuffix(tm.Mementos[0].URL, "/api/v1/resources/"+w.ID+"/versions/1") {
			t.Fatalf("timemap: %+v", tm)
		}
		status, body, err := do(hc, http.MethodGet, tm.Mementos[0].URL, "", nil, nil)
		if err != nil || status != 200 || !strings.Contains(string(body), "versioned") {
			t.Fatalf("memento: %d %s %v", status, body, err)
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/resources/"+w.ID, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !strings.Contains(strings.Join(resp.Header.Values("Link"), ","), `/versions>; rel="timemap"`) {
			t.Fatalf("resource links: %v", resp.Header.Values("Link"))
		}
	})
	t.Run("off", func(t *testing.T) {
		base, data := serveInTemp(t, ServeConfig{preservation: preservationFlags{root: "off"}})
		waitServing(t, base)
		hc := withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
		w := createWork(t, hc, base, "unversioned")
		status, body, err := do(hc, http.MethodGet, base+"/api/v1/resources/"+w.ID+"/versions", "", nil, nil)
		if err != nil || status != 404 || !strings.Contains(string(body), "no preservation copy") {
			t.Fatalf("versions without a copy: %d %s %v", status, body, err)
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/resources/"+w.ID, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if strings.Contains(strings.Join(resp.Header.Values("Link"), ","), "timemap") {
			t.Fatalf("a TimeMap link without a copy: %v", resp.Header.Values("Link"))
		}
	})
}
