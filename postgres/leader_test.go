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
