package bench

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunVersusFedora: the same ramp is aimed at an LDP container as
// Turtle POSTs, with the credentials of the URL sent as Basic
// authentication, and each client count is compared with ours; the
// report never shows the password.
func TestRunVersusFedora(t *testing.T) {
	t.Run("go", func(t *testing.T) { testRunVersusFedora(t, "go") })
	t.Run("wrk", func(t *testing.T) {
		if _, err := exec.LookPath("wrk"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("wrk is not installed (scripts/testdeps.sh installs it)")
			}
			t.Skip("wrk is not installed (scripts/testdeps.sh installs it)")
		}
		testRunVersusFedora(t, "wrk")
	})
}

func testRunVersusFedora(t *testing.T, generator string) {
	var created, refused atomic.Int64
	ldp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "fedoraAdmin" || pass != "s3cret" {
			refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/turtle") {
			refused.Add(1)
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		created.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer ldp.Close()
	target := strings.Replace(ldp.URL, "http://", "http://fedoraAdmin:s3cret@", 1) + "/fcrepo/rest"
	ours := &Report{Steps: []Step{{Clients: 1, RatePerS: 1e9, LatencyMS: &Latency{P99: 1}}, {Clients: 2, RatePerS: 0, LatencyMS: &Latency{P99: 2}}}}
	c := RestConfig{Clients: []int{1, 2}, StepDuration: time.Second, Triples: 5, Format: "json", Token: "ours", NoAuthTarget: "http://127.0.0.1:1/nowhere", Generator: generator}
	var seen []int
	v, err := RunVersusFedora(context.Background(), c, ours, target, func(s Step) { seen = append(seen, s.Clients) })
	if err != nil {
		t.Fatal(err)
	}
	if refused.Load() != 0 || created.Load() == 0 {
		t.Fatalf("%d created, %d refused (credentials or body wrong)", created.Load(), refused.Load())
	}
	if len(v.Steps) != 2 || len(seen) != 2 || v.System != "fedora" || strings.Contains(v.Target, "s3cret") || !strings.Contains(v.Target, "fedoraAdmin") {
		t.Fatalf("versus: %+v, progress %v", v, seen)
	}
	for i, s := range v.Steps {
		o := ours.Steps[i]
		if s.Clients != o.Clients || s.RatePerS <= 0 || s.Errors != 0 {
			t.Fatalf("step %d: %+v", i, s)
		}
		if want := o.RatePerS / s.RatePerS; math.Abs(s.Ratio-want) > 1e-9*want {
			t.Errorf("step %d: ratio %v, want %v", i, s.Ratio, want)
		}
		if want := o.LatencyMS.P99 / s.LatencyMS.P99; math.Abs(s.P99Ratio-want) > 1e-9*want {
			t.Errorf("step %d: p99 ratio %v, want %v", i, s.P99Ratio, want)
		}
	}
}
