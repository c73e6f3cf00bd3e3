package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The page that represents a work (its thumbnail in search results and
// lists) is its first page unless an editor chose another. The choice
// is a statement of the work's metadata, foaf:depiction naming the page
// by its IRI (urn:shelfmark:ID). Why this and not schema:thumbnailUrl
// naming an image: the thumbnail is a derivative that the pipeline makes
// again (when a page's file is replaced, or derivatives are remade) at an
// address of this server, while the page is what the editor chose; the
// IRI is the one the preservation copy names resources by, so the choice
// is kept in the OCFL copy with the rest of the metadata and holds in a
// repository rebuilt from that copy alone. A page is an image of the
// work, which is what FOAF's depiction says ("an image that depicts some
// thing"). SetThumbnailPage names only a page of the work, and so does a
// change of the work's metadata (UpdateResource, which the API's
// metadata and batch edits use: checkThumbnailPage); a statement that
// arrives otherwise (a record created with it, a repository rebuilt) is
// honoured only as far as the reader may see a thumbnail of the page it
// names, and the first page's is shown when there is none.

// PredThumbnailPage is the predicate of the page that represents a work.
const PredThumbnailPage = "http://xmlns.com/foaf/0.1/depiction"

// resourceIRIPrefix begins the IRI of a resource (ResourceIRI).
const resourceIRIPrefix = "urn:shelfmark:"

// ResourceIRI is the IRI metadata and the preservation copy name a
// resource by: urn:shelfmark:ID.
func ResourceIRI(id ID) string { return resourceIRIPrefix + string(id) }

// ThumbnailPageOf returns the page a work's metadata names as the one
// that represents it, "" when it names none (its first page does then).
func ThumbnailPageOf(meta []Statement) ID {
	for _, st := range meta {
		if st.Predicate != PredThumbnailPage || st.Object.Kind != IRI {
			continue
		}
		if id, ok := strings.CutPrefix(st.Object.Value, resourceIRIPrefix); ok && ID(id).Check() == nil {
			return ID(id)
		}
	}
	return ""
}

// thumbnailPageKey is the key of the page meta names (ThumbnailPageOf), 0
// when none.
func (r *Repository) thumbnailPageKey(meta []Statement) int64 {
	id := ThumbnailPageOf(meta)
	if id == "" {
		return 0
	}
	k, err := r.ids.Key(id)
	if err != nil {
		return 0
	}
	return k
}

// SetThumbnailPage makes page, a page (live file set) of work, the one
// that represents the work, or, when page is "", takes the choice back
// (the first page represents it again). The caller must be allowed to
// change the work (as UpdateResource asks); ifMatch, unless 0, is the
// work's version (EPRECONDITION otherwise); a page of another work is
// EINVALID. A choice made already writes nothing (rule R3); otherwise
// the work gets a new version, sequence number and time of change, and
// one audit entry ("update", naming the predicate). Which page's
// thumbnail a reader is shown is decided when it is read: the chosen
// page's while the reader may see it, else the first page's.
//
// Cost: the statements of the work's policy check, one to read the page,
// one for the work's field and, when it changes, one PutFields, one
// SetVersions and the audit's.
func (r *Repository) SetThumbnailPage(ctx context.Context, work, page ID, ifMatch int64) (*Resource, error) {
	wkey, err := r.ids.Key(work)
	if err != nil {
		return nil, err
	}
	var pkey int64
	if page != "" {
		if pkey, err = r.refKey(page, "page"); err != nil {
			return nil, err
		}
	}
	var (
		wrow    *ResourceRow
		changed bool
	)
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		var err error
		wrow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), wkey, "choose the thumbnail of", "only a work is represented by one of its pages", ifMatch)
		if err != nil {
			return err
		}
		var want []Term
		if pkey != 0 {
			prow, err := tx.Resource(ctx, pkey)
			if err != nil {
				return err
			}
			if prow == nil || prow.Parent != wkey || prow.Kind != KindFileSet || prow.Deleted != nil {
				return &Error{Code: EINVALID, Message: fmt.Sprintf("page: %s is not a page of %s.", page, work),
					Details: map[string]any{"id": string(page)}}
			}
			want = []Term{NewIRI(ResourceIRI(r.ids.Encode(pkey)))}
		}
		have, err := tx.Fields(ctx, wkey, PredThumbnailPage)
		if err != nil {
			return err
		}
		var objs []Term
		for _, f := range have {
			objs = append(objs, f.Objects...)
		}
		changed = !slices.Equal(objs, want)
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		if !changed {
			return nil // chosen already: nothing is written
		}
		ctx := context.Background()
		f := Field{Predicate: PredThumbnailPage}
		if pkey != 0 {
			f.Objects = []Term{NewIRI(ResourceIRI(r.ids.Encode(pkey)))}
		}
		if err := tx.PutFields(ctx, []int64{wkey}, []Field{f}); err != nil {
			return err
		}
		o.audit = append(o.audit, auditEntry(o.ctx, "update", wkey, []string{PredThumbnailPage}))
		wrow.Version++
		wrow.Seq, wrow.Modified = seq, now
		return tx.SetVersions(ctx, []*ResourceRow{wrow})
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "update", wkey, err)
		return nil, fmt.Errorf("choose the thumbnail of %s: %w", work, err)
	}
	return r.findResource(ctx, wkey, work)
}

// checkThumbnailPage refuses a change of work's metadata (changes, the
// fields UpdateResource writes) that names, as the page that represents
// it (foaf:depiction with an IRI urn:shelfmark:ID), anything but a live
// page of that work, as SetThumbnailPage does: EINVALID naming the
// object. Other objects of foaf:depiction (an image elsewhere, named by
// its address) are statements like any other and pass.
//
// Cost: one statement per such IRI, only when the field changes.
func (r *Repository) checkThumbnailPage(ctx context.Context, tx ReadTx, work int64, changes []Field) error {
	for _, f := range changes {
		if f.Predicate != PredThumbnailPage {
			continue
		}
		for _, o := range f.Objects {
			if o.Kind != IRI || !strings.HasPrefix(o.Value, resourceIRIPrefix) {
				continue
			}
			id := ID(strings.TrimPrefix(o.Value, resourceIRIPrefix))
			bad := &Error{Code: EINVALID, Message: fmt.Sprintf("%s: %s is not a page of %s.", PredThumbnailPage, o.Value, r.ids.Encode(work)),
				Details: map[string]any{"predicate": PredThumbnailPage, "object": o.Value}}
			k, err := r.ids.Key(id)
			if err != nil {
				return bad
			}
			row, err := tx.Resource(ctx, k)
			if err != nil {
				return err
			}
			if row == nil || row.Parent != work || row.Kind != KindFileSet || row.Deleted != nil {
				return bad
			}
		}
	}
	return nil
}

// workThumbnails returns the thumbnail the caller may read of the page
// that represents each of works, by work: the page its metadata (meta)
// names while the caller may see a thumbnail of it, else its first page's
// (first; a work absent from it has none). The chosen page's thumbnail
// is read with the first page's, in the one statement of thumbnails.
func (r *Repository) workThumbnails(ctx context.Context, tx ReadTx, works []int64, first map[int64]int64, meta map[int64][]Statement) (map[int64]ID, error) {
	tries := make(map[int64][]int64, len(works))
	r.representTries(tries, works, first, meta)
	return r.thumbnailsOf(ctx, tx, tries)
}

// representTries adds to tries, for each of works, the pages that may
// represent it in the order they are tried: the page its metadata names,
// then its first page.
func (r *Repository) representTries(tries map[int64][]int64, works []int64, first map[int64]int64, meta map[int64][]Statement) {
	for _, w := range works {
		if k := r.thumbnailPageKey(meta[w]); k != 0 {
			tries[w] = append(tries[w], k)
		}
		if fs, ok := first[w]; ok {
			tries[w] = append(tries[w], fs)
		}
	}
}
