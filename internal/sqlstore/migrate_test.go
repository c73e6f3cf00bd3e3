package sqlstore

import (
	"context"
	"testing"
	"testing/fstest"
)

// TestMigrationsMerge: a backend's migrations are merged with the shared
// ones by number, a backend file replacing the shared one of its number,
// and Migrate applies in order only those not recorded.
func TestMigrationsMerge(t *testing.T) {
	own := fstest.MapFS{
		"migrations/0001_init.sql":  {Data: []byte("own 1")},
		"migrations/0011_blobs.sql": {Data: []byte("own 11")},
		"migrations/0008_roots.sql": {Data: []byte("own 8")},
	}
	ms, err := Migrations(own)
	if err != nil {
		t.Fatal(err)
	}
	ms = upTo(ms, 11) // the shared migrations after 11 are not this test's
	var got []string
	for _, m := range ms {
		got = append(got, m.Name+"="+m.SQL)
	}
	want := []string{"0001_init.sql=own 1", "0008_roots.sql=own 8", "0011_blobs.sql=own 11"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}

	delete(own, "migrations/0008_roots.sql")
	ms, err = Migrations(own)
	if err != nil {
		t.Fatal(err)
	}
	ms = upTo(ms, 11)
	if len(ms) != 3 || ms[1].Name != "0008_roots.sql" || ms[1].SQL == "own 8" || ms[1].Version != 8 {
		t.Fatalf("the shared 0008 is not merged: %+v", ms)
	}
	var applied []int64
	err = Migrate(context.Background(), ms,
		func(_ context.Context, m Migration) (bool, error) { return m.Version == 1, nil },
		func(_ context.Context, m Migration) error { applied = append(applied, m.Version); return nil })
	if err != nil || len(applied) != 2 || applied[0] != 8 || applied[1] != 11 {
		t.Fatalf("applied %v, %v; want [8 11]", applied, err)
	}

	own["migrations/0011_other.sql"] = &fstest.MapFile{Data: []byte("x")}
	if _, err := Migrations(own); err == nil {
		t.Fatal("two files of one number: no error")
	}
}

// upTo is the migrations of ms up to version n.
func upTo(ms []Migration, n int64) []Migration {
	var out []Migration
	for _, m := range ms {
		if m.Version <= n {
			out = append(out, m)
		}
	}
	return out
}
