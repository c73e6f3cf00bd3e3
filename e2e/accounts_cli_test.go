package e2e

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/argon2id"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestAccountsCLI: user add, token create (its last line is a token the
// service accepts), user disable (the token is then refused), audit.
func TestAccountsCLI(t *testing.T) {
	data := t.TempDir()
	ctx := context.Background()
	// a repository, as serve leaves it
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()

	if _, ok := runShelfmark(t, "", "user", "add", "alice", "--group", "staff", "--data", data); !ok {
		t.Fatal("user add failed")
	}
	if _, ok := runShelfmark(t, "", "user", "add", "alice", "--data", data); ok {
		t.Fatal("adding alice twice succeeded")
	}
	if _, ok := runShelfmark(t, "short\n", "user", "add", "bob", "--password-stdin", "--data", data); ok {
		t.Fatal("a 5-character password was accepted")
	}
	if _, ok := runShelfmark(t, "correct horse\n", "user", "add", "bob", "--password-stdin", "--data", data); !ok {
		t.Fatal("user add --password-stdin failed")
	}
	out, ok := runShelfmark(t, "", "token", "create", "--user", "alice", "--scope", "read", "--expires", "90d", "--note", "harvester", "--data", data)
	if !ok {
		t.Fatal("token create failed")
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	secret := lines[len(lines)-1]
	if _, ok := runShelfmark(t, "", "token", "create", "--user", "alice", "--scope", "admin", "--data", data); ok {
		t.Fatal("an admin-scoped token for a non-admin was created")
	}

	authenticate := func() (*shelfmark.Caller, error) {
		store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		ids, err := shelfmark.LoadIDCodec(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
		defer repo.Close()
		h, _ := argon2id.New(argon2id.Params{Memory: 64, Time: 1, Threads: 1}, 0)
		if _, _, err := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Hasher: h}).Login(ctx, "bob", "correct horse"); err != nil {
			t.Fatalf("bob's password from --password-stdin: %v", err)
		}
		return shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Hasher: h}).Authenticate(ctx, secret)
	}
	c, err := authenticate()
	if err != nil {
		t.Fatalf("the token printed last (%q) is refused: %v", secret, err)
	}
	if c.Name != "alice" || c.Scope != shelfmark.ScopeRead || !c.InGroup("staff") {
		t.Fatalf("the token's caller: %+v", c)
	}
	if out, ok := runShelfmark(t, "", "token", "list", "--user", "alice", "--data", data); !ok || !strings.Contains(out, "harvester") || strings.Contains(out, secret) {
		t.Fatal("token list does not show the token's note, or shows its secret")
	}

	if _, ok := runShelfmark(t, "", "user", "disable", "alice", "--data", data); !ok {
		t.Fatal("user disable failed")
	}
	if _, err := authenticate(); shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
		t.Fatalf("a disabled user's token: %v, want unauthorized", err)
	}
	if out, ok := runShelfmark(t, "", "group", "add", "bob", "maps", "--data", data); !ok || !strings.Contains(out, "maps") {
		t.Fatal("group add failed")
	}
	if out, ok := runShelfmark(t, "", "user", "list", "--data", data); !ok || !strings.Contains(out, "DISABLED") || !strings.Contains(out, "maps") {
		t.Fatal("user list does not show alice disabled and bob in maps")
	}

	out, ok = runShelfmark(t, "", "audit", "--data", data)
	if !ok {
		t.Fatal("audit failed")
	}
	for _, want := range []string{"user.add", "token.create", "user.disable", "user.groups", "system:cli", "login"} {
		if !strings.Contains(out, want) {
			t.Errorf("the audit trail has no %q:\n%s", want, out)
		}
	}
	if out, ok := runShelfmark(t, "", "audit", "--actor", "nobody", "--data", data); !ok || strings.TrimSpace(out) != "no entries" {
		t.Fatalf("audit --actor nobody: %q", out)
	}
	if out, ok := runShelfmark(t, "", "audit", "--limit", "2", "--data", data); !ok || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 {
		t.Fatalf("audit --limit 2 printed %q", out)
	}
}

// TestFirstAdmin: the first start creates the administrator and says how
// to get its token; later starts say nothing.
func TestFirstAdmin(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	defer repo.Close()
	var hint bytes.Buffer
	acc, err := setup.NewAccounts(ctx, repo, data, "", slog.Default(), &hint)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shelfmark token create --user admin --data " + data, "shelfmark user password admin --data " + data} {
		if !strings.Contains(hint.String(), want) {
			t.Fatalf("the first start said %q; want it to say %q", hint.String(), want)
		}
	}
	u, err := acc.User(ctx, "admin")
	if err != nil || !u.Admin {
		t.Fatalf("the first administrator: %+v, %v", u, err)
	}
	if tok := adminToken(t, data); !strings.HasPrefix(tok, shelfmark.TokenPrefix) {
		t.Fatalf("adminToken = %q", tok)
	}
	hint.Reset()
	if _, err := setup.NewAccounts(ctx, repo, data, "", slog.Default(), &hint); err != nil || hint.Len() != 0 {
		t.Fatalf("a second start said %q (%v)", hint.String(), err)
	}
	if got := setup.ShellQuote("/tmp/my data"); got != "'/tmp/my data'" {
		t.Fatalf("setup.ShellQuote = %s", got)
	}
	if got := setup.RedactURL("postgres://u:secret@db/x"); strings.Contains(got, "secret") {
		t.Fatalf("setup.RedactURL kept the password: %s", got)
	}
}

// storeAdminToken is adminToken for the repository OpenStorage opens from
// database (empty: the SQLite store in data).
func storeAdminToken(t testing.TB, database, data string) string {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), database, data, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return testkit.AdminToken(t, store)
}
