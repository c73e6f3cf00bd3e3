package http

// Tests of back-pressure on uploads: while a job queue holds more jobs
// than its limit, the API's uploads are refused before their bytes are
// read (503, Retry-After, the queue named), nothing of them is kept, a
// paused queue does not count, and the client sends a refused put again
// after the wait.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// backlogEnv is a server whose gate limits the characterize queue to
// limit jobs, counted afresh at every upload; no worker runs, so every
// upload of a file leaves one characterize job.
func backlogEnv(t *testing.T, limit int64) (*testEnv, *shelfmark.BacklogGate) {
	e := newEnv(t, Options{})
	gate := &shelfmark.BacklogGate{Limits: map[string]int64{shelfmark.QueueCharacterize: limit}, Every: time.Nanosecond,
		Count: func(ctx context.Context) ([]shelfmark.QueueCount, error) {
			return e.repo.QueueCounts(shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test")))
		}}
	e.reconfigure(func(o *Options) { o.Backlog = gate })
	return e, gate
}

func TestBacklogRefusesUploads(t *testing.T) {
	e, gate := backlogEnv(t, 3)
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files?name=p%d.txt"
	// up to the limit and one past it (the gate counts before the upload)
	for i := range 4 {
		e.do("POST", fmt.Sprintf(up, i), []byte(fmt.Sprintf("page %d", i)), "Content-Type", "text/plain").want(t, http.StatusCreated)
	}
	before := e.blobFiles()
	for _, path := range []string{fmt.Sprintf(up, 9), "/api/v1/blobs"} {
		r := e.do("POST", path, []byte("one page too many"), "Content-Type", "text/plain")
		eb := r.wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
		// 4 jobs over a limit of 3: one job over is 3 whole tenths of
		// the limit (3.3), so 1 + 3 seconds
		if got := r.Header.Get("Retry-After"); got != "4" {
			t.Errorf("%s: Retry-After %q, want 4", path, got)
		}
		if eb.Details["queue"] != shelfmark.QueueCharacterize || eb.Details["backlog"] != float64(4) || eb.Details["limit"] != float64(3) {
			t.Errorf("%s: details %v", path, eb.Details)
		}
	}
	if kids := e.children(t, fs); len(kids) != 4 {
		t.Errorf("file set has %d files after the refusals, want 4", len(kids))
	}
	if after := e.blobFiles(); len(after) != len(before) {
		t.Errorf("refused uploads kept bytes: %d blob files, then %d", len(before), len(after))
	}
	e.wantTmpEmpty()
	if n := gate.Refused()[shelfmark.QueueCharacterize]; n != 2 {
		t.Errorf("refused %d, want 2", n)
	}
	m := e.do("GET", "/metrics", nil).want(t, http.StatusOK)
	if !strings.Contains(string(m.Body), `shelfmark_backlog_refusals_total{queue="characterize"} 2`) || !strings.Contains(string(m.Body), `shelfmark_backlog_limit{queue="characterize"} 3`) {
		t.Errorf("metrics lack the refusals and the limit")
	}
	// the dashboard shows the limit, the refusals and that uploads wait
	// for the queue, and its live events carry them
	b := adminVisitor(t, e)
	page := b.get("/admin")
	row := regexp.MustCompile(`(?s)<th scope="row">characterize</th>.*?</tr>`).FindString(page.Body)
	for _, want := range []string{`<span class="badge over" data-show="characterize.over">Pacing uploads</span>`, `<td class="num">3</td>`, `data-k="characterize.refusedup">2<`} {
		if !strings.Contains(row, want) {
			t.Errorf("dashboard's characterize row lacks %s: %s", want, row)
		}
	}
	if row := regexp.MustCompile(`(?s)<th scope="row">ocr</th>.*?</tr>`).FindString(page.Body); !strings.Contains(row, `<td class="num">none</td>`) ||
		!strings.Contains(row, `data-show="ocr.over" hidden`) {
		t.Errorf("dashboard's ocr row (no limit, not over): %s", row)
	}
	if !strings.Contains(page.Body, "Backlog limit") || !strings.Contains(page.Body, "Uploads refused") {
		t.Errorf("dashboard lacks the backlog columns")
	}

	// a paused queue was deferred on purpose: it holds nothing back
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	if err := e.repo.PauseQueue(sys, shelfmark.QueueCharacterize, true); err != nil {
		t.Fatal(err)
	}
	e.do("POST", fmt.Sprintf(up, 5), []byte("page 5"), "Content-Type", "text/plain").want(t, http.StatusCreated)
}

// TestBacklogClientWaits: the client's put is refused while the queue is
// over its limit, waits Retry-After, and goes through once there is room;
// its bytes were sent once, after the refusal.
func TestBacklogClientWaits(t *testing.T) {
	e, gate := backlogEnv(t, 10)
	fs := e.fileset(t)
	for i := range 11 {
		e.do("POST", fmt.Sprintf("/api/v1/resources/%s/files?name=p%d.txt", fs, i), []byte(fmt.Sprintf("page %d", i)), "Content-Type", "text/plain").want(t, http.StatusCreated)
	}
	c, err := NewClient(e.ts.URL, ClientOptions{Token: e.admin})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	body := []byte("bytes sent while the background is behind")
	go func() {
		blob, err := c.Put(ctx, bytes.NewReader(body), shelfmark.PutOptions{})
		if err == nil && blob.Digests[shelfmark.SHA256] != hexSHA256(body) {
			err = fmt.Errorf("stored %+v", blob)
		}
		done <- err
	}()
	// once refused, room comes: a job of the queue is done
	for gate.Refused()[shelfmark.QueueCharacterize] == 0 {
		select {
		case err := <-done:
			t.Fatalf("put ended before it was refused: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	if err := e.repo.PauseQueue(sys, shelfmark.QueueCharacterize, true); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("put after the wait: %v", err)
	}
	if n := gate.Refused()[shelfmark.QueueCharacterize]; n != 1 {
		t.Errorf("refused %d times, want once (Retry-After 2 s, then room)", n)
	}
}
