package shelfmark

import (
	"context"
	"io"
	"time"
)

// PREMIS event types, as labelled in the Library of Congress's PREMIS
// event type vocabulary (http://id.loc.gov/vocabulary/preservation/eventType);
// EventTypeURI gives each one's URI.
const (
	EventIngestion        = "ingestion"
	EventCharacterization = "format identification"
	EventFixityCheck      = "fixity check"
	EventRecovery         = "recovery"    // a damaged copy rewritten from the other
	EventReplication      = "replication" // a version written to the preservation copy
	EventDeletion         = "deletion"
)

// eventTypeCodes maps each event type to its code in the vocabulary.
var eventTypeCodes = map[string]string{
	EventIngestion:        "ing",
	EventCharacterization: "for",
	EventFixityCheck:      "fix",
	EventRecovery:         "rec",
	EventReplication:      "rep",
	EventDeletion:         "del",
}

// EventTypeURI is the vocabulary URI of a PREMIS event type ("" for a type
// not in the list above).
func EventTypeURI(t string) string {
	if c, ok := eventTypeCodes[t]; ok {
		return "http://id.loc.gov/vocabulary/preservation/eventType/" + c
	}
	return ""
}

// Event outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// The copies of an original a fixity check reads.
const (
	CopyStore = "store" // the content store (keyed by SHA-256)
	CopyOCFL  = "ocfl"  // the OCFL preservation copy (keyed by SHA-512)
)

// PreservationEvent is one PREMIS event about a resource that the
// repository keeps (fixity checks and recoveries); the events it can tell
// from other records (ingestion, characterization, versions, deletion)
// are not stored.
type PreservationEvent struct {
	// ID orders the events; it is assigned by the database.
	ID int64
	// Resource is the key of the resource the event is about (a file's,
	// or for an OCFL content file that belongs to no file, its object's).
	Resource int64
	Type     string // one of the Event* types
	At       time.Time
	Agent    string // who acted: "Shelfmark VERSION"
	Outcome  string // OutcomeSuccess or OutcomeFailure
	Detail   string
	// Copy is which copy was read or written (CopyStore, CopyOCFL).
	Copy string
	// Algorithm and Digest are the digest the bytes were checked against.
	Algorithm string
	Digest    string
}

// FixityState is the last fixity check of one copy of one stored file.
type FixityState struct {
	Resource int64
	Copy     string
	// Item names the bytes within the copy: the SHA-256 in the content
	// store, the content path (from the object root) in an OCFL object.
	Item    string
	Checked time.Time
	// Outcome is "ok", "repaired" or "damaged".
	Outcome string
	// Damaged is set while no whole copy of the file is known: its
	// download fails.
	Damaged bool
	Detail  string
}

// Fixity outcomes of FixityState.
const (
	FixityOK       = "ok"
	FixityRepaired = "repaired"
	FixityDamaged  = "damaged"
)

// FixityPass is the progress of the current (or last) fixity pass, kept in
// the database so that a pass resumes where it stopped.
type FixityPass struct {
	Started  time.Time
	Finished time.Time // zero while the pass runs
	// Cursor is where the pass stopped: "store:KEY" after the file of
	// that key, "ocfl:PATH" after the object root at that path.
	Cursor   string
	Files    int64 // copies checked in the pass
	Bytes    int64
	Damaged  int64
	Repaired int64
}

// StoredFile is an original whose bytes the content store keeps.
type StoredFile struct {
	Key     int64
	FileSet int64 // the file set holding it
	SHA256  string
	SHA512  string // "" when it was not computed
	Size    int64
}

// MaxEventPage bounds the events and states one read returns.
const MaxEventPage = 1000

// PreservationEvents keeps the PREMIS events and the fixity states. Both
// backends implement it (outside the engine's write transactions: an
// event takes no change sequence number); find it by a type assertion on
// the Storage. Every read is one statement over an index, of at most
// MaxEventPage rows.
type PreservationEvents interface {
	// AddEvents stores events: one statement each (in one transaction on
	// SQLite).
	AddEvents(ctx context.Context, events []PreservationEvent) error
	// Events returns up to limit events of resource whose ID is above
	// after, oldest first.
	Events(ctx context.Context, resource, after int64, limit int) ([]PreservationEvent, error)
	// PutFixity records the states (replacing those of the same
	// resource, copy and item): one statement each (in one transaction on
	// SQLite).
	PutFixity(ctx context.Context, states []FixityState) error
	// FixityStates returns up to limit states after the given one (by
	// resource, copy, item; the zero state starts), only those not "ok"
	// when failed is set.
	FixityStates(ctx context.Context, after FixityState, failed bool, limit int) ([]FixityState, error)
	// DamagedFiles reports which of keys have a damaged state, and
	// CountDamaged how many resources have one (both over the partial
	// index of damaged states).
	DamagedFiles(ctx context.Context, keys []int64) (map[int64]bool, error)
	CountDamaged(ctx context.Context) (int64, error)
	// OriginalFiles returns up to limit live originals whose bytes are in
	// the content store, by file key after after: one statement over the
	// primary key of files, which also passes over derivatives' rows.
	OriginalFiles(ctx context.Context, after int64, limit int) ([]StoredFile, error)
	// FixityPass reads the pass's progress (the zero pass when none ran)
	// and SaveFixityPass writes it.
	FixityPass(ctx context.Context) (FixityPass, error)
	SaveFixityPass(ctx context.Context, p FixityPass) error
}

// BlobRepairer is a content store that can rewrite the bytes of a stored
// blob whose copy was found damaged: Put keeps the stored (damaged) copy
// of bytes it already has.
type BlobRepairer interface {
	// ReplaceBlob replaces the blob sha256 with r's bytes, atomically,
	// after checking that they have that digest (EDIGESTMISMATCH and
	// nothing changed otherwise).
	ReplaceBlob(ctx context.Context, sha256 string, r io.Reader) error
}

// ObjectVersion is one version of a resource's object in the
// preservation copy.
type ObjectVersion struct {
	Num     int
	Created time.Time
	Message string
	User    string
}

// PreservedVersions reads the versions of resources' objects in the
// preservation copy.
type PreservedVersions interface {
	// ObjectVersions returns the versions of id's object, oldest first
	// (none when it has no object). Cost: one read of the object's root
	// inventory.
	ObjectVersions(ctx context.Context, id ID) ([]ObjectVersion, error)
}
