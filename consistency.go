package shelfmark

import (
	"context"
	"time"
)

// replicaReadKey is the context key of a replica read (see WithReplicaRead).
type replicaReadKey struct{}

// replicaRead is what WithReplicaRead puts on a context.
type replicaRead struct{ minPosition string }

// WithReplicaRead marks the reads made with the returned context (each
// Storage.View) as tolerant of a little replication lag: a backend with a
// read replica may answer them from the replica. minPosition, when not
// empty, is a write position (as ReplicaRouter.WritePosition returned it,
// possibly to another server of the same database) that the answer must
// reflect: a replica that has not yet replayed that far is not used. This is
// how a client reads its own writes.
//
// Reads without the mark always go to the primary database, so whatever
// must see the latest state (the checks of a write, job claims, credential
// lookups) is unaffected by replicas.
func WithReplicaRead(ctx context.Context, minPosition string) context.Context {
	return context.WithValue(ctx, replicaReadKey{}, replicaRead{minPosition: minPosition})
}

// WithoutReplicaRead returns ctx without the mark of WithReplicaRead: its
// reads go to the primary database. A reader that finds the replica's
// answer older than one it gave before (an OAI-PMH list page behind the
// page that issued its resumption token) reads again with it.
func WithoutReplicaRead(ctx context.Context) context.Context {
	if _, ok := ReplicaReadFrom(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, replicaReadKey{}, nil)
}

// ReplicaReadFrom reports whether ctx carries the mark of WithReplicaRead,
// and the position the read must reflect ("" for none).
func ReplicaReadFrom(ctx context.Context) (minPosition string, ok bool) {
	r, ok := ctx.Value(replicaReadKey{}).(replicaRead)
	return r.minPosition, ok
}

// ReplicaRouter is implemented by a Storage that may answer reads marked
// with WithReplicaRead from a read replica.
type ReplicaRouter interface {
	// WritePosition returns the primary's write position now: a position
	// at or after the end of every transaction committed before the call.
	// A client given it after a write and sending it back with its next
	// reads (as the minPosition of WithReplicaRead) reads its own write.
	// It is "" when no replica is configured.
	WritePosition(ctx context.Context) (string, error)
	// ReplicaStats describes the replica and the routing of reads.
	ReplicaStats() ReplicaStats
}

// Reasons a read marked for a replica was answered by the primary (the keys
// of ReplicaStats.Fallbacks).
const (
	FallbackUnhealthy = "unhealthy" // the replica's last probe failed
	FallbackLag       = "lag"       // its lag is above the bound
	FallbackPosition  = "position"  // it has not replayed the client's write
	FallbackError     = "error"     // starting the read on it failed
)

// ReplicaStats describes a read replica as the last probe saw it, and how
// marked reads were routed since the database was opened.
type ReplicaStats struct {
	// Configured is false when there is no replica (nothing else is set).
	Configured bool
	// Healthy: the replica answered its last probe and is in recovery
	// (a streaming standby). Err says why not.
	Healthy bool
	Err     string
	// PrimaryReachable: the primary answered its last probe. When it does
	// not, marked reads stay on a healthy replica whatever its lag.
	PrimaryReachable bool
	// LagKnown: both sides answered recently enough to measure the lag.
	LagKnown bool
	// Lag is how long ago the primary first had a change the replica has
	// not yet replayed (0 when it has replayed all the primary had at the
	// last probe); LagBytes is the distance in write-ahead log bytes.
	Lag      time.Duration
	LagBytes int64
	// MaxLag is the bound above which marked reads go to the primary.
	MaxLag time.Duration
	// ReplayPosition is the position the replica has replayed.
	ReplayPosition string
	// ReadsReplica and ReadsPrimary count the read transactions (View) by
	// where they ran, marked or not; Fallbacks counts the marked reads
	// sent to the primary, by reason (the Fallback* constants).
	ReadsReplica int64
	ReadsPrimary int64
	Fallbacks    map[string]int64
	// Pool describes the replica's connection pool.
	Pool PoolStats
}
