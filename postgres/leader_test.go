package postgres

import (
	"context"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/storagetest"
)

func TestElection(t *testing.T) {
	storagetest.RunElection(t, func(t *testing.T) storagetest.ElectionBackend {
		db, _ := openTest(t, Options{})
		return storagetest.ElectionBackend{
			Open: func(t *testing.T) (shelfmark.Elector, func()) {
				e := db.Elector(ElectorOptions{})
				return e, func() { e.Close() }
			},
			// the server ends the elector's sessions, as a restart of the
			// database or pg_terminate_backend by an operator would
			Sever: func(t *testing.T, e shelfmark.Elector) {
				var pids []uint32
				for _, c := range e.(*Elector).Handles() {
					pids = append(pids, c.conn.PgConn().PID())
				}
				for _, pid := range pids {
					if _, err := adminPool(t).Exec(context.Background(), `SELECT pg_terminate_backend($1)`, int32(pid)); err != nil {
						t.Fatal(err)
					}
				}
			},
		}
	})
}

func TestLeaderKeysApart(t *testing.T) {
	// the same name in two schemas: two locks
	if leaderKey("a", "oai") == leaderKey("b", "oai") || leaderKey("a", "oai") == leaderKey("a", "search") {
		t.Fatal("leader keys collide")
	}
}

// TestElectorConnection: the lock's connection carries the keepalive and
// user timeout settings that bound the takeover after a lost machine, and
// names itself in pg_stat_activity.
func TestElectorConnection(t *testing.T) {
	db, _ := openTest(t, Options{})
	locks := sessionLocks{db: db, checkTimeout: time.Second}
	ctx := context.Background()
	c, err := locks.Open(ctx, "oai")
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close(c)
	conn := c.conn
	var tcp bool
	if err := conn.QueryRow(ctx, "SELECT inet_client_addr() IS NOT NULL").Scan(&tcp); err != nil {
		t.Fatal(err)
	}
	if !tcp {
		t.Skip("the test database is reached through a Unix socket, which has no TCP settings")
	}
	for name, want := range map[string]string{"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "1",
		"tcp_keepalives_count": "3", "tcp_user_timeout": "10000", "application_name": "shelfmark leader oai"} {
		var got string
		if err := conn.QueryRow(ctx, "SHOW "+name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// freezer is a loopback TCP proxy to the database that can stop passing
// bytes without closing anything, as a network that drops every packet
// would look to the client.
type freezer struct {
	*proxy
	mu     sync.Mutex
	frozen bool
}

func newFreezer(t *testing.T, target string) *freezer {
	f := &freezer{}
	f.proxy = newProxy(t, target, func(dst, src net.Conn, _ bool) { f.pipe(dst, src) })
	return f
}

// pipe copies from src to dst until frozen (then it holds what it read).
func (f *freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		f.mu.Lock()
		frozen := f.frozen
		f.mu.Unlock()
		if frozen {
			continue // read and dropped: the peer sees silence
		}
		if n > 0 {
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

func (f *freezer) freeze() { f.mu.Lock(); f.frozen = true; f.mu.Unlock() }

// TestElectorCutOff: a leader whose connection stops answering (the
// network dropped, nothing closed) takes its leadership as lost after its
// check times out, without waiting for the dead connection to close.
func TestElectorCutOff(t *testing.T) {
	dsn, _ := testSchema(t)
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test database URL names no TCP host: %s", dsn)
	}
	f := newFreezer(t, u.Host)
	u.Host = f.ln.Addr().String()
	db, err := Open(context.Background(), u.String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := db.Elector(ElectorOptions{Check: 100 * time.Millisecond, CheckTimeout: 500 * time.Millisecond})
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := e.Campaign(ctx, "oai")
	if err != nil {
		t.Fatal(err)
	}
	f.freeze()
	select {
	case <-l.Lost():
	case <-time.After(time.Minute):
		t.Fatal("the leadership was not lost after the network went silent")
	}
	f.close() // the server may free the lock now
}
