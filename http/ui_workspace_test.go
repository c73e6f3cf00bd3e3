package http

// Tests of the staff workspace: a depositor's list, its filters and
// pages, a change of the works chosen and of every match with the works
// the policy refuses listed with their reasons, the form's bad input, and
// the statements a page costs at depth.

import (
	"context"
	"encoding/csv"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// runPage follows a change's redirect to its run's page, reading it until
// the run has ended (bounded in reads, not in time).
func runPage(t *testing.T, b *visitor, p *htmlPage) (*htmlPage, string) {
	t.Helper()
	if p.Status != 303 || !strings.HasPrefix(p.Header.Get("Location"), "/workspace/runs/") {
		t.Fatalf("a change: %d %s, want 303 to its run; body %.600s", p.Status, p.Header.Get("Location"), p.Body)
	}
	for range 600 {
		run := b.get(p.Header.Get("Location"))
		if run.Status != 200 {
			t.Fatalf("the run's page: %d", run.Status)
		}
		if !strings.Contains(run.Body, `data-live="true"`) {
			return run, p.Header.Get("Location")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the run did not end")
	return nil, ""
}

var workspaceRow = regexp.MustCompile(`name="id" value="([^"]+)"`)

// wsListed are the ids of a workspace page, in order.
func wsListed(p *htmlPage) []string {
	var out []string
	for _, m := range workspaceRow.FindAllStringSubmatch(p.Body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestUIWorkspaceChange(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		writerCtx := shelfmark.WithCaller(context.Background(), be.callerOf(be.writer))
		var mine []*shelfmark.NewResource
		for i := range 4 {
			mine = append(mine, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled(fmt.Sprintf("Letter %d", i))})
		}
		mine = append(mine, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Visibility: shelfmark.Private})
		works := be.createAll(writerCtx, mine) // 0..3 titled, 4 untitled and private
		theirs := be.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.D}, Metadata: titled("Not hers")}})[0]

		b := be.signedIn("writer")
		p := b.get("/workspace")
		want := []string{string(works[4].ID), string(works[3].ID), string(works[2].ID), string(works[1].ID), string(works[0].ID)}
		if p.Status != 200 || strings.Join(wsListed(p), " ") != strings.Join(want, " ") {
			t.Fatalf("my works: %d %v, want %v", p.Status, wsListed(p), want)
		}
		if !strings.Contains(p.Body, "Letter 3") || !strings.Contains(p.Body, `aria-current="page">My works`) {
			t.Errorf("the list names its works and its place in the navigation: %.2000s", p.Body)
		}
		if p := b.get("/workspace?missing=title"); strings.Join(wsListed(p), " ") != string(works[4].ID) {
			t.Errorf("without a title: %v", wsListed(p))
		}
		if p := b.get("/workspace?visibility=private"); strings.Join(wsListed(p), " ") != string(works[4].ID) {
			t.Errorf("private: %v", wsListed(p))
		}
		if p := b.get("/workspace?visibility=secret"); p.Status != 400 || !strings.Contains(html.UnescapeString(p.Body), `"secret" is not a visibility`) {
			t.Errorf("a bad filter: %d %.300s", p.Status, p.Body)
		}
		if p := b.get("/workspace?from=2999-01-01"); p.Status != 200 || len(wsListed(p)) != 0 {
			t.Errorf("deposited from 2999: %d %v", p.Status, wsListed(p))
		}
		if p := b.get("/workspace?to=2999-01-01&missing=title"); strings.Join(wsListed(p), " ") != string(works[4].ID) {
			t.Errorf("deposited until 2999, without a title: %v", wsListed(p))
		}
		if p := b.get("/workspace?from=soon"); p.Status != 400 || !strings.Contains(html.UnescapeString(p.Body), `"soon" is not a day`) {
			t.Errorf("a day that is none: %d", p.Status)
		}
		if p := b.get("/workspace?in=all"); p.Status != 403 {
			t.Errorf("every work to a depositor: %d", p.Status)
		}

		// the chosen works made private; a work that is not hers refused
		// with its reason, the others changed
		run, _ := runPage(t, b, b.post("/workspace/change", url.Values{"apply": {"chosen"}, "change": {"private"},
			"id": {string(works[0].ID), string(theirs.ID), string(works[1].ID)}}))
		if !strings.Contains(run.Body, "Done: 2 changed, 1 refused.") || !strings.Contains(run.Body, string(theirs.ID)) ||
			!strings.Contains(run.Body, "You may not change") {
			t.Errorf("the run of chosen works: %.3000s", run.Body)
		}
		for _, w := range works[:2] {
			if got := find(t, be.testEnv, w.ID); got.Visibility != shelfmark.Private {
				t.Errorf("%s is %s", w.ID, got.Visibility)
			}
		}
		if got := find(t, be.testEnv, theirs.ID); got.Visibility != shelfmark.Public {
			t.Errorf("a work not hers became %s", got.Visibility)
		}
		// every public work of hers under embargo, page after page
		until := time.Now().AddDate(1, 0, 0).UTC().Format(time.DateOnly)
		run, at := runPage(t, b, b.post("/workspace/change", url.Values{"apply": {"all"}, "visibility": {"public"}, "change": {"embargo"}, "until": {until}}))
		if !strings.Contains(run.Body, "Done: 2 changed, 0 refused.") {
			t.Errorf("the run of every match: %.3000s", run.Body)
		}
		if p := b.get("/workspace?visibility=embargoed"); strings.Join(wsListed(p), " ") != string(works[3].ID)+" "+string(works[2].ID) {
			t.Errorf("embargoed after the run: %v", wsListed(p))
		}
		// the run is its starter's only
		other := be.signedIn("other")
		if p := other.get(at); p.Status != 404 {
			t.Errorf("another user's run: %d", p.Status)
		}

		// a field set on the ticked works
		run, _ = runPage(t, b, b.post("/workspace/change", url.Values{"apply": {"chosen"}, "change": {"set"}, "field": {"subject"},
			"values": {"Charts | Harbours"}, "id": {string(works[2].ID), string(works[3].ID)}}))
		if !strings.Contains(run.Body, "Done: 2 changed, 0 refused.") {
			t.Errorf("the field set: %.2000s", run.Body)
		}
		if got := values(find(t, be.testEnv, works[2].ID), "subject"); strings.Join(got, "|") != "Charts|Harbours" {
			t.Errorf("subjects set: %q", got)
		}

		// bad forms: each comes back with its reason, nothing changed
		before := b.get("/workspace").Body
		for _, c := range []struct {
			form url.Values
			why  string
		}{
			{url.Values{"apply": {"chosen"}, "change": {"private"}}, "No work was chosen"},
			{url.Values{"apply": {"chosen"}, "change": {"explode"}, "id": {string(works[3].ID)}}, `"explode" is not a change`},
			{url.Values{"apply": {"chosen"}, "change": {"delete"}, "id": {string(works[3].ID)}}, "deleting works takes the box"},
			{url.Values{"apply": {"chosen"}, "change": {"embargo"}, "until": {"2001-01-01"}, "id": {string(works[3].ID)}}, "has passed"},
			{url.Values{"apply": {"chosen"}, "change": {"embargo"}, "until": {"soon"}, "id": {string(works[3].ID)}}, "is not a date"},
			{url.Values{"apply": {"chosen"}, "change": {"add"}, "id": {string(works[3].ID)}}, "choose the collection"},
			{url.Values{"apply": {"chosen"}, "change": {"set"}, "field": {"shelf"}, "values": {"A3"}, "id": {string(works[3].ID)}}, `"shelf" is not a field`},
			{url.Values{"apply": {"some"}, "change": {"private"}}, "neither the chosen works"},
			{url.Values{"apply": {"chosen"}, "change": {"private"}, "id": {"not an id"}}, "not an id"},
		} {
			p := b.post("/workspace/change", c.form)
			if p.Status != 400 || !strings.Contains(p.Body, `id="ws-refused"`) || !strings.Contains(html.UnescapeString(p.Body), c.why) {
				t.Errorf("%v: %d, want 400 saying %q; %.400s", c.form, p.Status, c.why, p.Body)
			}
		}
		if after := b.get("/workspace").Body; strings.Join(wsListed(&htmlPage{Body: after}), " ") != strings.Join(wsListed(&htmlPage{Body: before}), " ") {
			t.Error("a refused form changed the list")
		}
		if p := other.get("/workspace/runs/nosuchrun"); p.Status != 404 {
			t.Errorf("a run that is not hers: %d", p.Status)
		}
	})
}

// TestUIWorkspaceSpreadsheet: the works of a list written out as CSV,
// a cell changed and another row pointed at a work that is not hers,
// read back into a preview that shows the change and the refusal with
// nothing applied, then applied; a file with a column that is not one
// comes back with the reason.
func TestUIWorkspaceSpreadsheet(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		writerCtx := shelfmark.WithCaller(context.Background(), be.callerOf(be.writer))
		works := be.createAll(writerCtx, []*shelfmark.NewResource{
			{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled("Harbour charts")},
			{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.C}, Metadata: titled("Tide tables")},
		})
		theirs := be.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{be.D}, Metadata: titled("Not hers")}})[0]
		b := be.signedIn("writer")
		b.get("/workspace")

		p := b.get("/workspace/export.csv")
		if p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") || !strings.Contains(p.Header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("export: %d %v", p.Status, p.Header)
		}
		rows, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
		if err != nil || len(rows) != 3 || rows[1][0] != string(works[1].ID) || rows[2][2] != "Harbour charts" {
			t.Fatalf("the CSV: %q, %v", rows, err)
		}
		// the ticked works only, by the change form
		p = b.post("/workspace/export.csv", url.Values{"apply": {"chosen"}, "id": {string(works[0].ID)}})
		if got, _ := csv.NewReader(strings.NewReader(p.Body)).ReadAll(); p.Status != 200 || len(got) != 2 || got[1][0] != string(works[0].ID) {
			t.Errorf("the ticked works: %d %q", p.Status, got)
		}

		rows[2][2] = "Harbour charts of the Baltic"
		rows[2][3] = "Hydrographic Office | Admiralty" // creator
		rows = append(rows, []string{string(theirs.ID), "1", "Mine now"})
		var buf strings.Builder
		csv.NewWriter(&buf).WriteAll(rows)
		p = b.postMultipart("/workspace/import", nil, map[string]map[string][]byte{"csv": {"works.csv": []byte(buf.String())}})
		if p.Status != 303 {
			t.Fatalf("reading the CSV: %d %.600s", p.Status, p.Body)
		}
		at := p.Header.Get("Location")
		preview := b.get(at)
		body := html.UnescapeString(preview.Body)
		for _, want := range []string{"Works that would change: 1. Unchanged: 1. Rows refused: 1.", "Harbour charts of the Baltic", "Hydrographic Office | Admiralty",
			"Line 4", "You may not change", `id="ws-confirm-apply"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the preview lacks %q: %.4000s", want, body)
			}
		}
		if got := find(t, be.testEnv, works[0].ID); titleValue(got) != "Harbour charts" {
			t.Errorf("the preview applied: %q", titleValue(got))
		}
		if p := be.signedIn("other").post(at+"/apply", nil); p.Status != 404 {
			t.Errorf("another user applies her plan: %d", p.Status)
		}
		run, _ := runPage(t, b, b.post(at+"/apply", nil))
		if !strings.Contains(run.Body, "Done: 1 changed, 0 refused.") {
			t.Errorf("the run: %.3000s", run.Body)
		}
		got := find(t, be.testEnv, works[0].ID)
		if titleValue(got) != "Harbour charts of the Baltic" || strings.Join(values(got, "creator"), "|") != "Hydrographic Office|Admiralty" {
			t.Errorf("after: %q %q", titleValue(got), values(got, "creator"))
		}
		if p := b.post(at+"/apply", nil); p.Status != 409 {
			t.Errorf("applying twice: %d", p.Status)
		}
		b.get("/workspace")
		p = b.postMultipart("/workspace/import", nil, map[string]map[string][]byte{"csv": {"works.csv": []byte("id,shelf\n" + string(works[0].ID) + ",A3\n")}})
		if p.Status != 400 || !strings.Contains(html.UnescapeString(p.Body), `Not a column a batch edit changes: "shelf"`) {
			t.Errorf("an unknown column: %d %.600s", p.Status, p.Body)
		}
		p = b.postMultipart("/workspace/import", url.Values{csrfField: {"forged"}}, map[string]map[string][]byte{"csv": {"works.csv": []byte(buf.String())}})
		if p.Status != 403 {
			t.Errorf("a forged form: %d", p.Status)
		}
	})
}

// titleValue is a resource's first dc:title.
func titleValue(res *shelfmark.Resource) string {
	if vs := values(res, "title"); len(vs) > 0 {
		return vs[0]
	}
	return ""
}
