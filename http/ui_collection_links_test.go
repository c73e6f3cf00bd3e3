package http

import (
	"context"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestUICollectionActions: a collection's page offers to deposit into it
// to writers, and its roles and a new sub-collection to those who may
// change it; signed-out readers and read-only ones see none of these.
func TestUICollectionActions(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	c := e.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Letters")}})[0]
	path := "/collections/" + string(c.ID)
	deposit, roles := `href="/deposit?collection=`+string(c.ID)+`"`, `href="/collections/`+string(c.ID)+`/roles"`

	anon := newVisitor(t, e.testEnv)
	if p := anon.get(path); p.Status != 200 || strings.Contains(p.Body, deposit) || strings.Contains(p.Body, roles) {
		t.Errorf("signed out: %d, offers actions: %v", p.Status, strings.Contains(p.Body, deposit))
	}
	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)
	p := admin.get(path)
	for _, want := range []string{deposit, roles, `href="/collections/new?parent=` + string(c.ID) + `"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("admin: the page lacks %s", want)
		}
	}
	// a signed-in writer without a role on it may be offered to deposit
	// (the engine decides), never the roles
	if _, err := e.accounts.AddUser(context.Background(), "writer", "writer-password", false, nil); err != nil {
		t.Fatal(err)
	}
	w := newVisitor(t, e.testEnv)
	w.signIn("writer", "writer-password")
	p = w.get(path)
	if !strings.Contains(p.Body, deposit) || strings.Contains(p.Body, roles) {
		t.Errorf("writer without a role: deposit offered %v, roles offered %v", strings.Contains(p.Body, deposit), strings.Contains(p.Body, roles))
	}
}
