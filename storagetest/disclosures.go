package storagetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testAccessRelations: a resource's relations name only what its reader
// may read: memberOf leaves out the collections the caller may not see,
// and a work readable through a role on its collection does not name the
// work that holds it when that one is hidden from the caller (in a read,
// a batch read and a listing of the collection).
func testAccessRelations(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	viewer := e.user(t, "viewer", shelfmark.ScopeRead)
	open1 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	hidden := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	staff := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	e.grant(t, staff, shelfmark.UserPrincipal("viewer"), shelfmark.RoleViewer)
	work := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{open1.ID, hidden.ID}}))
	for _, c := range []*shelfmark.Caller{shelfmark.Anonymous(), viewer} {
		got := rs(t)(e.repo.FindResource(as(c), work.ID))
		if !slices.Equal(got.MemberOf, []shelfmark.ID{open1.ID}) {
			t.Fatalf("%s reads memberOf %v, want only %s (not the private %s)", c.Actor(), got.MemberOf, open1.ID, hidden.ID)
		}
	}
	if got := rs(t)(e.repo.FindResource(ctx, work.ID)); len(got.MemberOf) != 2 {
		t.Fatalf("the system reads memberOf %v", got.MemberOf)
	}

	// a private work under a private work: the viewer reads the child
	// through its collection, not the parent
	parent := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private}))
	child := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Parent: parent.ID, MemberOf: []shelfmark.ID{staff.ID}}))
	vctx := as(viewer)
	if e.sees(t, viewer, parent.ID) || !e.sees(t, viewer, child.ID) {
		t.Fatal("the viewer should read the child through its collection, and not the parent")
	}
	if got := rs(t)(e.repo.FindResource(vctx, child.ID)); got.Parent != "" {
		t.Fatalf("the child names its hidden parent %s", got.Parent)
	}
	batch, err := e.repo.FindResources(vctx, []shelfmark.ID{child.ID})
	if err != nil || len(batch) != 1 || batch[0].Parent != "" {
		t.Fatalf("a batch read of the child: %+v, %v", batch, err)
	}
	members := pg(t)(e.repo.ListMembers(vctx, staff.ID, shelfmark.PageRequest{}))
	if len(members.Items) != 1 || members.Items[0].Parent != "" {
		t.Fatalf("the collection's listing names the hidden parent: %+v", members.Items)
	}
	if got := rs(t)(e.repo.FindResource(ctx, child.ID)); got.Parent != parent.ID {
		t.Fatalf("the system reads parent %q, want %s", got.Parent, parent.ID)
	}
}

// testSearchHiddenCollection: a search filtered by a collection the
// public may not see finds nothing, even the public works it holds (as a
// browse of it finds nothing).
func testSearchHiddenCollection(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	hidden := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	open1 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{hidden.ID, open1.ID},
		Metadata: []shelfmark.Statement{title("Kittiwake ledger")}}))
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	search := func(coll shelfmark.ID) int {
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: "kittiwake", Collection: keyOf(t, coll), Facets: true, Now: time.Now()})
			return err
		})
		if int64(len(res.Hits)) != res.Total {
			t.Fatalf("a total of %d for %d hits", res.Total, len(res.Hits))
		}
		return len(res.Hits)
	}
	if n := search(open1.ID); n != 1 {
		t.Fatalf("the public collection: %d hits", n)
	}
	if n := search(hidden.ID); n != 0 {
		t.Fatalf("the private collection: %d hits, want none", n)
	}
}

// testAuditRedacted: a collection's manager reads its audit trail without
// the ids of resources they may not read, which a refused write of
// someone else names; an administrator reads them.
func testAuditRedacted(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	acc := shelfmark.NewAccounts(e.repo, shelfmark.AccountsOptions{Now: func() time.Time { return e.now }})
	manager := e.user(t, "manager", shelfmark.ScopeWrite)
	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	mine := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	theirs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	e.grant(t, mine, shelfmark.UserPrincipal("manager"), shelfmark.RoleManager)
	e.grant(t, mine, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	e.grant(t, theirs, shelfmark.UserPrincipal("dep"), shelfmark.RoleViewer)
	secret := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{theirs.ID}}))
	// the depositor may read the secret work, not change it: filing it
	// into the manager's collection is refused, and the refusal names it
	err := e.repo.AddMembers(as(dep), mine.ID, []shelfmark.ID{secret.ID})
	if code := shelfmark.ErrorCode(err); code != shelfmark.EFORBIDDEN || !strings.Contains(shelfmark.ErrorMessage(err), string(secret.ID)) {
		t.Fatalf("filing the secret work: %v", err)
	}
	trail := func(c *shelfmark.Caller) string {
		entries, err := acc.Audit(as(c), shelfmark.AuditQuery{Resource: keyOf(t, mine.ID), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, en := range entries {
			b.WriteString(en.Action + " " + en.Outcome + " " + en.Detail + "\n")
		}
		return b.String()
	}
	got := trail(manager)
	if strings.Contains(got, string(secret.ID)) || !strings.Contains(got, shelfmark.AuditHidden) {
		t.Fatalf("the manager's trail of the collection:\n%s", got)
	}
	if got := trail(shelfmark.SystemCaller("test")); !strings.Contains(got, string(secret.ID)) {
		t.Fatalf("the system's trail of the collection:\n%s", got)
	}
}

// testGroupSourceKeyRefused: a caller who may not create a group learns
// nothing of its source key: a key stored before (as a private work) gets
// the same refusal as a key never seen.
func testGroupSourceKeyRefused(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	nobody := e.user(t, "nobody", shelfmark.ScopeWrite)
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	if _, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{{SourceKey: "stored-key", Resources: []*shelfmark.NewResource{
		{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{coll.ID}}}}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	try := func(c *shelfmark.Caller, key string) error {
		_, errs := e.repo.CreateGroups(as(c), []*shelfmark.NewGroup{{SourceKey: key, Resources: []*shelfmark.NewResource{
			{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}}}})
		return errs[0]
	}
	for _, c := range []*shelfmark.Caller{shelfmark.Anonymous(), nobody} {
		stored, fresh := try(c, "stored-key"), try(c, "fresh-key")
		if shelfmark.ErrorCode(stored) == shelfmark.ECONFLICT || shelfmark.ErrorCode(stored) != shelfmark.ErrorCode(fresh) ||
			shelfmark.ErrorMessage(stored) != shelfmark.ErrorMessage(fresh) {
			t.Fatalf("%s: a stored source key: %v; a fresh one: %v", c.Actor(), stored, fresh)
		}
	}
	// the system, which may, is told
	if err := try(shelfmark.SystemCaller("test"), "stored-key"); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
		t.Fatalf("the system: %v, want a conflict", err)
	}
}
