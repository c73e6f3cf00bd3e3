package shelfmark

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A batch edit is a spreadsheet round trip: works written out as CSV
// (BatchEditHeader, BatchEditRecord), edited in any spreadsheet, read back
// (PlanBatchEdit) into a plan that shows each change before anything is
// applied, and applied (ApplyBatchEdit) one work at a time through
// UpdateResource under the version each work had when the plan was made.

// BatchEditFields are the record's fields a batch edit's CSV carries, by
// their Dublin Core name: a column holds the literals (and IRIs) of both
// dc:NAME and dcterms:NAME.
var BatchEditFields = []string{"title", "creator", "contributor", "subject", "date", "description", "language", "type", "publisher", "rights"}

// BatchEditHeader is the header of a batch edit's CSV: the work's id and
// version (the version a row was written out at: a work changed since is
// refused rather than overwritten), BatchEditFields, and the work's own
// visibility and embargo (the date it ends, YYYY-MM-DD, empty for none).
func BatchEditHeader() []string {
	return slices.Concat([]string{"id", "version"}, BatchEditFields, []string{"visibility", "embargo"})
}

// BatchEditSeparator separates the values of a field in one cell; a cell
// is split on its "|" and each value trimmed.
const BatchEditSeparator = " | "

// MaxBatchEditRows bounds the works one batch edit changes.
const MaxBatchEditRows = 10000

// BatchEditRecord writes res as a row under BatchEditHeader.
func BatchEditRecord(res *Resource) []string {
	row := []string{string(res.ID), strconv.FormatInt(res.Version, 10)}
	for _, name := range BatchEditFields {
		var vals []string
		for _, t := range batchFieldTerms(res.Metadata, name) {
			vals = append(vals, t.Value)
		}
		row = append(row, strings.Join(vals, BatchEditSeparator))
	}
	embargo := ""
	if res.Embargo != nil {
		embargo = res.Embargo.UTC().Format(time.DateOnly)
	}
	return append(row, string(res.Visibility), embargo)
}

// batchFieldTerms are the objects of dc:name and dcterms:name, each value
// once, in the order of the statements.
func batchFieldTerms(stmts []Statement, name string) []Term {
	var out []Term
	for _, s := range stmts {
		if s.Predicate != NSDC+name && s.Predicate != NSDCTerms+name {
			continue
		}
		if !slices.ContainsFunc(out, func(t Term) bool { return t.Value == s.Object.Value }) {
			out = append(out, s.Object)
		}
	}
	return out
}

// BatchEditChange is one cell that differs from the stored work.
type BatchEditChange struct {
	// Column is the CSV column; Old and New the values joined as a cell.
	Column, Old, New string
}

// BatchEditRow is one row of a plan: the work, what changes, or why the
// row is refused.
type BatchEditRow struct {
	// Line is the row's line in the CSV (the header is line 1).
	Line int
	ID   ID
	// Title is the work's title as stored, for the preview.
	Title   string
	Changes []BatchEditChange
	// Code and Message say why the row is refused ("" when it is not).
	Code, Message string
	// update is what ApplyBatchEdit applies (IfMatch is the version read).
	update ResourceUpdate
}

// BatchEditPlan is what a CSV would change: every row, in the file's
// order, with counts.
type BatchEditPlan struct {
	Rows []BatchEditRow
	// Changed counts the rows that change their work, Unchanged those
	// that change nothing, Refused those refused.
	Changed, Unchanged, Refused int
}

// PlanBatchEdit reads a batch edit's CSV (at most MaxBatchEditRows rows
// under a header of BatchEditHeader's columns, in any order; id required)
// and returns, for each row, the changes it makes to its work or why it
// is refused: an id that names no work the caller may read, a work the
// caller may not change, a work changed since the row was written out
// (its version), a visibility or embargo that is not one, a value that
// cannot be stored, an id given twice. Nothing is written. A file that is
// not such a CSV (a column that is not one, a missing id column, more
// rows than allowed) is refused whole (EINVALID saying why).
//
// Cost: per MaxPageSize rows, the statements of one FindResources; then
// one CheckEdit for each row that changes something.
func (r *Repository) PlanBatchEdit(ctx context.Context, in io.Reader) (*BatchEditPlan, error) {
	cr := csv.NewReader(in)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, Errorf(EINVALID, "The file is not a CSV with a header: %v.", err)
	}
	cols, err := batchEditColumns(header)
	if err != nil {
		return nil, err
	}
	type line struct {
		n   int
		rec []string
	}
	var lines []line
	for n := 2; ; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Errorf(EINVALID, "line %d: %v.", n, err)
		}
		if !slices.ContainsFunc(rec, func(c string) bool { return strings.TrimSpace(c) != "" }) {
			continue // a blank line
		}
		if len(lines) == MaxBatchEditRows {
			return nil, Errorf(EINVALID, "The file has more than %d works; a batch edit changes at most %d at once.", MaxBatchEditRows, MaxBatchEditRows)
		}
		lines = append(lines, line{n, rec})
	}
	plan := &BatchEditPlan{Rows: make([]BatchEditRow, 0, len(lines))}
	seen := make(map[ID]int, len(lines))
	for start := 0; start < len(lines); start += MaxPageSize {
		chunk := lines[start:min(start+MaxPageSize, len(lines))]
		var ids []ID
		for _, l := range chunk {
			if id := ID(strings.TrimSpace(cell(l.rec, cols.at["id"]))); id.Check() == nil {
				ids = append(ids, id)
			}
		}
		found, err := r.FindResources(ctx, ids)
		if err != nil {
			return nil, err
		}
		byID := make(map[ID]*Resource, len(found))
		for _, res := range found {
			byID[res.ID] = res
		}
		for _, l := range chunk {
			row := r.planBatchRow(ctx, cols, l.n, l.rec, byID, seen)
			switch {
			case row.Code != "":
				plan.Refused++
			case len(row.Changes) > 0:
				plan.Changed++
			default:
				plan.Unchanged++
			}
			plan.Rows = append(plan.Rows, row)
		}
	}
	return plan, nil
}

// batchColumns are the places of a CSV's columns, by name, and the
// number of columns of its header.
type batchColumns struct {
	at    map[string]int
	width int
}

// batchEditColumns maps the header's columns (trimmed, any case) to their
// places; a column that is not one of BatchEditHeader's, given twice, or
// an id column missing refuses the file.
func batchEditColumns(header []string) (*batchColumns, error) {
	known := BatchEditHeader()
	cols := &batchColumns{at: map[string]int{}, width: len(header)}
	var unknown []string
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(known, name) {
			unknown = append(unknown, h)
			continue
		}
		if _, dup := cols.at[name]; dup {
			return nil, Errorf(EINVALID, "The column %q is given twice.", name)
		}
		cols.at[name] = i
	}
	if len(unknown) > 0 {
		return nil, Errorf(EINVALID, "Not a column a batch edit changes: %s. The columns are %s.", joinQuoted(unknown), strings.Join(known, ", "))
	}
	if _, ok := cols.at["id"]; !ok {
		return nil, Errorf(EINVALID, "The file has no id column: each row names the work it changes by its id.")
	}
	return cols, nil
}

// cell is rec's cell i ("" past its end).
func cell(rec []string, i int) string {
	if i < len(rec) {
		return rec[i]
	}
	return ""
}

// planBatchRow plans one row: the work it names (byID holds those the
// caller may read), the cells that differ, and the refusal, if any.
func (r *Repository) planBatchRow(ctx context.Context, cols *batchColumns, n int, rec []string, byID map[ID]*Resource, seen map[ID]int) BatchEditRow {
	row := BatchEditRow{Line: n, ID: ID(strings.TrimSpace(cell(rec, cols.at["id"])))}
	refuse := func(err error) BatchEditRow {
		row.Code, row.Message, row.Changes = ErrorCode(err), ErrorMessage(err), nil
		return row
	}
	if len(rec) > cols.width && slices.ContainsFunc(rec[cols.width:], func(c string) bool { return strings.TrimSpace(c) != "" }) {
		return refuse(Errorf(EINVALID, "The row has %d cells but the header only %d.", len(rec), cols.width))
	}
	if row.ID.Check() != nil {
		return refuse(Errorf(EINVALID, "id: %q is not a work's id.", row.ID))
	}
	if first, dup := seen[row.ID]; dup {
		return refuse(Errorf(EINVALID, "The work %s is on line %d already.", row.ID, first))
	}
	seen[row.ID] = n
	res := byID[row.ID]
	if res == nil {
		return refuse(Errorf(ENOTFOUND, "No work you may read has the id %s.", row.ID))
	}
	row.Title = titleLiteral(res.Metadata)
	if res.Kind != KindWork {
		return refuse(Errorf(EINVALID, "%s is a %s, not a work.", row.ID, res.Kind))
	}
	if i, ok := cols.at["version"]; ok {
		if v := strings.TrimSpace(cell(rec, i)); v != "" && v != strconv.FormatInt(res.Version, 10) {
			return refuse(Errorf(ECONFLICT, "%s was changed since this row was written out (version %s then, %d now): write it out again.", row.ID, v, res.Version))
		}
	}
	u := ResourceUpdate{IfMatch: res.Version}
	for _, name := range BatchEditFields {
		i, ok := cols.at[name]
		if !ok {
			continue
		}
		old := batchFieldTerms(res.Metadata, name)
		oldCell := joinTerms(old)
		newCell := strings.TrimSpace(cell(rec, i))
		if newCell == oldCell {
			continue
		}
		vals := splitBatchCell(newCell)
		remove, add := fieldValuesUpdate(res.Metadata, name, vals)
		if len(remove)+len(add) == 0 {
			continue // the same values, written otherwise
		}
		u.Remove, u.Add = append(u.Remove, remove...), append(u.Add, add...)
		row.Changes = append(row.Changes, BatchEditChange{Column: name, Old: oldCell, New: strings.Join(vals, BatchEditSeparator)})
	}
	if err := validateStatements(fmt.Sprintf("line %d", n), u.Add); err != nil {
		return refuse(err)
	}
	if i, ok := cols.at["visibility"]; ok {
		v := strings.TrimSpace(cell(rec, i))
		vis, err := ParseVisibility(v)
		if err != nil {
			return refuse(Errorf(EINVALID, "visibility: %q is not one of public, authenticated, private.", v))
		}
		if vis != res.Visibility {
			u.Visibility = &vis
			row.Changes = append(row.Changes, BatchEditChange{Column: "visibility", Old: string(res.Visibility), New: string(vis)})
		}
	}
	if i, ok := cols.at["embargo"]; ok {
		v := strings.TrimSpace(cell(rec, i))
		old := ""
		if res.Embargo != nil {
			old = res.Embargo.UTC().Format(time.DateOnly)
		}
		if v != old {
			var until *time.Time
			if v != "" {
				t, err := time.Parse(time.DateOnly, v)
				if err != nil {
					return refuse(Errorf(EINVALID, "embargo: %q is not a date (YYYY-MM-DD).", v))
				}
				if !t.After(r.now()) {
					return refuse(Errorf(EINVALID, "embargo: %s has passed; an embargo ends on a date ahead.", v))
				}
				until = &t
			}
			u.Embargo = &until
			row.Changes = append(row.Changes, BatchEditChange{Column: "embargo", Old: old, New: v})
		}
	}
	if len(row.Changes) == 0 {
		return row
	}
	if err := r.CheckEdit(ctx, row.ID); err != nil {
		return refuse(err)
	}
	row.update = u
	return row
}

// fieldValuesUpdate returns the statements to remove from and to add to
// stmts (a resource's metadata) so that the field name (dc:NAME and
// dcterms:NAME together) holds exactly vals: a value kept stays as
// stored (its language, datatype or kind, its predicate), a value gone is
// removed, a new one is added (an http(s) value as an IRI) under the
// predicate the field is stored with (dc: unless only dcterms: is used).
// Both are empty when the field holds vals already.
func fieldValuesUpdate(stmts []Statement, name string, vals []string) (remove, add []Statement) {
	old := batchFieldTerms(stmts, name)
	pred := NSDC + name
	if len(old) > 0 && !slices.ContainsFunc(stmts, func(s Statement) bool { return s.Predicate == NSDC+name }) {
		pred = NSDCTerms + name
	}
	for _, s := range stmts {
		if (s.Predicate == NSDC+name || s.Predicate == NSDCTerms+name) && !slices.Contains(vals, s.Object.Value) {
			remove = append(remove, s)
		}
	}
	for _, v := range vals {
		if slices.ContainsFunc(old, func(o Term) bool { return o.Value == v }) {
			continue
		}
		t := NewLiteral(v)
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			t = NewIRI(v)
		}
		add = append(add, Statement{Predicate: pred, Object: t})
	}
	return remove, add
}

// splitBatchCell splits a cell into its values (BatchEditSeparator).
func splitBatchCell(c string) []string {
	var out []string
	for _, v := range strings.Split(c, "|") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// joinTerms writes terms' values as one cell.
func joinTerms(ts []Term) string { return strings.Join(termValues(ts), BatchEditSeparator) }

// termValues are the values of ts.
func termValues(ts []Term) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Value
	}
	return out
}

// titleLiteral is the first title of stmts, "" when none.
func titleLiteral(stmts []Statement) string {
	if ts := batchFieldTerms(stmts, "title"); len(ts) > 0 {
		return ts[0].Value
	}
	return ""
}

// ApplyBatchEdit applies the rows of plan that change their work, in the
// plan's order, one work at a time (UpdateResource under the version the
// plan read, so a work changed since is refused, not overwritten); a row
// the engine refuses now is counted with its reason and the others go
// on. progress, when not nil, is called after each row (as ChangeWorks
// calls it). It stops early, with the counts so far, when ctx ends.
func (r *Repository) ApplyBatchEdit(ctx context.Context, plan *BatchEditPlan, progress func(WorkChangeProgress)) (WorkChangeProgress, error) {
	var p WorkChangeProgress
	for _, row := range plan.Rows {
		if row.Code != "" || len(row.Changes) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return p, err
		}
		if _, err := r.UpdateResource(ctx, row.ID, row.update); err != nil {
			if ctx.Err() != nil {
				return p, ctx.Err()
			}
			p.Refused++
			if len(p.Failures) < MaxWorkChangeFailures {
				p.Failures = append(p.Failures, WorkChangeFailure{ID: row.ID, Code: ErrorCode(err), Message: ErrorMessage(err)})
			}
		} else {
			p.Changed++
		}
		if progress != nil {
			progress(p)
		}
	}
	return p, nil
}
