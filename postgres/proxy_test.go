package postgres

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy is a loopback TCP proxy to the database for the tests that watch,
// cut or stop the traffic: each connection it accepts is joined to target
// by pipe, once each way (fromServer tells which way; nil: a plain copy
// that closes the other side when one ends). Closing it, or the end of the
// test, closes every connection it joined: to a client the server is gone.
type proxy struct {
	ln     net.Listener
	target string
	pipe   func(dst, src net.Conn, fromServer bool)
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

func newProxy(t *testing.T, target string, pipe func(dst, src net.Conn, fromServer bool)) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if pipe == nil {
		pipe = func(dst, src net.Conn, _ bool) { io.Copy(dst, src); dst.Close() }
	}
	p := &proxy{ln: ln, target: target, pipe: pipe}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go p.pipe(s, c, false)
		go p.pipe(c, s, true)
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.conns {
		c.Close()
	}
}
