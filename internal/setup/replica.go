package setup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/postgres"
)

// replicaFlags are serve's read replica settings (docs/cluster.md, "Read
// replicas").
type replicaFlags struct {
	url    string
	maxLag time.Duration
}

// register adds the flags to f.
func (r *replicaFlags) register(f *pflag.FlagSet) {
	f.StringVar(&r.url, "read-database", "", "PostgreSQL URL of a streaming replica (hot standby) of --database: OAI-PMH, search, listings, resources, files and public pages read there while it is within --read-max-lag, and a client that just wrote reads its write (by write-ahead log position); empty: every read goes to --database")
	f.DurationVar(&r.maxLag, "read-max-lag", postgres.DefaultMaxReplicaLag, "with --read-database: the replica lag above which reads go to --database")
}

// OpenStorage opens the backend as OpenStorage does, with the replica.
func (r *replicaFlags) OpenStorage(ctx context.Context, database, data, durability string, maxConns int) (shelfmark.Storage, error) {
	if r.url == "" {
		return OpenStorage(ctx, database, data, durability, maxConns)
	}
	if !strings.HasPrefix(database, "postgres://") && !strings.HasPrefix(database, "postgresql://") {
		return nil, fmt.Errorf("--read-database needs --database to be a postgres:// URL")
	}
	if !strings.HasPrefix(r.url, "postgres://") && !strings.HasPrefix(r.url, "postgresql://") {
		return nil, fmt.Errorf("--read-database must be a postgres:// URL, not %q", r.url)
	}
	if r.maxLag <= 0 {
		return nil, fmt.Errorf("--read-max-lag must be positive, not %s", r.maxLag)
	}
	relaxed, err := relaxedDurability(durability)
	if err != nil {
		return nil, err
	}
	return postgres.Open(ctx, database, postgres.Options{Relaxed: relaxed, MaxConns: maxConns, ReadReplica: r.url, MaxReplicaLag: r.maxLag})
}
