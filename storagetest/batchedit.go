package storagetest

import (
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testBatchEdit: works written out as CSV rows and read back: a row that
// changes nothing plans nothing; changed cells plan exactly their fields
// (a kept value keeps its language and kind, a new http(s) value is an
// IRI); each row the caller may not apply is refused with its reason
// (an id that is not one, names nothing readable, or comes twice; a work
// of someone else; a work changed since it was written out; a visibility
// or an embargo that is not one) while the others are planned; a file
// with a column that is not one, or without ids, or with too many rows
// is refused whole; planning writes nothing; applying writes the planned
// changes under the versions read, so a work changed in between is
// refused.
func testBatchEdit(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	dc := func(name string, o shelfmark.Term) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDC + name, Object: o}
	}
	terms := func(name string, o shelfmark.Term) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDCTerms + name, Object: o}
	}
	book := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{
		dc("title", shelfmark.NewLangLiteral("Moby-Dick", "en")), dc("creator", shelfmark.NewLiteral("Melville, Herman")),
		terms("subject", shelfmark.NewIRI("http://id.loc.gov/authorities/subjects/sh85146352")), dc("date", shelfmark.NewLiteral("1851"))}})
	quiet := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Metadata: []shelfmark.Statement{title("Quiet")}})
	stale := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Stale")}})
	theirs := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Theirs")}})
	hidden := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
	coll := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	e.grant(t, nil, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	update(t, e.env, func(tx shelfmark.WriteTx) error {
		return tx.SetOwners(ctx, []int64{keyOf(t, book.ID), keyOf(t, quiet.ID), keyOf(t, stale.ID)}, dep.User)
	})
	asDep := as(dep)

	// written out
	header := shelfmark.BatchEditHeader()
	if got := strings.Join(header, ","); got != "id,version,title,creator,contributor,subject,date,description,language,type,publisher,rights,visibility,embargo" {
		t.Errorf("header %s", got)
	}
	rowOf := func(id shelfmark.ID) []string {
		t.Helper()
		return shelfmark.BatchEditRecord(rs(t)(e.repo.FindResource(sys, id)))
	}
	bookRow := rowOf(book.ID)
	if want := []string{string(book.ID), "1", "Moby-Dick", "Melville, Herman", "", "http://id.loc.gov/authorities/subjects/sh85146352", "1851", "", "", "", "", "", "public", ""}; !slices.Equal(bookRow, want) {
		t.Errorf("the book written out: %q\nwant %q", bookRow, want)
	}
	staleRow := rowOf(stale.ID)
	if _, err := e.repo.UpdateResource(sys, stale.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{dc("date", shelfmark.NewLiteral("1900"))}}); err != nil {
		t.Fatal(err)
	}
	future := e.now.AddDate(1, 0, 0).Format(time.DateOnly)

	csvOf := func(rows ...[]string) string {
		var b strings.Builder
		w := csv.NewWriter(&b)
		if err := w.WriteAll(rows); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	edited := slices.Clone(bookRow)
	edited[3] = "Melville, Herman | Ishmael"                 // creator: one kept, one more
	edited[5] = bookRow[5] + " | https://example.org/whales" // subject: an IRI more
	edited[2] = " Moby-Dick "                                // title: the same, spaced
	edited[12] = "authenticated"
	edited[13] = future
	quietRow := rowOf(quiet.ID)
	theirsRow := rowOf(theirs.ID)
	theirsRow[2] = "Mine now"
	badVis := slices.Clone(quietRow)
	badVis[12] = "secret"
	pastEmbargo := slices.Clone(rowOf(stale.ID))
	pastEmbargo[13] = "2001-01-01"
	hiddenRow := []string{string(hidden.ID), "1", "Found you"} // readable to a depositor of the repository, not hers
	nowhere := []string{string(e.repo.IDs().Encode(1 << 30)), "1", "Nobody's"}
	input := csvOf(header, edited, quietRow, theirsRow, staleRow, []string{"not an id!"}, hiddenRow, quietRow, badVis, pastEmbargo,
		[]string{string(coll.ID)}, []string{"", "", ""}, nowhere)
	plan, err := e.repo.PlanBatchEdit(asDep, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		line    int
		code    string
		changes string
	}
	var gots []got
	for _, r := range plan.Rows {
		var cs []string
		for _, c := range r.Changes {
			cs = append(cs, fmt.Sprintf("%s: %q -> %q", c.Column, c.Old, c.New))
		}
		gots = append(gots, got{r.Line, r.Code, strings.Join(cs, "; ")})
	}
	want := []got{
		{2, "", `creator: "Melville, Herman" -> "Melville, Herman | Ishmael"; subject: "http://id.loc.gov/authorities/subjects/sh85146352" -> "http://id.loc.gov/authorities/subjects/sh85146352 | https://example.org/whales"; visibility: "public" -> "authenticated"; embargo: "" -> "` + future + `"`},
		{3, "", ""},
		{4, shelfmark.EFORBIDDEN, ""},
		{5, shelfmark.ECONFLICT, ""},
		{6, shelfmark.EINVALID, ""},
		{7, shelfmark.EFORBIDDEN, ""},
		{8, shelfmark.EINVALID, ""}, // quiet again
		{9, shelfmark.EINVALID, ""}, // a secret visibility (and quiet a third time)
		{10, shelfmark.EINVALID, ""},
		{11, shelfmark.EINVALID, ""},  // a collection
		{13, shelfmark.ENOTFOUND, ""}, // after a blank line
	}
	if fmt.Sprint(gots) != fmt.Sprint(want) {
		t.Errorf("the plan:\n%v\nwant\n%v", gots, want)
	}
	for _, r := range plan.Rows {
		if r.Code != "" && r.Message == "" {
			t.Errorf("line %d refused without a reason", r.Line)
		}
	}
	if plan.Changed != 1 || plan.Unchanged != 1 || plan.Refused != 9 {
		t.Errorf("counts: %d changed, %d unchanged, %d refused", plan.Changed, plan.Unchanged, plan.Refused)
	}
	if r := rs(t)(e.repo.FindResource(sys, book.ID)); r.Version != 1 {
		t.Errorf("planning wrote: version %d", r.Version)
	}

	// applied
	p, err := e.repo.ApplyBatchEdit(asDep, plan, nil)
	if err != nil || p.Changed != 1 || p.Refused != 0 {
		t.Fatalf("applied: %+v, %v", p, err)
	}
	after := rs(t)(e.repo.FindResource(sys, book.ID))
	if after.Visibility != shelfmark.Authenticated || after.Embargo == nil || after.Embargo.Format(time.DateOnly) != future {
		t.Errorf("access after: %s %v", after.Visibility, after.Embargo)
	}
	var st []string
	for _, s := range after.Metadata {
		o := fmt.Sprintf("%q", s.Object.Value)
		if s.Object.Kind == shelfmark.IRI {
			o = "<" + s.Object.Value + ">"
		} else if s.Object.Lang != "" {
			o += "@" + s.Object.Lang
		}
		st = append(st, s.Predicate[strings.LastIndexAny(s.Predicate, "/")+1:]+"="+o)
	}
	slices.Sort(st)
	if got := strings.Join(st, " "); got != `creator="Ishmael" creator="Melville, Herman" date="1851" subject=<http://id.loc.gov/authorities/subjects/sh85146352> subject=<https://example.org/whales> title="Moby-Dick"@en` {
		t.Errorf("metadata after: %s", got)
	}
	// a plan applied after its work changed is refused, not overwritten
	again := slices.Clone(rowOf(book.ID))
	again[2] = "Moby Dick; or, The Whale"
	plan, err = e.repo.PlanBatchEdit(asDep, strings.NewReader(csvOf(header, again)))
	if err != nil || plan.Changed != 1 {
		t.Fatalf("a second plan: %+v, %v", plan, err)
	}
	if _, err := e.repo.UpdateResource(sys, book.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{dc("publisher", shelfmark.NewLiteral("Harper"))}}); err != nil {
		t.Fatal(err)
	}
	if p, err := e.repo.ApplyBatchEdit(asDep, plan, nil); err != nil || p.Changed != 0 || p.Refused != 1 || p.Failures[0].Code != shelfmark.EPRECONDITION {
		t.Errorf("applied after a change: %+v, %v", p, err)
	}

	// files refused whole
	many := []string{"id\n"}
	for range shelfmark.MaxBatchEditRows + 1 {
		many = append(many, string(quiet.ID)+"\n")
	}
	for name, in := range map[string]string{
		"an unknown column": "id,title,shelf\n" + string(quiet.ID) + ",x,y\n",
		"no id column":      "title\nx\n",
		"a column twice":    "id,title,Title\n",
		"not a CSV":         "id,\"title\n",
		"empty":             "",
		"too many rows":     strings.Join(many, ""),
	} {
		if _, err := e.repo.PlanBatchEdit(asDep, strings.NewReader(in)); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := e.repo.PlanBatchEdit(asDep, strings.NewReader("id,title,shelf\n")); err == nil || !strings.Contains(err.Error(), `"shelf"`) {
		t.Errorf("an unknown column is named: %v", err)
	}
}
