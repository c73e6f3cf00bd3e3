package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// TestMigrationRenamesRestricted: a database written before accounts
// existed (migrations up to 0006) holds "restricted" resources; opening
// it applies 0007, which calls them "authenticated" and leaves the others
// as they were, without leases.
func TestMigrationRenamesRestricted(t *testing.T) {
	ctx := context.Background()
	dsn, _ := testSchema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, m := range ms {
		if m.Version >= 7 {
			continue
		}
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, 0)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
		applied++
	}
	if applied != 6 {
		t.Fatalf("applied %d migrations before 0007, want 6", applied)
	}
	now := time.Now().UnixMicro()
	for key, vis := range map[int64]string{1: "restricted", 2: "public", 3: "private", 4: "restricted"} {
		if _, err := conn.Exec(ctx, `INSERT INTO resources (key, kind, visibility, embargo, parent, position, version, seq, created, modified, deleted)
VALUES ($1, 'work', $2, NULL, NULL, NULL, 1, 1, $3, $3, NULL)`, key, vis, now); err != nil {
			t.Fatal(err)
		}
	}

	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[int64]shelfmark.Visibility{1: shelfmark.Authenticated, 2: shelfmark.Public, 3: shelfmark.Private, 4: shelfmark.Authenticated}
	view(t, db, func(tx shelfmark.ReadTx) error {
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
}

// TestAccessDuePlan: AccessDue reads a range of each partial index of live
// embargoes and leases (with sequential scans priced out, as they would be
// on a table of many resources), never the whole table.
func TestAccessDuePlan(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	tx := noSeqScanTx(t, db)
	rows, err := tx.Query(ctx, `EXPLAIN `+dialect.AccessDue, int64(1), int64(10))
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	rows.Close()
	all := strings.Join(plan, "\n")
	for _, w := range []string{"resources_embargo_live", "resources_lease_live"} {
		if !strings.Contains(all, w) {
			t.Errorf("the plan does not use %s:\n%s", w, all)
		}
	}
	if strings.Contains(all, "Seq Scan") {
		t.Errorf("the plan scans a table:\n%s", all)
	}
}
