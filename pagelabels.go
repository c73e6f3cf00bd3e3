package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A page's label ("Title page", "p. 1", "f. 2r") is its file set's title:
// the literals of dc:title and dcterms:title, which the IIIF manifest
// shows as the canvas's label.

// MaxPageLabels caps the labels one SetPageLabels call sets.
const MaxPageLabels = MaxPageSize

// PageLabel is the label to give one page (file set) of a work; an empty
// Label removes the page's title.
type PageLabel struct {
	Page  ID
	Label string
}

// pageTitlePreds are the predicates of a page's label.
var pageTitlePreds = []string{NSDC + "title", NSDCTerms + "title"}

// SetPageLabels sets the labels of pages of one work in one transaction:
// the caller must be allowed to change the work (as for UpdateResource);
// each page must be a live file set whose parent is the work, named once
// (EINVALID naming it otherwise, and nothing is written); labels are
// trimmed and checked as any literal is. A label that is one of the
// page's titles already, or an empty label for a page without one,
// changes nothing (rule R3); any other makes the page's title exactly
// that label (a plain dc:title; a dcterms:title goes) or, when empty,
// removes it. ifMatch, unless 0, is the work's version (EPRECONDITION
// otherwise). When a page changes, it and the work get a new version,
// sequence number and time of change (the work's pages changed), and
// one audit entry for the work ("labels") counts the pages changed.
//
// Cost: the statements of the work's policy check, one to read the
// pages, one to read their titles, and, when something changes, those of
// one PutFields, one SetVersions and the audit's: the same for one label
// as for MaxPageLabels.
func (r *Repository) SetPageLabels(ctx context.Context, work ID, labels []PageLabel, ifMatch int64) (*Resource, error) {
	wkey, err := r.ids.Key(work)
	if err != nil {
		return nil, err
	}
	if len(labels) > MaxPageLabels {
		return nil, Errorf(EINVALID, "labels: at most %d in one change.", MaxPageLabels)
	}
	keys := make([]int64, len(labels))
	want := make(map[int64]string, len(labels))
	for i, l := range labels {
		k, err := r.refKey(l.Page, "labels")
		if err != nil {
			return nil, err
		}
		if _, dup := want[k]; dup {
			return nil, &Error{Code: EINVALID, Message: fmt.Sprintf("labels: the page %s is named twice.", l.Page),
				Details: map[string]any{"id": string(l.Page)}}
		}
		label := strings.TrimSpace(l.Label)
		if label != "" {
			if err := validateStatements("label of "+string(l.Page), []Statement{{Predicate: NSDC + "title", Object: NewLiteral(label)}}); err != nil {
				return nil, err
			}
		}
		keys[i], want[k] = k, label
	}
	var (
		wrow    *ResourceRow
		changed []*ResourceRow // the pages whose title changes
		fields  []Field        // their new title fields
		fkeys   []int64        // fields[i] belongs to fkeys[i]
	)
	o := &op{}
	o.check = func(tx WriteTx) error {
		ctx := context.Background()
		changed, fields, fkeys = nil, nil, nil
		var err error
		wrow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), wkey, "label the pages of", "only the pages of a work have labels", ifMatch)
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return nil
		}
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		pages := make(map[int64]*ResourceRow, len(rows))
		for _, row := range rows {
			if row.Parent == wkey && row.Kind == KindFileSet && row.Deleted == nil {
				pages[row.Key] = row
			}
		}
		for _, k := range keys {
			if pages[k] == nil {
				id := r.ids.Encode(k)
				return &Error{Code: EINVALID, Message: fmt.Sprintf("labels: %s is not a page of %s.", id, work),
					Details: map[string]any{"id": string(id)}}
			}
		}
		have, err := tx.FieldsOf(ctx, keys)
		if err != nil {
			return err
		}
		for _, k := range keys {
			fs := pageTitleFields(have[k])
			if labelUnchanged(fs, want[k]) {
				continue
			}
			changed = append(changed, pages[k])
			for _, p := range pageTitlePreds {
				var objs []Term
				if p == NSDC+"title" && want[k] != "" {
					objs = []Term{NewLiteral(want[k])}
				}
				if objs == nil && len(fs[p]) == 0 {
					continue // nothing to remove
				}
				fields = append(fields, Field{Predicate: p, Objects: objs})
				fkeys = append(fkeys, k)
			}
		}
		return nil
	}
	o.apply = func(tx WriteTx, seq int64, now time.Time) error {
		if len(changed) == 0 {
			return nil // nothing changed: nothing is written
		}
		ctx := context.Background()
		if err := tx.PutFields(ctx, fkeys, fields); err != nil {
			return err
		}
		entry := auditEntry(o.ctx, "labels", wkey, pageTitlePreds)
		entry.Detail = fmt.Sprintf("%d pages", len(changed))
		o.audit = append(o.audit, entry)
		for _, row := range append(changed, wrow) {
			row.Version++
			row.Seq, row.Modified = seq, now
		}
		return tx.SetVersions(ctx, append(changed, wrow))
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "labels", wkey, err)
		return nil, fmt.Errorf("label the pages of %s: %w", work, err)
	}
	return r.rowResource(wrow), nil
}

// pageTitleFields are the objects of a page's title fields, by predicate.
func pageTitleFields(fs []Field) map[string][]Term {
	out := map[string][]Term{}
	for _, f := range fs {
		if slices.Contains(pageTitlePreds, f.Predicate) {
			out[f.Predicate] = f.Objects
		}
	}
	return out
}

// labelUnchanged reports whether label leaves a page with the title fields
// fs as it is: it is one of their literals, or empty when they hold none.
func labelUnchanged(fs map[string][]Term, label string) bool {
	n := 0
	for _, objs := range fs {
		for _, t := range objs {
			if t.Kind == IRI {
				continue
			}
			n++
			if label != "" && strings.TrimSpace(t.Value) == label {
				return true
			}
		}
	}
	return label == "" && n == 0
}
