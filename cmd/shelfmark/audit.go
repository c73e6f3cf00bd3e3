package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
)

func newAuditCommand() *cobra.Command {
	var db accountsDB
	var resource, actor, after string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print the audit trail, newest first",
		Long: `Print the audit trail of the repository (--data / --database), newest first:
who did what, to which resource, when, with which outcome (ok, denied,
failed). Every write, failed login and refused write is in it.

  shelfmark audit --limit 20
  shelfmark audit --resource 3qm5k7b2x --after 2026-01-01
  shelfmark audit --actor alice`,
		Args: cobra.NoArgs,
	}
	db.register(cmd.Flags())
	cmd.Flags().StringVar(&resource, "resource", "", "only entries about this resource (its id)")
	cmd.Flags().StringVar(&actor, "actor", "", "only entries of this actor (a user name, anonymous, or system:…)")
	cmd.Flags().StringVar(&after, "after", "", "only entries at or after this date (2026-01-31) or time (RFC 3339)")
	cmd.Flags().IntVar(&limit, "limit", 100, "print at most this many entries")
	cmd.RunE = db.with(func(ctx context.Context, e *accountsEnv, cmd *cobra.Command, _ []string) error {
		q := shelfmark.AuditQuery{Actor: actor}
		if resource != "" {
			key, err := e.repo.IDs().Key(shelfmark.ID(resource))
			if err != nil {
				return fmt.Errorf("--resource: %w", err)
			}
			q.Resource = key
		}
		if after != "" {
			t, err := parseTime(after)
			if err != nil {
				return fmt.Errorf("--after: %q is not a date (2026-01-31) or an RFC 3339 time", after)
			}
			q.After = t
		}
		if limit <= 0 {
			return fmt.Errorf("--limit must be positive")
		}
		return printAudit(ctx, e, q, limit, cmd.OutOrStdout())
	})
	return cmd
}

// printAudit prints up to limit entries, a page at a time.
func printAudit(ctx context.Context, e *accountsEnv, q shelfmark.AuditQuery, limit int, w io.Writer) error {
	n := 0
	for n < limit {
		q.Limit = min(limit-n, 1000)
		entries, err := e.acc.Audit(ctx, q)
		if err != nil {
			return err
		}
		for _, en := range entries {
			res := "-"
			if en.Resource >= 1 && en.Resource <= shelfmark.MaxKey {
				res = string(e.repo.IDs().Encode(en.Resource))
			}
			line := fmt.Sprintf("%s  %-6s  %-16s  %-20s  %s", en.At.UTC().Format(time.RFC3339), en.Outcome, en.Actor, en.Action, res)
			if len(en.Predicates) > 0 {
				line += "  [" + strings.Join(en.Predicates, " ") + "]"
			}
			if en.Detail != "" {
				line += "  " + en.Detail
			}
			if en.Request != "" {
				line += "  request " + en.Request
			}
			fmt.Fprintln(w, line)
			q.Before = en.Key
			n++
		}
		if len(entries) < q.Limit {
			break
		}
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "no entries")
		return err
	}
	return nil
}
