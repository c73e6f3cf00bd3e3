package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// A page's file is replaced by a new upload: the new file becomes the
// page's original, and what the page held before goes as a deletion
// does. The preservation copy keeps versions, so the old original stays
// in the work's history (the OCFL versions written before), and the
// background pipeline makes the page's derivatives again from the new
// file, as for any new original.

// ReplacePageFile makes f (bytes the caller stored, or may name) the
// original file of page, a page (live file set) of work, in one change
// under the work's version: ifMatch, unless 0, is the work's version
// (EPRECONDITION otherwise). The caller must be allowed to change the
// work and the page (as UpdateResource and CreateResource ask); a page of
// another work is EINVALID. The page's files that are not source records
// (its originals and the derivatives made from them, or uploaded) are
// tombstoned as DeleteResource tombstones them, each audited "delete";
// the new file is created as CreateResource creates one (audited
// "create", its characterization enqueued in the same transaction, so
// the thumbnail, access copy, tiles, OCR and text follow); the page's
// text is taken out of search until the new file's is made; the page and
// the work get a new version, sequence number and time of change. It
// returns the new file.
//
// Cost: the statements of the work's policy check and the creation's,
// one to read the page, one for its files, and when applied one
// Tombstone per file replaced (a page holds an original and a few
// derivatives), the file's insert and job, one to drop the page's text
// from search, one SetVersions and the audit's.
func (r *Repository) ReplacePageFile(ctx context.Context, work, page ID, f *File, ifMatch int64) (*Resource, error) {
	wkey, err := r.ids.Key(work)
	if err != nil {
		return nil, err
	}
	pkey, err := r.refKey(page, "page")
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, Errorf(EINVALID, "file: a page's file is replaced by a file.")
	}
	nf := *f
	switch {
	case nf.Use == "":
		nf.Use = UseOriginal
	case nf.Use != UseOriginal:
		return nil, Errorf(EINVALID, "file: a page's file is replaced by an original, not a file of use %.40q.", nf.Use)
	}
	keys, err := r.minter.Mint(ctx, 1)
	if err != nil {
		return nil, err
	}
	c, err := r.newCreation(&NewResource{Kind: KindFile, File: &nf}, keys[0], pkey, 0)
	if err != nil {
		return nil, err
	}
	res := c.resource("")
	res.Parent = page
	var (
		wrow, prow *ResourceRow
		olds       []int64 // the page's files that go
	)
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		var err error
		wrow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), wkey, "replace a file of", "only the pages of a work have their files replaced", ifMatch)
		if err != nil {
			return err
		}
		if prow, err = tx.Resource(ctx, pkey); err != nil {
			return err
		}
		if prow == nil || prow.Parent != wkey || prow.Kind != KindFileSet || prow.Deleted != nil {
			return &Error{Code: EINVALID, Message: fmt.Sprintf("page: %s is not a page of %s.", page, work),
				Details: map[string]any{"id": string(page)}}
		}
		// the page may be changed, the bytes named: as a creation asks
		if err := c.check(o, tx); err != nil {
			return err
		}
		files, err := tx.ChildFiles(ctx, []int64{pkey}, MaxChildFiles)
		if err != nil {
			return err
		}
		olds = olds[:0]
		for _, fr := range files {
			// derivatives made from an original go with it (Tombstone)
			if fr.Row.Deleted == nil && fr.Row.Source == 0 && fr.File.Use != UseSource {
				olds = append(olds, fr.Row.Key)
			}
		}
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		ctx := context.Background()
		for _, k := range olds {
			o.audit = append(o.audit, auditEntry(o.ctx, "delete", k, nil))
			if _, err := tx.Tombstone(ctx, k, seq, now); err != nil {
				return err
			}
		}
		if err := c.apply(o, tx, seq, now); err != nil {
			return err
		}
		// the old file's text leaves search; the new file's comes with
		// its OCR or text job
		if err := tx.DeleteSearchDocs(ctx, []int64{pkey}); err != nil {
			return err
		}
		for _, row := range []*ResourceRow{prow, wrow} {
			row.Version++
			row.Seq, row.Modified = seq, now
		}
		return tx.SetVersions(ctx, []*ResourceRow{prow, wrow})
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "create", pkey, err)
		return nil, fmt.Errorf("replace the file of page %s of %s: %w", page, work, err)
	}
	return res, nil
}
