package bench

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
)

// TestRawGroupLimitSameRows: a replay of what the engine wrote for a batch
// of patents adds, to every table of the store, as many rows as the
// engine's own writes did (the raw limit inserts the same rows, not a
// subset), with keys of its own, and a second replay as many again; on
// SQLite and on PostgreSQL.
func TestRawGroupLimitSameRows(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			s := openScaleStore(t, backend)
			ids, err := shelfmark.LoadIDCodec(ctx, s.store)
			if err != nil {
				t.Fatal(err)
			}
			blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			defer blobs.Close()
			before := tableRows(t, s.raw, backend)
			rec := NewRowRecorder(s.store)
			repo := shelfmark.NewRepository(rec, shelfmark.RepositoryOptions{IDs: ids})
			const works = 12
			r, err := RunPatents(ctx, repo, blobs, PatentsConfig{Works: works, Batch: works, Seed: 1})
			repo.Close()
			if err != nil || r.Errors != 0 {
				t.Fatalf("ingest: %v, %d errors", err, r.Errors)
			}
			if rec.Groups() != works {
				t.Fatalf("%d groups recorded, want %d", rec.Groups(), works)
			}
			ingested := tableRows(t, s.raw, backend)
			engine := diffRows(before, ingested)
			if engine["resources"] != int64(rec.Resources()) || engine["resources"] <= works || engine["files"] == 0 {
				t.Fatalf("the engine wrote %v; %d resources recorded", engine, rec.Resources())
			}
			t.Logf("one batch of %d patents: %v", works, engine)
			last := ingested
			for round := 1; round <= 2; round++ {
				if err := rec.Replay(ctx, s.store); err != nil {
					t.Fatalf("replay %d: %v", round, err)
				}
				now := tableRows(t, s.raw, backend)
				replayed := diffRows(last, now)
				for table, n := range engine {
					if replayed[table] != n {
						t.Errorf("replay %d: %d rows added to %s, the engine added %d", round, replayed[table], table, n)
					}
				}
				for table, n := range replayed {
					if engine[table] != n {
						t.Errorf("replay %d: %d rows added to %s, the engine added %d", round, n, table, engine[table])
					}
				}
				last = now
			}
			rate, err := RawGroupLimit(ctx, s.store, rec, 50*time.Millisecond)
			if err != nil || rate <= 0 {
				t.Fatalf("RawGroupLimit: %v, %v", rate, err)
			}
			svg := filepath.Join(t.TempDir(), "patents.svg")
			if err := WritePatentsSVG(svg, r, rate, rate/2); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(svg)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"<svg", "works/s", "raw limit of the same rows, fresh store", "raw limit of the same rows, at the run&#39;s end"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("the chart lacks %q", want)
				}
			}
		})
	}
}

// tableRows counts the rows of every table of the store (on PostgreSQL,
// of its schema).
func tableRows(t *testing.T, raw *sql.DB, backend string) map[string]int64 {
	t.Helper()
	list := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if backend == "postgres" {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	rows, err := raw.Query(list)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]int64{}
	for _, n := range names {
		var c int64
		if err := raw.QueryRow(`SELECT count(*) FROM "` + n + `"`).Scan(&c); err != nil {
			t.Fatalf("count %s: %v", n, err)
		}
		out[n] = c
	}
	// the rows refer to rows of their own: a replay that kept a recorded
	// key would add rows but no referred key, or refer to none
	for name, q := range map[string]string{
		"parents":            `SELECT count(DISTINCT parent) FROM resources`,
		"parents present":    `SELECT count(*) FROM resources c JOIN resources p ON p.key = c.parent`,
		"files' resources":   `SELECT count(DISTINCT f.resource) FROM files f JOIN resources r ON r.key = f.resource`,
		"fields' resources":  `SELECT count(DISTINCT f.resource) FROM fields f JOIN resources r ON r.key = f.resource`,
		"sources' resources": `SELECT count(DISTINCT s.resource) FROM sources s JOIN resources r ON r.key = s.resource`,
		"jobs' resources":    `SELECT count(DISTINCT j.resource) FROM jobs j JOIN resources r ON r.key = j.resource`,
		"audit's resources":  `SELECT count(DISTINCT a.resource) FROM audit a JOIN resources r ON r.key = a.resource`,
	} {
		var c int64
		if err := raw.QueryRow(q).Scan(&c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = c
	}
	return out
}

// diffRows returns the tables whose count changed from a to b, with the
// change.
func diffRows(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for n, c := range b {
		if d := c - a[n]; d != 0 {
			out[n] = d
		}
	}
	return out
}
