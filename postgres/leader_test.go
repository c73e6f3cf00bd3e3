package postgres

import (
	"context"
	"testing"

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
				el := e.(*Elector)
				el.mu.Lock()
				var pids []uint32
				for c := range el.conns {
					pids = append(pids, c.PgConn().PID())
				}
				el.mu.Unlock()
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
	e := db.Elector(ElectorOptions{})
	defer e.Close()
	ctx := context.Background()
	conn, err := e.connect(ctx, "oai")
	if err != nil {
		t.Fatal(err)
	}
	defer e.drop(conn)
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
