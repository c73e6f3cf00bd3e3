package testkit

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// AdminToken returns an admin-scoped token of the administrator of store
// (created if the store has no users yet), as `shelfmark token create
// --user admin` would print it; tests of a running server send it as
// "Authorization: Bearer …". It writes to store as the system.
func AdminToken(t testing.TB, store shelfmark.Storage) string {
	t.Helper()
	ctx := context.Background()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	defer repo.Close()
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		t.Fatal(err)
	}
	secret, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Scope: shelfmark.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}
