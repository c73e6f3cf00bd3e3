package storagetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Accounts, tokens, grants, owners, the audit trail and settings
// (AccountReadTx, AccountWriteTx), and the lease and access dates of
// resource rows, driven through Storage.View and Storage.Update.

// accountTime is a time with whole microseconds, as the backends store.
var accountTime = time.Date(2026, 5, 4, 3, 2, 1, 123456000, time.UTC)

func readUser(t *testing.T, e *env, name string) *shelfmark.User {
	t.Helper()
	var u *shelfmark.User
	view(t, e, func(tx shelfmark.ReadTx) (err error) {
		u, err = tx.UserByName(context.Background(), name)
		return err
	})
	return u
}

func testAccountUsers(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()

	ada := &shelfmark.User{Name: "ada", Admin: true, PasswordHash: "$argon2id$x", Groups: []string{"staff", "readers", "staff"}, Created: accountTime}
	bob := &shelfmark.User{Name: "bob", Created: accountTime.Add(time.Second)}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertUser(ctx, ada); err != nil {
			return err
		}
		// a taken name is a conflict, and the transaction goes on
		err := tx.InsertUser(ctx, &shelfmark.User{Name: "ada", Created: accountTime})
		if shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
			return fmt.Errorf("insert a taken name: %v, want a conflict", err)
		}
		return tx.InsertUser(ctx, bob)
	})
	if ada.Key == 0 || bob.Key == 0 || ada.Key == bob.Key {
		t.Fatalf("keys %d and %d", ada.Key, bob.Key)
	}
	want := &shelfmark.User{Key: ada.Key, Name: "ada", Admin: true, PasswordHash: "$argon2id$x",
		Groups: []string{"readers", "staff"}, Created: accountTime}
	if got := readUser(t, e, "ada"); !reflect.DeepEqual(got, want) {
		t.Fatalf("ada: %+v, want %+v", got, want)
	}
	view(t, e, func(tx shelfmark.ReadTx) error {
		got, err := tx.UserByKey(ctx, bob.Key)
		if err != nil {
			return err
		}
		if want := (&shelfmark.User{Key: bob.Key, Name: "bob", Created: bob.Created}); !reflect.DeepEqual(got, want) {
			t.Fatalf("bob by key: %+v, want %+v", got, want)
		}
		if u, err := tx.UserByKey(ctx, bob.Key+100); u != nil || err != nil {
			t.Fatalf("no such key: %v, %v", u, err)
		}
		if u, err := tx.UserByName(ctx, "carol"); u != nil || err != nil {
			t.Fatalf("no such name: %v, %v", u, err)
		}
		return nil
	})
	// the conflict left nothing behind
	update(t, e, func(tx shelfmark.WriteTx) error {
		us, err := tx.Users(ctx, 0, 10)
		if err != nil {
			return err
		}
		if len(us) != 2 || us[0].Name != "ada" || us[1].Name != "bob" {
			t.Fatalf("users after a conflict: %+v", us)
		}
		return nil
	})

	// UpdateUser writes Admin, Disabled and PasswordHash only
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.UpdateUser(ctx, &shelfmark.User{Key: ada.Key, Name: "renamed", Admin: false, Disabled: true, PasswordHash: ""})
	})
	if got := readUser(t, e, "ada"); got == nil || got.Admin || !got.Disabled || got.PasswordHash != "" ||
		!slices.Equal(got.Groups, []string{"readers", "staff"}) {
		t.Fatalf("ada after an update: %+v", got)
	}
	err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.UpdateUser(ctx, &shelfmark.User{Key: bob.Key + 100})
	})
	if shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Fatalf("update a missing user: %v", err)
	}

	// SetUserGroups replaces them
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.SetUserGroups(ctx, ada.Key, nil); err != nil {
			return err
		}
		return tx.SetUserGroups(ctx, bob.Key, []string{"z", "a", "m", "a"})
	})
	if got := readUser(t, e, "ada"); got.Groups != nil {
		t.Fatalf("ada's groups after clearing: %q", got.Groups)
	}
	if got := readUser(t, e, "bob"); !slices.Equal(got.Groups, []string{"a", "m", "z"}) {
		t.Fatalf("bob's groups: %q", got.Groups)
	}

	// Users pages by key, with groups
	var keys []int64
	update(t, e, func(tx shelfmark.WriteTx) error {
		for i := range 5 {
			u := &shelfmark.User{Name: fmt.Sprint("user", i), Groups: []string{fmt.Sprint("g", i)}, Created: accountTime}
			if err := tx.InsertUser(ctx, u); err != nil {
				return err
			}
			keys = append(keys, u.Key)
		}
		return nil
	})
	var all []*shelfmark.User
	after := int64(0)
	for {
		var page []*shelfmark.User
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			page, err = tx.Users(ctx, after, 3)
			return err
		})
		if len(page) > 3 {
			t.Fatalf("page of %d users, limit 3", len(page))
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		after = page[len(page)-1].Key
	}
	if len(all) != 7 {
		t.Fatalf("%d users, want 7", len(all))
	}
	for i, u := range all {
		if i > 0 && u.Key <= all[i-1].Key {
			t.Fatalf("users out of order: %d after %d", u.Key, all[i-1].Key)
		}
		if i >= 2 && (u.Key != keys[i-2] || !slices.Equal(u.Groups, []string{fmt.Sprint("g", i-2)})) {
			t.Fatalf("user %d: %+v", i, u)
		}
	}
	if got := all[1]; got.Name != "bob" || !slices.Equal(got.Groups, []string{"a", "m", "z"}) {
		t.Fatalf("bob in the list: %+v", got)
	}
}

func testAccountTokens(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	u1, u2 := &shelfmark.User{Name: "one", Created: accountTime}, &shelfmark.User{Name: "two", Created: accountTime}
	expires := accountTime.Add(90 * 24 * time.Hour)
	tok := func(user *shelfmark.User, kind shelfmark.TokenKind, n int) *shelfmark.Token {
		return &shelfmark.Token{User: user.Key, Kind: kind, Hint: fmt.Sprint("smk_", n), Hash: []byte(fmt.Sprintf("hash-%02d-of-32-bytes-xxxxxxxxxxx", n)),
			Scope: shelfmark.ScopeWrite, Note: fmt.Sprint("note ", n), Created: accountTime.Add(time.Duration(n) * time.Minute)}
	}
	var a1, a2, s1, b1 *shelfmark.Token
	update(t, e, func(tx shelfmark.WriteTx) error {
		for _, u := range []*shelfmark.User{u1, u2} {
			if err := tx.InsertUser(ctx, u); err != nil {
				return err
			}
		}
		a1, a2, s1, b1 = tok(u1, shelfmark.TokenAPI, 1), tok(u1, shelfmark.TokenAPI, 2), tok(u1, shelfmark.TokenSession, 3), tok(u2, shelfmark.TokenAPI, 4)
		a2.Expires, a2.Scope = &expires, shelfmark.ScopeRead
		for _, tk := range []*shelfmark.Token{a1, a2, s1, b1} {
			if err := tx.InsertToken(ctx, tk); err != nil {
				return err
			}
		}
		return nil
	})
	if a1.Key == 0 || a2.Key <= a1.Key || s1.Key <= a2.Key || b1.Key <= s1.Key {
		t.Fatalf("token keys %d %d %d %d", a1.Key, a2.Key, s1.Key, b1.Key)
	}
	byHash := func(hash []byte) *shelfmark.Token {
		t.Helper()
		var tk *shelfmark.Token
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			tk, err = tx.TokenByHash(ctx, hash)
			return err
		})
		return tk
	}
	for _, want := range []*shelfmark.Token{a1, a2, s1, b1} {
		if got := byHash(want.Hash); !reflect.DeepEqual(got, want) {
			t.Fatalf("token by hash: %+v, want %+v", got, want)
		}
	}
	if got := byHash([]byte("no such hash")); got != nil {
		t.Fatalf("unknown hash: %+v", got)
	}
	list := func(user int64, kind shelfmark.TokenKind) []int64 {
		t.Helper()
		var out []int64
		view(t, e, func(tx shelfmark.ReadTx) error {
			ts, err := tx.Tokens(ctx, user, kind)
			for _, tk := range ts {
				out = append(out, tk.Key)
			}
			return err
		})
		return out
	}
	if got, want := list(u1.Key, shelfmark.TokenAPI), []int64{a2.Key, a1.Key}; !slices.Equal(got, want) {
		t.Fatalf("api tokens of one: %v, want %v (newest first)", got, want)
	}
	if got, want := list(u1.Key, shelfmark.TokenSession), []int64{s1.Key}; !slices.Equal(got, want) {
		t.Fatalf("sessions of one: %v, want %v", got, want)
	}
	if got := list(u2.Key, shelfmark.TokenSession); got != nil {
		t.Fatalf("sessions of two: %v", got)
	}

	// revoking: only the owner's, only once
	revoke := func(user, key int64, at time.Time) bool {
		t.Helper()
		var ok bool
		update(t, e, func(tx shelfmark.WriteTx) (err error) {
			ok, err = tx.RevokeToken(ctx, user, key, at)
			return err
		})
		return ok
	}
	at := accountTime.Add(time.Hour)
	if revoke(u2.Key, a1.Key, at) {
		t.Fatal("another user's token was revoked")
	}
	if got := byHash(a1.Hash); got.Revoked != nil {
		t.Fatalf("revoked by another user: %v", got.Revoked)
	}
	if !revoke(u1.Key, a1.Key, at) {
		t.Fatal("the owner could not revoke its token")
	}
	if revoke(u1.Key, a1.Key, at.Add(time.Hour)) {
		t.Fatal("a token was revoked twice")
	}
	if revoke(u1.Key, b1.Key+100, at) {
		t.Fatal("a missing token was revoked")
	}
	if got := byHash(a1.Hash); got.Revoked == nil || !got.Revoked.Equal(at) {
		t.Fatalf("revoked at %v, want %v", got.Revoked, at)
	}
	if got := byHash(a2.Hash); got.Revoked != nil {
		t.Fatalf("another token of the user was revoked: %v", got.Revoked)
	}
}

func testAccountGrants(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	g := func(res int64, p string, r shelfmark.Role) shelfmark.Grant {
		return shelfmark.Grant{Resource: res, Principal: p, Role: r}
	}
	on := func(resources ...int64) []shelfmark.Grant {
		t.Helper()
		var out []shelfmark.Grant
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			out, err = tx.GrantsOn(ctx, resources)
			return err
		})
		return out
	}
	to := func(principals ...string) []shelfmark.Grant {
		t.Helper()
		var out []shelfmark.Grant
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			out, err = tx.GrantsTo(ctx, principals)
			return err
		})
		return out
	}
	set := func(res int64, gs ...shelfmark.Grant) {
		t.Helper()
		update(t, e, func(tx shelfmark.WriteTx) error { return tx.SetGrants(ctx, res, gs) })
	}
	check := func(what string, got []shelfmark.Grant, want ...shelfmark.Grant) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	const c1, c2 = 101, 102
	// a grant's own Resource is ignored; duplicates are stored once
	set(c1, g(0, "user:ada", shelfmark.RoleManager), g(c2, "group:staff", shelfmark.RoleCurator),
		g(c1, "user:ada", shelfmark.RoleManager), g(c1, "user:bob", shelfmark.RoleViewer))
	set(c2, g(c2, "group:staff", shelfmark.RoleDepositor))
	set(0, g(0, "user:root", shelfmark.RoleManager))
	check("on c1", on(c1), g(c1, "group:staff", shelfmark.RoleCurator), g(c1, "user:ada", shelfmark.RoleManager),
		g(c1, "user:bob", shelfmark.RoleViewer))
	check("on the repository and c2", on(c2, 0), g(0, "user:root", shelfmark.RoleManager), g(c2, "group:staff", shelfmark.RoleDepositor))
	check("on nothing", on())
	check("on a resource without grants", on(999))
	check("to staff and ada", to("group:staff", "user:ada"), g(c1, "group:staff", shelfmark.RoleCurator),
		g(c1, "user:ada", shelfmark.RoleManager), g(c2, "group:staff", shelfmark.RoleDepositor))
	check("to nobody", to())
	check("to an unknown principal", to("user:nobody"))

	// SetGrants replaces every grant on the resource, and only there
	set(c1, g(c1, "user:bob", shelfmark.RoleManager))
	check("on c1 after replacing", on(c1), g(c1, "user:bob", shelfmark.RoleManager))
	check("to staff after replacing c1", to("group:staff"), g(c2, "group:staff", shelfmark.RoleDepositor))
	set(c2)
	check("on c2 after clearing", on(c2))
	check("on the repository after clearing c2", on(0), g(0, "user:root", shelfmark.RoleManager))

	// owners: the depositor of each resource, replaced by SetOwners
	owners := func(keys ...int64) map[int64]int64 {
		t.Helper()
		var out map[int64]int64
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			out, err = tx.Owners(ctx, keys)
			return err
		})
		return out
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.SetOwners(ctx, []int64{11, 12, 13}, 7); err != nil {
			return err
		}
		if err := tx.SetOwners(ctx, nil, 7); err != nil {
			return err
		}
		return tx.SetOwners(ctx, []int64{13, 14, 14}, 8)
	})
	if got, want := owners(11, 12, 13, 14, 15), map[int64]int64{11: 7, 12: 7, 13: 8, 14: 8}; !reflect.DeepEqual(got, want) {
		t.Fatalf("owners: %v, want %v", got, want)
	}
	if got := owners(); len(got) != 0 {
		t.Fatalf("owners of nothing: %v", got)
	}
}

func testAccountAudit(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	// 30 entries, a minute apart: actors ada, bob, system:worker in turn,
	// resources 1..5 in turn
	actors := []string{"ada", "bob", "system:worker"}
	var entries []*shelfmark.AuditEntry
	for i := range 30 {
		en := &shelfmark.AuditEntry{At: accountTime.Add(time.Duration(i) * time.Minute), Actor: actors[i%3], User: int64(i%3 + 1),
			Token: int64(i), Action: "update", Resource: int64(i%5 + 1), Outcome: shelfmark.AuditOK, Request: fmt.Sprint("req-", i)}
		if i%4 == 0 {
			en.Predicates = []string{shelfmark.NSDC + "title", shelfmark.NSDC + "subject"}
			en.Outcome, en.Detail = shelfmark.AuditDenied, "no role"
		}
		entries = append(entries, en)
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertAudit(ctx, nil); err != nil {
			return err
		}
		if err := tx.InsertAudit(ctx, entries[:10]); err != nil {
			return err
		}
		return tx.InsertAudit(ctx, entries[10:])
	})
	audit := func(q shelfmark.AuditQuery) []*shelfmark.AuditEntry {
		t.Helper()
		var out []*shelfmark.AuditEntry
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			out, err = tx.Audit(ctx, q)
			return err
		})
		return out
	}
	// every page, newest first, keyset by Before; the entries as written
	walk := func(q shelfmark.AuditQuery) []int {
		t.Helper()
		var out []int
		for {
			page := audit(q)
			if len(page) > q.Limit {
				t.Fatalf("%d entries, limit %d", len(page), q.Limit)
			}
			if len(page) == 0 {
				return out
			}
			for _, got := range page {
				i := int(got.Token)
				want := *entries[i]
				want.Key = got.Key
				if !reflect.DeepEqual(got, &want) {
					t.Fatalf("entry %d: %+v, want %+v", i, got, &want)
				}
				if q.Before != 0 && got.Key >= q.Before {
					t.Fatalf("entry of key %d on the page before %d", got.Key, q.Before)
				}
				out = append(out, i)
			}
			q.Before = page[len(page)-1].Key
		}
	}
	down := func(keep func(i int) bool) []int {
		var out []int
		for i := 29; i >= 0; i-- {
			if keep(i) {
				out = append(out, i)
			}
		}
		return out
	}
	for _, c := range []struct {
		what string
		q    shelfmark.AuditQuery
		want []int
	}{
		{"all", shelfmark.AuditQuery{Limit: 7}, down(func(int) bool { return true })},
		{"resource 3", shelfmark.AuditQuery{Resource: 3, Limit: 2}, down(func(i int) bool { return i%5 == 2 })},
		{"bob", shelfmark.AuditQuery{Actor: "bob", Limit: 4}, down(func(i int) bool { return i%3 == 1 })},
		{"bob on resource 2", shelfmark.AuditQuery{Actor: "bob", Resource: 2, Limit: 1}, down(func(i int) bool { return i%3 == 1 && i%5 == 1 })},
		{"after minute 20", shelfmark.AuditQuery{After: accountTime.Add(20 * time.Minute), Limit: 3}, down(func(i int) bool { return i >= 20 })},
		{"ada after minute 20", shelfmark.AuditQuery{Actor: "ada", After: accountTime.Add(20 * time.Minute), Limit: 3},
			down(func(i int) bool { return i >= 20 && i%3 == 0 })},
		{"nobody", shelfmark.AuditQuery{Actor: "nobody", Limit: 3}, nil},
		{"resource 99", shelfmark.AuditQuery{Resource: 99, Limit: 3}, nil},
	} {
		if got := walk(c.q); !slices.Equal(got, c.want) {
			t.Fatalf("%s: entries %v, want %v", c.what, got, c.want)
		}
	}
	// Limit is clamped to [1, 1000]
	if got := audit(shelfmark.AuditQuery{}); len(got) != 1 || got[0].Token != 29 {
		t.Fatalf("limit 0: %d entries", len(got))
	}
	if got := audit(shelfmark.AuditQuery{Limit: -5}); len(got) != 1 {
		t.Fatalf("limit -5: %d entries", len(got))
	}
	many := make([]*shelfmark.AuditEntry, 1001)
	for i := range many {
		many[i] = &shelfmark.AuditEntry{At: accountTime.Add(time.Hour), Actor: "bulk", Action: "create", Outcome: shelfmark.AuditOK}
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.InsertAudit(ctx, many) })
	if got := audit(shelfmark.AuditQuery{Limit: 5000}); len(got) != 1000 {
		t.Fatalf("limit 5000: %d entries, want 1000", len(got))
	}
	if got := audit(shelfmark.AuditQuery{Actor: "bulk", Limit: 1000}); len(got) != 1000 {
		t.Fatalf("1001 entries in one call: %d on a page of 1000", len(got))
	}
}

func testAccountSettings(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	setting := func(name string) (string, bool) {
		t.Helper()
		var v string
		var ok bool
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			v, ok, err = tx.Setting(ctx, name)
			return err
		})
		return v, ok
	}
	if v, ok := setting("id.secret"); ok || v != "" {
		t.Fatalf("a setting never stored: %q, %v", v, ok)
	}
	// two writers initialise one setting at once: both get the value that
	// was stored first
	const writers = 2
	var (
		wg  sync.WaitGroup
		got [writers]string
		err [writers]error
	)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err[i] = e.store.Update(ctx, func(tx shelfmark.WriteTx) (err error) {
				got[i], err = tx.InitSetting(ctx, "id.secret", fmt.Sprint("secret-", i))
				return err
			})
		}()
	}
	wg.Wait()
	for i := range writers {
		if err[i] != nil {
			t.Fatal(err[i])
		}
	}
	if got[0] != got[1] || (got[0] != "secret-0" && got[0] != "secret-1") {
		t.Fatalf("InitSetting at once: %q and %q", got[0], got[1])
	}
	if v, ok := setting("id.secret"); !ok || v != got[0] {
		t.Fatalf("stored setting: %q, %v; want %q", v, ok, got[0])
	}
	var again string
	update(t, e, func(tx shelfmark.WriteTx) (err error) {
		again, err = tx.InitSetting(ctx, "id.secret", "another")
		return err
	})
	if again != got[0] {
		t.Fatalf("InitSetting of a stored setting: %q, want %q", again, got[0])
	}
	if v, ok := setting("other"); ok {
		t.Fatalf("another setting: %q", v)
	}
}

// testLease shows that a resource row's lease survives every path that
// writes and reads rows (both insert paths of a backend: a few rows, and
// a bulk batch), and that AccessDue finds the live rows whose embargo or
// lease ended, by key.
func testLease(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	now := accountTime
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	const bulk = 300
	first, err := e.store.AllocateKeys(ctx, bulk+20)
	if err != nil {
		t.Fatal(err)
	}
	newRow := func(key int64, embargo, lease *time.Time) *shelfmark.ResourceRow {
		return &shelfmark.ResourceRow{Key: key, Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Embargo: embargo, Lease: lease,
			Version: 1, Seq: 1, Created: now, Modified: now}
	}
	// a bulk batch (COPY where a backend has it): every third row has a lease
	var big []*shelfmark.ResourceRow
	for i := range bulk {
		var lease *time.Time
		if i%3 == 0 {
			lease = at(time.Duration(i+1) * time.Hour)
		}
		big = append(big, newRow(first+int64(i), nil, lease))
	}
	k := first + bulk
	small := []*shelfmark.ResourceRow{
		newRow(k, at(-time.Hour), nil),                 // embargo ended: due
		newRow(k+1, nil, at(-time.Minute)),             // lease ended: due
		newRow(k+2, at(time.Hour), at(2*time.Hour)),    // both to come
		newRow(k+3, at(-time.Hour), nil),               // embargo ended, deleted below
		newRow(k+4, nil, at(0)),                        // lease ends now: due
		newRow(k+5, at(-2*time.Hour), at(-time.Hour)),  // both ended: due once
		newRow(k+6, nil, nil),                          // neither
		newRow(k+7, at(-3*time.Hour), at(time.Hour)),   // embargo ended: due
		newRow(k+8, at(time.Microsecond), nil),         // embargo ends just after now
		newRow(k+9, nil, at(-24*time.Hour)),            // lease ended, given below
		newRow(k+10, nil, at(-time.Microsecond)),       // lease ended just before now: due
		newRow(k+11, at(time.Hour), at(-time.Hour*48)), // lease ended: due
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, big); err != nil {
			return err
		}
		return tx.InsertResources(ctx, small)
	})
	read := func(keys ...int64) map[int64]*shelfmark.ResourceRow {
		t.Helper()
		out := map[int64]*shelfmark.ResourceRow{}
		view(t, e, func(tx shelfmark.ReadTx) error {
			rows, err := tx.Resources(ctx, keys)
			for _, r := range rows {
				out[r.Key] = r
			}
			return err
		})
		return out
	}
	sameTime := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	all := append(append([]*shelfmark.ResourceRow{}, big...), small...)
	var keys []int64
	for _, r := range all {
		keys = append(keys, r.Key)
	}
	got := read(keys...)
	for _, want := range all {
		r := got[want.Key]
		if r == nil || !sameTime(r.Lease, want.Lease) || !sameTime(r.Embargo, want.Embargo) {
			t.Fatalf("row %d: %+v, want lease %v and embargo %v", want.Key, r, want.Lease, want.Embargo)
		}
	}
	var one *shelfmark.ResourceRow
	view(t, e, func(tx shelfmark.ReadTx) (err error) {
		one, err = tx.Resource(ctx, k+2)
		return err
	})
	if one == nil || !sameTime(one.Lease, at(2*time.Hour)) {
		t.Fatalf("Resource: %+v", one)
	}

	// UpdateResource writes the lease: set, moved, removed
	update(t, e, func(tx shelfmark.WriteTx) error {
		for _, c := range []struct {
			key   int64
			lease *time.Time
		}{{k + 6, at(5 * time.Hour)}, {first, at(-5 * time.Hour)}, {k + 9, nil}} {
			r, err := tx.Resource(ctx, c.key)
			if err != nil {
				return err
			}
			r.Lease, r.Version = c.lease, r.Version+1
			if err := tx.UpdateResource(ctx, r); err != nil {
				return err
			}
		}
		_, err := tx.Tombstone(ctx, k+3, 2, now)
		return err
	})
	got = read(k+6, first, k+9)
	if !sameTime(got[k+6].Lease, at(5*time.Hour)) || !sameTime(got[first].Lease, at(-5*time.Hour)) || got[k+9].Lease != nil {
		t.Fatalf("leases after updates: %v, %v, %v", got[k+6].Lease, got[first].Lease, got[k+9].Lease)
	}

	// AccessDue: live rows whose embargo or lease ends at or before now,
	// by key, up to limit
	due := func(limit int) []int64 {
		t.Helper()
		var out []int64
		view(t, e, func(tx shelfmark.ReadTx) error {
			rows, err := tx.AccessDue(ctx, now, limit)
			for _, r := range rows {
				out = append(out, r.Key)
			}
			return err
		})
		return out
	}
	want := []int64{first, k, k + 1, k + 4, k + 5, k + 7, k + 10, k + 11}
	if got := due(100); !slices.Equal(got, want) {
		t.Fatalf("AccessDue: %v, want %v", got, want)
	}
	if got := due(3); !slices.Equal(got, want[:3]) {
		t.Fatalf("AccessDue, limit 3: %v, want %v", got, want[:3])
	}
	if got := due(0); got != nil {
		t.Fatalf("AccessDue, limit 0: %v", got)
	}
	// once the rows are swept (their dates cleared), none is due
	update(t, e, func(tx shelfmark.WriteTx) error {
		rows, err := tx.AccessDue(ctx, now, 100)
		if err != nil {
			return err
		}
		for _, r := range rows {
			r.Embargo, r.Lease, r.Version = nil, nil, r.Version+1
			if err := tx.UpdateResource(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if got := due(100); got != nil {
		t.Fatalf("AccessDue after the sweep: %v", got)
	}
}

// testSearchLease shows that search hides a work whose lease ended (it is
// private from then on, before any job rewrites its visibility), with its
// pages, its facet counts and a collection whose lease ended.
func testSearchLease(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	now := time.Now().UTC()
	create := func(nr *shelfmark.NewResource) *shelfmark.Resource {
		t.Helper()
		return rs(t)(e.repo.CreateResource(ctx, nr))
	}
	coll := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: metadata([]string{"Arctic papers"})})
	leasedColl := create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: metadata([]string{"Lent papers"})})
	in := []shelfmark.ID{coll.ID, leasedColl.ID}
	plain := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in, Metadata: metadata([]string{"Narwhals at rest"})})
	ended := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in, Metadata: metadata([]string{"Narwhals on a lease that ended"})})
	running := create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in, Metadata: metadata([]string{"Narwhals on a running lease"})})
	page := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: ended.ID})
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	lease := func(id shelfmark.ID, until time.Time) {
		t.Helper()
		update(t, e, func(tx shelfmark.WriteTx) error {
			r, err := tx.Resource(ctx, keyOf(t, id))
			if err != nil {
				return err
			}
			// a row of its own: its effective access is its own
			r.Lease, r.Effective.Lease, r.Version = &until, &until, r.Version+1
			return tx.UpdateResource(ctx, r)
		})
	}
	lease(ended.ID, now.Add(-time.Hour))
	lease(leasedColl.ID, now.Add(-time.Hour))
	lease(running.ID, now.Add(24*time.Hour))
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: keyOf(t, page.ID), Work: keyOf(t, ended.ID),
			Kind: shelfmark.KindFileSet, Format: "PDF", Body: "narwhals seen from the ice"}})
	})
	search := func(at time.Time) *shelfmark.SearchResult {
		t.Helper()
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: "narwhals", Facets: true, Now: at})
			return err
		})
		return res
	}
	res := search(now)
	want := sortedKeys(keyOf(t, plain.ID), keyOf(t, running.ID))
	if got := slices.Sorted(slices.Values(hitKeys(res.Hits))); !slices.Equal(got, want) {
		t.Fatalf("narwhals: hits %v, want %v (not the work whose lease ended, nor its page)", got, want)
	}
	if res.Total != 2 {
		t.Fatalf("narwhals: total %d, want 2", res.Total)
	}
	if want := []shelfmark.FacetCount{{Value: fmt.Sprint(keyOf(t, coll.ID)), Count: 2}}; !slices.Equal(res.Collections, want) {
		t.Fatalf("collection facet: %v, want %v (not the collection whose lease ended)", res.Collections, want)
	}
	// the running lease ends without a write
	res = search(now.Add(48 * time.Hour))
	if got := hitKeys(res.Hits); !slices.Equal(got, []int64{keyOf(t, plain.ID)}) {
		t.Fatalf("narwhals after the second lease ended: hits %v", got)
	}
}
