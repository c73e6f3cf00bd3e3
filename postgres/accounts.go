package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

var (
	_ shelfmark.AccountReadTx  = (*readTx)(nil)
	_ shelfmark.AccountWriteTx = (*writeTx)(nil)
)

// InsertUser stores u (and its groups) and sets u.Key; a taken name is an
// ECONFLICT error, and leaves the transaction usable (ON CONFLICT DO
// NOTHING: no error aborts it).
func (t *writeTx) InsertUser(ctx context.Context, u *shelfmark.User) error {
	n, err := t.r.query(ctx, `INSERT INTO users (name, admin, disabled, password_hash, created) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (name) DO NOTHING RETURNING key`, []any{u.Name, u.Admin, u.Disabled, u.PasswordHash, micros(u.Created)},
		func(rows pgx.Rows) error { return rows.Scan(&u.Key) })
	if err != nil {
		return fmt.Errorf("postgres: insert user %q: %w", u.Name, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The user name %q is taken.", u.Name)
	}
	return t.insertGroups(ctx, u.Key, u.Groups)
}

// UpdateUser writes u's Admin, Disabled and PasswordHash; a missing user
// is an ENOTFOUND error.
func (t *writeTx) UpdateUser(ctx context.Context, u *shelfmark.User) error {
	n, err := t.r.exec(ctx, `UPDATE users SET admin = $2, disabled = $3, password_hash = $4 WHERE key = $1`,
		u.Key, u.Admin, u.Disabled, u.PasswordHash)
	if err != nil {
		return fmt.Errorf("postgres: update user %d: %w", u.Key, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No user has the key %d.", u.Key)
	}
	return nil
}

// SetUserGroups replaces the user's groups.
func (t *writeTx) SetUserGroups(ctx context.Context, user int64, groups []string) error {
	if _, err := t.r.exec(ctx, `DELETE FROM user_groups WHERE user_key = $1`, user); err != nil {
		return fmt.Errorf("postgres: clear groups of user %d: %w", user, err)
	}
	return t.insertGroups(ctx, user, groups)
}

func (t *writeTx) insertGroups(ctx context.Context, user int64, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	if _, err := t.r.exec(ctx, `INSERT INTO user_groups (user_key, grp) SELECT $1, g FROM unnest($2::text[]) g
ON CONFLICT DO NOTHING`, user, groups); err != nil {
		return fmt.Errorf("postgres: set groups of user %d: %w", user, err)
	}
	return nil
}

// InsertToken stores tk and sets tk.Key.
func (t *writeTx) InsertToken(ctx context.Context, tk *shelfmark.Token) error {
	if err := t.r.queryRow(ctx, `INSERT INTO tokens (user_key, kind, hint, hash, scope, note, created, expires, revoked)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING key`,
		[]any{tk.User, string(tk.Kind), tk.Hint, tk.Hash, string(tk.Scope), tk.Note, micros(tk.Created),
			microsPtr(tk.Expires), microsPtr(tk.Revoked)}, &tk.Key); err != nil {
		return fmt.Errorf("postgres: insert token of user %d: %w", tk.User, err)
	}
	return nil
}

// RevokeToken marks the user's token key revoked at at, and reports
// whether it was the user's and not yet revoked.
func (t *writeTx) RevokeToken(ctx context.Context, user, key int64, at time.Time) (bool, error) {
	n, err := t.r.exec(ctx, `UPDATE tokens SET revoked = $3 WHERE key = $1 AND user_key = $2 AND revoked IS NULL`,
		key, user, micros(at))
	if err != nil {
		return false, fmt.Errorf("postgres: revoke token %d: %w", key, err)
	}
	return n == 1, nil
}

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

// SetOwners records user as the depositor of keys, replacing any other.
func (t *writeTx) SetOwners(ctx context.Context, keys []int64, user int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := t.r.exec(ctx, `INSERT INTO owners (resource, user_key) SELECT DISTINCT k, $2::bigint FROM unnest($1::bigint[]) k
ON CONFLICT (resource) DO UPDATE SET user_key = excluded.user_key`, keys, user); err != nil {
		return fmt.Errorf("postgres: set owners of %d resources: %w", len(keys), err)
	}
	return nil
}

// maxAuditPage caps the entries of one page of the audit trail.
const maxAuditPage = 1000

// Audit returns a page of the audit trail, newest first: a walk down the
// primary key, or down (resource, key) or (actor, key) when filtered.
func (t *readTx) Audit(ctx context.Context, q shelfmark.AuditQuery) ([]*shelfmark.AuditEntry, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, cond+" $"+strconv.Itoa(len(args)))
	}
	if q.Before != 0 {
		add(`key <`, q.Before)
	}
	if q.Resource != 0 {
		add(`resource =`, q.Resource)
	}
	if q.Actor != "" {
		add(`actor =`, q.Actor)
	}
	if !q.After.IsZero() {
		add(`at >=`, micros(q.After))
	}
	sql := `SELECT key, at, actor, user_key, token, action, resource, predicates, outcome, detail, request FROM audit`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, ` AND `)
	}
	args = append(args, int64(min(max(q.Limit, 1), maxAuditPage)))
	sql += ` ORDER BY key DESC LIMIT $` + strconv.Itoa(len(args))
	var out []*shelfmark.AuditEntry
	if _, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		var (
			e          shelfmark.AuditEntry
			at         int64
			predicates string
		)
		if err := rows.Scan(&e.Key, &at, &e.Actor, &e.User, &e.Token, &e.Action, &e.Resource, &predicates,
			&e.Outcome, &e.Detail, &e.Request); err != nil {
			return err
		}
		e.At = fromMicros(at)
		if predicates != "" {
			e.Predicates = strings.Split(predicates, "\n")
		}
		out = append(out, &e)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: read the audit trail: %w", err)
	}
	return out, nil
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

// InitSetting stores value under name unless a value is there already,
// and returns the stored value. The insert waits for a concurrent one of
// the same name and then does nothing; the read that follows (READ
// COMMITTED: a fresh snapshot) sees the value that won.
func (t *writeTx) InitSetting(ctx context.Context, name, value string) (string, error) {
	if _, err := t.r.exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
		name, value); err != nil {
		return "", fmt.Errorf("postgres: initialise setting %q: %w", name, err)
	}
	v, ok, err := t.Setting(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("postgres: setting %q vanished after it was stored", name)
	}
	return v, err
}

// accessDueSQL reads the live resources whose embargo or lease ends at or
// before $1: a range of each of the partial indexes resources_embargo_live
// and resources_lease_live.
const accessDueSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key IN (
SELECT key FROM resources WHERE embargo IS NOT NULL AND deleted IS NULL AND embargo <= $1
UNION SELECT key FROM resources WHERE lease IS NOT NULL AND deleted IS NULL AND lease <= $1)
ORDER BY key LIMIT $2`

// AccessDue returns up to limit live resources whose embargo or lease ends
// at or before now, by key.
func (t *readTx) AccessDue(ctx context.Context, now time.Time, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, accessDueSQL, micros(now), int64(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: read resources whose embargo or lease ended: %w", err)
	}
	return rows, nil
}
