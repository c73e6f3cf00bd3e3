package shelfmark

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Files restricted, record public. A work's record (its metadata) and its
// files need not be seen by the same readers: an embargoed thesis shows
// its title and abstract, and can be found, while its files stay closed
// until the embargo ends; a manuscript's description is public while its
// scans are for signed-in readers. The files' access is the own access of
// the work's pages (file sets): effective access (effective.go) narrows
// each page, its files and their derivatives by the work's, so a page is
// never more visible than its record, and the record is never hidden by
// its pages. Search, IIIF, the PDF and ZIP, OAI-PMH and the sitemap
// already decide each page and file by its own effective access, so they
// need nothing more; the preservation copy keeps each page's access as it
// keeps every resource's.
//
// SetFilesAccess sets it for every page of a work at once; a work's files
// access, as the forms show it, is its first page's (FilesAccess). Pages
// added later take it from the form that adds them. A reader who may read
// the record but not the files may ask for them (access_requests.go).

// SetFilesAccess gives every live page (file set) of work the own access
// a: a visibility and an optional embargo (ahead; a lease is refused), in
// one transaction. The caller must be allowed to change the work (as for
// UpdateResource); ifMatch, unless 0, is the work's version
// (EPRECONDITION otherwise). Pages whose access is a already are not
// written (rule R3); when some are, they and the work get a new version
// and sequence number, the files and derivatives below them their new
// effective access, and one audit entry ("files.access") names the work
// and the access.
//
// Cost: the statements of the work's policy check, one to read the pages,
// and when something changes one bulk write of the pages, one of the
// work's version, those of propagateAccess (one read and one write per
// level below the pages) and the audit's: the same for a page as for a
// book of 1,200.
func (r *Repository) SetFilesAccess(ctx context.Context, work ID, a Access, ifMatch int64) (*Resource, error) {
	wkey, err := r.ids.Key(work)
	if err != nil {
		return nil, err
	}
	v, err := ParseVisibility(string(a.Visibility))
	if err != nil {
		return nil, err
	}
	a.Visibility = v
	if a.Lease != nil {
		return nil, Errorf(EINVALID, "lease: the files of a work take a visibility and an embargo, not a lease.")
	}
	var (
		wrow    *ResourceRow
		changed []*ResourceRow
	)
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		changed = nil
		var err error
		wrow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), wkey, "set who may read the files of", "the files of a work have their own access", ifMatch)
		if err != nil {
			return err
		}
		if err := r.checkAccessDates(a.Embargo, nil); err != nil {
			return err
		}
		deps, err := tx.AccessDependents(ctx, []int64{wkey})
		if err != nil {
			return fmt.Errorf("pages of %s: %w", work, err)
		}
		for _, p := range deps {
			if p.Parent == wkey && p.Kind == KindFileSet && p.Deleted == nil && !p.Own().Equal(Access{Visibility: a.Visibility, Embargo: a.Embargo}) {
				changed = append(changed, p)
			}
		}
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		if len(changed) == 0 {
			return nil
		}
		ctx := context.Background()
		for _, p := range changed {
			p.Visibility, p.Embargo, p.Lease = a.Visibility, a.Embargo, nil
			p.Effective = effectiveOf(p, wrow, nil)
			p.Version++
			p.Seq, p.Modified = seq, now
		}
		if err := tx.SetOwnAccess(ctx, changed); err != nil {
			return err
		}
		wrow.Version++
		wrow.Seq, wrow.Modified = seq, now
		if err := tx.SetVersions(ctx, []*ResourceRow{wrow}); err != nil {
			return err
		}
		e := auditEntry(o.ctx, "files.access", wkey, []string{"access"})
		e.Detail = fmt.Sprintf("%d pages: %s", len(changed), accessWords(a))
		o.audit = append(o.audit, e)
		return propagateAccess(ctx, tx, changed, seq)
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "files.access", wkey, err)
		return nil, fmt.Errorf("files of %s: %w", work, err)
	}
	return r.findResource(ctx, wkey, work)
}

// accessWords is an access as the audit trail states it.
func accessWords(a Access) string {
	s := string(a.Visibility)
	if a.Embargo != nil {
		s += ", embargoed until " + a.Embargo.UTC().Format(time.RFC3339)
	}
	return s
}

// FilesAccess returns the own access of the first page of work, which the
// forms show as the access of its files, and false when the work has no
// page (or is not a work). The caller must be allowed to read the work.
// Three statements at most beside the policy's.
func (r *Repository) FilesAccess(ctx context.Context, work ID) (Access, bool, error) {
	key, err := r.ids.Key(work)
	if err != nil {
		return Access{}, false, err
	}
	var out Access
	var ok bool
	err = r.store.View(ctx, func(tx ReadTx) error {
		wa, err := r.guard(tx, CallerFrom(ctx)).readable(ctx, key)
		if err != nil {
			return err
		}
		if wa.row.Kind != KindWork {
			return nil
		}
		first, err := tx.FirstChildren(ctx, []int64{key}, KindFileSet)
		if err != nil {
			return err
		}
		fs, has := first[key]
		if !has {
			return nil
		}
		rows, err := tx.Resources(ctx, []int64{fs})
		if err != nil || len(rows) == 0 {
			return err
		}
		out, ok = rows[0].Own(), true
		return nil
	})
	return out, ok, err
}

// filesDefaultSetting names the repository setting that holds the
// default files' access of the works deposited into the collection key.
func filesDefaultSetting(key int64) string { return "files-default/" + strconv.FormatInt(key, 10) }

// CollectionFilesDefault returns who may read the files of a work
// deposited into coll unless the depositor chooses otherwise: a
// visibility its curators set (SetCollectionFilesDefault), or Public (as
// the record) when none is set. The caller must be allowed to read the
// collection. One statement beside the policy's.
func (r *Repository) CollectionFilesDefault(ctx context.Context, coll ID) (Visibility, error) {
	key, err := r.ids.Key(coll)
	if err != nil {
		return "", err
	}
	out := Public
	err = r.store.View(ctx, func(tx ReadTx) error {
		a, err := r.guard(tx, CallerFrom(ctx)).readable(ctx, key)
		if err != nil {
			return err
		}
		if a.row.Kind != KindCollection {
			return Errorf(EINVALID, "%s is a %s; the default access of files is a collection's.", coll, a.row.Kind)
		}
		v, ok, err := tx.Setting(ctx, filesDefaultSetting(key))
		if err != nil || !ok {
			return err
		}
		if vis := Visibility(v); vis.Valid() {
			out = vis
		}
		return nil
	})
	return out, err
}

// SetCollectionFilesDefault sets who may read the files of the works
// deposited into coll by default (the deposit form's choice, which the
// depositor may change): Public (as the record), Authenticated or
// Private. It takes the right to change the collection (its curators and
// administrators), and one audit entry ("files.default"). Works deposited
// before keep their files' access.
func (r *Repository) SetCollectionFilesDefault(ctx context.Context, coll ID, v Visibility) error {
	key, err := r.ids.Key(coll)
	if err != nil {
		return err
	}
	if !v.Valid() {
		return Errorf(EINVALID, "files_default: %q is not one of public, authenticated, private.", clip(string(v), 40))
	}
	c := CallerFrom(ctx)
	err = r.store.Update(ctx, func(tx WriteTx) error {
		a, err := r.guard(tx, c).editable(ctx, key, "set the default access of the files in")
		if err != nil {
			return err
		}
		if a.row.Kind != KindCollection {
			return Errorf(EINVALID, "%s is a %s; the default access of files is a collection's.", coll, a.row.Kind)
		}
		if err := tx.PutSetting(ctx, filesDefaultSetting(key), string(v)); err != nil {
			return err
		}
		e := auditEntry(ctx, "files.default", key, nil)
		e.At, e.Detail = r.now(), string(v)
		return tx.InsertAudit(ctx, []*AuditEntry{e})
	})
	if err != nil {
		r.auditDenied(ctx, "files.default", key, err)
		return fmt.Errorf("default access of the files in %s: %w", coll, err)
	}
	return nil
}
