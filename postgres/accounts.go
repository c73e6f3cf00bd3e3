package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
)

var (
	_ shelfmark.AccountReadTx  = (*readTx)(nil)
	_ shelfmark.AccountWriteTx = (*writeTx)(nil)
)

// SetGrants replaces the grants on resource (each grant's own Resource is
// ignored), in two statements.
func (t *writeTx) SetGrants(ctx context.Context, resource int64, grants []shelfmark.Grant) error {
	if _, err := t.r.exec(ctx, `DELETE FROM grants WHERE resource = $1`, resource); err != nil {
		return fmt.Errorf("postgres: clear grants on %d: %w", resource, err)
	}
	if len(grants) == 0 {
		return nil
	}
	principals, roles := make([]string, len(grants)), make([]string, len(grants))
	for i, g := range grants {
		principals[i], roles[i] = g.Principal, string(g.Role)
	}
	if _, err := t.r.exec(ctx, `INSERT INTO grants (resource, principal, role)
SELECT $1, p, r FROM unnest($2::text[], $3::text[]) AS x(p, r) ON CONFLICT DO NOTHING`, resource, principals, roles); err != nil {
		return fmt.Errorf("postgres: set grants on %d: %w", resource, err)
	}
	return nil
}

// InsertAudit appends entries to the audit trail in one statement.
func (t *writeTx) InsertAudit(ctx context.Context, entries []*shelfmark.AuditEntry) error {
	n := len(entries)
	if n == 0 {
		return nil
	}
	var (
		at, users, tokens, resources                   = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		actors, actions, predicates, outcomes, details = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		requests                                       = make([]string, n)
	)
	for i, e := range entries {
		at[i], users[i], tokens[i], resources[i] = micros(e.At), e.User, e.Token, e.Resource
		actors[i], actions[i], predicates[i] = e.Actor, e.Action, strings.Join(e.Predicates, "\n")
		outcomes[i], details[i], requests[i] = e.Outcome, e.Detail, e.Request
	}
	if _, err := t.r.exec(ctx, `INSERT INTO audit (at, actor, user_key, token, action, resource, predicates, outcome, detail, request)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::bigint[], $7::text[],
                     $8::text[], $9::text[], $10::text[])`,
		at, actors, users, tokens, actions, resources, predicates, outcomes, details, requests); err != nil {
		return fmt.Errorf("postgres: append %d audit entries: %w", n, err)
	}
	return nil
}
