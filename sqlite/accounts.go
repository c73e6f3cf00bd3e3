package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.AccountWriteTx = (*tx)(nil)

// userCols are the columns scanUser reads, in its order: the user's row and
// its groups as a JSON array.
const userCols = `u.key, u.name, u.admin, u.disabled, u.password_hash, u.created,
	(SELECT json_group_array(grp) FROM user_groups g WHERE g.user_key = u.key)`

func scanUser(r *sql.Rows) (*shelfmark.User, error) {
	var (
		u       shelfmark.User
		created int64
		groups  string
	)
	if err := r.Scan(&u.Key, &u.Name, &u.Admin, &u.Disabled, &u.PasswordHash, &created, &groups); err != nil {
		return nil, err
	}
	u.Created = time.UnixMicro(created).UTC()
	if err := json.Unmarshal([]byte(groups), &u.Groups); err != nil {
		return nil, fmt.Errorf("groups of user %d: %w", u.Key, err)
	}
	if len(u.Groups) == 0 {
		u.Groups = nil
	}
	slices.Sort(u.Groups)
	return &u, nil
}

// users runs a query returning userCols rows.
func (t *tx) users(ctx context.Context, query string, args ...any) ([]*shelfmark.User, error) {
	var out []*shelfmark.User
	err := t.query(ctx, query, args, func(r *sql.Rows) error {
		u, err := scanUser(r)
		out = append(out, u)
		return err
	})
	return out, err
}

// UserByName returns the user named name, or nil.
func (t *tx) UserByName(ctx context.Context, name string) (*shelfmark.User, error) {
	us, err := t.users(ctx, `SELECT `+userCols+` FROM users u WHERE u.name = ?`, name)
	if err != nil || len(us) == 0 {
		return nil, wrap(err, "read user %q", name)
	}
	return us[0], nil
}

// UserByKey returns the user with that key, or nil.
func (t *tx) UserByKey(ctx context.Context, key int64) (*shelfmark.User, error) {
	us, err := t.users(ctx, `SELECT `+userCols+` FROM users u WHERE u.key = ?`, key)
	if err != nil || len(us) == 0 {
		return nil, wrap(err, "read user %d", key)
	}
	return us[0], nil
}

// Users returns up to limit users with keys above after, by key.
func (t *tx) Users(ctx context.Context, after int64, limit int) ([]*shelfmark.User, error) {
	if limit <= 0 {
		return nil, nil
	}
	us, err := t.users(ctx, `SELECT `+userCols+` FROM users u WHERE u.key > ? ORDER BY u.key LIMIT ?`, after, limit)
	return us, wrap(err, "list users after %d", after)
}

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

const tokenCols = `key, user_key, kind, hint, hash, scope, note, created, expires, revoked`

func scanToken(r *sql.Rows) (*shelfmark.Token, error) {
	var (
		tk               shelfmark.Token
		kind, scope      string
		created          int64
		expires, revoked sql.NullInt64
	)
	if err := r.Scan(&tk.Key, &tk.User, &kind, &tk.Hint, &tk.Hash, &scope, &tk.Note, &created, &expires, &revoked); err != nil {
		return nil, err
	}
	tk.Kind = shelfmark.TokenKind(kind)
	tk.Scope = shelfmark.Scope(scope)
	tk.Created = time.UnixMicro(created).UTC()
	tk.Expires = microsPtr(expires)
	tk.Revoked = microsPtr(revoked)
	return &tk, nil
}

// TokenByHash returns the token whose secret hashes to hash, or nil.
func (t *tx) TokenByHash(ctx context.Context, hash []byte) (*shelfmark.Token, error) {
	var out *shelfmark.Token
	err := t.query(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, []any{hash}, func(r *sql.Rows) (err error) {
		out, err = scanToken(r)
		return err
	})
	return out, wrap(err, "read token")
}

// Tokens returns a user's tokens of a kind, newest first.
func (t *tx) Tokens(ctx context.Context, user int64, kind shelfmark.TokenKind) ([]*shelfmark.Token, error) {
	var out []*shelfmark.Token
	err := t.query(ctx, `SELECT `+tokenCols+` FROM tokens WHERE user_key = ? AND kind = ? ORDER BY key DESC`,
		[]any{user, string(kind)}, func(r *sql.Rows) error {
			tk, err := scanToken(r)
			out = append(out, tk)
			return err
		})
	return out, wrap(err, "list tokens of user %d", user)
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

func (t *tx) grants(ctx context.Context, query string, arg any) ([]shelfmark.Grant, error) {
	var out []shelfmark.Grant
	err := t.query(ctx, query, []any{arg}, func(r *sql.Rows) error {
		var g shelfmark.Grant
		var role string
		err := r.Scan(&g.Resource, &g.Principal, &role)
		g.Role = shelfmark.Role(role)
		out = append(out, g)
		return err
	})
	return out, err
}

// GrantsOn returns the grants on resources, by resource, principal and
// role.
func (t *tx) GrantsOn(ctx context.Context, resources []int64) ([]shelfmark.Grant, error) {
	if len(resources) == 0 {
		return nil, nil
	}
	gs, err := t.grants(ctx, `SELECT resource, principal, role FROM grants
		WHERE resource IN (SELECT value FROM json_each(?)) ORDER BY resource, principal, role`, jsonInts(resources))
	return gs, wrap(err, "read grants on %d resources", len(resources))
}

// GrantsTo returns the grants made to principals, by resource, principal
// and role.
func (t *tx) GrantsTo(ctx context.Context, principals []string) ([]shelfmark.Grant, error) {
	if len(principals) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(principals)
	if err != nil {
		return nil, err
	}
	gs, err := t.grants(ctx, `SELECT resource, principal, role FROM grants
		WHERE principal IN (SELECT value FROM json_each(?)) ORDER BY resource, principal, role`, string(b))
	return gs, wrap(err, "read grants to %d principals", len(principals))
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

// Owners returns the depositor of each of keys that has one.
func (t *tx) Owners(ctx context.Context, keys []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.query(ctx, `SELECT resource, user_key FROM owners WHERE resource IN (SELECT value FROM json_each(?))`,
		[]any{jsonInts(keys)}, func(r *sql.Rows) error {
			var k, u int64
			err := r.Scan(&k, &u)
			out[k] = u
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: read owners of %d resources: %w", len(keys), err)
	}
	return out, nil
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

// Setting returns the setting name and whether it is set.
func (t *tx) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := t.queryRow(ctx, `SELECT value FROM settings WHERE name = ?`, []any{name}, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	} else if err != nil {
		return "", false, fmt.Errorf("sqlite: read setting %q: %w", name, err)
	}
	return v, true, nil
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
var accessDueSQL = `SELECT ` + resourceCols + ` FROM resources WHERE key IN (
	SELECT key FROM resources INDEXED BY resources_embargo_live WHERE embargo IS NOT NULL AND deleted IS NULL AND embargo <= ?
	UNION SELECT key FROM resources INDEXED BY resources_lease_live WHERE lease IS NOT NULL AND deleted IS NULL AND lease <= ?)
	ORDER BY key LIMIT ?`

// AccessDue returns up to limit live resources whose embargo or lease ends
// at or before now, by key.
func (t *tx) AccessDue(ctx context.Context, now time.Time, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, accessDueSQL, []any{now.UnixMicro(), now.UnixMicro(), limit}, func(r *sql.Rows) error {
		row, err := scanResource(r)
		out = append(out, row)
		return err
	})
	return out, wrap(err, "read resources whose embargo or lease ended")
}

// wrap adds context to a non-nil error.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite: "+format+": %w", append(args, err)...)
}
