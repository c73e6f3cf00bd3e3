package setup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/argon2id"
)

// NewAccounts is the account service of a server. On a store without
// users it creates the administrator "admin" and says once, on hint
// (standard error), how to get its token.
func NewAccounts(ctx context.Context, repo *shelfmark.Repository, data, database string, log *slog.Logger, hint io.Writer) (*shelfmark.Accounts, error) {
	hasher, err := argon2id.New(argon2id.DefaultParams(), 0)
	if err != nil {
		return nil, err
	}
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Hasher: hasher, Logger: log})
	made, err := acc.EnsureAdmin(ctx)
	if err != nil {
		return nil, err
	}
	if made {
		where := "--data " + ShellQuote(data)
		if database != "" {
			where = "--database " + ShellQuote(RedactURL(database))
		}
		fmt.Fprintf(hint, `
This is a new repository: its administrator is the user "admin". Get its API token with

  shelfmark token create --user admin %s

and send it as "Authorization: Bearer TOKEN". To sign in to the web interface, give it a
password (read from standard input):

  shelfmark user password admin %s

Anonymous clients can read what is public.

`, where, where)
	}
	return acc, nil
}

// RedactURL hides a password in a database URL.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
