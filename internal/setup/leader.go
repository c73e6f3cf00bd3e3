package setup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// electedLoops are the background loops that must run once among the
// servers sharing a database; each is elected on its own, so they may land
// on different servers. The job runner is not among them: every process
// works jobs.
var electedLoops = []string{"oai", "search", "access", "blobgc", "preserve", "fixity"}

// closer is what an elector needs at shutdown.
type closer interface{ Close() error }

// serverElections is a database that servers on several machines share
// (PostgreSQL's DB): it elects leaders among them, and keeps their failed
// sign-ins in common.
type serverElections interface {
	Elector(opts postgres.ElectorOptions) *postgres.Elector
}

// machineElections is a database the processes of one machine share
// (SQLite's DB): it elects leaders among them through a lock polled at an
// interval (0: its default).
type machineElections interface {
	Elector(poll time.Duration) *sqlite.Elector
}

// elector returns the elector of a store's backend (nil for a storage
// that has none).
func elector(store shelfmark.Storage) (shelfmark.Elector, closer) {
	switch db := store.(type) {
	case serverElections:
		e := db.Elector(postgres.ElectorOptions{})
		return e, e
	case machineElections:
		e := db.Elector(0)
		return e, e
	}
	return nil, nil
}

// sharedAuthFailures returns the database through which the servers
// sharing it share their brute-force limit: one that servers on several
// machines share (PostgreSQL's). On SQLite one server counts alone, in
// memory (nil).
func sharedAuthFailures(store shelfmark.Storage) shelfmark.AuthFailures {
	if _, shared := store.(serverElections); shared {
		if af, ok := store.(shelfmark.AuthFailures); ok {
			return af
		}
	}
	return nil
}

// noCloser is the closer of a storage without election.
type noCloser struct{}

// Close does nothing.
func (noCloser) Close() error { return nil }

// electLoops makes each loop named in electedLoops run only while this
// process leads that name among the servers of store's database. It
// reports the leaderships in the gauge shelfmark_leader{task} of reg and
// logs each gain and loss. Close the returned closer after the loops
// stopped.
func electLoops(store shelfmark.Storage, loops map[string]runner, reg prometheus.Registerer, log *slog.Logger) (closer, error) {
	e, c := elector(store)
	if e == nil {
		log.Warn("no leader election for this storage: the background loops run on every server", "backend", store.Backend())
		return noCloser{}, nil
	}
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "shelfmark_leader",
		Help: "1 while this server leads the task (oai, search, access, blobgc, preserve, fixity), which runs on one server of a database at a time."}, []string{"task"})
	if err := reg.Register(gauge); err != nil {
		return nil, fmt.Errorf("register shelfmark_leader: %w", err)
	}
	opts := shelfmark.LeadOptions{
		OnChange: func(task string, leading bool) {
			if leading {
				gauge.WithLabelValues(task).Set(1)
				log.Info("leadership gained: this server runs the task", "task", task)
			} else {
				gauge.WithLabelValues(task).Set(0)
				log.Info("leadership lost: another server may run the task", "task", task)
			}
		},
		OnError: func(task string, err error) { log.Warn("leader election", "task", task, "err", err) },
	}
	for _, name := range electedLoops {
		if l, ok := loops[name]; ok {
			gauge.WithLabelValues(name).Set(0)
			loops[name] = elected{e: e, name: name, loop: l, opts: opts}
		}
	}
	return c, nil
}

// elected is a loop that runs under a leadership.
type elected struct {
	e    shelfmark.Elector
	name string
	loop runner
	opts shelfmark.LeadOptions
}

// Run implements runner.
func (l elected) Run(ctx context.Context) error {
	return shelfmark.Lead(ctx, l.e, l.name, l.loop.Run, l.opts)
}
