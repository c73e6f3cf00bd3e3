package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeySetSpills: past its limit a keySet moves its keys to disk, still
// finds every key with its row and no other, and close deletes the file.
func TestKeySetSpills(t *testing.T) {
	k := newKeySet()
	k.limit = 100
	for i := 0; i < 25000; i++ {
		if err := k.add(fmt.Sprintf("csv:k%d", i), i+2); err != nil {
			t.Fatal(err)
		}
		if i == 98 && k.db != nil || i == 99 && k.db == nil {
			t.Fatalf("after %d keys: spilled = %v", i+1, k.db != nil)
		}
	}
	if k.mem != nil {
		t.Fatal("keys still in memory after the spill")
	}
	for _, i := range []int{0, 50, 99, 100, 12345, 24999} {
		row, ok, err := k.get(fmt.Sprintf("csv:k%d", i))
		if err != nil || !ok || row != i+2 {
			t.Fatalf("key %d: row %d, %v, %v", i, row, ok, err)
		}
	}
	if _, ok, err := k.get("csv:k25000"); ok || err != nil {
		t.Fatalf("absent key found: %v %v", ok, err)
	}
	dir := k.dir
	if err := k.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temporary database left: %v", err)
	}
}

// TestCSVRepeatAfterSpill: a repeated identifier is still found when the
// keys seen have moved to disk.
func TestCSVRepeatAfterSpill(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,title\n")
	n := memKeys + 1000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "w%d,Work %d\n", i, i)
	}
	b.WriteString("w5,Again\n")
	p := filepath.Join(t.TempDir(), "big.csv")
	writeFile(t, p, b.String())
	src, err := OpenCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	rs := drain(t, src)
	if len(rs) != n+1 {
		t.Fatalf("%d results, want %d", len(rs), n+1)
	}
	wantItemError(t, rs[n], "already used at row 7")
	if cs := src.(*csvSource); cs.seen.db != nil {
		t.Fatal("Close left the keys database open")
	}
}
