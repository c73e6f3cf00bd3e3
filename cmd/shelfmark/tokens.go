package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
)

func newTokenCommand() *cobra.Command {
	var db accountsDB
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke API tokens",
		Long: `Manage API tokens on the database directly (--data / --database), as the
system: this is how the first administrator gets a token, and it works on a
stopped server. Clients send a token as "Authorization: Bearer TOKEN".

  shelfmark token create --user admin                      the token is the last line of output
  shelfmark token create --user alice --scope read --expires 90d --note harvester
  shelfmark token list --user alice
  shelfmark token revoke --user alice 12

A token is shown once, when it is made; only its hash is stored. Tokens
begin with ` + shelfmark.TokenPrefix + ` and end with a checksum, so that secret scanners
recognise leaked ones.`,
	}
	db.register(cmd.PersistentFlags())
	var user, scope, expires, note string
	create := &cobra.Command{Use: "create", Short: "Create a token and print it (alone, on the last line)", Args: cobra.NoArgs,
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, _ []string) error {
			u, err := e.acc.User(ctx, user)
			if err != nil {
				return err
			}
			nt := shelfmark.NewToken{User: user, Scope: shelfmark.Scope(scope), Note: note}
			if scope == "" {
				// an administrator's token administers; others write
				nt.Scope = shelfmark.ScopeWrite
				if u.Admin {
					nt.Scope = shelfmark.ScopeAdmin
				}
			}
			if expires != "" {
				at, err := parseExpiry(expires, time.Now())
				if err != nil {
					return fmt.Errorf("--expires: %w", err)
				}
				nt.Expires = &at
			}
			secret, tok, err := e.acc.CreateToken(ctx, nt)
			if err != nil {
				return err
			}
			until := "never expires"
			if tok.Expires != nil {
				until = "expires " + tok.Expires.UTC().Format(time.RFC3339)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "token %d of %s: scope %s, %s; it is shown only now:\n", tok.Key, user, tok.Scope, until)
			_, err = fmt.Fprintln(out, secret)
			return err
		})}
	create.Flags().StringVar(&user, "user", "", "the user the token acts as (required)")
	create.Flags().StringVar(&scope, "scope", "", "read, write or admin (default: admin for administrators, write for others)")
	create.Flags().StringVar(&expires, "expires", "", "lifetime (90d, 12h) or date (2027-01-31, RFC 3339); default: never")
	create.Flags().StringVar(&note, "note", "", "what the token is for (shown by token list)")
	_ = create.MarkFlagRequired("user")

	var listUser string
	list := &cobra.Command{Use: "list", Short: "List a user's API tokens", Args: cobra.NoArgs,
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, _ []string) error {
			ts, err := e.acc.Tokens(ctx, listUser)
			if err != nil {
				return err
			}
			return printTokens(ts, time.Now(), cmd.OutOrStdout())
		})}
	list.Flags().StringVar(&listUser, "user", "", "whose tokens (required)")
	_ = list.MarkFlagRequired("user")

	var revokeUser string
	revoke := &cobra.Command{Use: "revoke --user NAME KEY", Short: "Revoke a token (KEY as token list shows it)", Args: cobra.ExactArgs(1),
		RunE: db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, args []string) error {
			key, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || key <= 0 {
				return fmt.Errorf("%q is not a token key (the number token list shows)", args[0])
			}
			if err := e.acc.RevokeToken(ctx, revokeUser, key); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked token %d of %s (servers that checked it in the last %s may accept it until then)\n", key, revokeUser, cacheWindow)
			return nil
		})}
	revoke.Flags().StringVar(&revokeUser, "user", "", "whose token (required)")
	_ = revoke.MarkFlagRequired("user")
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// parseExpiry reads a lifetime in days, hours or minutes (90d, 12h, 30m,
// or any Go duration) or a date (2027-01-31, at midnight UTC) or time
// (RFC 3339).
func parseExpiry(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return time.Time{}, fmt.Errorf("%q is not a number of days", s)
		}
		return now.AddDate(0, 0, n), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q is not a positive lifetime", s)
		}
		return now.Add(d), nil
	}
	if t, err := parseTime(s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a lifetime (90d, 12h) nor a date (2027-01-31 or RFC 3339)", s)
}

// parseTime reads a date (midnight UTC) or an RFC 3339 time.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse(time.DateOnly, s)
}

// printTokens lists tokens.
func printTokens(ts []*shelfmark.Token, now time.Time, w io.Writer) error {
	if len(ts) == 0 {
		_, err := fmt.Fprintln(w, "no tokens")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSTARTS\tSCOPE\tSTATE\tCREATED\tEXPIRES\tNOTE")
	for _, t := range ts {
		state := "valid"
		switch {
		case t.Revoked != nil:
			state = "revoked " + t.Revoked.UTC().Format(time.DateOnly)
		case t.Expires != nil && !now.Before(*t.Expires):
			state = "expired"
		}
		exp := "never"
		if t.Expires != nil {
			exp = t.Expires.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s…\t%s\t%s\t%s\t%s\t%s\n", t.Key, t.Hint, t.Scope, state, t.Created.UTC().Format(time.RFC3339), exp, t.Note)
	}
	return tw.Flush()
}
