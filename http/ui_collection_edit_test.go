package http

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// TestUICollectionEdit: a collection's curator edits its title and
// description on its edit page (linked from the collection's page), with
// the form works use; the page shows the new description; a form made
// from an older version answers the conflict page (409) and stores
// nothing; the curator sets who may read the files of works deposited
// into the collection by default, and the deposit form into it offers
// that first; a reader without a role gets 403 and no link; a work's id
// in a collection's address is not found.
func TestUICollectionEdit(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	c := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Maps")}})[0]
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{c.ID}, Metadata: titled("A map")}})[0]
	e.addUser("cura", shelfmark.ScopeWrite)
	e.addUser("rea", shelfmark.ScopeWrite)
	e.grantRoles(c.ID, []api.GrantJSON{{Principal: "user:cura", Role: "curator"}})
	path := "/collections/" + string(c.ID)

	b := newVisitor(t, e.testEnv)
	b.signIn("cura", "cura-password")
	if p := b.get(path); !strings.Contains(p.Body, `href="`+path+`/edit"`) {
		t.Fatalf("the collection page offers no edit link: %.2000s", p.Body)
	}
	p := b.get(path + "/edit")
	if p.Status != 200 || !strings.Contains(p.Body, `action="`+path+`/edit"`) || !strings.Contains(p.Body, `value="Maps"`) || strings.Contains(p.Body, "/pages") {
		t.Fatalf("the edit page: %d %.3000s", p.Status, p.Body)
	}
	old := strconv.FormatInt(find(t, e.testEnv, c.ID).Version, 10)
	f := metaFields("title", "Maps and charts", "description", "Printed maps of the coast.")
	f.Set("version", old)
	if p := b.post(path+"/edit", f); p.Status != 303 || p.Header.Get("Location") != path+"?notice=saved" {
		t.Fatalf("saving: %d %s %.1000s", p.Status, p.Header.Get("Location"), p.Body)
	}
	if p := b.get(path); !strings.Contains(p.Body, "Maps and charts") || !strings.Contains(p.Body, "Printed maps of the coast.") {
		t.Fatalf("the collection page after saving: %.2000s", p.Body)
	}
	stale := metaFields("title", "Old maps")
	stale.Set("version", old)
	if p := b.post(path+"/edit", stale); p.Status != 409 || !strings.Contains(p.Body, "Maps and charts") {
		t.Fatalf("a stale form: %d %.2000s", p.Status, p.Body)
	}
	if got := titleValue(find(t, e.testEnv, c.ID)); got != "Maps and charts" {
		t.Fatalf("a stale form stored %q", got)
	}
	// the default access of the files of works deposited here
	if p := b.get(path + "/edit"); !strings.Contains(p.Body, `name="files_default" value="public" checked`) {
		t.Fatalf("the edit page has no default for the files: %.3000s", p.Body)
	}
	if p := b.post(path+"/files-default", url.Values{"files_default": {"everyone"}}); p.Status != 400 {
		t.Errorf("a default that is not one: %d", p.Status)
	}
	if p := b.post(path+"/files-default", url.Values{"files_default": {"private"}}); p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=filesdefaultsaved") {
		t.Fatalf("saving the default: %d %s", p.Status, p.Header.Get("Location"))
	}
	if p := b.get(path + "/edit"); !strings.Contains(p.Body, `name="files_default" value="private" checked`) {
		t.Fatal("the edit page does not show the default saved")
	}
	e.addUser("dep", shelfmark.ScopeWrite)
	e.grantRoles(c.ID, []api.GrantJSON{{Principal: "user:cura", Role: "curator"}, {Principal: "user:dep", Role: "depositor"}})
	d := newVisitor(t, e.testEnv)
	d.signIn("dep", "dep-password")
	if p := d.get("/deposit?collection=" + string(c.ID)); !strings.Contains(p.Body, `name="files_access" value="private" checked`) {
		t.Fatalf("the deposit form into the collection does not offer its default: %.3000s", p.Body)
	}
	if p := d.get("/deposit"); !strings.Contains(p.Body, `name="files_access" value="public" checked`) {
		t.Fatal("the deposit form into no collection does not offer files as the record")
	}
	if p := b.get("/collections/" + string(w.ID) + "/edit"); p.Status != 404 {
		t.Errorf("a work's id as a collection: %d", p.Status)
	}
	r := newVisitor(t, e.testEnv)
	r.signIn("rea", "rea-password")
	if p := r.get(path); strings.Contains(p.Body, path+"/edit") {
		t.Error("a reader without a role is offered the edit link")
	}
	if p := r.get(path + "/edit"); p.Status != 403 {
		t.Errorf("a reader without a role: %d", p.Status)
	}
}
