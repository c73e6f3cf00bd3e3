package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// workspaceIDs walks a workspace query to its end, limit works a page,
// and returns the ids it listed.
func workspaceIDs(t *testing.T, e *env, ctx context.Context, q shelfmark.WorkspaceQuery) []shelfmark.ID {
	t.Helper()
	var got []shelfmark.ID
	for n := 0; ; n++ {
		if n > 50 {
			t.Fatal("the workspace list does not end")
		}
		p, err := e.repo.Workspace(ctx, q)
		if err != nil {
			t.Fatalf("workspace %+v: %v", q, err)
		}
		if q.Limit > 0 && len(p.Items) > q.Limit {
			t.Fatalf("%d items on a page of %d", len(p.Items), q.Limit)
		}
		for _, it := range p.Items {
			got = append(got, it.ID)
		}
		if p.Next == "" {
			return got
		}
		q.After = p.Next
	}
}

// testOwnedAndMembersBefore: Owned lists a depositor's live resources of
// one kind and MembersBefore a collection's live members, both by key
// from the highest, below a bound, a limit at a time.
func testOwnedAndMembersBefore(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	mk := func(nr *shelfmark.NewResource) int64 { return keyOf(t, rs(t)(e.repo.CreateResource(ctx, nr)).ID) }
	coll := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	collID := e.repo.IDs().Encode(coll)
	var works []int64
	for range 4 {
		works = append(works, mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{collID}}))
	}
	other := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	ownedColl := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err := e.repo.DeleteResource(ctx, e.repo.IDs().Encode(works[1]), 0); err != nil {
		t.Fatal(err)
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.SetOwners(ctx, append(slices.Clone(works), ownedColl), 7); err != nil {
			return err
		}
		return tx.SetOwners(ctx, []int64{other}, 8)
	})
	keysOf := func(rows []*shelfmark.ResourceRow) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r.Key)
		}
		return out
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, c := range []struct {
			name   string
			read   func() ([]*shelfmark.ResourceRow, error)
			expect []int64
		}{
			{"owned", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 7, shelfmark.KindWork, 0, 10) }, []int64{works[3], works[2], works[0]}},
			{"owned, two", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 7, shelfmark.KindWork, 0, 2) }, []int64{works[3], works[2]}},
			{"owned below", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 7, shelfmark.KindWork, works[2], 10) }, []int64{works[0]}},
			{"owned collections", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 7, shelfmark.KindCollection, 0, 10) }, []int64{ownedColl}},
			{"another's", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 8, shelfmark.KindWork, 0, 10) }, []int64{other}},
			{"nobody's", func() ([]*shelfmark.ResourceRow, error) { return tx.Owned(ctx, 9, shelfmark.KindWork, 0, 10) }, nil},
			{"members", func() ([]*shelfmark.ResourceRow, error) { return tx.MembersBefore(ctx, coll, 0, 10) }, []int64{works[3], works[2], works[0]}},
			{"members below", func() ([]*shelfmark.ResourceRow, error) { return tx.MembersBefore(ctx, coll, works[3], 1) }, []int64{works[2]}},
			{"no limit", func() ([]*shelfmark.ResourceRow, error) { return tx.MembersBefore(ctx, coll, 0, 0) }, nil},
		} {
			rows, err := c.read()
			if err != nil {
				return err
			}
			if got := keysOf(rows); !slices.Equal(got, c.expect) {
				t.Errorf("%s: %v, want %v", c.name, got, c.expect)
			}
		}
		return nil
	})
}

// testWorkspace: a depositor's workspace lists the works they deposited,
// newest first, keyset-paged; a collection's lists its works the caller
// may read; every work is listed to administrators and to holders of a
// role on the repository only; filters of visibility and of what a work
// lacks (a title, a thumbnail, text) keep what they name; each work comes
// with its title and its first page's thumbnail; bad values and anonymous
// callers are refused; and a page deep in the list, or past thousands of
// works the filter leaves out, costs what the first page costs.
func testWorkspace(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	future := e.now.Add(30 * 24 * time.Hour)
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	file := func(fs *shelfmark.Resource, use string, n int) {
		mk(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &shelfmark.File{
			Name: fmt.Sprintf("f%d.%s", n, use), MediaType: "image/jpeg", Size: int64(n), SHA256: sha(n), Use: use}})
	}
	coll := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{title("Letters")}})
	in := []shelfmark.ID{coll.ID}
	pub := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in, Metadata: []shelfmark.Statement{title("Public letter")}})
	priv := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Metadata: []shelfmark.Statement{title("Private")}})
	emb := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &future, Metadata: []shelfmark.Statement{title("Embargoed")}})
	untitled := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: in})
	pictured := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Pictured")}})
	p1 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: pictured.ID})
	file(p1, shelfmark.UseOriginal, 1)
	file(p1, shelfmark.UseThumbnail, 2)
	read := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Read")}})
	p2 := mk(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: read.ID})
	file(p2, shelfmark.UseOriginal, 3)
	file(p2, shelfmark.UseALTO, 4)
	gone := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err := e.repo.DeleteResource(sys, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	othersPub := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in})
	othersPriv := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: in})
	loose := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})

	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	plain := e.user(t, "plain", shelfmark.ScopeRead)
	viewer := e.user(t, "viewer", shelfmark.ScopeRead)
	everything := e.user(t, "everything", shelfmark.ScopeRead)
	admin := &shelfmark.Caller{User: plain.User + 1000, Name: "root", Admin: true, Scope: shelfmark.ScopeRead}
	e.grant(t, coll, shelfmark.UserPrincipal("viewer"), shelfmark.RoleViewer)
	e.grant(t, nil, shelfmark.UserPrincipal("everything"), shelfmark.RoleViewer)
	mine := []*shelfmark.Resource{read, pictured, untitled, emb, priv, pub} // newest first
	update(t, e.env, func(tx shelfmark.WriteTx) error {
		var keys []int64
		for _, w := range append(slices.Clone(mine), gone) {
			keys = append(keys, keyOf(t, w.ID))
		}
		return tx.SetOwners(ctx, keys, dep.User)
	})
	idsOf := func(ws ...*shelfmark.Resource) []shelfmark.ID {
		var out []shelfmark.ID
		for _, w := range ws {
			out = append(out, w.ID)
		}
		return out
	}

	for _, c := range []struct {
		name   string
		caller *shelfmark.Caller
		q      shelfmark.WorkspaceQuery
		want   []shelfmark.ID
	}{
		{"mine", dep, shelfmark.WorkspaceQuery{Limit: 2}, idsOf(mine...)},
		{"mine by name", dep, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceMine, Limit: 50}, idsOf(mine...)},
		{"mine, private", dep, shelfmark.WorkspaceQuery{Visibility: "private", Limit: 1}, idsOf(untitled, priv)},
		{"mine, public", dep, shelfmark.WorkspaceQuery{Visibility: "public"}, idsOf(read, pictured, emb, pub)},
		{"mine, embargoed", dep, shelfmark.WorkspaceQuery{Visibility: shelfmark.WorkspaceEmbargoed}, idsOf(emb)},
		{"mine, no title", dep, shelfmark.WorkspaceQuery{Missing: shelfmark.WorkspaceNoTitle}, idsOf(untitled)},
		{"mine, no thumbnail", dep, shelfmark.WorkspaceQuery{Missing: shelfmark.WorkspaceNoThumbnail}, idsOf(read, untitled, emb, priv, pub)},
		{"mine, no text", dep, shelfmark.WorkspaceQuery{Missing: shelfmark.WorkspaceNoOCR, Limit: 3}, idsOf(pictured, untitled, emb, priv, pub)},
		{"mine, public without text", dep, shelfmark.WorkspaceQuery{Visibility: "public", Missing: shelfmark.WorkspaceNoOCR}, idsOf(pictured, emb, pub)},
		{"nothing of mine", plain, shelfmark.WorkspaceQuery{}, nil},
		{"a collection to its viewer", viewer, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: coll.ID, Limit: 1},
			idsOf(othersPriv, othersPub, untitled, pub)},
		{"a collection to a reader", plain, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: coll.ID}, idsOf(othersPub, pub)},
		{"a collection, private", admin, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: coll.ID, Visibility: "private"},
			idsOf(othersPriv, untitled)},
		{"all to an administrator", admin, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceAll, Limit: 4},
			idsOf(loose, othersPriv, othersPub, read, pictured, untitled, emb, priv, pub)},
		{"all to a viewer of everything", everything, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceAll, Missing: shelfmark.WorkspaceNoTitle},
			idsOf(loose, othersPriv, othersPub, untitled)},
	} {
		if got := workspaceIDs(t, e.env, as(c.caller), c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}

	// the items: titles and the first page's thumbnail
	p, err := e.repo.Workspace(as(dep), shelfmark.WorkspaceQuery{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[1].ID != pictured.ID || p.Items[1].Thumbnail == "" || p.Items[0].Thumbnail != "" ||
		len(p.Items[1].Metadata) != 1 || p.Items[1].Metadata[0].Object.Value != "Pictured" {
		t.Errorf("the first page's items: %+v %+v", p.Items[0], p.Items[1])
	}

	// refusals
	for _, c := range []struct {
		name   string
		caller *shelfmark.Caller
		q      shelfmark.WorkspaceQuery
		code   string
	}{
		{"anonymous", shelfmark.Anonymous(), shelfmark.WorkspaceQuery{}, shelfmark.EUNAUTHORIZED},
		{"all to a depositor", dep, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceAll}, shelfmark.EFORBIDDEN},
		{"a scope", dep, shelfmark.WorkspaceQuery{Scope: "theirs"}, shelfmark.EINVALID},
		{"a visibility", dep, shelfmark.WorkspaceQuery{Visibility: "secret"}, shelfmark.EINVALID},
		{"a lack", dep, shelfmark.WorkspaceQuery{Missing: "pages"}, shelfmark.EINVALID},
		{"a collection without its scope", dep, shelfmark.WorkspaceQuery{Collection: coll.ID}, shelfmark.EINVALID},
		{"the collection scope without one", dep, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection}, shelfmark.EINVALID},
		{"a cursor", dep, shelfmark.WorkspaceQuery{After: "nope!"}, shelfmark.EINVALID},
		{"a collection nobody may see", dep, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: loose.ID}, shelfmark.ENOTFOUND},
	} {
		if _, err := e.repo.Workspace(as(c.caller), c.q); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}

	// cost: a page deep in the list costs what the first does, and so
	// does a page past 3,000 works its filter leaves out
	var many []int64
	for done := 0; done < 3000; {
		nrs := make([]*shelfmark.NewResource, 500)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(fmt.Sprintf("bulk %d", done+i))}}
		}
		created, errs := e.repo.CreateResources(sys, nrs)
		if slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		for _, r := range created {
			many = append(many, keyOf(t, r.ID))
		}
		done += len(nrs)
	}
	update(t, e.env, func(tx shelfmark.WriteTx) error { return tx.SetOwners(ctx, many, dep.User) })
	q := shelfmark.WorkspaceQuery{Limit: 20}
	first := e.rec.capture(func() {
		if _, err := e.repo.Workspace(as(dep), q); err != nil {
			t.Fatal(err)
		}
	})
	q.After = shelfmark.Cursor(e.repo.IDs().Encode(many[1000]))
	var deep *shelfmark.WorkspacePage
	deepCalls := e.rec.capture(func() {
		if deep, err = e.repo.Workspace(as(dep), q); err != nil {
			t.Fatal(err)
		}
	})
	if len(deep.Items) != 20 || deep.Items[0].ID != e.repo.IDs().Encode(many[999]) {
		t.Errorf("a page deep in the list starts at %v", deep.Items[0].ID)
	}
	if len(first) != len(deepCalls) {
		t.Errorf("page 1 ran %d statements, a page 2,000 works deep %d:\n%s\n%s", len(first), len(deepCalls), dump(first), dump(deepCalls))
	}
	var rare *shelfmark.WorkspacePage
	rareCalls := e.rec.capture(func() {
		if rare, err = e.repo.Workspace(as(dep), shelfmark.WorkspaceQuery{Missing: shelfmark.WorkspaceNoTitle, Limit: 20}); err != nil {
			t.Fatal(err)
		}
	})
	if len(rareCalls) > 30 || rowsOf(rareCalls) > 4*int64(shelfmark.DefaultMaxListScan) {
		t.Errorf("a page past 3,000 works without a match: %d statements, %d rows:\n%s", len(rareCalls), rowsOf(rareCalls), dump(rareCalls))
	}
	t.Logf("workspace: page 1 %d statements, 2,000 deep %d, past 3,000 filtered out %d (%d items, next %q)",
		len(first), len(deepCalls), len(rareCalls), len(rare.Items), rare.Next)
	if got := workspaceIDs(t, e.env, as(dep), shelfmark.WorkspaceQuery{Missing: shelfmark.WorkspaceNoTitle, Limit: 20}); !slices.Equal(got, idsOf(untitled)) {
		t.Errorf("walking past 3,000 works to the one without a title: %v", got)
	}

	// the dates of deposit: a work deposited a day later
	noon := e.now.Add(12 * time.Hour)
	e.now = e.now.Add(24 * time.Hour)
	late := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("Late")}})
	update(t, e.env, func(tx shelfmark.WriteTx) error { return tx.SetOwners(ctx, []int64{keyOf(t, late.ID)}, dep.User) })
	if got := workspaceIDs(t, e.env, as(dep), shelfmark.WorkspaceQuery{Since: noon}); !slices.Equal(got, idsOf(late)) {
		t.Errorf("deposited since noon: %v", got)
	}
	if got := workspaceIDs(t, e.env, as(dep), shelfmark.WorkspaceQuery{Before: noon, Missing: shelfmark.WorkspaceNoTitle}); !slices.Equal(got, idsOf(untitled)) {
		t.Errorf("deposited before noon, without a title: %v", got)
	}
	if _, err := e.repo.Workspace(as(dep), shelfmark.WorkspaceQuery{Since: noon, Before: noon}); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Errorf("dates that end as they begin: %v", err)
	}
}

// testChangeWorks: one change applied to chosen works or to every work a
// workspace query lists: each work changed through the operation that
// makes that change alone, a work the caller may not change refused with
// its reason while the others go on, progress told after each work, and
// a change that is not exactly one refused.
func testChangeWorks(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	mk := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	coll := mk(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	var mine []*shelfmark.Resource
	for i := range 5 {
		mine = append(mine, mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title(fmt.Sprintf("mine %d", i))}}))
	}
	theirs := mk(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	e.grant(t, nil, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	e.grant(t, coll, shelfmark.UserPrincipal("dep"), shelfmark.RoleCurator)
	update(t, e.env, func(tx shelfmark.WriteTx) error {
		var keys []int64
		for _, w := range mine {
			keys = append(keys, keyOf(t, w.ID))
		}
		return tx.SetOwners(ctx, keys, dep.User)
	})
	private := shelfmark.Private
	var told []int
	got, err := e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{}, []shelfmark.ID{mine[0].ID, theirs.ID, mine[1].ID},
		shelfmark.WorkChange{Visibility: &private}, func(p shelfmark.WorkChangeProgress) { told = append(told, p.Changed+p.Refused) })
	if err != nil {
		t.Fatal(err)
	}
	if got.Changed != 2 || got.Refused != 1 || len(got.Failures) != 1 || got.Failures[0].ID != theirs.ID || got.Failures[0].Code != shelfmark.EFORBIDDEN ||
		!slices.Equal(told, []int{1, 2, 3}) {
		t.Errorf("chosen works: %+v, told %v", got, told)
	}
	for _, w := range mine[:2] {
		if r := rs(t)(e.repo.FindResource(sys, w.ID)); r.Visibility != shelfmark.Private {
			t.Errorf("%s is %s", w.ID, r.Visibility)
		}
	}
	// every public work of mine into the collection
	got, err = e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{Visibility: "public"}, nil, shelfmark.WorkChange{AddTo: coll.ID}, nil)
	if err != nil || got.Changed != 3 || got.Refused != 0 {
		t.Errorf("every public work of mine into a collection: %+v, %v", got, err)
	}
	if members := workspaceIDs(t, e.env, as(dep), shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: coll.ID}); !slices.Equal(members, []shelfmark.ID{mine[4].ID, mine[3].ID, mine[2].ID}) {
		t.Errorf("the collection holds %v", members)
	}
	// deleting every work of the collection, page after page
	got, err = e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceCollection, Collection: coll.ID}, nil, shelfmark.WorkChange{Delete: true}, nil)
	if err != nil || got.Changed != 3 {
		t.Errorf("deleting a collection's works: %+v, %v", got, err)
	}
	if left := workspaceIDs(t, e.env, as(dep), shelfmark.WorkspaceQuery{}); !slices.Equal(left, []shelfmark.ID{mine[1].ID, mine[0].ID}) {
		t.Errorf("left after deleting: %v", left)
	}
	// a field set: subjects given to a work of mine, refused for theirs;
	// set again, nothing is written
	got, err = e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{}, []shelfmark.ID{mine[0].ID, theirs.ID},
		shelfmark.WorkChange{Field: "subject", Values: []string{"Whaling", "Ships"}}, nil)
	if err != nil || got.Changed != 1 || got.Refused != 1 {
		t.Errorf("a field set: %+v, %v", got, err)
	}
	before := rs(t)(e.repo.FindResource(sys, mine[0].ID))
	var subjects []string
	for _, st := range before.Metadata {
		if st.Predicate == shelfmark.NSDC+"subject" {
			subjects = append(subjects, st.Object.Value)
		}
	}
	if slices.Sort(subjects); strings.Join(subjects, "|") != "Ships|Whaling" {
		t.Errorf("subjects after: %v", subjects)
	}
	if _, err := e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{}, []shelfmark.ID{mine[0].ID},
		shelfmark.WorkChange{Field: "subject", Values: []string{"Ships", "Whaling"}}, nil); err != nil {
		t.Fatal(err)
	}
	if after := rs(t)(e.repo.FindResource(sys, mine[0].ID)); after.Version != before.Version {
		t.Errorf("the same values set again wrote version %d (was %d)", after.Version, before.Version)
	}
	secret := shelfmark.Visibility("secret")
	for _, bad := range []shelfmark.WorkChange{{}, {Delete: true, AddTo: coll.ID}, {Visibility: &secret}, {Field: "shelf", Values: []string{"A3"}},
		{Field: "title", Values: []string{"nul\x00"}}} {
		if _, err := e.repo.ChangeWorks(as(dep), shelfmark.WorkspaceQuery{}, nil, bad, nil); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("change %+v: %v", bad, err)
		}
	}
	// an ended context stops the walk
	cctx, cancel := context.WithCancel(as(dep))
	cancel()
	if _, err := e.repo.ChangeWorks(cctx, shelfmark.WorkspaceQuery{}, []shelfmark.ID{mine[0].ID}, shelfmark.WorkChange{Delete: true}, nil); err == nil {
		t.Error("a cancelled change went on")
	}
}
