package http

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestUILabels: the reorder page shows each page's label in a field; the
// form's "Save labels" (POST /works/{id}/labels) stores the labels of
// three pages at once and comes back to the page with a notice, and the
// IIIF manifest gives them as the canvases' labels (its cached copy is
// dropped). A page of another work in the form is refused (400), a form
// made from an older version of the work answers a conflict (409) as the
// order form does, and neither stores anything.
func TestUILabels(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Herbal"}, "visibility": "public"}`)
	nrs := make([]*shelfmark.NewResource, 4)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	nrs[3].Metadata = []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Back cover")}}
	sets, errs := e.repo.CreateResources(ctx, nrs)
	var pages []shelfmark.ID
	for i, s := range sets {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		pages = append(pages, s.ID)
	}
	if _, err := e.repo.SetOrder(ctx, w.ID, pages, 0); err != nil {
		t.Fatal(err)
	}
	other := e.create("/api/v1/works", `{"metadata": {"dc:title": "Another book"}}`)
	stranger, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: other.ID})
	if err != nil {
		t.Fatal(err)
	}
	canvasLabels := func() []string {
		t.Helper()
		d := readIIIF(t, e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...))
		var out []string
		for _, c := range d.Items {
			out = append(out, fmt.Sprint(c.Label))
		}
		return out
	}
	if got := canvasLabels(); len(got) != 4 || !strings.Contains(got[0], "en:[Page 1]") || got[3] != "map[none:[Back cover]]" {
		t.Fatalf("canvas labels before: %q", got)
	}

	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	path := "/works/" + string(w.ID) + "/pages"
	p := b.get(path)
	field := func(p *htmlPage, id shelfmark.ID) string {
		t.Helper()
		m := regexp.MustCompile(`<input id="lab-` + string(id) + `" type="text" name="label" value="([^"]*)"`).FindStringSubmatch(p.Body)
		if m == nil {
			t.Fatalf("no label field for %s: %.3000s", id, p.Body)
		}
		return m[1]
	}
	if p.Status != 200 || field(p, pages[0]) != "" || field(p, pages[3]) != "Back cover" ||
		!strings.Contains(p.Body, `<label for="lab-`+string(pages[0])+`" class="visually-hidden lab-pos">Label of page 1</label>`) {
		t.Fatalf("the pages page: %d %.3000s", p.Status, p.Body)
	}
	ver := find(t, e, w.ID).Version
	form := func(version int64, ids []shelfmark.ID, labels ...string) url.Values {
		f := url.Values{"version": {strconv.FormatInt(version, 10)}, "labels": {"1"}, "label": labels}
		for _, id := range ids {
			f.Add("id", string(id))
		}
		return f
	}

	// three labels, saved at once
	p = b.post("/works/"+string(w.ID)+"/labels", form(ver, pages[:3], "Title page", "p. 1", "f. 2r"))
	if p.Status != 303 || p.Header.Get("Location") != path+"?notice=labelssaved" {
		t.Fatalf("save labels: %d %q %.500s", p.Status, p.Header.Get("Location"), p.Body)
	}
	p = b.get(p.Header.Get("Location"))
	if !strings.Contains(p.Body, "Labels saved.") || field(p, pages[0]) != "Title page" || field(p, pages[1]) != "p. 1" ||
		field(p, pages[2]) != "f. 2r" || field(p, pages[3]) != "Back cover" {
		t.Fatalf("after saving: %.3000s", p.Body)
	}
	if got := values(find(t, e, pages[1]), "title"); len(got) != 1 || got[0] != "p. 1" {
		t.Errorf("the page's title: %q", got)
	}
	saved := find(t, e, w.ID).Version
	if saved != ver+1 {
		t.Errorf("the work's version after the labels: %d, want %d", saved, ver+1)
	}
	want := []string{"map[none:[Title page]]", "map[none:[p. 1]]", "map[none:[f. 2r]]", "map[none:[Back cover]]"}
	if got := canvasLabels(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("canvas labels after: %q, want %q", got, want)
	}

	// a page of another work: refused, nothing stored
	p = b.post("/works/"+string(w.ID)+"/labels", form(saved, []shelfmark.ID{pages[0], stranger.ID}, "Frontispiece", "Stolen"))
	if p.Status != 400 || !strings.Contains(p.Body, "is not a page of") {
		t.Errorf("a page of another work: %d %.500s", p.Status, p.Body)
	}
	// ids and labels that do not pair
	if p = b.post("/works/"+string(w.ID)+"/labels", form(saved, pages[:2], "Frontispiece")); p.Status != 400 {
		t.Errorf("two pages and one label: %d", p.Status)
	}
	// a stale version: the conflict the order form answers
	p = b.post("/works/"+string(w.ID)+"/labels", form(ver, pages[:1], "Frontispiece"))
	if p.Status != 409 || !strings.Contains(p.Body, "reload the page") {
		t.Errorf("a stale version: %d %.500s", p.Status, p.Body)
	}
	if got := values(find(t, e, pages[0]), "title"); len(got) != 1 || got[0] != "Title page" {
		t.Errorf("a refused form changed the page's title: %q", got)
	}
	if got := values(find(t, e, stranger.ID), "title"); len(got) != 0 {
		t.Errorf("a refused form labelled the other work's page: %q", got)
	}
	if v := find(t, e, w.ID).Version; v != saved {
		t.Errorf("refused forms changed the work: version %d, was %d", v, saved)
	}
}
