package shelfmark

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxPurge is how many resources one purge removes at most (a work, its
// file sets, files and child works): a larger tree is refused rather than
// held in one transaction of unbounded size.
const MaxPurge = 200_000

// MaxPurgeReason is the longest reason a purge records, in bytes.
const MaxPurgeReason = 2000

// Purged is what WriteTx.PurgeTree removed.
type Purged struct {
	// Keys are every resource removed.
	Keys []int64
	// Objects are the works and collections among them (each has an
	// object in the preservation copy); Collections the collections.
	Objects     []int64
	Collections []int64
	// SHA256 are the distinct digests of the removed files' bytes.
	SHA256 []string
}

// PurgeOptions are the parts of a purge outside the database.
type PurgeOptions struct {
	// Blobs, when set, is the content store: the bytes of the purged files
	// that no other file or upload holds are removed from it (when it can
	// discard, BlobDiscarder).
	Blobs BlobStore
	// Objects, when set, is called after the database's rows are gone
	// with the ids of the works and collections removed, to remove what
	// other stores keep of them (the preservation copy's objects). Its
	// error is returned; the rows stay removed, and a purge of the same id
	// again answers not found, so Objects must be idempotent and may be
	// run again by hand.
	Objects func(ctx context.Context, ids []ID) error
	// StoreNow is the content store's clock (default time.Now): bytes it
	// stored again after the purge began are kept. It is the store's own
	// clock, not the engine's, because the store stamps its blobs with it.
	StoreNow func() time.Time
}

// PurgeResult says what a purge removed.
type PurgeResult struct {
	ID ID
	// Resources counts the resources removed; Objects are the works and
	// collections among them.
	Resources int
	Objects   []ID
	// Blobs counts the stored bytes removed from the content store, of
	// Digests the distinct digests the purged files named.
	Blobs   int
	Digests int
	// OAIDeleted counts the OAI-PMH records turned into deleted records.
	OAIDeleted int
}

// Purge removes the work or collection id and its history, for a
// takedown: the resource, its file sets, files and child works (live or
// deleted) and the derivatives made from them, with their metadata,
// memberships (as a member and as a collection), source keys, jobs,
// grants, owners and search documents, in one transaction; its OAI-PMH
// records become deleted records (the repository's deletedRecord policy
// is persistent: a harvester learns that the record is gone, and nothing
// of its metadata or sets stays); a collection's OAI set goes. The audit
// trail keeps the purge, with reason, and the entries before it (they name
// the resource and its changed predicates, not its metadata). Then the
// bytes no other file or upload holds leave the content store
// (opts.Blobs), and opts.Objects removes what other stores keep. After a
// purge the id is not found anywhere.
//
// Only administrators may purge (EFORBIDDEN, audited as denied). reason
// is required. A work holding web archives is refused (EINVALID): the web
// index's counts are not taken back yet. Cost: one transaction whose
// statements do not depend on the tree's size (one recursive read of the
// tree, one delete per table), rows in proportion to the tree, at most
// MaxPurge resources; then one reference check and one removal per
// distinct digest.
func (r *Repository) Purge(ctx context.Context, id ID, reason string, opts PurgeOptions) (*PurgeResult, error) {
	key, err := r.ids.Key(id)
	if err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return nil, Errorf(EINVALID, "purge %s: a reason is required (it is kept in the audit trail).", id)
	case len(reason) > MaxPurgeReason || !utf8.ValidString(reason) || strings.ContainsRune(reason, 0):
		return nil, Errorf(EINVALID, "purge %s: the reason must be UTF-8 text of at most %d bytes.", id, MaxPurgeReason)
	}
	if !CallerFrom(ctx).IsAdmin() {
		err := Errorf(EFORBIDDEN, "Only administrators may purge.")
		r.auditDenied(ctx, "purge", key, err)
		return nil, err
	}
	if opts.StoreNow == nil {
		opts.StoreNow = time.Now
	}
	startedAt := opts.StoreNow()
	res := &PurgeResult{ID: id}
	var purged *Purged
	o := &op{}
	o.check = func(tx WriteTx) error {
		row, err := tx.Resource(context.Background(), key)
		if err != nil {
			return err
		}
		if row == nil {
			return Errorf(ENOTFOUND, "Resource not found.")
		}
		if row.Kind != KindWork && row.Kind != KindCollection {
			return Errorf(EINVALID, "%s is a %s: purge its work (a file set or file is purged with it).", id, row.Kind)
		}
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		ctx := context.Background()
		p, err := tx.PurgeTree(ctx, key, MaxPurge)
		if err != nil {
			return err
		}
		n, err := purgeViews(ctx, tx, p, now)
		if err != nil {
			return err
		}
		purged, res.OAIDeleted = p, n
		e := auditEntry(o.ctx, "purge", key, nil)
		e.Detail = fmt.Sprintf("%s (%d resources, %d files' digests)", reason, len(p.Keys), len(p.SHA256))
		o.audit = append(o.audit, e)
		return nil
	}
	if err := r.commit.run(ctx, o); err != nil {
		return nil, fmt.Errorf("purge %s: %w", id, err)
	}
	res.Resources, res.Digests = len(purged.Keys), len(purged.SHA256)
	for _, k := range purged.Objects {
		res.Objects = append(res.Objects, r.ids.Encode(k))
	}
	if opts.Blobs != nil {
		n, err := r.discardPurged(ctx, opts.Blobs, purged.SHA256, startedAt)
		res.Blobs = n
		if err != nil {
			return res, fmt.Errorf("purge %s: the rows are gone; the bytes: %w", id, err)
		}
	}
	if opts.Objects != nil {
		if err := opts.Objects(ctx, res.Objects); err != nil {
			return res, fmt.Errorf("purge %s: the rows and bytes are gone; the objects: %w", id, err)
		}
	}
	return res, nil
}

// purgeViews takes the purged resources out of the views kept beside the
// rows: each OAI-PMH record of a purged work becomes a deleted record with
// no sets, a purged collection's set goes, and every search document of
// the purged resources goes.
func purgeViews(ctx context.Context, tx WriteTx, p *Purged, now time.Time) (int, error) {
	if err := tx.DeleteSearchDocs(ctx, p.Keys); err != nil {
		return 0, fmt.Errorf("search documents: %w", err)
	}
	if err := tx.DeleteOAISets(ctx, p.Collections); err != nil {
		return 0, fmt.Errorf("oai sets: %w", err)
	}
	old, err := tx.OAIRecordsOf(ctx, p.Objects)
	if err != nil {
		return 0, fmt.Errorf("oai records: %w", err)
	}
	if len(old) == 0 {
		return 0, nil
	}
	last, err := tx.AddCounter(ctx, oaiSeqCounter, int64(len(old)))
	if err != nil {
		return 0, fmt.Errorf("oai records: %w", err)
	}
	first := last - int64(len(old)) + 1
	ds := now.UTC().Truncate(time.Second)
	recs := make([]*OAIRecord, len(old))
	for i, o := range old {
		recs[i] = &OAIRecord{Prefix: o.Prefix, Seq: first + int64(i), Key: o.Key, Datestamp: ds, Deleted: true}
	}
	if err := tx.PutOAIRecords(ctx, recs); err != nil {
		return 0, fmt.Errorf("oai records: %w", err)
	}
	return len(recs), nil
}

// oaiSeqCounter numbers the rows of the OAI-PMH view (the projector's
// counter of the same name).
const oaiSeqCounter = "oai_seq"

// discardPurged removes from blobs the bytes of shas that no file or
// upload holds any more, and returns how many it removed. A blob stored
// again after at (when the purge began) is kept.
func (r *Repository) discardPurged(ctx context.Context, blobs BlobStore, shas []string, at time.Time) (int, error) {
	d, ok := blobs.(BlobDiscarder)
	refs, ok2 := r.store.(BlobReferences)
	if !ok || !ok2 || len(shas) == 0 {
		return 0, nil
	}
	n := 0
	for _, sha := range shas {
		held := func(ctx context.Context) (bool, error) {
			used, err := refs.ReferencedBlobs(ctx, []string{sha})
			return used[sha], err
		}
		gone, err := d.Discard(ctx, sha, at, held)
		if err != nil {
			return n, fmt.Errorf("discard %s: %w", sha, err)
		}
		if gone {
			n++
		}
	}
	return n, nil
}

// Existing returns which of keys still have a row. A background step that
// reads changes in one transaction and writes what they call for in
// another (the search indexer, the OAI-PMH projector) asks it in its
// write transaction, so that it never writes back a document or record of
// a resource purged in between: write transactions are serialised, so
// either the step's write comes first (and the purge removes what it
// wrote) or the purge does (and the step leaves the purged keys out).
// Cost: one read of at most len(keys) rows.
func Existing(ctx context.Context, tx ReadTx, keys []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := tx.Resources(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("read %d resources: %w", len(keys), err)
	}
	for _, r := range rows {
		out[r.Key] = true
	}
	return out, nil
}
