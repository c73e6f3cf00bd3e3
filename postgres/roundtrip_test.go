package postgres

import (
	"context"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// turnCounter is a proxy to the database that counts the client's turns:
// each time the client sends after the server has (or first) is the start
// of a round trip.
type turnCounter struct {
	*proxy
	mu     sync.Mutex
	server bool // the server spoke last
	turns  int
}

func newTurnCounter(t *testing.T, target string) *turnCounter {
	p := &turnCounter{server: true}
	p.proxy = newProxy(t, target, p.pipe)
	return p
}

// pipe copies src to dst, noting who spoke before it forwards.
func (p *turnCounter) pipe(dst, src net.Conn, server bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if !server && p.server {
				p.turns++
			}
			p.server = server
			p.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (p *turnCounter) count() int { p.mu.Lock(); defer p.mu.Unlock(); return p.turns }

// TestBatchIsOneRoundTrip: statements run by sqlstore.RunBatch in a View
// go to the server in one round trip, the transaction's BEGIN with them
// when they are its first; so do the reads of a page of links once its URL
// is known (ReadTx.WebLinkRows). One after another they take one each.
// Each case is measured the second time it runs: the first batch of
// statements new to a connection spends a round trip preparing them.
func TestBatchIsOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	dsn, _ := testSchema(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test database URL names no TCP host: %s", dsn)
	}
	p := newTurnCounter(t, u.Host)
	u.Host = p.ln.Addr().String()
	db, err := Open(ctx, u.String(), Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	insert(t, db, 1)
	three := func(n *int) []sqlstore.Batch {
		var qs []sqlstore.Batch
		for _, q := range []string{"SELECT 1", "SELECT key FROM resources WHERE key = $1", "SELECT 3"} {
			s := sqlstore.Batch{Query: q, Each: func(r sqlstore.Scanner) error { *n++; var v int64; return r.Scan(&v) }}
			if q != "SELECT 1" && q != "SELECT 3" {
				s.Args = []any{int64(1)}
			}
			qs = append(qs, s)
		}
		return qs
	}
	for _, c := range []struct {
		name  string
		run   func(tx *readTx) error
		turns int
	}{
		{"a batch first", func(tx *readTx) error {
			var n int
			err := sqlstore.RunBatch(ctx, tx, three(&n))
			if n != 3 {
				t.Errorf("a batch first: %d rows, want 3", n)
			}
			return err
		}, 1},
		{"a batch after a statement", func(tx *readTx) error {
			if _, err := tx.Resource(ctx, 1); err != nil {
				return err
			}
			var n int
			err := sqlstore.RunBatch(ctx, tx, three(&n))
			if n != 3 {
				t.Errorf("a batch after a statement: %d rows, want 3", n)
			}
			return err
		}, 2},
		{"one after another", func(tx *readTx) error {
			var n int
			for _, s := range three(&n) {
				if err := tx.EachRow(ctx, s.Query, s.Args, s.Each); err != nil {
					return err
				}
			}
			return nil
		}, 3},
		{"the rows of a page of links", func(tx *readTx) error {
			rows, err := tx.WebLinkRows(ctx, shelfmark.WebLinkRowsQuery{Dst: 1, InboundLimit: 10, Outbound: []int64{1, 2}, File: 1})
			if err == nil && (len(rows.FileChain) != 1 || rows.FileChain[0].Key != 1) {
				t.Errorf("the file's chain: %+v", rows.FileChain)
			}
			return err
		}, 1},
	} {
		var turns int
		for range 2 {
			if err := db.View(ctx, func(rt shelfmark.ReadTx) error {
				before := p.count()
				err := c.run(rt.(*readTx))
				turns = p.count() - before
				return err
			}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if turns != c.turns {
			t.Errorf("%s: %d round trips, want %d", c.name, turns, c.turns)
		}
	}
}
