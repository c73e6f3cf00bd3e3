package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestJobsAPI: the counts of the queues, pausing and resuming, listing
// and retrying failed jobs, and the same counts in /metrics.
func TestJobsAPI(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	work, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "p.tif", MediaType: "image/tiff", Size: 1, SHA256: fmt.Sprintf("%064x", i), Use: "original"}}); err != nil {
			t.Fatal(err)
		}
	}
	type queues struct {
		Queues []struct {
			Queue          string
			Paused         bool
			Queued, Failed int64
		}
	}
	get := func() queues {
		t.Helper()
		var q queues
		if err := json.Unmarshal(e.do("GET", "/api/v1/jobs", nil).want(t, http.StatusOK).Body, &q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := get()
	if len(q.Queues) != 4 || q.Queues[0].Queue != "characterize" || q.Queues[0].Queued != 2 || q.Queues[3].Queue != "ocr" {
		t.Fatalf("queues %+v", q)
	}
	e.do("POST", "/api/v1/jobs/ocr/pause", nil).want(t, http.StatusOK)
	if q := get(); !q.Queues[3].Paused || q.Queues[0].Paused {
		t.Fatalf("after pausing ocr %+v", q)
	}
	metrics := string(e.do("GET", "/metrics", nil).want(t, http.StatusOK).Body)
	for _, want := range []string{`shelfmark_jobs{queue="characterize",state="queued"} 2`, `shelfmark_job_queue_paused{queue="ocr"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	e.do("POST", "/api/v1/jobs/ocr/resume", nil).want(t, http.StatusOK)
	if q := get(); q.Queues[3].Paused {
		t.Fatal("ocr still paused")
	}

	// a job that failed is listed with its error and can be retried
	jobs, err := e.repo.ClaimJobs(ctx, shelfmark.Claim{Queue: "characterize", Worker: "w", N: 1, Now: timeNowPlus(), Lease: timeNowPlus()})
	if err != nil || len(jobs) != 1 {
		t.Fatal(jobs, err)
	}
	if err := e.repo.FailJob(ctx, jobs[0], fmt.Errorf("identify p.tif: corrupt")); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Jobs []struct {
			ID       int64
			Resource string
			State    string
			Error    string
		}
	}
	if err := json.Unmarshal(e.do("GET", "/api/v1/jobs/characterize?state=failed", nil).want(t, http.StatusOK).Body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Jobs) != 1 || list.Jobs[0].Error != "identify p.tif: corrupt" || list.Jobs[0].State != "failed" || list.Jobs[0].Resource == "" {
		t.Fatalf("failed jobs %+v", list)
	}
	var retried struct{ Retried int64 }
	if err := json.Unmarshal(e.do("POST", "/api/v1/jobs/characterize/retry", nil).want(t, http.StatusOK).Body, &retried); err != nil || retried.Retried != 1 {
		t.Fatalf("retry: %+v %v", retried, err)
	}

	// bad requests
	e.do("POST", "/api/v1/jobs/nosuch/pause", nil).want(t, http.StatusNotFound)
	e.do("POST", "/api/v1/jobs/ocr/explode", nil).want(t, http.StatusNotFound)
	e.do("GET", "/api/v1/jobs/ocr?state=bogus", nil).want(t, http.StatusBadRequest)
	e.do("GET", "/api/v1/jobs/ocr?limit=0", nil).want(t, http.StatusBadRequest)
	e.do("POST", "/api/v1/jobs/ocr/retry", `{"ids": "x"}`, "Content-Type", "application/json").want(t, http.StatusBadRequest)
}

func timeNowPlus() time.Time { return time.Now().Add(time.Second) }
