package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

var _ shelfmark.AccountWriteTx = (*tx)(nil)

// InsertUser stores u (and its groups) and sets u.Key; a taken name is an
// ECONFLICT error, and leaves the transaction usable.
func (t *tx) InsertUser(ctx context.Context, u *shelfmark.User) error {
	err := t.queryRow(ctx, `INSERT INTO users (name, admin, disabled, password_hash, created) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO NOTHING RETURNING key`,
		[]any{u.Name, u.Admin, u.Disabled, u.PasswordHash, u.Created.UnixMicro()}, &u.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The user name %q is taken.", u.Name)
	} else if err != nil {
		return fmt.Errorf("sqlite: insert user %q: %w", u.Name, err)
	}
	if len(u.Groups) > 0 {
		return t.insertGroups(ctx, u.Key, u.Groups)
	}
	return nil
}

// UpdateUser writes u's Admin, Disabled and PasswordHash; a missing user
// is an ENOTFOUND error.
func (t *tx) UpdateUser(ctx context.Context, u *shelfmark.User) error {
	n, err := t.exec(ctx, `UPDATE users SET admin = ?, disabled = ?, password_hash = ? WHERE key = ?`,
		u.Admin, u.Disabled, u.PasswordHash, u.Key)
	if err != nil {
		return fmt.Errorf("sqlite: update user %d: %w", u.Key, err)
	} else if n == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No user has the key %d.", u.Key)
	}
	return nil
}

// SetUserGroups replaces the user's groups.
func (t *tx) SetUserGroups(ctx context.Context, user int64, groups []string) error {
	if _, err := t.exec(ctx, `DELETE FROM user_groups WHERE user_key = ?`, user); err != nil {
		return fmt.Errorf("sqlite: clear groups of user %d: %w", user, err)
	}
	return t.insertGroups(ctx, user, groups)
}

func (t *tx) insertGroups(ctx context.Context, user int64, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	if _, err := t.exec(ctx, `INSERT INTO user_groups (user_key, grp) SELECT ?, value FROM json_each(?) WHERE true
		ON CONFLICT DO NOTHING`, user, string(b)); err != nil {
		return fmt.Errorf("sqlite: set groups of user %d: %w", user, err)
	}
	return nil
}

// InsertToken stores tk and sets tk.Key.
func (t *tx) InsertToken(ctx context.Context, tk *shelfmark.Token) error {
	err := t.queryRow(ctx, `INSERT INTO tokens (user_key, kind, hint, hash, scope, note, created, expires, revoked)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING key`,
		[]any{tk.User, string(tk.Kind), tk.Hint, tk.Hash, string(tk.Scope), tk.Note, tk.Created.UnixMicro(),
			nullMicros(tk.Expires), nullMicros(tk.Revoked)}, &tk.Key)
	return wrap(err, "insert token of user %d", tk.User)
}

// RevokeToken marks the user's token key revoked at at, and reports
// whether it was the user's and not yet revoked.
func (t *tx) RevokeToken(ctx context.Context, user, key int64, at time.Time) (bool, error) {
	n, err := t.exec(ctx, `UPDATE tokens SET revoked = ? WHERE key = ? AND user_key = ? AND revoked IS NULL`,
		at.UnixMicro(), key, user)
	if err != nil {
		return false, fmt.Errorf("sqlite: revoke token %d: %w", key, err)
	}
	return n == 1, nil
}

// SetGrants replaces the grants on resource (each grant's own Resource is
// ignored).
func (t *tx) SetGrants(ctx context.Context, resource int64, grants []shelfmark.Grant) error {
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

// SetOwners records user as the depositor of keys, replacing any other.
func (t *tx) SetOwners(ctx context.Context, keys []int64, user int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := t.exec(ctx, `INSERT INTO owners (resource, user_key) SELECT value, ? FROM json_each(?) WHERE true
		ON CONFLICT (resource) DO UPDATE SET user_key = excluded.user_key`, user, jsonInts(keys)); err != nil {
		return fmt.Errorf("sqlite: set owners of %d resources: %w", len(keys), err)
	}
	return nil
}

// maxAuditPage caps the entries of one page of the audit trail.
const maxAuditPage = 1000

// auditSQL returns the statement of a page of the audit trail and its
// arguments: a walk down the primary key, or down (resource, key) or
// (actor, key) when filtered, newest first.
func auditSQL(q shelfmark.AuditQuery) (string, []any) {
	var (
		where []string
		args  []any
	)
	if q.Before != 0 {
		where, args = append(where, `key < ?`), append(args, q.Before)
	}
	if q.Resource != 0 {
		where, args = append(where, `resource = ?`), append(args, q.Resource)
	}
	if q.Actor != "" {
		where, args = append(where, `actor = ?`), append(args, q.Actor)
	}
	if !q.After.IsZero() {
		where, args = append(where, `at >= ?`), append(args, q.After.UnixMicro())
	}
	query := `SELECT key, at, actor, user_key, token, action, resource, predicates, outcome, detail, request FROM audit`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY key DESC LIMIT ?`
	return query, append(args, min(max(q.Limit, 1), maxAuditPage))
}

// Audit returns a page of the audit trail, newest first.
func (t *tx) Audit(ctx context.Context, q shelfmark.AuditQuery) ([]*shelfmark.AuditEntry, error) {
	query, args := auditSQL(q)
	var out []*shelfmark.AuditEntry
	err := t.query(ctx, query, args, func(r *sql.Rows) error {
		var (
			e          shelfmark.AuditEntry
			at         int64
			predicates string
		)
		if err := r.Scan(&e.Key, &at, &e.Actor, &e.User, &e.Token, &e.Action, &e.Resource, &predicates,
			&e.Outcome, &e.Detail, &e.Request); err != nil {
			return err
		}
		e.At = time.UnixMicro(at).UTC()
		e.Predicates = splitPredicates(predicates)
		out = append(out, &e)
		return nil
	})
	return out, wrap(err, "read the audit trail")
}

// splitPredicates reads the predicates column (newline-joined).
func splitPredicates(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// InsertAudit appends entries to the audit trail, up to 64 per statement.
func (t *tx) InsertAudit(ctx context.Context, entries []*shelfmark.AuditEntry) error {
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

// InitSetting stores value under name unless a value is there already,
// and returns the stored value. SQLite has one writer, and the insert
// leaves a value stored by another process first as it is.
func (t *tx) InitSetting(ctx context.Context, name, value string) (string, error) {
	if _, err := t.exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, value); err != nil {
		return "", fmt.Errorf("sqlite: initialise setting %q: %w", name, err)
	}
	v, ok, err := t.Setting(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("sqlite: setting %q vanished after it was stored", name)
	}
	return v, err
}

// accessDueSQL reads the live resources whose embargo or lease ends at or
// before a time: a range of each of the partial indexes
// resources_embargo_live and resources_lease_live.
var accessDueSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE key IN (
	SELECT key FROM resources INDEXED BY resources_embargo_live WHERE embargo IS NOT NULL AND deleted IS NULL AND embargo <= ?
	UNION SELECT key FROM resources INDEXED BY resources_lease_live WHERE lease IS NOT NULL AND deleted IS NULL AND lease <= ?)
	ORDER BY key LIMIT ?`

// AccessDue returns up to limit live resources whose embargo or lease ends
// at or before now, by key.
func (t *tx) AccessDue(ctx context.Context, now time.Time, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := t.ResourceRows(ctx, accessDueSQL, now.UnixMicro(), now.UnixMicro(), limit)
	return out, wrap(err, "read resources whose embargo or lease ended")
}

// wrap adds context to a non-nil error.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: "+format+": %w", append(args, err)...)
}
