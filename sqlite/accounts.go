package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.AccountWriteTx = (*writeTx)(nil)

// SetGrants replaces the grants on resource (each grant's own Resource is
// ignored).
func (t *writeTx) SetGrants(ctx context.Context, resource int64, grants []shelfmark.Grant) error {
	if _, err := t.exec(ctx, `DELETE FROM grants WHERE resource = ?`, resource); err != nil {
		return fmt.Errorf("sqlite: clear grants on %d: %w", resource, err)
	}
	return chunked(len(grants), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*3)
		for _, g := range grants[lo:hi] {
			args = append(args, resource, g.Principal, string(g.Role))
		}
		if _, err := t.exec(ctx, `INSERT INTO grants (resource, principal, role) VALUES `+placeholders(hi-lo, 3)+
			` ON CONFLICT DO NOTHING`, args...); err != nil {
			return fmt.Errorf("sqlite: set grants on %d: %w", resource, err)
		}
		return nil
	})
}

// InsertAudit appends entries to the audit trail, up to 64 per statement.
func (t *writeTx) InsertAudit(ctx context.Context, entries []*shelfmark.AuditEntry) error {
	const width = 10
	return chunked(len(entries), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for _, e := range entries[lo:hi] {
			args = append(args, e.At.UnixMicro(), e.Actor, e.User, e.Token, e.Action, e.Resource,
				strings.Join(e.Predicates, "\n"), e.Outcome, e.Detail, e.Request)
		}
		if _, err := t.exec(ctx, `INSERT INTO audit (at, actor, user_key, token, action, resource, predicates, outcome, detail, request)
			VALUES `+placeholders(hi-lo, width), args...); err != nil {
			return fmt.Errorf("sqlite: append %d audit entries: %w", hi-lo, err)
		}
		return nil
	})
}
