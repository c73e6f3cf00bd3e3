package http

import (
	"context"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
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

// TestUIWorkDeleteOffered: a depositor may change the work she deposited
// but not delete it, so her work page offers the edit links and not the
// delete one, and the delete page refuses her (403); a curator gets both.
func TestUIWorkDeleteOffered(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	c := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Letters")}})[0]
	dep := e.addUser("dep", shelfmark.ScopeWrite)
	e.addUser("cur", shelfmark.ScopeWrite)
	e.grantRoles(c.ID, []api.GrantJSON{{Principal: "user:dep", Role: "depositor"}, {Principal: "user:cur", Role: "curator"}})
	w, err := e.repo.CreateResource(shelfmark.WithCaller(ctx, e.callerOf(dep)), &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{c.ID}, Metadata: titled("Her letter")})
	if err != nil {
		t.Fatal(err)
	}
	path := "/works/" + string(w.ID)
	edit, del := `href="`+path+`/edit"`, `href="`+path+`/delete"`
	for _, tc := range []struct {
		user            string
		edit, del       bool
		deletePageState int
	}{{"dep", true, false, 403}, {"cur", true, true, 200}} {
		b := newVisitor(t, e.testEnv)
		b.signIn(tc.user, tc.user+"-password")
		p := b.get(path)
		if strings.Contains(p.Body, edit) != tc.edit || strings.Contains(p.Body, del) != tc.del {
			t.Errorf("%s: edit link %v (want %v), delete link %v (want %v)", tc.user, strings.Contains(p.Body, edit), tc.edit, strings.Contains(p.Body, del), tc.del)
		}
		if p := b.get(path + "/delete"); p.Status != tc.deletePageState {
			t.Errorf("%s: delete page %d, want %d", tc.user, p.Status, tc.deletePageState)
		}
	}
}

// TestUIDepositSuggestsCollections: the deposit form suggests the
// collections the depositor can see, by title, and not the hidden ones.
func TestUIDepositSuggestsCollections(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	cs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Letters & diaries")},
		{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private, Metadata: titled("Hidden shelf")}})
	e.addUser("dep", shelfmark.ScopeWrite)
	b := newVisitor(t, e.testEnv)
	b.signIn("dep", "dep-password")
	p := b.get("/deposit")
	if want := `<option value="` + string(cs[0].ID) + `">Letters &amp; diaries</option>`; !strings.Contains(p.Body, want) || !strings.Contains(p.Body, `list="deposit-collections"`) {
		t.Errorf("the deposit form does not suggest %s: %.2000s", want, p.Body)
	}
	if strings.Contains(p.Body, "Hidden shelf") || strings.Contains(p.Body, string(cs[1].ID)) {
		t.Error("the deposit form suggests a collection the depositor cannot see")
	}
}
