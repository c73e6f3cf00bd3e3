package shelfmark

import (
	"context"
	"time"
)

// Storage is what a database backend (sqlite/, postgres/) provides to the
// repository engine: row-level reads and writes inside transactions. The
// engine holds every rule (validation, diffing, batching, sequence numbers);
// a backend only speaks its dialect of SQL. Both backends pass one
// conformance suite (storagetest/).
type Storage interface {
	KeyAllocator
	// View runs fn in a read-only transaction that sees one snapshot.
	View(ctx context.Context, fn func(ReadTx) error) error
	// Update runs fn in a write transaction and commits it; when Update
	// returns nil the transaction is durable (unless the backend was
	// opened with relaxed durability). A non-nil error from fn rolls back.
	Update(ctx context.Context, fn func(WriteTx) error) error
	// UpdateQueue runs fn in a write transaction for the job queue's own
	// bookkeeping (claims, retries, failures, reaping). It takes no
	// sequence numbers and need not be durable: a claim or requeue lost
	// in a crash only leaves a job to be taken back when its lease ends.
	// So a backend may run it beside the writers of Update and commit it
	// without waiting for the disk.
	UpdateQueue(ctx context.Context, fn func(WriteTx) error) error
	// Stats reports the connection pool.
	Stats() PoolStats
	// Backend names the database: "sqlite" or "postgres".
	Backend() string
	// Close releases the database.
	Close() error
}

// ParallelStorage is a Storage whose write transactions may commit at
// once (PostgreSQL). UpdateParallel runs fn as Update does, except that it
// may run beside other UpdateParallel transactions (never beside an
// Update), each taking its own change numbers: the change feed (Changes)
// then shows a change only once every transaction that took a lower number
// has ended, so a reader that has read every change up to X never sees one
// at or below X appear later.
//
// Two parallel transactions are not serialised: a read of one may miss
// what the other is writing. The committer sends here only batches of ops
// that create new rows under keys of their own (creates, ingest groups),
// whose only contention is a table's uniqueness (a source key stored
// twice at once), and runs a batch again under Update when it fails here;
// UpdateFollower sends here the writes of the followers of the change
// feed, which touch only rows of their own.
type ParallelStorage interface {
	UpdateParallel(ctx context.Context, fn func(WriteTx) error) error
}

// Pipeliner is a WriteTx that can send a run of writes in one round trip
// (PostgreSQL's pipeline). Inside Pipeline, the statements that return
// nothing the caller reads are queued, and sent together when fn returns
// or before the next statement that returns rows, in the order they were
// made. A queued statement's error is therefore Pipeline's, not the
// error of the call that queued it, and the rows it affected are not
// known to that call: only writes that ignore their counts and whose
// failure fails the whole run belong there (a group commit's buffered
// writes, whose failure the committer already blames on the batch).
type Pipeliner interface {
	Pipeline(ctx context.Context, fn func() error) error
}

// pipeline runs fn in tx's Pipeline when tx is a Pipeliner, and as it is
// otherwise.
func pipeline(ctx context.Context, tx WriteTx, fn func() error) error {
	if p, ok := tx.(Pipeliner); ok {
		return p.Pipeline(ctx, fn)
	}
	return fn()
}

// UpdateFollower runs fn, the write of a follower of the change feed (the
// search indexer, the OAI-PMH projector, the preserver), on store: beside
// the batches of creates when store is a ParallelStorage, and as Update
// otherwise. Such a write is safe beside creates because a follower moves
// its own checkpoint by a compare (AddCounter, then a check of the value
// returned) and writes only rows that no create writes (its index, its
// view, its counters); and since every Update still runs alone, what fn
// reads of purges and other updates is as current as under Update. On a
// ParallelStorage this keeps a client's create from queueing behind each
// follower's commit and its flush, one after the other, and lets the
// database flush them together.
func UpdateFollower(ctx context.Context, store Storage, fn func(WriteTx) error) error {
	if p, ok := store.(ParallelStorage); ok {
		return p.UpdateParallel(ctx, fn)
	}
	return store.Update(ctx, fn)
}

// PoolStats describes a backend's connection pool (rule R9).
type PoolStats struct {
	MaxOpen      int
	InUse        int
	Idle         int
	WaitCount    int64
	WaitDuration time.Duration
}

// WALStats describes a write-ahead log that a backend keeps under a size
// limit (SQLite); see WALReporter.
type WALStats struct {
	Bytes    int64 // size of the log file after the last commit
	Limit    int64 // size above which checkpoints wait for readers
	Restarts int64 // checkpoints that let the log be rewound
	Busy     int64 // checkpoints that found readers of old frames still busy
	Failed   int64 // checkpoints that returned an error
	// Waited is the time those checkpoints held the writers back.
	Waited time.Duration
	// Passive counts the checkpoints that copy the log into the database
	// while writers go on; CatchUps those of them that copied the rest
	// holding the writers back, so that the log could be rewound; and
	// PassiveFailed those that returned an error.
	Passive, CatchUps, PassiveFailed int64
}

// WALReporter is implemented by a Storage that reports its write-ahead log.
type WALReporter interface {
	WALStats() WALStats
}

// ResourceRow is a resource's row without its metadata.
type ResourceRow struct {
	Key        int64
	Kind       Kind
	Visibility Visibility
	Embargo    *time.Time // private until then
	Lease      *time.Time // public until then, private after
	Parent     int64      // 0 when none
	// Position is the child's place among its parent's children:
	// 1..n once ordered, UnorderedBase+Key while unordered, 0 without a
	// parent.
	Position int64
	Version  int64
	Seq      int64
	Created  time.Time
	Modified time.Time
	Deleted  *time.Time
	// Source is, for a derivative file, the key of the file it was made
	// from; 0 otherwise.
	Source int64
	// Effective is who may see the resource: its own access narrowed by
	// its parent's effective access and its source's (effective.go). The
	// engine sets it on every row it writes; readers compare it with the
	// time of the read (Access.At).
	Effective Access
}

// FileRow is a file's row with its description.
type FileRow struct {
	Row  *ResourceRow
	File *File
}

// UnorderedBase is added to a child's key to form the position of a child
// that no order names, so unordered children follow ordered ones, by key,
// in one index.
const UnorderedBase int64 = 1 << 42

// Membership is one edge member -> collection.
type Membership struct {
	Collection int64
	Member     int64
}

// ReadTx reads within a transaction. Methods return ENOTFOUND errors only
// where documented; missing rows are otherwise simply absent.
type ReadTx interface {
	OAIReadTx
	ChangeReadTx
	JobReadTx
	SearchReadTx
	AccountReadTx
	AccessRequestTx
	WebReadTx
	UploadReadTx
	// Resource returns the row for key, or (nil, nil) when there is none.
	Resource(ctx context.Context, key int64) (*ResourceRow, error)
	// Resources returns the rows that exist among keys, in any order.
	Resources(ctx context.Context, keys []int64) ([]*ResourceRow, error)
	// ResourceChain returns the row for key and the rows of its parents,
	// nearest first, at most n rows (deleted or not): the chain an access
	// decision reads, in one statement whatever its length. It stops at a
	// parent that has no row; it is empty when key has none.
	ResourceChain(ctx context.Context, key int64, n int) ([]*ResourceRow, error)
	// Fields returns the resource's metadata, one Field per predicate,
	// sorted by predicate; with predicates, only those fields.
	Fields(ctx context.Context, key int64, predicates ...string) ([]Field, error)
	// MemberOf returns the keys of the live collections key belongs to.
	MemberOf(ctx context.Context, key int64) ([]int64, error)
	// Members returns up to limit live members of collection with keys
	// greater than after, by key.
	Members(ctx context.Context, collection, after int64, limit int) ([]*ResourceRow, error)
	// MembersBefore returns up to limit live members of collection with
	// keys below before (0: no bound), by key, highest first.
	MembersBefore(ctx context.Context, collection, before int64, limit int) ([]*ResourceRow, error)
	// Owned returns up to limit live resources of kind deposited by user
	// (their owner) with keys below before (0: no bound), by key, highest
	// first: one range of the index of owners by user, whatever the
	// number of deposits.
	Owned(ctx context.Context, user int64, kind Kind, before int64, limit int) ([]*ResourceRow, error)
	// Roots returns up to limit live resources of kind without a parent
	// whose keys are below before (0: no bound), by key, highest first.
	Roots(ctx context.Context, kind Kind, before int64, limit int) ([]*ResourceRow, error)
	// Children returns up to limit live children of parent with positions
	// greater than after, by position.
	Children(ctx context.Context, parent, after int64, limit int) ([]*ResourceRow, error)
	// File returns the file description of a resource of kind file, or
	// (nil, nil).
	File(ctx context.Context, key int64) (*File, error)
	// ChildFiles returns the live children of kind file of each of
	// parents, with their descriptions, by parent and then position: at
	// most perParent of each, in one statement whatever the number of
	// parents.
	ChildFiles(ctx context.Context, parents []int64, perParent int) ([]*FileRow, error)
	// PageFiles is ChildFiles with only what a viewer reads of a page's
	// files: of each row its Key, Kind, Visibility, Parent, Position,
	// Modified and Effective access (not its own embargo or lease); of
	// each file its Name, MediaType, Size, SHA256, Use,
	// ExternalURL and, when characterized, its Format's PRONOM,
	// MediaType, Width, Height and Pages. Everything else is zero. It
	// reads about half the columns, for the pages of a book. buf, when
	// not nil, is the memory the rows and their list are read into (Reset
	// first): they are valid until buf is read into again.
	PageFiles(ctx context.Context, parents []int64, perParent int, buf *FileRowBuffer) ([]*FileRow, error)
	// FirstChildren returns the key of the first live child of kind of
	// each of parents, by position (a work's first page); parents without
	// one are absent. One statement whatever the number of parents, one
	// look-up each in the index of children by parent and position.
	FirstChildren(ctx context.Context, parents []int64, kind Kind) (map[int64]int64, error)
	// Sources returns the resource keys of the source keys that were
	// ingested already; absent keys are not in the map.
	Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error)
	// SourceKeysOf returns the source keys each of keys was ingested
	// from, sorted, for those that have any, in one statement whatever
	// the number of keys.
	SourceKeysOf(ctx context.Context, keys []int64) (map[int64][]string, error)
	// AccessDependents returns the live resources whose effective access
	// depends directly on one of keys: their children and the files made
	// from them (Parent or Source among keys), in one statement whatever
	// the number of keys.
	AccessDependents(ctx context.Context, keys []int64) ([]*ResourceRow, error)
}

// WriteTx reads and writes within a write transaction.
type WriteTx interface {
	ReadTx
	OAIWriteTx
	JobWriteTx
	SearchWriteTx
	AccountWriteTx
	AccessRequestWriteTx
	WebWriteTx
	UploadWriteTx
	// NextSeq reserves n consecutive change sequence numbers and returns
	// the first. Where writers take turns the numbers are handed out in
	// commit order; on a ParallelStorage a transaction holds a claim on
	// its numbers until it ends, and Changes reads no further than the
	// oldest claim (numbers of a transaction that rolls back are a gap).
	NextSeq(ctx context.Context, n int) (int64, error)
	// InsertResources inserts new rows.
	InsertResources(ctx context.Context, rows []*ResourceRow) error
	// UpdateResource writes every field of row except Key, Kind, Parent,
	// Position, Created and Source.
	UpdateResource(ctx context.Context, row *ResourceRow) error
	// SetEffectiveAccess writes the Effective access and the Seq of each
	// of rows (nothing else), in statements whose number does not depend
	// on the number of rows.
	SetEffectiveAccess(ctx context.Context, rows []*ResourceRow) error
	// SetVersions writes the Version, Seq and Modified of each of rows
	// (nothing else), in statements whose number does not depend on the
	// number of rows.
	SetVersions(ctx context.Context, rows []*ResourceRow) error
	// SetOwnAccess writes the own access (Visibility, Embargo, Lease), the
	// Effective access, Version, Seq and Modified of each of rows (nothing
	// else), in statements whose number does not depend on the number of
	// rows.
	SetOwnAccess(ctx context.Context, rows []*ResourceRow) error
	// PutFields writes whole fields: fields[i] belongs to keys[i] and
	// replaces the field of the same predicate, if any; a field without
	// objects is removed. The number of statements does not depend on the
	// number of fields.
	PutFields(ctx context.Context, keys []int64, fields []Field) error
	// InsertMemberships adds edges; existing ones are left as they are.
	InsertMemberships(ctx context.Context, ms []Membership) error
	// DeleteMemberships removes edges.
	DeleteMemberships(ctx context.Context, ms []Membership) error
	// SetPositions gives children[i] position i+1 and makes every other
	// child of parent unordered, in bulk statements whose count does not
	// depend on the number of children.
	SetPositions(ctx context.Context, parent int64, children []int64) error
	// InsertFiles stores file descriptions: files[i] belongs to keys[i].
	InsertFiles(ctx context.Context, keys []int64, files []*File) error
	// InsertSources records ingested source keys: sourceKeys[i] became
	// resource keys[i].
	InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error
	// Tombstone marks key and all its descendants (children, their
	// children, …) and the files made from any of them (Source) deleted
	// at the given time and sequence number, removes their metadata and
	// their own memberships, and returns how many resources it marked.
	Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error)
	// PurgeTree removes key, its descendants (live or deleted) and the
	// files made from any of them, with every row of them: see purge.go.
	PurgeTree(ctx context.Context, key int64, limit int) (*Purged, error)
}

// StatementTracer, when given to a backend, is called after every SQL
// statement with its text and the number of rows it returned (queries) or
// affected (writes). The conformance suite uses it to show that an
// operation's work does not grow with the size of what surrounds it.
type StatementTracer func(query string, rows int64)
