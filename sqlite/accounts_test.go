package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// TestMigrationRenamesRestricted: a database written before accounts
// existed (migrations up to 0006) holds "restricted" resources; opening
// it applies 0007, which calls them "authenticated" and leaves the others
// as they were, without leases.
func TestMigrationRenamesRestricted(t *testing.T) {
	ctx := context.Background()
	path, old := migratedBefore(t, 7)
	var applied int
	if err := old.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied); err != nil || applied != 6 {
		t.Fatalf("applied %d migrations before 0007 (%v), want 6", applied, err)
	}
	now := time.Now().UnixMicro()
	for _, r := range []struct {
		key int64
		vis string
	}{{1, "restricted"}, {2, "public"}, {3, "private"}, {4, "restricted"}} {
		if _, err := old.ExecContext(ctx, `INSERT INTO resources (key, kind, visibility, embargo, parent, position, version, seq, created, modified, deleted)
			VALUES (?, 'work', ?, NULL, NULL, NULL, 1, 1, ?, ?, NULL)`, r.key, r.vis, now, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[int64]shelfmark.Visibility{1: shelfmark.Authenticated, 2: shelfmark.Public, 3: shelfmark.Private, 4: shelfmark.Authenticated}
	err = db.View(ctx, func(tx shelfmark.ReadTx) error {
		rows, err := tx.Resources(ctx, []int64{1, 2, 3, 4})
		if err != nil {
			return err
		}
		if len(rows) != 4 {
			t.Fatalf("%d rows after the migration, want 4", len(rows))
		}
		for _, r := range rows {
			if r.Visibility != want[r.Key] || r.Lease != nil {
				t.Errorf("resource %d: visibility %q, lease %v; want %q and none", r.Key, r.Visibility, r.Lease, want[r.Key])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAccountPlans: AccessDue reads a range of the partial indexes of live
// embargoes and leases, the audit trail walks the index of its filter, a
// user's tokens and a token's hash are index look-ups; none scans a table.
func TestAccountPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	audit := func(q shelfmark.AuditQuery) (string, []any) { return dialect.AuditSQL(q) }
	type plan struct {
		name  string
		query string
		args  []any
		want  []string
	}
	cases := []plan{
		{"access due", dialect.AccessDue, []any{1, 10}, []string{
			"SEARCH resources USING INTEGER PRIMARY KEY (rowid=?)",
			"SEARCH resources USING INDEX resources_embargo_live (embargo>? AND embargo<?)",
			"SEARCH resources USING INDEX resources_lease_live (lease>? AND lease<?)"}},
		{"token", `SELECT ` + sqlstore.TokenCols + ` FROM tokens WHERE hash = ?`, []any{[]byte("x")},
			[]string{"SEARCH tokens USING INDEX sqlite_autoindex_tokens_1 (hash=?)"}},
		{"tokens", `SELECT ` + sqlstore.TokenCols + ` FROM tokens WHERE user_key = ? AND kind = ? ORDER BY key DESC`, []any{1, "api"},
			[]string{"SEARCH tokens USING INDEX tokens_user (user_key=? AND kind=?)"}},
		{"grants to", `SELECT resource, principal, role FROM grants
		WHERE principal IN (SELECT value FROM json_each(?)) ORDER BY resource, principal, role`, []any{`["user:a"]`},
			[]string{"grants_principal (principal=?)"}},
		{"user", `SELECT ` + userCols + ` FROM users u WHERE u.name = ?`, []any{"a"},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_users_1 (name=?)", "SEARCH g USING PRIMARY KEY (user_key=?)"}},
	}
	for _, c := range []struct {
		name string
		q    shelfmark.AuditQuery
		want string
	}{
		{"audit", shelfmark.AuditQuery{Limit: 10}, "SCAN audit"}, // the primary key, backwards: the newest first
		{"audit page 2", shelfmark.AuditQuery{Before: 100, Limit: 10}, "SEARCH audit USING INTEGER PRIMARY KEY (rowid<?)"},
		{"audit of a resource", shelfmark.AuditQuery{Resource: 5, Before: 100, Limit: 10}, "SEARCH audit USING INDEX audit_resource (resource=? AND key<?)"},
		{"audit of an actor", shelfmark.AuditQuery{Actor: "a", Limit: 10}, "SEARCH audit USING INDEX audit_actor (actor=?)"},
	} {
		q, args := audit(c.q)
		cases = append(cases, plan{c.name, q, args, []string{c.want}})
	}
	for _, c := range cases {
		rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: the plan lacks %q:\n%s", c.name, w, all)
			}
		}
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") && d != "SCAN audit" && !strings.Contains(d, "json_each") {
				t.Errorf("%s scans a table:\n%s", c.name, all)
			}
			// (AccessDue merges the keys of its two ranges, the few rows
			// whose dates passed and that were not yet swept)
			if strings.Contains(d, "TEMP B-TREE FOR ORDER BY") && c.name != "grants to" && c.name != "access due" {
				t.Errorf("%s sorts:\n%s", c.name, all)
			}
		}
	}
}
