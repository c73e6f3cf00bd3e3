package http

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// heldBody is a request body the test lets through: every byte but the
// last is sent at once, the last only when release is closed.
func heldBody(body string, release <-chan struct{}) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		if _, err := io.WriteString(pw, body[:len(body)-1]); err != nil {
			pw.CloseWithError(err)
			return
		}
		<-release
		_, err := io.WriteString(pw, body[len(body)-1:])
		pw.CloseWithError(err)
	}()
	return pr
}

// gateState returns the bytes the gate holds and how many requests wait.
func gateState(g *bodyGate) (int64, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held, len(g.waiters)
}

// waitGate polls until the gate holds held bytes with waiting requests
// queued (generous deadline: the machine may be busy).
func waitGate(t *testing.T, g *bodyGate, held int64, waiting int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		h, w := gateState(g)
		if h == held && w == waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gate holds %d bytes with %d waiting; want %d with %d", h, w, held, waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestParseGate sends many large metadata bodies at once: no more of them
// are read and parsed together than Options.MaxParseBytes allows (the
// gate's peak, counted by its hook, never exceeds it), the others wait
// their turn, and all are stored in the end.
func TestParseGate(t *testing.T) {
	const bodyCap = 1 << 20
	e := newEnv(t, Options{MaxBodyBytes: bodyCap, MaxParseBytes: 2 * bodyCap, ParseWait: 5 * time.Minute})
	g := e.srv.parse
	var mu sync.Mutex
	var peak int64
	g.observe = func(held int64) {
		mu.Lock()
		peak = max(peak, held)
		mu.Unlock()
	}
	body := `<> <http://purl.org/dc/terms/description> "` + strings.Repeat("d", 600_000) + `" .`
	size := int64(len(body))
	const n = 10
	release := make(chan struct{})
	statuses := make(chan int, n)
	for i := 0; i < n; i++ {
		req := e.request("POST", "/api/v1/works", heldBody(body, release), "Content-Type", "text/turtle", "Content-Length", strconv.FormatInt(size, 10))
		go func() {
			res, err := e.client.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	// Three bodies fit in 2 MiB; the other seven wait, without reading.
	waitGate(t, g, 3*size, n-3)
	close(release)
	for i := 0; i < n; i++ {
		if s := <-statuses; s != http.StatusCreated {
			t.Errorf("request %d: status %d", i, s)
		}
	}
	if held, waiting := gateState(g); held != 0 || waiting != 0 {
		t.Errorf("after the requests the gate holds %d bytes, %d waiting", held, waiting)
	}
	if peak > 2*bodyCap || peak < 3*size {
		t.Errorf("peak of bytes parsed at once %d; want 3 bodies (%d), at most %d", peak, 3*size, 2*bodyCap)
	}
}

// TestParseGateFull checks the answers when the gate is full: a body that
// cannot be admitted within ParseWait is 503 with Retry-After (declared
// length or chunked), a body over the cap is 413 at once, and a body that
// comes once the gate is free is stored.
func TestParseGateFull(t *testing.T) {
	const bodyCap = 1 << 20
	e := newEnv(t, Options{MaxBodyBytes: bodyCap, MaxParseBytes: bodyCap, ParseWait: 50 * time.Millisecond})
	g := e.srv.parse
	// One body takes the whole gate and is held there.
	head, tail := `<> <http://purl.org/dc/terms/description> "`, `" .`
	big := head + strings.Repeat("d", bodyCap-len(head)-len(tail)) + tail
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	done := make(chan int, 1)
	req := e.request("POST", "/api/v1/works", heldBody(big, release), "Content-Type", "text/turtle", "Content-Length", strconv.Itoa(len(big)))
	go func() {
		res, err := e.client.Do(req)
		if err != nil {
			done <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}()
	waitGate(t, g, int64(len(big)), 0)

	small := `{"metadata": {"dcterms:title": "small"}}`
	before := e.counts()
	for _, hdrs := range [][]string{
		{"Content-Type", "application/json"},                         // declared length
		{"Content-Type", "application/json", "Content-Length", "-1"}, // chunked
	} {
		var body any = small
		if len(hdrs) > 2 {
			body = unknownLength{strings.NewReader(small)}
		}
		r := e.do("POST", "/api/v1/works", body, hdrs...)
		eb := r.wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
		if r.Header.Get("Retry-After") == "" || !strings.Contains(eb.Message, fmt.Sprint(bodyCap)) {
			t.Errorf("%v: Retry-After %q, message %q", hdrs, r.Header.Get("Retry-After"), eb.Message)
		}
	}
	// Over the cap: 413 without waiting for the gate.
	e.do("POST", "/api/v1/works", strings.Repeat(" ", bodyCap+1), "Content-Type", "application/json").wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
	e.wantCounts(before)

	free()
	if s := <-done; s != http.StatusCreated {
		t.Fatalf("the held body: status %d", s)
	}
	waitGate(t, g, 0, 0)
	e.do("POST", "/api/v1/works", small, "Content-Type", "application/json").want(t, http.StatusCreated)
	e.do("POST", "/api/v1/works", unknownLength{strings.NewReader(small)}, "Content-Type", "application/json").want(t, http.StatusCreated)
	if held, waiting := gateState(g); held != 0 || waiting != 0 {
		t.Errorf("the gate holds %d bytes, %d waiting", held, waiting)
	}
}
