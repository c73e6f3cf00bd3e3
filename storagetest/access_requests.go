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

// testFilesAccess: SetFilesAccess closes a work's pages (and the files
// below them) while its record stays readable, writes only the pages whose
// access changes, gives the work a new version, and refuses a lease, a
// past embargo, a stale version, a resource that is not a work and a
// caller who may not edit; FilesAccess reads it back.
func testFilesAccess(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	create := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	work := create(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	p1 := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	p2 := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID, Visibility: shelfmark.Private})
	file := create(&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: p1.ID,
		File: &shelfmark.File{Name: "a.txt", MediaType: "text/plain", Size: 1, SHA256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}})
	bare := create(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	reader := e.user(t, "reader", shelfmark.ScopeWrite)
	anon := shelfmark.Anonymous()

	if a, ok, err := e.repo.FilesAccess(as(anon), work.ID); err != nil || !ok || a.Visibility != shelfmark.Public {
		t.Fatalf("files access before = %+v, %v, %v", a, ok, err)
	}
	if _, ok, err := e.repo.FilesAccess(as(anon), bare.ID); err != nil || ok {
		t.Fatalf("files access of a work without pages = %v, %v", ok, err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		id   shelfmark.ID
		a    shelfmark.Access
		v    int64
		code string
	}{
		{"a reader", as(reader), work.ID, shelfmark.Access{Visibility: shelfmark.Private}, 0, shelfmark.EFORBIDDEN},
		{"a lease", sys, work.ID, shelfmark.Access{Visibility: shelfmark.Public, Lease: new(e.now.Add(time.Hour))}, 0, shelfmark.EINVALID},
		{"a past embargo", sys, work.ID, shelfmark.Access{Visibility: shelfmark.Public, Embargo: new(e.now.Add(-time.Hour))}, 0, shelfmark.EINVALID},
		{"no visibility", sys, work.ID, shelfmark.Access{Visibility: "everyone"}, 0, shelfmark.EINVALID},
		{"a stale version", sys, work.ID, shelfmark.Access{Visibility: shelfmark.Private}, work.Version + 5, shelfmark.EPRECONDITION},
		{"a page", sys, p1.ID, shelfmark.Access{Visibility: shelfmark.Private}, 0, shelfmark.EINVALID},
	} {
		if _, err := e.repo.SetFilesAccess(c.ctx, c.id, c.a, c.v); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if !e.sees(t, anon, p1.ID) || !e.sees(t, anon, file.ID) {
		t.Fatal("a refused change changed the pages")
	}

	until := e.now.Add(30 * 24 * time.Hour)
	got, err := e.repo.SetFilesAccess(sys, work.ID, shelfmark.Access{Visibility: shelfmark.Public, Embargo: &until}, work.Version)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != work.Version+1 || got.Visibility != shelfmark.Public || got.Embargo != nil {
		t.Fatalf("the work after = version %d, %s, %v; want version %d, public, no embargo", got.Version, got.Visibility, got.Embargo, work.Version+1)
	}
	if !e.sees(t, anon, work.ID) || e.sees(t, anon, p1.ID) || e.sees(t, anon, p2.ID) || e.sees(t, anon, file.ID) {
		t.Fatal("after the files were embargoed, a reader sees the pages, or not the record")
	}
	if a, ok, err := e.repo.FilesAccess(as(anon), work.ID); err != nil || !ok || a.Visibility != shelfmark.Public || a.Embargo == nil || !a.Embargo.Equal(until) {
		t.Fatalf("files access after = %+v, %v, %v", a, ok, err)
	}
	// the same change again writes nothing, not even the work's version
	again, err := e.repo.SetFilesAccess(sys, work.ID, shelfmark.Access{Visibility: shelfmark.Public, Embargo: &until}, 0)
	if err != nil || again.Version != got.Version {
		t.Fatalf("the same files access again: version %d, %v; want %d", again.Version, err, got.Version)
	}
	audit, err := shelfmark.NewAccounts(e.repo, shelfmark.AccountsOptions{Now: func() time.Time { return e.now }}).
		Audit(sys, shelfmark.AuditQuery{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range audit {
		if a.Action == "files.access" && a.Outcome == shelfmark.AuditOK {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d files.access entries in the audit trail, want 1", n)
	}
	// the embargo ends without a write
	e.now = until.Add(time.Second)
	if !e.sees(t, anon, p1.ID) || !e.sees(t, anon, file.ID) || !e.sees(t, anon, p2.ID) {
		t.Fatal("after the embargo ended, the pages (every one of them, the private one too) do not show")
	}
	// a whole work made private hides its pages whatever their own access
	e.now = until.Add(time.Hour)
	if _, err := e.repo.SetFilesAccess(sys, work.ID, shelfmark.Access{Visibility: shelfmark.Public}, 0); err != nil {
		t.Fatal(err)
	}
	private := shelfmark.Private
	if _, err := e.repo.UpdateResource(sys, work.ID, shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
		t.Fatal(err)
	}
	if e.sees(t, anon, p1.ID) || e.sees(t, anon, p2.ID) {
		t.Fatal("the pages of a private work show")
	}
}

// testAccessRequests: a signed-in reader of a record whose files are
// closed asks for them; the collection's manager sees the request, a
// reader without the role neither sees nor decides it; a grant opens the
// pages (to the policy and to the reader's search) until its date and no
// longer; a refusal records the reply; a revocation ends a grant early;
// every step is refused where it should be.
func testAccessRequests(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	ctx := context.Background()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	acc := shelfmark.NewAccounts(e.repo, shelfmark.AccountsOptions{Now: func() time.Time { return e.now }})
	create := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(sys, nr))
	}
	coll := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	work := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})
	page := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	open2 := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}})
	create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: open2.ID})
	hidden := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
	if _, err := e.repo.SetFilesAccess(sys, work.ID, shelfmark.Access{Visibility: shelfmark.Private}, 0); err != nil {
		t.Fatal(err)
	}
	reader := e.user(t, "reader", shelfmark.ScopeWrite)
	readOnly := e.user(t, "readonly", shelfmark.ScopeRead)
	manager := e.user(t, "manager", shelfmark.ScopeWrite)
	plain := e.user(t, "plain", shelfmark.ScopeWrite)
	e.grant(t, coll, shelfmark.UserPrincipal("manager"), shelfmark.RoleManager)

	// search: the work's record and its page, each with the word
	wk, pk := keyOf(t, work.ID), keyOf(t, page.ID)
	update(t, e.env, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{
			{Key: wk, Work: wk, Kind: shelfmark.KindWork, Title: "Title", Body: "harbour"},
			{Key: pk, Work: wk, Access: pk, Kind: shelfmark.KindFileSet, Body: "harbour page"},
		})
	})
	found := func(c *shelfmark.Caller) []int64 {
		t.Helper()
		var keys []int64
		view(t, e.env, func(tx shelfmark.ReadTx) error {
			rd, err := e.repo.SearchReader(as(c), tx)
			if err != nil {
				return err
			}
			res, err := tx.Search(ctx, shelfmark.SearchQuery{Text: "harbour", Now: e.now, Limit: 20, Reader: rd})
			if err != nil {
				return err
			}
			for _, h := range res.Hits {
				keys = append(keys, h.Key)
			}
			return nil
		})
		slices.Sort(keys)
		return keys
	}
	if got := found(reader); !slices.Equal(got, []int64{wk}) {
		t.Fatalf("the reader's search before a grant finds %v, want the record %d alone", got, wk)
	}
	if r, _, err := e.repo.FilesRestricted(as(reader), work.ID); err != nil || !r {
		t.Fatalf("files restricted to the reader = %v, %v", r, err)
	}
	if r, _, err := e.repo.FilesRestricted(as(reader), open2.ID); err != nil || r {
		t.Fatalf("files of an open work restricted = %v, %v", r, err)
	}

	// asking
	for _, c := range []struct {
		name string
		c    *shelfmark.Caller
		id   shelfmark.ID
		msg  string
		code string
	}{
		{"anonymous", shelfmark.Anonymous(), work.ID, "", shelfmark.EUNAUTHORIZED},
		{"a read-only credential", readOnly, work.ID, "", shelfmark.EFORBIDDEN},
		{"files open already", reader, open2.ID, "", shelfmark.ECONFLICT},
		{"a hidden record", reader, hidden.ID, "", shelfmark.ENOTFOUND},
		{"a collection", reader, coll.ID, "", shelfmark.EINVALID},
		{"a long message", reader, work.ID, string(make([]byte, shelfmark.MaxAccessRequestMessage+1)), shelfmark.EINVALID},
		{"a NUL", reader, work.ID, "a\x00b", shelfmark.EINVALID},
	} {
		if _, err := acc.RequestAccess(as(c.c), c.id, c.msg); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("request as %s: %v, want %s", c.name, err, c.code)
		}
	}
	q, err := acc.RequestAccess(as(reader), work.ID, "  For my thesis.  ")
	if err != nil {
		t.Fatal(err)
	}
	if q.State != shelfmark.AccessRequestOpen || q.Message != "For my thesis." || q.Key == 0 {
		t.Fatalf("request = %+v", q)
	}
	if q2, err := acc.RequestAccess(as(reader), work.ID, "again"); err != nil || q2.Key != q.Key {
		t.Fatalf("a second request while one is open = %+v, %v; want the first", q2, err)
	}

	// who sees it
	list := func(c *shelfmark.Caller, qq shelfmark.AccessRequestQuery) []int64 {
		t.Helper()
		rs, _, err := acc.AccessRequests(as(c), qq)
		if err != nil {
			t.Fatalf("requests as %s: %v", c.Actor(), err)
		}
		var keys []int64
		for _, r := range rs {
			keys = append(keys, r.Key)
		}
		return keys
	}
	if got := list(manager, shelfmark.AccessRequestQuery{}); !slices.Equal(got, []int64{q.Key}) {
		t.Fatalf("the manager's open requests = %v, want [%d]", got, q.Key)
	}
	if got := list(plain, shelfmark.AccessRequestQuery{}); len(got) != 0 {
		t.Fatalf("a user without a role sees requests %v", got)
	}
	if got := list(reader, shelfmark.AccessRequestQuery{Mine: true, Work: work.ID}); !slices.Equal(got, []int64{q.Key}) {
		t.Fatalf("the reader's own requests = %v", got)
	}
	if _, _, err := acc.AccessRequests(as(shelfmark.Anonymous()), shelfmark.AccessRequestQuery{}); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
		t.Fatalf("requests as anonymous: %v", err)
	}
	if _, _, err := acc.AccessRequests(as(manager), shelfmark.AccessRequestQuery{State: "maybe"}); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Fatalf("requests in an unknown state: %v", err)
	}
	// one request: its reader and its work's manager see it, no one else
	for _, c := range []*shelfmark.Caller{reader, manager} {
		if got, err := acc.AccessRequest(as(c), q.Key); err != nil || got.Key != q.Key || got.UserName != "reader" || got.Message != "For my thesis." {
			t.Fatalf("the request as %s = %+v, %v", c.Actor(), got, err)
		}
	}
	if _, err := acc.AccessRequest(as(plain), q.Key); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("the request as a user without a role: %v, want ENOTFOUND", err)
	}
	if _, err := acc.AccessRequest(as(manager), q.Key+1000); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("an unknown request: %v, want ENOTFOUND", err)
	}
	if _, err := acc.AccessRequest(as(shelfmark.Anonymous()), q.Key); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
		t.Fatalf("the request as anonymous: %v, want EUNAUTHORIZED", err)
	}
	rs, _, err := acc.AccessRequests(as(manager), shelfmark.AccessRequestQuery{})
	if err != nil || len(rs) != 1 || rs[0].UserName != "reader" || rs[0].Resource != wk {
		t.Fatalf("the manager's request = %+v, %v", rs, err)
	}

	// deciding
	week := e.now.Add(7 * 24 * time.Hour)
	for _, c := range []struct {
		name string
		c    *shelfmark.Caller
		d    shelfmark.AccessDecision
		code string
	}{
		{"a user without a role", plain, shelfmark.AccessDecision{Grant: true, Until: week}, shelfmark.EFORBIDDEN},
		{"the reader", reader, shelfmark.AccessDecision{Grant: true, Until: week}, shelfmark.EFORBIDDEN},
		{"a past date", manager, shelfmark.AccessDecision{Grant: true, Until: e.now.Add(-time.Minute)}, shelfmark.EINVALID},
		{"over a year", manager, shelfmark.AccessDecision{Grant: true, Until: e.now.Add(shelfmark.MaxAccessGrant + time.Hour)}, shelfmark.EINVALID},
	} {
		if _, err := acc.DecideAccessRequest(as(c.c), q.Key, c.d); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("decide as %s: %v, want %s", c.name, err, c.code)
		}
	}
	if _, err := acc.DecideAccessRequest(as(manager), q.Key+1000, shelfmark.AccessDecision{}); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("decide an unknown request: %v", err)
	}
	if e.sees(t, reader, page.ID) {
		t.Fatal("the reader sees the page before a grant")
	}
	d, err := acc.DecideAccessRequest(as(manager), q.Key, shelfmark.AccessDecision{Grant: true, Until: week, Reply: "Granted for a week."})
	if err != nil {
		t.Fatal(err)
	}
	if d.State != shelfmark.AccessRequestGranted || d.Until == nil || !d.Until.Equal(week) || d.DecidedBy != manager.User {
		t.Fatalf("decision = %+v", d)
	}
	if _, err := acc.DecideAccessRequest(as(manager), q.Key, shelfmark.AccessDecision{}); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
		t.Fatalf("deciding twice: %v", err)
	}
	if !e.sees(t, reader, page.ID) || e.sees(t, plain, page.ID) {
		t.Fatal("after the grant, the reader does not see the page, or another user does")
	}
	if got := found(reader); !slices.Equal(got, []int64{wk, pk}) {
		t.Fatalf("the reader's search after the grant finds %v, want %v", got, []int64{wk, pk})
	}
	if got := found(plain); !slices.Equal(got, []int64{wk}) {
		t.Fatalf("another user's search after the grant finds %v", got)
	}
	if r, _, err := e.repo.FilesRestricted(as(reader), work.ID); err != nil || r {
		t.Fatalf("files restricted to the granted reader = %v, %v", r, err)
	}
	gs, err := acc.WorkAccessGrants(as(manager), work.ID)
	if err != nil || len(gs) != 1 || gs[0].Principal != "user:reader" || gs[0].Role != shelfmark.RoleViewer || gs[0].Expires == nil || !gs[0].Expires.Equal(week) {
		t.Fatalf("grants on the work = %+v, %v", gs, err)
	}
	if _, err := acc.WorkAccessGrants(as(plain), work.ID); shelfmark.ErrorCode(err) != shelfmark.EFORBIDDEN {
		t.Fatalf("grants on the work as a user without a role: %v", err)
	}
	if got := list(manager, shelfmark.AccessRequestQuery{State: shelfmark.AccessRequestGranted}); !slices.Equal(got, []int64{q.Key}) {
		t.Fatalf("granted requests = %v", got)
	}

	// the grant ends with its date, without a write
	e.now = week.Add(time.Second)
	if e.sees(t, reader, page.ID) {
		t.Fatal("the reader sees the page after the grant ended")
	}
	if got := found(reader); !slices.Equal(got, []int64{wk}) {
		t.Fatalf("the reader's search after the grant ended finds %v", got)
	}
	if gs, err := acc.WorkAccessGrants(as(manager), work.ID); err != nil || len(gs) != 0 {
		t.Fatalf("grants in force after the end = %+v, %v", gs, err)
	}
	// the sweep deletes the ended grant, once, audited; the manager's
	// role on the collection, which never ends, stays
	if n, err := e.repo.SweepGrants(ctx); err != nil || n != 1 {
		t.Fatalf("grant sweep = %d, %v; want 1", n, err)
	}
	if n, err := e.repo.SweepGrants(ctx); err != nil || n != 0 {
		t.Fatalf("grant sweep again = %d, %v; want 0", n, err)
	}
	view(t, e.env, func(tx shelfmark.ReadTx) error {
		gs, err := tx.(shelfmark.AccountReadTx).GrantsOn(ctx, []int64{wk, keyOf(t, coll.ID)})
		if err != nil || len(gs) != 1 || gs[0].Principal != "user:manager" || gs[0].Role != shelfmark.RoleManager {
			t.Fatalf("grants after the sweep = %+v, %v; want the manager's role only", gs, err)
		}
		return nil
	})
	if audit, err := acc.Audit(sys, shelfmark.AuditQuery{Limit: 5}); err != nil || len(audit) == 0 ||
		audit[0].Action != "access.expire" || audit[0].Resource != wk || !strings.Contains(audit[0].Detail, "user:reader") {
		t.Fatalf("the sweep's audit entry: %+v, %v", audit, err)
	}

	// refused
	q3, err := acc.RequestAccess(as(reader), work.ID, "Once more, please.")
	if err != nil || q3.Key == q.Key {
		t.Fatalf("a new request after a decision = %+v, %v", q3, err)
	}
	if d, err := acc.DecideAccessRequest(as(manager), q3.Key, shelfmark.AccessDecision{Reply: "Not this year."}); err != nil || d.State != shelfmark.AccessRequestRefused || d.Reply != "Not this year." {
		t.Fatalf("refusal = %+v, %v", d, err)
	}
	if e.sees(t, reader, page.ID) {
		t.Fatal("a refusal opened the page")
	}

	// revoked early
	q4, err := acc.RequestAccess(as(reader), work.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.DecideAccessRequest(as(manager), q4.Key, shelfmark.AccessDecision{Grant: true, Until: e.now.Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if !e.sees(t, reader, page.ID) {
		t.Fatal("the second grant did not open the page")
	}
	if err := acc.RevokeAccess(as(plain), work.ID, "user:reader"); shelfmark.ErrorCode(err) != shelfmark.EFORBIDDEN {
		t.Fatalf("revoke as a user without a role: %v", err)
	}
	if err := acc.RevokeAccess(as(manager), work.ID, "user:reader"); err != nil {
		t.Fatal(err)
	}
	if e.sees(t, reader, page.ID) {
		t.Fatal("the reader sees the page after the grant was revoked")
	}
	if err := acc.RevokeAccess(as(manager), work.ID, "user:reader"); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("revoking twice: %v", err)
	}
	// the manager's roles on the collection are untouched by grants on works
	view(t, e.env, func(tx shelfmark.ReadTx) error {
		gs, err := tx.GrantsOn(ctx, []int64{keyOf(t, coll.ID)})
		if err != nil {
			return err
		}
		if len(gs) != 1 || gs[0].Expires != nil {
			t.Errorf("grants on the collection = %+v", gs)
		}
		return nil
	})
	audit, err := acc.Audit(sys, shelfmark.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range audit {
		if a.Outcome == shelfmark.AuditOK {
			count[a.Action]++
		}
	}
	if count["access.request"] != 3 || count["access.grant"] != 2 || count["access.refuse"] != 1 || count["access.revoke"] != 1 {
		t.Fatalf("audit counts = %v", count)
	}
}

// testCollectionFilesDefault: a collection's default access of the files
// of works deposited into it is public (as the record) until its curator
// sets another, which any reader of the collection reads back; someone
// without the right to change the collection, a visibility that is not
// one and a work are refused, and the setting stays as it was.
func testCollectionFilesDefault(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	coll := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	hidden := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private}))
	work := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	cura := e.user(t, "cura", shelfmark.ScopeWrite)
	plain := e.user(t, "plain", shelfmark.ScopeWrite)
	e.grant(t, coll, shelfmark.UserPrincipal("cura"), shelfmark.RoleCurator)
	anon := as(shelfmark.Anonymous())
	if v, err := e.repo.CollectionFilesDefault(anon, coll.ID); err != nil || v != shelfmark.Public {
		t.Fatalf("the default before = %q, %v", v, err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		id   shelfmark.ID
		v    shelfmark.Visibility
		code string
	}{
		{"a user without a role", as(plain), coll.ID, shelfmark.Private, shelfmark.EFORBIDDEN},
		{"anonymous", anon, coll.ID, shelfmark.Private, shelfmark.EUNAUTHORIZED},
		{"not a visibility", as(cura), coll.ID, "secret", shelfmark.EINVALID},
		{"a work", sys, work.ID, shelfmark.Private, shelfmark.EINVALID},
		{"a hidden collection", as(plain), hidden.ID, shelfmark.Private, shelfmark.ENOTFOUND},
	} {
		if err := e.repo.SetCollectionFilesDefault(c.ctx, c.id, c.v); shelfmark.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if err := e.repo.SetCollectionFilesDefault(as(cura), coll.ID, shelfmark.Private); err != nil {
		t.Fatal(err)
	}
	if v, err := e.repo.CollectionFilesDefault(anon, coll.ID); err != nil || v != shelfmark.Private {
		t.Fatalf("the default after = %q, %v", v, err)
	}
	if err := e.repo.SetCollectionFilesDefault(as(cura), coll.ID, shelfmark.Authenticated); err != nil {
		t.Fatal(err)
	}
	if v, err := e.repo.CollectionFilesDefault(anon, coll.ID); err != nil || v != shelfmark.Authenticated {
		t.Fatalf("the default set again = %q, %v", v, err)
	}
	if _, err := e.repo.CollectionFilesDefault(anon, hidden.ID); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("the default of a hidden collection: %v", err)
	}
}

// testCostFilesAccess: closing the files of a work of 60 pages (each with
// a file, whose effective access follows) runs the statements of closing
// those of a work of 3.
func testCostFilesAccess(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	work := func(pages int) shelfmark.ID {
		w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
		for i := range pages {
			p := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
			rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: p.ID,
				File: &shelfmark.File{Name: fmt.Sprintf("p%d.txt", i), MediaType: "text/plain", Size: 1, SHA256: sha(300 + i), Use: shelfmark.UseOriginal}}))
		}
		return w.ID
	}
	statements := func(id shelfmark.ID) []string {
		var qs []string
		for _, c := range e.rec.capture(func() {
			if _, err := e.repo.SetFilesAccess(ctx, id, shelfmark.Access{Visibility: shelfmark.Private}, 0); err != nil {
				t.Fatal(err)
			}
		}) {
			qs = append(qs, c.query)
		}
		return qs
	}
	small, large := statements(work(3)), statements(work(60))
	if !slices.Equal(small, large) {
		t.Fatalf("closing the files of 3 vs 60 pages ran different statements:\n%v\n%v", small, large)
	}
	t.Logf("close the files of a work: %d statements for 3 pages and for 60", len(small))
}
