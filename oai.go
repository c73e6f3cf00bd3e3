package shelfmark

import (
	"context"
	"time"
)

// The OAI-PMH view (rule R11) is a projection of the repository
// kept in its own tables: one row per (work, metadata format) holding the
// record's metadata payload, rendered once when the work changes, so that a
// harvest reads stored bytes in one index range per page at any depth.
//
// Rows are numbered by the view's own sequence (OAIRecord.Seq, unique
// across formats and rising with every write of a row), and each row's
// datestamp never falls as Seq rises: the single projector stamps rows
// with max(now, last datestamp). So a from/until window is one Seq range
// (see OAIReadTx.OAISeqRange) and every list is a keyset walk over Seq.

// OAIRecord is one record of the OAI-PMH view: a work in one metadata
// format, or the tombstone of one.
type OAIRecord struct {
	// Prefix is the metadataPrefix of the format ("oai_dc", "marcxml").
	Prefix string
	// Seq is the row's place in the view; unique across formats.
	Seq int64
	// Key is the work's key.
	Key int64
	// Datestamp is when the row was written, whole seconds, UTC.
	Datestamp time.Time
	// Deleted marks a tombstone: the work was deleted or stopped being
	// public. Payload is then empty.
	Deleted bool
	// Sets are the keys of the collections the work was directly a member
	// of when the row was written, ascending.
	Sets []int64
	// Payload is the content of the record's <metadata> element; empty
	// when Deleted, or when the row was read without payloads.
	Payload []byte
}

// OAISet is a public collection as an OAI-PMH set.
type OAISet struct {
	// Key is the collection's key.
	Key int64
	// Spec is the setSpec: the ids of the collection's ancestors and its
	// own, joined by ":" ("parentid:childid").
	Spec string
	// Name is the collection's title.
	Name string
}

// OAIList selects one page of a list: rows of one format with Seq in
// (After, Max], in any of Sets when Sets is not empty, by Seq.
type OAIList struct {
	Prefix string
	// Sets, when not empty, are collection keys (a set and every set below
	// it); a row matches when it is in any of them.
	Sets []int64
	// After is the Seq of the last row already returned (0 for none).
	After int64
	// Max is the highest Seq to include.
	Max int64
	// Limit is the largest number of rows to return.
	Limit int
	// Payload asks for the rows' payloads (ListRecords); without it they
	// are left empty (ListIdentifiers).
	Payload bool
}

// OAITally is what OAICount returns.
type OAITally struct {
	// N is the number of rows.
	N int64
	// First and Last are the lowest and highest Seq among them; 0 when N
	// is 0.
	First, Last int64
}

// OAIReadTx reads the OAI-PMH view. Every method costs the same however
// many rows the view holds: one index seek and a range of at most Limit
// rows.
type OAIReadTx interface {
	// OAIRecords returns up to l.Limit rows of the list, by Seq.
	OAIRecords(ctx context.Context, l OAIList) ([]*OAIRecord, error)
	// OAICount describes the rows of prefix (when set is not 0, those
	// directly in the collection set): how many there are and the lowest
	// and highest of their Seqs (0 when there are none). The count is kept
	// as rows are written (PutOAIRecords), never counted, so a list's
	// completeListSize costs the same at any size.
	OAICount(ctx context.Context, prefix string, set int64) (OAITally, error)
	// OAISeqRange turns a datestamp window into a Seq range: the rows of
	// prefix whose datestamp lies in [from, until] are exactly those with
	// after < Seq <= max. A zero from or until leaves that side open
	// (after 0, max the highest Seq of the view).
	OAISeqRange(ctx context.Context, prefix string, from, until time.Time) (after, max int64, err error)
	// OAIBounds returns the highest Seq of the view and the earliest
	// datestamp of any row; ok is false when the view is empty.
	OAIBounds(ctx context.Context) (maxSeq int64, earliest time.Time, ok bool, err error)
	// OAIRecord returns the row of key in prefix, with its payload, or
	// (nil, nil).
	OAIRecord(ctx context.Context, prefix string, key int64) (*OAIRecord, error)
	// OAIRecordsOf returns every row of each of keys, one per format,
	// without payloads, by key and then prefix, in one statement whatever
	// the number of keys.
	OAIRecordsOf(ctx context.Context, keys []int64) ([]*OAIRecord, error)
	// OAISets returns up to limit sets with keys greater than after, by
	// key.
	OAISets(ctx context.Context, after int64, limit int) ([]OAISet, error)
	// OAISetsByKey returns the sets among keys, in any order.
	OAISetsByKey(ctx context.Context, keys []int64) ([]OAISet, error)
	// OAISetTree returns the keys of the set whose spec is spec and of
	// every set below it (specs starting with spec+":"); none when there is
	// no such set.
	OAISetTree(ctx context.Context, spec string) ([]int64, error)
	// Counter returns the value of a named counter, 0 when it was never
	// set.
	Counter(ctx context.Context, name string) (int64, error)
}

// OAIWriteTx writes the OAI-PMH view.
type OAIWriteTx interface {
	// PutOAIRecords writes rows: each replaces the row of the same (Key,
	// Prefix), if any, together with its set entries, and brings the
	// counts OAICount reads up to date (one change per format and set in
	// the batch, not one per row). The number of statements does not
	// depend on the number of rows.
	PutOAIRecords(ctx context.Context, recs []*OAIRecord) error
	// PutOAISets inserts or replaces sets, by key.
	PutOAISets(ctx context.Context, sets []OAISet) error
	// DeleteOAISets removes sets.
	DeleteOAISets(ctx context.Context, keys []int64) error
	// AddCounter adds delta to a named counter (created at 0) and returns
	// the new value.
	AddCounter(ctx context.Context, name string, delta int64) (int64, error)
}

// ChangeReadTx reads what the projections (OAI-PMH now, search later)
// follow: changes in sequence order and the batches of rows they need.
type ChangeReadTx interface {
	// Changes returns up to limit resources, live or tombstoned, whose
	// Seq is greater than after, by Seq. It never returns a change while a
	// transaction that took a lower number is still open (on a
	// ParallelStorage, whose numbers are not taken in commit order), so a
	// reader that has read every change up to X never sees one at or
	// below X appear later.
	Changes(ctx context.Context, after int64, limit int) ([]*ResourceRow, error)
	// FieldsOf returns the metadata of each of keys (as Fields does for
	// one); keys without metadata are absent from the map.
	FieldsOf(ctx context.Context, keys []int64) (map[int64][]Field, error)
	// MemberOfMany returns, for each of keys, the keys of the live
	// collections it belongs to, ascending; keys without any are absent.
	MemberOfMany(ctx context.Context, keys []int64) (map[int64][]int64, error)
	// FilesOfWorks returns, for each of works, the live files with the
	// given use held by the work's live file sets that are in public view
	// at now (their effective access), in the file sets' order; works
	// without any are absent.
	FilesOfWorks(ctx context.Context, works []int64, use string, now time.Time) (map[int64][]*File, error)
	// AccessEnds returns the keys of the works and collections whose
	// effective embargo or lease ends in (after, until], ascending: those
	// whose public view changes without a write.
	AccessEnds(ctx context.Context, after, until time.Time) ([]int64, error)
}

// UseSource is the use of a file that holds the record a work was
// catalogued from (for example its MARC record), kept as it came so that it
// can be disseminated faithfully.
const UseSource = "source"
