package shelfmark_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/argon2id"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countingHasher counts the password checks of a real hasher.
type countingHasher struct {
	shelfmark.PasswordHasher
	verifies atomic.Int64
}

func (h *countingHasher) Verify(pw, enc string) (bool, error) {
	h.verifies.Add(1)
	return h.PasswordHasher.Verify(pw, enc)
}

// acctEnv is an account service on a real store.
type acctEnv struct {
	store  shelfmark.Storage
	repo   *shelfmark.Repository
	acc    *shelfmark.Accounts
	clock  *clock
	hasher *countingHasher
	stmts  atomic.Int64 // statements run since the store opened
}

// backends runs fn on SQLite and, when SHELFMARK_TEST_DATABASE_URL is set,
// on PostgreSQL.
func backends(t *testing.T, fn func(t *testing.T, e *acctEnv)) {
	backendsWith(t, shelfmark.RepositoryOptions{}, fn)
}

// backendsWith is backends with the repository's options (its clock is the
// environment's).
func backendsWith(t *testing.T, opts shelfmark.RepositoryOptions, fn func(t *testing.T, e *acctEnv)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := &acctEnv{clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
			tracer := func(string, int64) { e.stmts.Add(1) }
			var store shelfmark.Storage
			var err error
			ctx := context.Background()
			if name == "sqlite" {
				store, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), sqlite.Options{Tracer: tracer})
			} else {
				store, err = postgres.Open(ctx, testkit.PostgresSchema(t), postgres.Options{Tracer: tracer})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			e.store = store
			h, err := argon2id.New(argon2id.Params{Memory: 64, Time: 1, Threads: 1}, 0)
			if err != nil {
				t.Fatal(err)
			}
			e.hasher = &countingHasher{PasswordHasher: h}
			opts.Now = e.clock.now
			e.repo = shelfmark.NewRepository(store, opts)
			t.Cleanup(func() { e.repo.Close() })
			e.acc = shelfmark.NewAccounts(e.repo, shelfmark.AccountsOptions{Hasher: e.hasher, Now: e.clock.now})
			fn(t, e)
		})
	}
}

// as is a context of the caller c.
func as(c *shelfmark.Caller) context.Context {
	return shelfmark.WithCaller(context.Background(), c)
}

// wantCode fails unless err has the code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if shelfmark.ErrorCode(err) != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// user adds a user as the system and returns a caller for it, through a
// token of the scope.
func (e *acctEnv) user(t *testing.T, name string, admin bool, scope shelfmark.Scope, groups ...string) *shelfmark.Caller {
	t.Helper()
	ctx := context.Background()
	if _, err := e.acc.AddUser(ctx, name, "", admin, groups); err != nil {
		t.Fatal(err)
	}
	secret, _, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: name, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.acc.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokens(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		if _, err := e.acc.AddUser(ctx, "alice", "", false, []string{"staff", "maps", "staff"}); err != nil {
			t.Fatal(err)
		}
		exp := e.clock.now().Add(90 * 24 * time.Hour)
		secret, tok, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice", Scope: shelfmark.ScopeRead, Note: "harvester", Expires: &exp})
		if err != nil {
			t.Fatal(err)
		}
		if len(secret) != 50 || !strings.HasPrefix(secret, shelfmark.TokenPrefix) || tok.Hint != secret[:10] {
			t.Fatalf("secret %q (hint %q): want smk_ + 46 characters, hinted by its first 10", secret, tok.Hint)
		}
		c, err := e.acc.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "alice" || c.User == 0 || c.Admin || c.Scope != shelfmark.ScopeRead || c.Token != tok.Key ||
			strings.Join(c.Groups, ",") != "maps,staff" {
			t.Fatalf("caller %+v", c)
		}
		// the second check is answered from memory
		before := e.stmts.Load()
		if _, err := e.acc.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if n := e.stmts.Load() - before; n != 0 {
			t.Fatalf("a remembered token cost %d statements", n)
		}
		// malformed secrets are refused without a database read
		flip := []byte(secret) // one character changed: the checksum no longer matches
		if flip[20] == 'A' {
			flip[20] = 'B'
		} else {
			flip[20] = 'A'
		}
		for _, bad := range []string{"", "smk_", "ghp_" + secret[4:], secret + "0", secret[:49], string(flip),
			strings.Replace(secret, secret[10:11], "!", 1)} {
			before := e.stmts.Load()
			_, err := e.acc.Authenticate(ctx, bad)
			wantCode(t, err, shelfmark.EUNAUTHORIZED, "malformed "+bad)
			if n := e.stmts.Load() - before; n != 0 {
				t.Fatalf("the malformed token %q cost %d statements", bad, n)
			}
		}
		// well formed but unknown: the same answer
		other, _, _ := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice"})
		c4 := "A"
		if other[4] == 'A' {
			c4 = "B"
		}
		forged := other[:4] + c4 + other[5:44]
		_, err = e.acc.Authenticate(ctx, forged+checksumOf(forged))
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "unknown token")
		msg := shelfmark.ErrorMessage(err)

		// listing shows no hashes
		ts, err := e.acc.Tokens(ctx, "alice")
		if err != nil || len(ts) != 2 {
			t.Fatalf("Tokens = %v, %v", ts, err)
		}
		for _, tk := range ts {
			if tk.Hash != nil {
				t.Fatal("Tokens returned a hash")
			}
		}

		// revoked: refused at once, though remembered
		if err := e.acc.RevokeToken(ctx, "alice", tok.Key); err != nil {
			t.Fatal(err)
		}
		_, err = e.acc.Authenticate(ctx, secret)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "revoked token")
		if shelfmark.ErrorMessage(err) != msg {
			t.Fatalf("revoked: %q, unknown: %q: the answers differ", shelfmark.ErrorMessage(err), msg)
		}
		wantCode(t, e.acc.RevokeToken(ctx, "alice", tok.Key), shelfmark.ENOTFOUND, "revoke twice")

		// expired
		exp2 := e.clock.now().Add(time.Hour)
		s2, _, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice", Expires: &exp2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.acc.Authenticate(ctx, s2); err != nil {
			t.Fatal(err)
		}
		e.clock.add(time.Hour)
		_, err = e.acc.Authenticate(ctx, s2)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "expired token")
		if shelfmark.ErrorMessage(err) != msg {
			t.Fatal("expired and unknown tokens answer differently")
		}
		past := e.clock.now().Add(-time.Second)
		_, _, err = e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice", Expires: &past})
		wantCode(t, err, shelfmark.EINVALID, "expiry in the past")

		// a disabled user's tokens stop at once, and work again once enabled
		if _, err := e.acc.Authenticate(ctx, other); err != nil {
			t.Fatal(err)
		}
		if err := e.acc.SetDisabled(ctx, "alice", true); err != nil {
			t.Fatal(err)
		}
		_, err = e.acc.Authenticate(ctx, other)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "disabled user's token")
		if shelfmark.ErrorMessage(err) != msg {
			t.Fatal("a disabled user's token and an unknown token answer differently")
		}
		if err := e.acc.SetDisabled(ctx, "alice", false); err != nil {
			t.Fatal(err)
		}
		if _, err := e.acc.Authenticate(ctx, other); err != nil {
			t.Fatal(err)
		}
		// group changes reach the caller at once
		if err := e.acc.SetGroups(ctx, "alice", []string{"rare-books"}); err != nil {
			t.Fatal(err)
		}
		c, err = e.acc.Authenticate(ctx, other)
		if err != nil || strings.Join(c.Groups, ",") != "rare-books" {
			t.Fatalf("after SetGroups: %+v, %v", c, err)
		}
	})
}

// checksumOf is the checksum a token with this body ends with, computed
// as the format is documented (base62 CRC-32 IEEE, 6 characters), so that
// the test can forge a well-formed token that was never issued.
func checksumOf(body string) string {
	const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out)
}

func TestTokenPermissions(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		admin := e.user(t, "root", true, shelfmark.ScopeAdmin)
		adminWrite := e.user(t, "root2", true, shelfmark.ScopeWrite)
		alice := e.user(t, "alice", false, shelfmark.ScopeWrite)
		reader := e.user(t, "bob", false, shelfmark.ScopeRead)

		// a user mints its own tokens, up to its scope
		if _, _, err := e.acc.CreateToken(as(alice), shelfmark.NewToken{Scope: shelfmark.ScopeRead}); err != nil {
			t.Fatal(err)
		}
		_, _, err := e.acc.CreateToken(as(alice), shelfmark.NewToken{Scope: shelfmark.ScopeAdmin})
		wantCode(t, err, shelfmark.EFORBIDDEN, "a non-admin mints an admin token")
		_, _, err = e.acc.CreateToken(as(reader), shelfmark.NewToken{Scope: shelfmark.ScopeWrite})
		wantCode(t, err, shelfmark.EFORBIDDEN, "a read-scoped caller mints a write token")
		if _, _, err := e.acc.CreateToken(as(reader), shelfmark.NewToken{Scope: shelfmark.ScopeRead}); err != nil {
			t.Fatal(err)
		}
		_, _, err = e.acc.CreateToken(as(alice), shelfmark.NewToken{User: "bob"})
		wantCode(t, err, shelfmark.EFORBIDDEN, "a token for someone else")
		_, _, err = e.acc.CreateToken(as(shelfmark.Anonymous()), shelfmark.NewToken{User: "bob"})
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "an anonymous caller mints")
		_, _, err = e.acc.CreateToken(as(adminWrite), shelfmark.NewToken{User: "bob"})
		wantCode(t, err, shelfmark.EFORBIDDEN, "an admin with a write token mints for another")
		// an admin mints for anyone, but an admin scope only for admins
		if _, _, err := e.acc.CreateToken(as(admin), shelfmark.NewToken{User: "bob", Scope: shelfmark.ScopeWrite}); err != nil {
			t.Fatal(err)
		}
		_, _, err = e.acc.CreateToken(as(admin), shelfmark.NewToken{User: "bob", Scope: shelfmark.ScopeAdmin})
		wantCode(t, err, shelfmark.EINVALID, "an admin token for a non-admin")
		_, _, err = e.acc.CreateToken(as(admin), shelfmark.NewToken{User: "nobody"})
		wantCode(t, err, shelfmark.ENOTFOUND, "a token for an unknown user")
		_, _, err = e.acc.CreateToken(as(admin), shelfmark.NewToken{User: "bob", Scope: "root"})
		wantCode(t, err, shelfmark.EINVALID, "an unknown scope")
		// tokens of others: listed and revoked by admins only
		_, err = e.acc.Tokens(as(alice), "bob")
		wantCode(t, err, shelfmark.EFORBIDDEN, "alice lists bob's tokens")
		bobs, err := e.acc.Tokens(as(admin), "bob")
		if err != nil || len(bobs) != 3 {
			t.Fatalf("bob's tokens: %v, %v", bobs, err)
		}
		wantCode(t, e.acc.RevokeToken(as(alice), "bob", bobs[0].Key), shelfmark.EFORBIDDEN, "alice revokes bob's token")
		wantCode(t, e.acc.RevokeToken(as(alice), "alice", bobs[0].Key), shelfmark.ENOTFOUND, "alice revokes bob's token as hers")
		if err := e.acc.RevokeToken(as(admin), "bob", bobs[0].Key); err != nil {
			t.Fatal(err)
		}
		// a user revokes its own token (signing out)
		if err := e.acc.RevokeToken(as(alice), "", alice.Token); err != nil {
			t.Fatal(err)
		}

		// account administration
		_, err = e.acc.AddUser(as(alice), "carol", "", false, nil)
		wantCode(t, err, shelfmark.EFORBIDDEN, "a non-admin adds a user")
		_, err = e.acc.AddUser(as(shelfmark.Anonymous()), "carol", "", false, nil)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "an anonymous caller adds a user")
		_, err = e.acc.AddUser(as(adminWrite), "carol", "", false, nil)
		wantCode(t, err, shelfmark.EFORBIDDEN, "an admin with a write token adds a user")
		_, err = e.acc.Users(as(alice), 0, 10)
		wantCode(t, err, shelfmark.EFORBIDDEN, "a non-admin lists users")
		wantCode(t, e.acc.SetDisabled(as(alice), "bob", true), shelfmark.EFORBIDDEN, "a non-admin disables")
		wantCode(t, e.acc.SetGroups(as(alice), "alice", []string{"admins"}), shelfmark.EFORBIDDEN, "a non-admin sets groups")
		if _, err := e.acc.AddUser(as(admin), "carol", "", false, nil); err != nil {
			t.Fatal(err)
		}
		_, err = e.acc.AddUser(as(admin), "carol", "", false, nil)
		wantCode(t, err, shelfmark.ECONFLICT, "a taken name")
		for _, bad := range []string{"", "-rf", "a b", "user:x", strings.Repeat("x", 65), "é"} {
			_, err = e.acc.AddUser(as(admin), bad, "", false, nil)
			wantCode(t, err, shelfmark.EINVALID, "user name "+bad)
		}
		_, err = e.acc.AddUser(as(admin), "dave", "", false, []string{"a:b"})
		wantCode(t, err, shelfmark.EINVALID, "group name a:b")
		_, err = e.acc.AddUser(as(admin), "dave", "short", false, nil)
		wantCode(t, err, shelfmark.EINVALID, "a short password")
		wantCode(t, e.acc.SetDisabled(as(admin), "root", true), shelfmark.ECONFLICT, "an admin disables itself")
		us, err := e.acc.Users(as(admin), 0, 100)
		if err != nil || len(us) != 5 {
			t.Fatalf("Users = %d users, %v", len(us), err)
		}

		// denied writes are in the audit trail
		entries, err := e.acc.Audit(as(admin), shelfmark.AuditQuery{Actor: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		denied := 0
		for _, en := range entries {
			if en.Outcome == shelfmark.AuditDenied {
				denied++
			}
		}
		if denied < 5 {
			t.Fatalf("%d denied entries of alice, want at least 5: %+v", denied, entries)
		}
	})
}

func TestLogin(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		if _, err := e.acc.AddUser(ctx, "alice", "correct horse", false, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.acc.AddUser(ctx, "root", "admin password", true, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.acc.AddUser(ctx, "tokenonly", "", false, nil); err != nil {
			t.Fatal(err)
		}
		secret, c, err := e.acc.Login(ctx, "alice", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "alice" || c.Scope != shelfmark.ScopeWrite || c.Token == 0 {
			t.Fatalf("session caller %+v", c)
		}
		if c2, err := e.acc.Authenticate(ctx, secret); err != nil || c2.Token != c.Token {
			t.Fatalf("Authenticate(session) = %+v, %v", c2, err)
		}
		if _, c, err := e.acc.Login(ctx, "root", "admin password"); err != nil || c.Scope != shelfmark.ScopeAdmin || !c.IsAdmin() {
			t.Fatalf("admin session %+v, %v", c, err)
		}
		// sessions are not listed with API tokens, and end after 12 h
		if ts, _ := e.acc.Tokens(ctx, "alice"); len(ts) != 0 {
			t.Fatalf("alice's API tokens: %d, want 0", len(ts))
		}
		e.clock.add(12 * time.Hour)
		_, err = e.acc.Authenticate(ctx, secret)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "an expired session")

		// every failure: one password check, one answer
		var msg string
		for i, try := range [][2]string{{"alice", "wrong horse"}, {"nobody", "correct horse"}, {"tokenonly", ""},
			{"tokenonly", "anything at all"}, {"bad name!", "x"}, {"", ""}} {
			before := e.hasher.verifies.Load()
			_, _, err := e.acc.Login(ctx, try[0], try[1])
			wantCode(t, err, shelfmark.EUNAUTHORIZED, fmt.Sprintf("login %q/%q", try[0], try[1]))
			if i == 0 {
				msg = shelfmark.ErrorMessage(err)
			} else if shelfmark.ErrorMessage(err) != msg {
				t.Fatalf("login %q: %q, want the same answer as a wrong password (%q)", try[0], shelfmark.ErrorMessage(err), msg)
			}
			if n := e.hasher.verifies.Load() - before; n != 1 {
				t.Fatalf("login %q checked %d passwords, want 1 (the same work as a known user)", try[0], n)
			}
		}
		if err := e.acc.SetDisabled(ctx, "alice", true); err != nil {
			t.Fatal(err)
		}
		_, _, err = e.acc.Login(ctx, "alice", "correct horse")
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "a disabled user logs in")
		if shelfmark.ErrorMessage(err) != msg {
			t.Fatal("a disabled user's login answers differently")
		}
		entries, err := e.acc.Audit(ctx, shelfmark.AuditQuery{})
		if err != nil {
			t.Fatal(err)
		}
		ok, failed := 0, 0
		for _, en := range entries {
			if en.Action == "login" {
				switch en.Outcome {
				case shelfmark.AuditOK:
					ok++
				case shelfmark.AuditFailed:
					failed++
				}
			}
		}
		if ok != 2 || failed != 7 {
			t.Fatalf("audit: %d logins, %d failed; want 2 and 7", ok, failed)
		}

		// single sign-on: created on first sign-in, groups replaced
		_, c, err = e.acc.LoginExternal(ctx, "carol", []string{"staff"})
		if err != nil || c.Name != "carol" || c.Admin || strings.Join(c.Groups, ",") != "staff" {
			t.Fatalf("LoginExternal = %+v, %v", c, err)
		}
		_, c, err = e.acc.LoginExternal(ctx, "carol", []string{"maps"})
		if err != nil || strings.Join(c.Groups, ",") != "maps" {
			t.Fatalf("LoginExternal again = %+v, %v", c, err)
		}
		_, _, err = e.acc.LoginExternal(ctx, "alice", nil)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "single sign-on of a disabled user")
	})
}

func TestRoles(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		admin := e.user(t, "root", true, shelfmark.ScopeAdmin)
		alice := e.user(t, "alice", false, shelfmark.ScopeWrite)
		bob := e.user(t, "bob", false, shelfmark.ScopeWrite, "staff")
		aliceRead := e.user(t, "alice2", false, shelfmark.ScopeRead)
		top, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{top.ID}})
		if err != nil {
			t.Fatal(err)
		}
		hidden, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private})
		if err != nil {
			t.Fatal(err)
		}
		work, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		grant := func(p string, r shelfmark.Role) shelfmark.Grant { return shelfmark.Grant{Principal: p, Role: r} }

		// nobody but admins before a grant
		_, err = e.acc.Roles(as(alice), top.ID)
		wantCode(t, err, shelfmark.EFORBIDDEN, "alice reads roles without one")
		_, err = e.acc.Roles(as(shelfmark.Anonymous()), top.ID)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "anonymous reads roles")
		_, err = e.acc.Roles(as(alice), hidden.ID)
		wantCode(t, err, shelfmark.ENOTFOUND, "roles of a collection alice cannot see")
		_, err = e.acc.Roles(as(admin), work.ID)
		wantCode(t, err, shelfmark.EINVALID, "roles of a work")
		_, err = e.acc.Roles(as(admin), shelfmark.ID("bcdfghjkm"))
		wantCode(t, err, shelfmark.ENOTFOUND, "roles of a malformed id")

		if err := e.acc.SetRoles(as(admin), top.ID, []shelfmark.Grant{grant("user:alice", shelfmark.RoleManager),
			grant("group:staff", shelfmark.RoleCurator), grant("user:alice2", shelfmark.RoleManager)}); err != nil {
			t.Fatal(err)
		}
		gs, err := e.acc.Roles(as(alice), top.ID)
		if err != nil || len(gs) != 3 {
			t.Fatalf("Roles = %v, %v", gs, err)
		}
		// inherited: a manager of top manages sub
		if err := e.acc.SetRoles(as(alice), sub.ID, []shelfmark.Grant{grant("user:bob", shelfmark.RoleManager)}); err != nil {
			t.Fatal(err)
		}
		// a curator may not grant roles; a read-scoped manager may not either
		wantCode(t, e.acc.SetRoles(as(bob), top.ID, []shelfmark.Grant{grant("user:bob", shelfmark.RoleManager)}),
			shelfmark.EFORBIDDEN, "a curator grants roles")
		wantCode(t, e.acc.SetRoles(as(aliceRead), top.ID, []shelfmark.Grant{grant("user:alice2", shelfmark.RoleManager)}),
			shelfmark.EFORBIDDEN, "a read-scoped manager grants roles")
		// repository roles: admins only
		wantCode(t, e.acc.SetRoles(as(alice), "", []shelfmark.Grant{grant("user:alice", shelfmark.RoleManager)}),
			shelfmark.EFORBIDDEN, "alice grants repository roles")
		if err := e.acc.SetRoles(as(admin), "", []shelfmark.Grant{grant("group:staff", shelfmark.RoleDepositor)}); err != nil {
			t.Fatal(err)
		}
		// bad grants
		wantCode(t, e.acc.SetRoles(as(alice), top.ID, []shelfmark.Grant{grant("user:alice", "owner")}), shelfmark.EINVALID, "unknown role")
		wantCode(t, e.acc.SetRoles(as(alice), top.ID, []shelfmark.Grant{grant("alice", shelfmark.RoleManager)}), shelfmark.EINVALID, "bare principal")
		wantCode(t, e.acc.SetRoles(as(alice), top.ID, []shelfmark.Grant{grant("user:alice", shelfmark.RoleManager), grant("user:zed", shelfmark.RoleViewer)}),
			shelfmark.EINVALID, "unknown user")
		wantCode(t, e.acc.SetRoles(as(alice), hidden.ID, nil), shelfmark.ENOTFOUND, "roles of a hidden collection")
		// the last manager stays
		wantCode(t, e.acc.SetRoles(as(alice), top.ID, []shelfmark.Grant{grant("group:staff", shelfmark.RoleCurator)}),
			shelfmark.ECONFLICT, "removing every manager")
		if err := e.acc.SetRoles(as(alice), top.ID, []shelfmark.Grant{grant("user:alice", shelfmark.RoleManager)}); err != nil {
			t.Fatal(err)
		}

		// audit: admins everything, managers their collection
		all, err := e.acc.Audit(as(admin), shelfmark.AuditQuery{})
		if err != nil || len(all) == 0 {
			t.Fatalf("Audit(admin) = %d, %v", len(all), err)
		}
		topKey, _ := e.repo.IDs().Key(top.ID)
		mine, err := e.acc.Audit(as(alice), shelfmark.AuditQuery{Resource: topKey})
		if err != nil {
			t.Fatal(err)
		}
		okRoles, deniedRoles := 0, 0
		for _, en := range mine {
			if en.Resource != topKey {
				t.Fatalf("a manager's audit query returned an entry about %d", en.Resource)
			}
			if en.Action == "roles" && en.Outcome == shelfmark.AuditOK {
				okRoles++
			}
			if en.Action == "roles" && en.Outcome == shelfmark.AuditDenied {
				deniedRoles++
			}
		}
		if okRoles != 2 || deniedRoles != 2 {
			t.Fatalf("top's trail: %d role changes, %d refused; want 2 and 2", okRoles, deniedRoles)
		}
		_, err = e.acc.Audit(as(alice), shelfmark.AuditQuery{})
		wantCode(t, err, shelfmark.EFORBIDDEN, "alice reads the whole trail")
		subKey, _ := e.repo.IDs().Key(sub.ID)
		_, err = e.acc.Audit(as(bob), shelfmark.AuditQuery{Resource: topKey})
		wantCode(t, err, shelfmark.EFORBIDDEN, "a curator reads the trail")
		if _, err := e.acc.Audit(as(bob), shelfmark.AuditQuery{Resource: subKey}); err != nil {
			t.Fatalf("the manager of sub reads its trail: %v", err)
		}
	})
}

func TestEnsureAdmin(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		made, err := e.acc.EnsureAdmin(ctx)
		if err != nil || !made {
			t.Fatalf("EnsureAdmin on an empty store = %v, %v", made, err)
		}
		made, err = e.acc.EnsureAdmin(ctx)
		if err != nil || made {
			t.Fatalf("EnsureAdmin again = %v, %v", made, err)
		}
		secret, _, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Scope: shelfmark.ScopeAdmin})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.acc.Authenticate(ctx, secret)
		if err != nil || !c.IsAdmin() {
			t.Fatalf("the first admin's token: %+v, %v", c, err)
		}
	})
}

// TestCacheWindow: a token revoked through another process (another
// Accounts on the same store) keeps working here until CacheTTL passes,
// and no longer.
func TestCacheWindow(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		if _, err := e.acc.AddUser(ctx, "alice", "", false, nil); err != nil {
			t.Fatal(err)
		}
		secret, tok, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.acc.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		other := shelfmark.NewAccounts(e.repo, shelfmark.AccountsOptions{Hasher: e.hasher, Now: e.clock.now})
		if err := other.RevokeToken(ctx, "alice", tok.Key); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Authenticate(ctx, secret); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
			t.Fatalf("the revoking process accepts the token: %v", err)
		}
		e.clock.add(9 * time.Second)
		if _, err := e.acc.Authenticate(ctx, secret); err != nil {
			t.Fatalf("within the cache window: %v", err)
		}
		e.clock.add(time.Second)
		_, err = e.acc.Authenticate(ctx, secret)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "after the cache window")
	})
}

// TestSetPassword: an administrator sets a new password; the old one stops
// working and so do the user's open sessions, its API tokens do not.
func TestSetPassword(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		if _, err := e.acc.AddUser(ctx, "alice", "correct horse", false, nil); err != nil {
			t.Fatal(err)
		}
		session, _, err := e.acc.Login(ctx, "alice", "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		token, _, err := e.acc.CreateToken(ctx, shelfmark.NewToken{User: "alice", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeWrite})
		if err != nil {
			t.Fatal(err)
		}
		alice := shelfmark.WithCaller(ctx, &shelfmark.Caller{User: 1, Name: "alice", Scope: shelfmark.ScopeWrite})
		wantCode(t, e.acc.SetPassword(alice, "alice", "battery staple"), shelfmark.EFORBIDDEN, "a user sets a password")
		wantCode(t, e.acc.SetPassword(ctx, "alice", "short"), shelfmark.EINVALID, "a short password")
		if err := e.acc.SetPassword(ctx, "alice", "battery staple"); err != nil {
			t.Fatal(err)
		}
		_, _, err = e.acc.Login(ctx, "alice", "correct horse")
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "the old password")
		if _, _, err := e.acc.Login(ctx, "alice", "battery staple"); err != nil {
			t.Fatalf("the new password: %v", err)
		}
		_, err = e.acc.Authenticate(ctx, session)
		wantCode(t, err, shelfmark.EUNAUTHORIZED, "a session opened with the old password")
		if _, err := e.acc.Authenticate(ctx, token); err != nil {
			t.Fatalf("the API token after a password change: %v", err)
		}
	})
}
