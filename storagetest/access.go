package storagetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// accessEnv is a repository with users and a clock the test moves.
type accessEnv struct {
	*env
	now time.Time
}

func newAccessEnv(t *testing.T, open Opener) *accessEnv {
	a := &accessEnv{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	a.env = newEnv(t, open, shelfmark.RepositoryOptions{Now: func() time.Time { return a.now }})
	return a
}

// user stores a user and returns its caller with the given scope.
func (a *accessEnv) user(t *testing.T, name string, scope shelfmark.Scope, groups ...string) *shelfmark.Caller {
	t.Helper()
	u := &shelfmark.User{Name: name, Created: a.now}
	err := a.store.Update(context.Background(), func(tx shelfmark.WriteTx) error {
		if err := tx.InsertUser(context.Background(), u); err != nil {
			return err
		}
		return tx.SetUserGroups(context.Background(), u.Key, groups)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &shelfmark.Caller{User: u.Key, Name: name, Groups: groups, Scope: scope}
}

// grant gives role on collection (nil: the repository) to principal.
func (a *accessEnv) grant(t *testing.T, collection *shelfmark.Resource, principal string, role shelfmark.Role) {
	t.Helper()
	var key int64
	if collection != nil {
		k, err := a.repo.IDs().Key(collection.ID)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	err := a.store.Update(context.Background(), func(tx shelfmark.WriteTx) error {
		gs, err := tx.GrantsOn(context.Background(), []int64{key})
		if err != nil {
			return err
		}
		return tx.SetGrants(context.Background(), key, append(gs, shelfmark.Grant{Resource: key, Principal: principal, Role: role}))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func as(c *shelfmark.Caller) context.Context {
	return shelfmark.WithCaller(context.Background(), c)
}

// sees reports whether c can read id, failing on errors other than
// not found.
func (a *accessEnv) sees(t *testing.T, c *shelfmark.Caller, id shelfmark.ID) bool {
	t.Helper()
	_, err := a.repo.FindResource(as(c), id)
	switch shelfmark.ErrorCode(err) {
	case "":
		return true
	case shelfmark.ENOTFOUND:
		return false
	}
	t.Fatalf("find %s as %q: %v", id, c.Actor(), err)
	return false
}

func ids(p *shelfmark.Page) []shelfmark.ID {
	out := make([]shelfmark.ID, len(p.Items))
	for i, it := range p.Items {
		out[i] = it.ID
	}
	return out
}

// testAccessVisibility: what each caller sees of public, authenticated and
// private works, their file sets and files, and the listings that hold
// them; hidden things answer exactly as missing ones.
func testAccessVisibility(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background() // the system
	anon := shelfmark.Anonymous()
	reader := e.user(t, "reader", shelfmark.ScopeRead)
	viewer := e.user(t, "viewer", shelfmark.ScopeRead, "staff")
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	e.grant(t, coll, shelfmark.GroupPrincipal("staff"), shelfmark.RoleViewer)
	mk := func(vis shelfmark.Visibility) *shelfmark.Resource {
		return rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis,
			MemberOf: []shelfmark.ID{coll.ID}, Metadata: []shelfmark.Statement{title("w " + string(vis))}}))
	}
	pub, auth, priv := mk(shelfmark.Public), mk(shelfmark.Authenticated), mk(shelfmark.Private)
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: priv.ID}))
	file := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "a.txt", MediaType: "text/plain", Size: 1, SHA256: strings.Repeat("a", 64), Use: "original"}}))
	// a private file set in a public work
	pubFS := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: pub.ID}))
	hiddenFS := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: pub.ID, Visibility: shelfmark.Private}))

	for _, tc := range []struct {
		who  string
		c    *shelfmark.Caller
		want map[shelfmark.ID]bool
	}{
		{"anonymous", anon, map[shelfmark.ID]bool{pub.ID: true, auth.ID: false, priv.ID: false, fs.ID: false, file.ID: false, pubFS.ID: true, hiddenFS.ID: false}},
		{"signed in", reader, map[shelfmark.ID]bool{pub.ID: true, auth.ID: true, priv.ID: false, fs.ID: false, file.ID: false, pubFS.ID: true, hiddenFS.ID: false}},
		{"viewer", viewer, map[shelfmark.ID]bool{pub.ID: true, auth.ID: true, priv.ID: true, fs.ID: true, file.ID: true, pubFS.ID: true, hiddenFS.ID: true}},
	} {
		for id, want := range tc.want {
			if got := e.sees(t, tc.c, id); got != want {
				t.Errorf("%s sees %s: %v, want %v", tc.who, id, got, want)
			}
		}
	}
	// a hidden resource answers exactly as a missing one
	_, hidden := e.repo.FindResource(as(anon), priv.ID)
	missingID := e.repo.IDs().Encode(shelfmark.MaxKey - 7)
	_, missing := e.repo.FindResource(as(anon), missingID)
	if shelfmark.ErrorCode(hidden) != shelfmark.ENOTFOUND ||
		strings.ReplaceAll(shelfmark.ErrorMessage(hidden), string(priv.ID), "X") != strings.ReplaceAll(shelfmark.ErrorMessage(missing), string(missingID), "X") {
		t.Errorf("hidden answers %v, missing answers %v", hidden, missing)
	}
	// the file set and file of a private work say so
	if got := rs(t)(e.repo.FindResource(as(viewer), file.ID)); got.Visibility != shelfmark.Private {
		t.Errorf("file of a private work reports %q", got.Visibility)
	}
	// listings show only what the caller sees, with page sizes honoured
	for _, tc := range []struct {
		who  string
		c    *shelfmark.Caller
		want []shelfmark.ID
	}{
		{"anonymous", anon, []shelfmark.ID{pub.ID}},
		{"signed in", reader, []shelfmark.ID{pub.ID, auth.ID}},
		{"viewer", viewer, []shelfmark.ID{pub.ID, auth.ID, priv.ID}},
	} {
		var got []shelfmark.ID
		for after := shelfmark.Cursor(""); ; {
			p := pg(t)(e.repo.ListMembers(as(tc.c), coll.ID, shelfmark.PageRequest{After: after, Limit: 1}))
			got = append(got, ids(p)...)
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s lists members %v, want %v", tc.who, got, tc.want)
		}
	}
	if got := ids(pg(t)(e.repo.ListChildren(as(anon), pub.ID, shelfmark.PageRequest{}))); !slices.Equal(got, []shelfmark.ID{pubFS.ID}) {
		t.Errorf("anonymous lists children %v, want only %s", got, pubFS.ID)
	}
	if _, err := e.repo.ListChildren(as(anon), priv.ID, shelfmark.PageRequest{}); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("anonymous lists the children of a private work: %v", err)
	}
	// a deleted private work stays hidden (no 410 that confirms it)
	if err := e.repo.DeleteResource(ctx, priv.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.repo.FindResource(as(anon), priv.ID); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("anonymous finds a deleted private work: %v", err)
	}
	// its memberships went with it, and with them the viewer's role; an
	// administrator still learns that it was deleted
	if _, err := e.repo.FindResource(ctx, priv.ID); shelfmark.ErrorCode(err) != shelfmark.EGONE {
		t.Errorf("the system finds a deleted private work: %v, want gone", err)
	}
}

// testAccessDates: embargoes and leases take effect at their dates on
// every read, and the sweep writes them down as new versions.
func testAccessDates(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	anon := shelfmark.Anonymous()
	day := e.now.Add(24 * time.Hour)
	emb := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &day}))
	lease := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Lease: &day}))
	past := e.now.Add(-time.Hour)
	for name, nr := range map[string]*shelfmark.NewResource{
		"an embargo in the past": {Kind: shelfmark.KindWork, Embargo: &past},
		"a lease in the past":    {Kind: shelfmark.KindWork, Lease: &past},
		"an embargo and a lease": {Kind: shelfmark.KindWork, Embargo: &day, Lease: &day},
	} {
		if _, err := e.repo.CreateResource(ctx, nr); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	pastp := &past
	if _, err := e.repo.UpdateResource(ctx, lease.ID, shelfmark.ResourceUpdate{Embargo: &pastp}); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Errorf("an embargo set in the past: %v, want invalid", err)
	}
	if e.sees(t, anon, emb.ID) || !e.sees(t, anon, lease.ID) {
		t.Fatal("before the date: the embargoed work must be hidden and the leased one public")
	}
	if n, err := e.repo.SweepAccess(ctx); err != nil || n != 0 {
		t.Fatalf("sweep before the date changed %d (%v)", n, err)
	}
	e.now = day.Add(time.Second)
	if !e.sees(t, anon, emb.ID) || e.sees(t, anon, lease.ID) {
		t.Fatal("after the date, before the sweep: the embargo must have ended and the lease too")
	}
	// a lapsed date sent back unchanged (a client that PUTs what it read)
	// is no error
	dayp := &day
	if _, err := e.repo.UpdateResource(ctx, emb.ID, shelfmark.ResourceUpdate{Embargo: &dayp}); err != nil {
		t.Errorf("the lapsed embargo sent back unchanged: %v", err)
	}
	n, err := e.repo.SweepAccess(ctx)
	if err != nil || n != 2 {
		t.Fatalf("sweep changed %d (%v), want 2", n, err)
	}
	l := rs(t)(e.repo.FindResource(ctx, lease.ID))
	m := rs(t)(e.repo.FindResource(ctx, emb.ID))
	if l.Visibility != shelfmark.Private || l.Lease != nil || l.Version != 2 || m.Embargo != nil || m.Visibility != shelfmark.Public || m.Version != 2 {
		t.Errorf("after the sweep: lease %+v, embargo %+v", l, m)
	}
	if n, err := e.repo.SweepAccess(ctx); err != nil || n != 0 {
		t.Errorf("a second sweep changed %d (%v)", n, err)
	}
	var entries []*shelfmark.AuditEntry
	err = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		entries, err = tx.Audit(ctx, shelfmark.AuditQuery{Actor: "system:access", Limit: 10})
		return err
	})
	if err != nil || len(entries) != 2 || entries[0].Action != "access.expire" {
		t.Errorf("audit of the sweep: %v %+v", err, entries)
	}
}

// testAccessRoles: what each role may change, and that a refusal answers
// 401/403 for what the caller sees and 404 for what it does not.
func testAccessRoles(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	other := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	secret := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	dep := e.user(t, "dep", shelfmark.ScopeWrite)
	dep2 := e.user(t, "dep2", shelfmark.ScopeWrite)
	cur := e.user(t, "cur", shelfmark.ScopeWrite)
	curRead := &shelfmark.Caller{User: cur.User, Name: cur.Name, Scope: shelfmark.ScopeRead}
	mgrOther := e.user(t, "mgr-other", shelfmark.ScopeWrite)
	e.grant(t, coll, shelfmark.UserPrincipal("dep"), shelfmark.RoleDepositor)
	e.grant(t, coll, shelfmark.UserPrincipal("dep2"), shelfmark.RoleDepositor)
	e.grant(t, coll, shelfmark.UserPrincipal("cur"), shelfmark.RoleCurator)
	e.grant(t, other, shelfmark.UserPrincipal("mgr-other"), shelfmark.RoleManager)
	work := func(c *shelfmark.Caller, in *shelfmark.Resource, vis shelfmark.Visibility) (*shelfmark.Resource, error) {
		return e.repo.CreateResource(as(c), &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{in.ID}})
	}
	mine := rs(t)(work(dep, coll, shelfmark.Private))
	theirs := rs(t)(work(dep2, coll, shelfmark.Public))
	vis := shelfmark.Public
	patch := shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title("x")}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"anonymous creates", func() error { _, err := work(shelfmark.Anonymous(), coll, ""); return err }(), shelfmark.EUNAUTHORIZED},
		{"depositor creates outside its collection", func() error { _, err := work(dep, other, ""); return err }(), shelfmark.EFORBIDDEN},
		{"depositor creates in a collection it cannot see", func() error { _, err := work(dep, secret, ""); return err }(), shelfmark.EINVALID},
		{"depositor creates outside any collection", func() error {
			_, err := e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindWork})
			return err
		}(), shelfmark.EFORBIDDEN},
		{"depositor edits its own work", func() error { _, err := e.repo.UpdateResource(as(dep), mine.ID, patch); return err }(), ""},
		{"depositor edits another's work", func() error { _, err := e.repo.UpdateResource(as(dep), theirs.ID, patch); return err }(), shelfmark.EFORBIDDEN},
		{"depositor reads another's private work", func() error { _, err := e.repo.FindResource(as(dep2), mine.ID); return err }(), ""},
		{"depositor edits another's private work", func() error { _, err := e.repo.UpdateResource(as(dep2), mine.ID, patch); return err }(), shelfmark.EFORBIDDEN},
		{"manager of another collection reads a private work", func() error { _, err := e.repo.FindResource(as(mgrOther), mine.ID); return err }(), shelfmark.ENOTFOUND},
		{"manager of another collection edits a private work", func() error { _, err := e.repo.UpdateResource(as(mgrOther), mine.ID, patch); return err }(), shelfmark.ENOTFOUND},
		{"depositor may edit its own work (CheckEdit)", e.repo.CheckEdit(as(dep), mine.ID), ""},
		{"depositor may not delete its own work (CheckDelete)", e.repo.CheckDelete(as(dep), mine.ID), shelfmark.EFORBIDDEN},
		{"curator may delete (CheckDelete)", e.repo.CheckDelete(as(cur), theirs.ID), ""},
		{"anonymous may not delete (CheckDelete)", e.repo.CheckDelete(as(shelfmark.Anonymous()), theirs.ID), shelfmark.EUNAUTHORIZED},
		{"manager of another collection may not see what to delete (CheckDelete)", e.repo.CheckDelete(as(mgrOther), mine.ID), shelfmark.ENOTFOUND},
		{"depositor deletes its own work", e.repo.DeleteResource(as(dep), mine.ID, 0), shelfmark.EFORBIDDEN},
		{"depositor files another's work into a collection", e.repo.AddMembers(as(dep), coll.ID, []shelfmark.ID{theirs.ID}), shelfmark.EFORBIDDEN},
		{"manager of another collection edits", func() error { _, err := e.repo.UpdateResource(as(mgrOther), theirs.ID, patch); return err }(), shelfmark.EFORBIDDEN},
		{"manager of another collection adds a work it cannot edit", e.repo.AddMembers(as(mgrOther), other.ID, []shelfmark.ID{theirs.ID}), shelfmark.EFORBIDDEN},
		{"curator with a read token edits", func() error { _, err := e.repo.UpdateResource(as(curRead), theirs.ID, patch); return err }(), shelfmark.EFORBIDDEN},
		{"curator publishes a private work", func() error {
			_, err := e.repo.UpdateResource(as(cur), mine.ID, shelfmark.ResourceUpdate{Visibility: &vis})
			return err
		}(), ""},
		{"curator deletes", e.repo.DeleteResource(as(cur), theirs.ID, 0), ""},
		{"anonymous reserves ids", func() error { _, err := e.repo.MintIDs(as(shelfmark.Anonymous()), 1); return err }(), shelfmark.EUNAUTHORIZED},
	} {
		if got := shelfmark.ErrorCode(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	// a depositor adds file sets to its own work, not to another's
	fs, err := e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: mine.ID})
	if err != nil {
		t.Fatalf("depositor adds a file set to its work: %v", err)
	}
	rival := rs(t)(work(dep2, coll, shelfmark.Public))
	if _, err := e.repo.CreateResource(as(dep), &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: rival.ID}); shelfmark.ErrorCode(err) != shelfmark.EFORBIDDEN {
		t.Errorf("depositor adds a file set to another's work: %v", err)
	}
	// a new collection's creator manages it
	e.grant(t, nil, shelfmark.UserPrincipal("cur"), shelfmark.RoleCurator)
	mine2 := rs(t)(e.repo.CreateResource(as(cur), &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	var grants []shelfmark.Grant
	k, _ := e.repo.IDs().Key(mine2.ID)
	_ = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		grants, err = tx.GrantsOn(ctx, []int64{k})
		return err
	})
	if len(grants) != 1 || grants[0].Role != shelfmark.RoleManager || grants[0].Principal != "user:cur" {
		t.Errorf("grants on a new collection: %+v", grants)
	}
	// the audit trail names who did what, including refusals
	var entries []*shelfmark.AuditEntry
	fk, _ := e.repo.IDs().Key(fs.ID)
	mk, _ := e.repo.IDs().Key(mine.ID)
	_ = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		entries, err = tx.Audit(ctx, shelfmark.AuditQuery{Actor: "dep", Limit: 100})
		return err
	})
	var created, denied, updated bool
	for _, en := range entries {
		switch {
		case en.Action == "create" && en.Resource == fk && en.Outcome == shelfmark.AuditOK && en.User == dep.User:
			created = true
		case en.Action == "update" && en.Resource == mk && en.Outcome == shelfmark.AuditOK && slices.Contains(en.Predicates, title("").Predicate):
			updated = true
		case en.Action == "delete" && en.Resource == mk && en.Outcome == shelfmark.AuditDenied:
			denied = true
		}
	}
	if !created || !updated || !denied {
		t.Errorf("audit of dep: created %v, updated %v, denied %v in %d entries", created, updated, denied, len(entries))
	}
}

// testCostAccess: reading a public file costs anonymous callers no
// account reads, the file and the parents above it are read in one
// statement, and a signed-in caller's checks do not grow with the
// number of grants and collections elsewhere.
func testCostAccess(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	file := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "a", MediaType: "text/plain", Size: 1, SHA256: strings.Repeat("b", 64), Use: "original"}}))
	calls := e.rec.capture(func() { rs(t)(e.repo.FindResource(as(shelfmark.Anonymous()), file.ID)) })
	// the file, its file set and its work: one statement, read once for
	// the file's access and its parent's
	if reads := countCalls(calls, "FROM resources"); reads != 1 {
		t.Errorf("an anonymous read of a file two levels down read resources in %d statements, want 1:\n%s", reads, dump(calls))
	}
	for _, c := range calls {
		if strings.Contains(c.query, "grants") || strings.Contains(c.query, "owners") {
			t.Errorf("anonymous read of a public file ran %q", c.query)
		}
	}
	viewer := e.user(t, "v", shelfmark.ScopeRead)
	private := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{coll.ID}}))
	e.grant(t, coll, "user:v", shelfmark.RoleViewer)
	count := func() int { return len(e.rec.capture(func() { rs(t)(e.repo.FindResource(as(viewer), private.ID)) })) }
	before := count()
	for i := 0; i < 20; i++ {
		c := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
		e.grant(t, c, "user:v", shelfmark.RoleViewer)
	}
	if after := count(); after != before {
		t.Errorf("a viewer's read ran %d statements with 1 grant and %d with 21", before, after)
	}
}

// testAccessPageText: the text of a page whose file set is more hidden
// than its public work is not found by search: the job that extracts it
// leaves it out, hiding the file set drops it, and publishing the file set
// again extracts it anew.
func testAccessPageText(t *testing.T, open Opener) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	k := func(id shelfmark.ID) int64 { key, _ := e.repo.IDs().Key(id); return key }
	found := func(word string) int {
		var res *shelfmark.SearchResult
		err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: word, Now: now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Hits)
	}
	finishText := func(file, fs, work *shelfmark.Resource, word string) {
		t.Helper()
		err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueText, Resource: k(file.ID)}}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		jobs := claim(t, e, shelfmark.QueueText, "w", 10, now)
		for _, j := range jobs {
			res := &shelfmark.JobResult{}
			if j.Resource == k(file.ID) {
				res.Docs = []shelfmark.SearchDoc{{Key: k(fs.ID), Work: k(work.ID), Kind: shelfmark.KindFileSet, Body: word}}
			}
			if err := e.repo.FinishJob(ctx, j, res); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := &shelfmark.File{Name: "p.txt", MediaType: "text/plain", Size: 1, SHA256: sha(9), Use: "original"}
	work, fs, file := page(t, e, f)
	hiddenFS := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID, Visibility: shelfmark.Private}))
	hiddenFile := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: hiddenFS.ID, File: f}))
	claim(t, e, shelfmark.QueueCharacterize, "w", 10, now) // out of the way
	finishText(file, fs, work, "openpageword")
	finishText(hiddenFile, hiddenFS, work, "hiddenpageword")
	if found("openpageword") != 1 || found("hiddenpageword") != 0 {
		t.Fatalf("after extraction: open page found %d times, hidden page %d", found("openpageword"), found("hiddenpageword"))
	}
	private := shelfmark.Private
	rs(t)(e.repo.UpdateResource(ctx, fs.ID, shelfmark.ResourceUpdate{Visibility: &private}))
	if found("openpageword") != 0 {
		t.Fatal("the text of a file set made private is still found")
	}
	// the text stays indexed while hidden: publishing the page shows it
	// at once, with no job to extract it again
	public := shelfmark.Public
	rs(t)(e.repo.UpdateResource(ctx, hiddenFS.ID, shelfmark.ResourceUpdate{Visibility: &public}))
	if found("hiddenpageword") != 1 {
		t.Fatal("the text of a file set made public is not found")
	}
	if jobs := claim(t, e, shelfmark.QueueText, "w", 10, now); len(jobs) != 0 {
		t.Fatalf("publishing a file set enqueued %d text jobs", len(jobs))
	}
	// a page image made private hides the text made from it, in a public
	// file set of a public work; and shows it again when made public
	rs(t)(e.repo.UpdateResource(ctx, hiddenFile.ID, shelfmark.ResourceUpdate{Visibility: &private}))
	if found("hiddenpageword") != 0 {
		t.Fatal("the text of a file made private is still found")
	}
	rs(t)(e.repo.UpdateResource(ctx, hiddenFile.ID, shelfmark.ResourceUpdate{Visibility: &public}))
	if found("hiddenpageword") != 1 {
		t.Fatal("the text of a file made public again is not found")
	}
	// an embargo on the work hides every page's text until it ends
	until := now.Add(time.Hour)
	untilp := &until
	rs(t)(e.repo.UpdateResource(ctx, work.ID, shelfmark.ResourceUpdate{Embargo: &untilp}))
	if found("hiddenpageword") != 0 {
		t.Fatal("the text of a page of an embargoed work is found")
	}
}

// testAccessHiddenCursor: a listing page that ends among members its
// caller may not see gives a cursor that names none of them, and the
// listing still reaches every member the caller may see.
func testAccessHiddenCursor(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{MaxListScan: 2})
	ctx := context.Background()
	coll := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	member := func(vis shelfmark.Visibility) shelfmark.ID {
		return rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{coll.ID}})).ID
	}
	first := member(shelfmark.Public)
	var hidden []shelfmark.ID
	for i := 0; i < 6; i++ {
		hidden = append(hidden, member(shelfmark.Private))
	}
	last := member(shelfmark.Public)
	anon := as(shelfmark.Anonymous())
	var got []shelfmark.ID
	tilde := 0
	for after, n := shelfmark.Cursor(""), 0; ; n++ {
		if n > 20 {
			t.Fatal("the listing does not end")
		}
		p := pg(t)(e.repo.ListMembers(anon, coll.ID, shelfmark.PageRequest{After: after, Limit: 1}))
		got = append(got, ids(p)...)
		if p.Next == "" {
			break
		}
		if strings.HasPrefix(string(p.Next), "~") {
			tilde++
		}
		for _, h := range hidden {
			k, _ := e.repo.IDs().Key(h)
			if strings.Contains(string(p.Next), string(h)) || strings.Contains(string(p.Next), string(shelfmark.LegacyIDCodec().Encode(k))) {
				t.Fatalf("cursor %q names the hidden member %s", p.Next, h)
			}
		}
		after = p.Next
	}
	if !slices.Equal(got, []shelfmark.ID{first, last}) || tilde == 0 {
		t.Errorf("anonymous listed %v (%d cursors among hidden rows), want [%s %s] and some", got, tilde, first, last)
	}
}
