package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// WorkChange is one change that ChangeWorks applies to each of many
// works: exactly one of its fields is set.
type WorkChange struct {
	// Visibility sets each work's own visibility.
	Visibility *Visibility
	// Embargo sets each work's embargo (a time ahead) or lifts it (nil).
	Embargo **time.Time
	// AddTo puts each work into this collection; RemoveFrom takes it out.
	AddTo, RemoveFrom ID
	// Delete leaves a tombstone for each work.
	Delete bool
	// Field, one of BatchEditFields, is set to Values in each work (both
	// dc: and dcterms: of its name; no values removes it).
	Field  string
	Values []string
}

// Check reports whether ch names exactly one change (EINVALID otherwise).
func (ch *WorkChange) Check() error {
	n := 0
	for _, set := range []bool{ch.Visibility != nil, ch.Embargo != nil, ch.AddTo != "", ch.RemoveFrom != "", ch.Delete, ch.Field != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return Errorf(EINVALID, "A change of many works is one change (a visibility, an embargo, a collection to add to or take out of, deletion, or a field set), not %d.", n)
	}
	if ch.Field != "" {
		if !slices.Contains(BatchEditFields, ch.Field) {
			return Errorf(EINVALID, "field: %q is not a field set here; the fields are %s.", ch.Field, strings.Join(BatchEditFields, ", "))
		}
		stmts := make([]Statement, len(ch.Values))
		for i, v := range ch.Values {
			stmts[i] = Statement{Predicate: NSDC + ch.Field, Object: NewLiteral(v)}
		}
		if err := validateStatements(ch.Field, stmts); err != nil {
			return err
		}
	}
	if ch.Visibility != nil {
		if _, err := ParseVisibility(string(*ch.Visibility)); err != nil {
			return err
		}
	}
	return nil
}

// WorkChangeFailure is a work that a change was not applied to, and why.
type WorkChangeFailure struct {
	ID ID
	// Code and Message are the error's (ErrorCode, ErrorMessage).
	Code, Message string
}

// WorkChangeProgress counts what ChangeWorks did so far.
type WorkChangeProgress struct {
	// Changed counts the works changed, Refused those the change was not
	// applied to (Failures holds the first MaxWorkChangeFailures of them).
	Changed, Refused int
	Failures         []WorkChangeFailure
}

// MaxWorkChangeFailures bounds the failures a WorkChangeProgress keeps
// (its count covers all).
const MaxWorkChangeFailures = 200

// WorkChangePage is how many works ChangeWorks reads at once when it walks
// a workspace query.
const WorkChangePage = 200

// ChangeWork applies ch to the work id, as the caller of ctx, through the
// operation that makes that change alone (UpdateResource, AddMembers,
// RemoveMembers, DeleteResource; a field's values are read first and
// written under the version read): the same policy decides, and the
// change is audited as that operation is.
func (r *Repository) ChangeWork(ctx context.Context, id ID, ch WorkChange) error {
	if err := ch.Check(); err != nil {
		return err
	}
	switch {
	case ch.Visibility != nil:
		_, err := r.UpdateResource(ctx, id, ResourceUpdate{Visibility: ch.Visibility})
		return err
	case ch.Embargo != nil:
		_, err := r.UpdateResource(ctx, id, ResourceUpdate{Embargo: ch.Embargo})
		return err
	case ch.AddTo != "":
		return r.AddMembers(ctx, ch.AddTo, []ID{id})
	case ch.RemoveFrom != "":
		return r.RemoveMembers(ctx, ch.RemoveFrom, []ID{id})
	case ch.Field != "":
		// under the version read, so that a change made meanwhile is
		// not undone
		res, err := r.FindResource(ctx, id)
		if err != nil {
			return err
		}
		remove, add := fieldValuesUpdate(res.Metadata, ch.Field, ch.Values)
		if len(remove)+len(add) == 0 {
			return r.CheckEdit(ctx, id) // nothing to write, but the right to
		}
		_, err = r.UpdateResource(ctx, id, ResourceUpdate{IfMatch: res.Version, Remove: remove, Add: add})
		return err
	}
	return r.DeleteResource(ctx, id, 0)
}

// ChangeWorks applies ch to each of ids, or, when ids is empty, to every
// work q lists (walking its pages, WorkChangePage works at a time, so
// memory stays bounded however many works match), one work at a time
// (ChangeWork): a work the caller may not change is refused with its
// reason and the others go on. progress, when not nil, is called after
// each work with the counts so far (its Failures are shared: copy them to
// keep them). It stops early, returning ctx's error with the counts so
// far, when ctx ends; an error reading q's pages ends it too.
func (r *Repository) ChangeWorks(ctx context.Context, q WorkspaceQuery, ids []ID, ch WorkChange, progress func(WorkChangeProgress)) (WorkChangeProgress, error) {
	var p WorkChangeProgress
	if err := ch.Check(); err != nil {
		return p, err
	}
	one := func(id ID) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.ChangeWork(ctx, id, ch); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.Refused++
			if len(p.Failures) < MaxWorkChangeFailures {
				p.Failures = append(p.Failures, WorkChangeFailure{ID: id, Code: ErrorCode(err), Message: ErrorMessage(err)})
			}
		} else {
			p.Changed++
		}
		if progress != nil {
			progress(p)
		}
		return nil
	}
	if len(ids) > 0 {
		for _, id := range ids {
			if err := one(id); err != nil {
				return p, err
			}
		}
		return p, nil
	}
	q.Limit = WorkChangePage
	for {
		page, err := r.Workspace(ctx, q)
		if err != nil {
			return p, fmt.Errorf("change works: %w", err)
		}
		for _, it := range page.Items {
			if err := one(it.ID); err != nil {
				return p, err
			}
		}
		if page.Next == "" {
			return p, nil
		}
		q.After = page.Next
	}
}
