// Package setup wires the repository's parts into a running process, for
// the two commands that run one: shelfmark (serve, worker, ingest and the
// administration verbs) and shelfmark-bench (the benchmark lab, whose
// rest-server serves the same way). It opens storage from a DSN (SQLite
// in a data directory, or PostgreSQL with an optional read replica), the
// content store (local or S3), the job runner, the background loops and
// their leader election, and holds the serve command itself. Optional
// abilities of a storage backend (leader election, failed sign-ins shared
// among servers) are found through small interfaces declared where they
// are used, never by the backend's concrete type.
package setup
