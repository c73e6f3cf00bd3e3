package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// AccountWrites is a dialect's statements of the account methods of
// WriteTx and of Tx.Audit and Tx.AccessDue. Their arguments are those
// named, in that order; a list is one argument bound by Dialect.Int64s or
// Strings.
type AccountWrites struct {
	InsertUser  string // name, admin, disabled, password hash, created; key, no row when the name is taken
	UpdateUser  string // key, admin, disabled, password hash
	ClearGroups string // user
	AddGroups   string // user, groups
	InsertToken string // user, kind, hint, hash, scope, note, created, expires, revoked; key
	RevokeToken string // key, user, at
	SetOwners   string // keys, user
	InitSetting string // name, value: inserts unless the name has a value
	PutSetting  string // name, value: inserts or replaces
	// PruneGrants deletes up to limit grants whose expiry is at or
	// before a time, the earliest first, and returns them: before,
	// limit; resource, principal, role, expires.
	PruneGrants string
	// AccessDue reads ResourceCols of the live resources whose embargo
	// or lease ends at or before now, by key: now, limit.
	AccessDue string
}

// InsertUser stores u (and its groups) and sets u.Key, in one statement
// (two with groups); a taken name is an ECONFLICT error and leaves the
// transaction usable (the insert does nothing on a conflict).
func (w *WriteTx) InsertUser(ctx context.Context, u *shelfmark.User) error {
	n := 0
	err := w.q.EachRow(ctx, w.d.InsertUser, []any{u.Name, u.Admin, u.Disabled, u.PasswordHash, u.Created.UnixMicro()},
		func(r Scanner) error {
			n++
			return r.Scan(&u.Key)
		})
	if err != nil {
		return fmt.Errorf("%sinsert user %q: %w", w.d.Prefix, u.Name, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The user name %q is taken.", u.Name)
	}
	return w.addGroups(ctx, u.Key, u.Groups)
}

// UpdateUser writes u's Admin, Disabled and PasswordHash in one statement;
// a missing user is an ENOTFOUND error.
func (w *WriteTx) UpdateUser(ctx context.Context, u *shelfmark.User) error {
	n, err := w.q.Exec(ctx, w.d.UpdateUser, u.Key, u.Admin, u.Disabled, u.PasswordHash)
	if err != nil {
		return fmt.Errorf("%supdate user %d: %w", w.d.Prefix, u.Key, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No user has the key %d.", u.Key)
	}
	return nil
}

// SetUserGroups replaces the user's groups: two statements (one with no
// groups).
func (w *WriteTx) SetUserGroups(ctx context.Context, user int64, groups []string) error {
	if _, err := w.q.Exec(ctx, w.d.ClearGroups, user); err != nil {
		return fmt.Errorf("%sclear groups of user %d: %w", w.d.Prefix, user, err)
	}
	return w.addGroups(ctx, user, groups)
}

// addGroups adds groups to the user's, in one statement.
func (w *WriteTx) addGroups(ctx context.Context, user int64, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.AddGroups, user, w.d.Strings(groups)); err != nil {
		return fmt.Errorf("%sset groups of user %d: %w", w.d.Prefix, user, err)
	}
	return nil
}

// InsertToken stores tk and sets tk.Key, in one statement.
func (w *WriteTx) InsertToken(ctx context.Context, tk *shelfmark.Token) error {
	if err := Row(ctx, w.q, w.d.InsertToken, []any{tk.User, string(tk.Kind), tk.Hint, tk.Hash, string(tk.Scope), tk.Note,
		tk.Created.UnixMicro(), NullMicros(tk.Expires), NullMicros(tk.Revoked)}, &tk.Key); err != nil {
		return fmt.Errorf("%sinsert token of user %d: %w", w.d.Prefix, tk.User, err)
	}
	return nil
}

// RevokeToken marks the user's token key revoked at at, and reports
// whether it was the user's and not yet revoked: one statement.
func (w *WriteTx) RevokeToken(ctx context.Context, user, key int64, at time.Time) (bool, error) {
	n, err := w.q.Exec(ctx, w.d.RevokeToken, key, user, at.UnixMicro())
	if err != nil {
		return false, fmt.Errorf("%srevoke token %d: %w", w.d.Prefix, key, err)
	}
	return n == 1, nil
}

// PruneGrants deletes up to limit grants whose expiry is at or before
// before, the earliest first, in one statement, and returns them.
func (w *WriteTx) PruneGrants(ctx context.Context, before time.Time, limit int) ([]shelfmark.Grant, error) {
	gs, err := Collect(ctx, w.q, w.d.PruneGrants, []any{before.UnixMicro(), limit}, ScanGrant)
	if err != nil {
		return nil, fmt.Errorf("%sprune grants expired by %s: %w", w.d.Prefix, before.UTC().Format(time.RFC3339), err)
	}
	return gs, nil
}

// SetOwners records user as the depositor of keys, replacing any other,
// in one statement.
func (w *WriteTx) SetOwners(ctx context.Context, keys []int64, user int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.SetOwners, w.d.Int64s(keys), user); err != nil {
		return fmt.Errorf("%sset owners of %d resources: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}

// InitSetting stores value under name unless a value is there already,
// and returns the stored value: an insert that does nothing on a conflict
// (waiting for a concurrent one of the same name where writers run at
// once), then a read of the value that won.
func (w *WriteTx) InitSetting(ctx context.Context, name, value string) (string, error) {
	if _, err := w.q.Exec(ctx, w.d.InitSetting, name, value); err != nil {
		return "", fmt.Errorf("%sinitialise setting %q: %w", w.d.Prefix, name, err)
	}
	v, ok, err := w.r.Setting(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("%ssetting %q vanished after it was stored", w.d.Prefix, name)
	}
	return v, err
}

// PutSetting stores value under name, replacing any: one statement.
func (w *WriteTx) PutSetting(ctx context.Context, name, value string) error {
	if _, err := w.q.Exec(ctx, w.d.PutSetting, name, value); err != nil {
		return fmt.Errorf("%sstore setting %q: %w", w.d.Prefix, name, err)
	}
	return nil
}

// MaxAuditPage caps the entries of one page of the audit trail.
const MaxAuditPage = 1000

// AuditSQL returns the statement of a page of the audit trail in d and its
// arguments: a walk down the primary key, or down (resource, key) or
// (actor, key) when filtered, newest first, at most MaxAuditPage rows.
func (d *Dialect) AuditSQL(q shelfmark.AuditQuery) (string, []any) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, cond+" "+d.Arg(len(args)))
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
		add(`at >=`, q.After.UnixMicro())
	}
	query := `SELECT key, at, actor, user_key, token, action, resource, predicates, outcome, detail, request FROM audit`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	args = append(args, int64(min(max(q.Limit, 1), MaxAuditPage)))
	return query + ` ORDER BY key DESC LIMIT ` + d.Arg(len(args)), args
}

// Audit returns a page of the audit trail, newest first, in one statement
// (Dialect.AuditSQL) of at most MaxAuditPage rows.
func (t *Tx) Audit(ctx context.Context, q shelfmark.AuditQuery) ([]*shelfmark.AuditEntry, error) {
	query, args := t.d.AuditSQL(q)
	out, err := Collect(ctx, t.q, query, args, func(r Scanner) (*shelfmark.AuditEntry, error) {
		var (
			e          shelfmark.AuditEntry
			at         int64
			predicates string
		)
		if err := r.Scan(&e.Key, &at, &e.Actor, &e.User, &e.Token, &e.Action, &e.Resource, &predicates,
			&e.Outcome, &e.Detail, &e.Request); err != nil {
			return nil, err
		}
		e.At = FromMicros(at)
		if predicates != "" {
			e.Predicates = strings.Split(predicates, "\n")
		}
		return &e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sread the audit trail: %w", t.d.Prefix, err)
	}
	return out, nil
}

// AccessDue returns up to limit live resources whose embargo or lease ends
// at or before now, by key: one statement over the partial indexes of live
// embargoes and leases.
func (t *Tx) AccessDue(ctx context.Context, now time.Time, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, t.d.AccessDue, now.UnixMicro(), int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread resources whose embargo or lease ended: %w", t.d.Prefix, err)
	}
	return rows, nil
}
