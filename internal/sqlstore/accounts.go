package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/shelfmark/shelfmark"
)

// Accounts is a dialect's statements of the account reads of Tx. Their
// arguments are those of the methods named, in that order; a list is one
// argument bound by Dialect.Int64s or Strings.
type Accounts struct {
	// UserCols are the columns ScanUser reads, from users u: the row and
	// the user's groups as one value that StringList decodes.
	UserCols string
	// StringList returns the scan destination that decodes a list of
	// strings (the groups of UserCols) into dst.
	StringList  func(dst *[]string) any
	UserByName  string // name; UserCols
	UserByKey   string // key; UserCols
	Users       string // after, limit; UserCols
	TokenByHash string // hash; TokenCols
	Tokens      string // user, kind; TokenCols
	GrantsOn    string // resources: resource, principal, role, expires
	GrantsTo    string // principals: resource, principal, role, expires
	Owners      string // keys: resource, user_key
	Setting     string // name: value
}

// TokenCols are the columns ScanToken reads, from tokens.
const TokenCols = `key, user_key, kind, hint, hash, scope, note, created, expires, revoked`

// ScanToken reads a row of TokenCols.
func ScanToken(r Scanner) (*shelfmark.Token, error) {
	var (
		tk               shelfmark.Token
		kind, scope      string
		created          int64
		expires, revoked *int64
	)
	if err := r.Scan(&tk.Key, &tk.User, &kind, &tk.Hint, &tk.Hash, &scope, &tk.Note, &created, &expires, &revoked); err != nil {
		return nil, err
	}
	tk.Kind = shelfmark.TokenKind(kind)
	tk.Scope = shelfmark.Scope(scope)
	tk.Created = FromMicros(created)
	tk.Expires = TimePtr(expires)
	tk.Revoked = TimePtr(revoked)
	return &tk, nil
}

// ScanGrant reads a row of resource, principal, role, expires.
func ScanGrant(r Scanner) (shelfmark.Grant, error) {
	var g shelfmark.Grant
	var role string
	var expires *int64
	err := r.Scan(&g.Resource, &g.Principal, &role, &expires)
	g.Role, g.Expires = shelfmark.Role(role), TimePtr(expires)
	return g, err
}

// users runs a query of UserCols rows.
func (t *Tx) users(ctx context.Context, query string, args ...any) ([]*shelfmark.User, error) {
	return Collect(ctx, t.q, query, args, func(r Scanner) (*shelfmark.User, error) {
		var (
			u       shelfmark.User
			created int64
		)
		if err := r.Scan(&u.Key, &u.Name, &u.Admin, &u.Disabled, &u.PasswordHash, &created, t.d.StringList(&u.Groups)); err != nil {
			return nil, err
		}
		u.Created = FromMicros(created)
		if len(u.Groups) == 0 {
			u.Groups = nil
		}
		slices.Sort(u.Groups)
		return &u, nil
	})
}

// first returns the first of rows, or nil.
func first[T any](rows []*T) *T {
	if len(rows) == 0 {
		return nil
	}
	return rows[0]
}

// UserByName returns the user named name, or nil.
func (t *Tx) UserByName(ctx context.Context, name string) (*shelfmark.User, error) {
	us, err := t.users(ctx, t.d.UserByName, name)
	if err != nil {
		return nil, fmt.Errorf("%sread user %q: %w", t.d.Prefix, name, err)
	}
	return first(us), nil
}

// UserByKey returns the user with that key, or nil.
func (t *Tx) UserByKey(ctx context.Context, key int64) (*shelfmark.User, error) {
	us, err := t.users(ctx, t.d.UserByKey, key)
	if err != nil {
		return nil, fmt.Errorf("%sread user %d: %w", t.d.Prefix, key, err)
	}
	return first(us), nil
}

// Users returns up to limit users with keys above after, by key.
func (t *Tx) Users(ctx context.Context, after int64, limit int) ([]*shelfmark.User, error) {
	if limit <= 0 {
		return nil, nil
	}
	us, err := t.users(ctx, t.d.Users, after, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%slist users after %d: %w", t.d.Prefix, after, err)
	}
	return us, nil
}

// TokenByHash returns the token whose secret hashes to hash, or nil.
func (t *Tx) TokenByHash(ctx context.Context, hash []byte) (*shelfmark.Token, error) {
	ts, err := Collect(ctx, t.q, t.d.TokenByHash, []any{hash}, ScanToken)
	if err != nil {
		return nil, fmt.Errorf("%sread token: %w", t.d.Prefix, err)
	}
	return first(ts), nil
}

// Tokens returns a user's tokens of a kind, newest first.
func (t *Tx) Tokens(ctx context.Context, user int64, kind shelfmark.TokenKind) ([]*shelfmark.Token, error) {
	ts, err := Collect(ctx, t.q, t.d.Tokens, []any{user, string(kind)}, ScanToken)
	if err != nil {
		return nil, fmt.Errorf("%slist tokens of user %d: %w", t.d.Prefix, user, err)
	}
	return ts, nil
}

// GrantsOn returns the grants on resources, by resource, principal and
// role.
func (t *Tx) GrantsOn(ctx context.Context, resources []int64) ([]shelfmark.Grant, error) {
	if len(resources) == 0 {
		return nil, nil
	}
	gs, err := Collect(ctx, t.q, t.d.GrantsOn, []any{t.d.Int64s(resources)}, ScanGrant)
	if err != nil {
		return nil, fmt.Errorf("%sread grants on %d resources: %w", t.d.Prefix, len(resources), err)
	}
	return gs, nil
}

// GrantsTo returns the grants made to principals, by resource, principal
// and role.
func (t *Tx) GrantsTo(ctx context.Context, principals []string) ([]shelfmark.Grant, error) {
	if len(principals) == 0 {
		return nil, nil
	}
	gs, err := Collect(ctx, t.q, t.d.GrantsTo, []any{t.d.Strings(principals)}, ScanGrant)
	if err != nil {
		return nil, fmt.Errorf("%sread grants to %d principals: %w", t.d.Prefix, len(principals), err)
	}
	return gs, nil
}

// Owners returns the depositor of each of keys that has one.
func (t *Tx) Owners(ctx context.Context, keys []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.Owners, []any{t.d.Int64s(keys)}, func(r Scanner) error {
		var k, u int64
		err := r.Scan(&k, &u)
		out[k] = u
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%sread owners of %d resources: %w", t.d.Prefix, len(keys), err)
	}
	return out, nil
}

// Setting returns the setting name and whether it is set.
func (t *Tx) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	n := 0
	err := t.q.EachRow(ctx, t.d.Setting, []any{name}, func(r Scanner) error {
		n++
		return r.Scan(&v)
	})
	if err != nil {
		return "", false, fmt.Errorf("%sread setting %q: %w", t.d.Prefix, name, err)
	}
	return v, n == 1, nil
}
