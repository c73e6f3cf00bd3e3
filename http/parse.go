package http

// This file bounds the memory of parsing request bodies: metadata and JSON
// bodies are read whole and parsed in memory (a 15 MB Turtle body takes
// several times its size while it is parsed), so the bytes of the bodies
// being read and parsed at once are capped by a weighted semaphore,
// Options.MaxParseBytes. Uploads stream to the content store and are capped
// by their own slots instead.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

const (
	// defaultMaxParseBytes is the default of Options.MaxParseBytes: four
	// bodies at the default cap of 16 MiB.
	defaultMaxParseBytes = 64 << 20
	// defaultParseWait is the default of Options.ParseWait.
	defaultParseWait = 5 * time.Second
	// chunkedStep is how many bytes of a body of unknown length are
	// reserved at a time while it is read.
	chunkedStep = 256 << 10
)

// streamsBody reports whether a route streams its body to the content
// store rather than reading it into memory: those are not gated here.
func streamsBody(method, pattern string) bool {
	switch method {
	case "POST", "PUT", "PATCH":
	default:
		return true // bodies of other methods are never read
	}
	return pattern == "/api/v1/blobs" || pattern == "/api/v1/resources/{id}/files" ||
		pattern == "/bulk" // the bulk ingest's upload, streamed to its staging directory
}

// bodyGate is a weighted semaphore over the bytes of request bodies held
// in memory, with waiters served first come, first served.
type bodyGate struct {
	capacity int64
	wait     time.Duration
	mu       sync.Mutex
	held     int64
	waiters  []*gateWaiter
	// observe, when set (by tests), is called with the bytes held after
	// every acquisition.
	observe func(held int64)
}

type gateWaiter struct {
	n     int64
	ready chan struct{}
}

func newBodyGate(capacity int64, wait time.Duration) *bodyGate {
	return &bodyGate{capacity: capacity, wait: wait}
}

// acquire takes n bytes (at most the capacity, so a body up to the cap can
// always be parsed alone), waiting up to the gate's wait; false when they
// could not be had in time or ctx ended.
func (g *bodyGate) acquire(ctx context.Context, n int64) (int64, bool) {
	n = min(n, g.capacity)
	g.mu.Lock()
	if len(g.waiters) == 0 && g.held+n <= g.capacity {
		g.held += n
		g.observed()
		g.mu.Unlock()
		return n, true
	}
	w := &gateWaiter{n: n, ready: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return n, true
	case <-timer.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.ready: // granted while giving up: keep it
		return n, true
	default:
	}
	for i, x := range g.waiters {
		if x == w {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			break
		}
	}
	g.grant() // a large waiter leaving may let smaller ones in
	return 0, false
}

// release gives back n bytes.
func (g *bodyGate) release(n int64) {
	if n <= 0 {
		return
	}
	g.mu.Lock()
	g.held -= n
	g.grant()
	g.mu.Unlock()
}

// grant admits waiters in order while they fit; g.mu is held.
func (g *bodyGate) grant() {
	for len(g.waiters) > 0 && g.held+g.waiters[0].n <= g.capacity {
		w := g.waiters[0]
		g.waiters = g.waiters[1:]
		g.held += w.n
		g.observed()
		close(w.ready)
	}
}

func (g *bodyGate) observed() {
	if g.observe != nil {
		g.observe(g.held)
	}
}

// busy is the error of a request whose body could not be admitted.
func (g *bodyGate) busy() error {
	return &shelfmark.Error{Code: shelfmark.EUNAVAILABLE,
		Message: fmt.Sprintf("The server is parsing as many request bodies as its memory allows (%d bytes at once); retry in a moment.", g.capacity),
		Details: map[string]any{"max_parse_bytes": g.capacity}}
}

// parsing admits a request's body to the gate before the handler reads
// it: a body of declared length reserves that many bytes up front (none
// when it is over the body cap, which the handler refuses with 413); a
// body of unknown length reserves its bytes as they are read. Everything
// is given back when the handler returns. A body that cannot be admitted
// within Options.ParseWait is 503 with Retry-After.
func (s *Server) parsing(h http.Handler) http.Handler {
	g := s.parse
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := r.ContentLength; {
		case n == 0 || r.Body == nil || r.Body == http.NoBody || n > s.opts.MaxBodyBytes:
			h.ServeHTTP(w, r)
		case n > 0:
			got, ok := g.acquire(r.Context(), n)
			if !ok {
				w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(g.wait)))
				s.refuse(w, r, g.busy(), s.now())
				return
			}
			defer g.release(got)
			h.ServeHTTP(w, r)
		default:
			body := &gatedBody{ReadCloser: r.Body, g: g, ctx: r.Context(), w: w, limit: s.opts.MaxBodyBytes + 1}
			defer func() { g.release(body.held) }()
			r2 := *r // a shallow copy, as http.MaxBytesReader's callers do
			r2.Body = body
			h.ServeHTTP(w, &r2)
		}
	})
}

// retrySeconds is the Retry-After advised when the gate is full.
func retrySeconds(wait time.Duration) int { return max(1, int(wait/time.Second)) }

// gatedBody reserves the bytes of a body of unknown length as they are
// read, chunkedStep at a time, up to limit (the body cap plus the one byte
// that tells it was exceeded).
type gatedBody struct {
	io.ReadCloser
	g     *bodyGate
	ctx   context.Context
	w     http.ResponseWriter
	limit int64
	held  int64 // bytes reserved
	read  int64 // bytes read
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.read >= b.held && b.held < b.limit {
		got, ok := b.g.acquire(b.ctx, min(chunkedStep, b.limit-b.held))
		if !ok {
			b.w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(b.g.wait)))
			return 0, b.g.busy()
		}
		b.held += got
	}
	if room := b.held - b.read; room > 0 && int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	return n, err
}
