package ingest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// pymarcTest is the test folder of the pymarc 5.4.0 source distribution
// (scripts/testdeps.sh fetches it): real Library of Congress records.
func pymarcTest(t *testing.T) string {
	dir := os.Getenv("SHELFMARK_PYMARC_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".build", "testdata", "pymarc-5.4.0")
	}
	dir = filepath.Join(dir, "test")
	if _, err := os.Stat(filepath.Join(dir, "bad_records.mrc")); err != nil {
		t.Fatalf("pymarc test records not found (run scripts/testdeps.sh): %v", err)
	}
	return dir
}

// TestMARCBadRecords: pymarc's bad_records.mrc holds nine records, six of
// them broken in different ways (base address past the end, zero, a
// directory of the wrong length, a non-ASCII directory, a base address
// with a letter, no fields) and the last one truncated. The good ones are
// stored (the two are the same record: stored once), each bad one is
// reported by its position, and the run goes on.
func TestMARCBadRecords(t *testing.T) {
	path := filepath.Join(pymarcTest(t), "bad_records.mrc")
	ctx := context.Background()
	src, err := OpenMARC(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := src.(Counter).Count(ctx); err != nil || n != 9 {
		t.Errorf("count %d, %v; want 9", n, err)
	}
	e := newPipelineEnv(t)
	repo, blobs := e.repo, e.blobs
	stats, err := Run(ctx, repo, blobs, src, Options{})
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	// records 1 and 8 are the same bytes without a 001: one record, stored
	// once, the second skipped as stored before, naming the first
	if stats.Stored != 1 || stats.Skipped != 1 || stats.Failed != 7 {
		t.Fatalf("stored %d, skipped %d, failed %d; want 1, 1 and 7: %+v", stats.Stored, stats.Skipped, stats.Failed, stats.Failures)
	}
	if len(stats.Skips) != 1 || !strings.HasPrefix(stats.Skips[0].Key, "marc:record:") || stats.Skips[0].ID == "" {
		t.Errorf("skips %+v", stats.Skips)
	}
	var positions []string
	for _, f := range stats.Failures {
		if !strings.Contains(f.Reason, "record ") || !strings.Contains(f.Key, "bad_records.mrc#") {
			t.Errorf("failure without a position: %+v", f)
		}
		positions = append(positions, f.Key[strings.Index(f.Key, "#")+1:])
	}
	slices.Sort(positions)
	if want := []string{"2", "3", "4", "5", "6", "7", "9"}; !slices.Equal(positions, want) {
		t.Errorf("bad records at %v, want %v", positions, want)
	}
}

// TestMARCIngest: every record of test.dat becomes a work with Dublin Core
// metadata and its record kept byte for byte as a source file; a second
// run skips them all (source keys from the 001).
func TestMARCIngest(t *testing.T) {
	path := filepath.Join(pymarcTest(t), "test.dat")
	ctx := context.Background()
	e := newPipelineEnv(t)
	repo, blobs := e.repo, e.blobs
	for run := 0; run < 2; run++ {
		src, err := OpenMARC(path)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := Run(ctx, repo, blobs, src, Options{})
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 && (stats.Stored != 10 || stats.Failed != 0) || run == 1 && (stats.Skipped != 10 || stats.Stored != 0) {
			t.Fatalf("run %d: %+v", run+1, stats)
		}
	}
	found, err := repo.FindSources(ctx, []string{"marc:IMchF:fol05731351"})
	if err != nil || found["marc:IMchF:fol05731351"] == "" {
		t.Fatalf("first record not found by its 001: %v %v", found, err)
	}
	work, err := repo.FindResource(ctx, found["marc:IMchF:fol05731351"])
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range work.Metadata {
		if s.Predicate == shelfmark.NSDC+"title" {
			titles = append(titles, s.Object.Value)
		}
	}
	if len(titles) != 1 || !strings.HasPrefix(titles[0], "ActivePerl with ASP and ADO") {
		t.Errorf("title %q", titles)
	}
	kids, err := repo.ListChildren(ctx, work.ID, shelfmark.PageRequest{Limit: 10})
	if err != nil || len(kids.Items) != 1 {
		t.Fatalf("children %v %v", kids, err)
	}
	files, err := repo.ListChildren(ctx, kids.Items[0].ID, shelfmark.PageRequest{Limit: 10})
	if err != nil || len(files.Items) != 1 {
		t.Fatalf("file %v %v", files, err)
	}
	fr, err := repo.FindResource(ctx, files.Items[0].ID)
	if err != nil || fr.File == nil {
		t.Fatalf("file %v %v", fr, err)
	}
	f := fr.File
	if f.Use != shelfmark.UseSource || f.MediaType != "application/marc" {
		t.Errorf("source file %+v", f)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := raw[:strings.IndexByte(string(raw), 0x1D)+1]
	rc, err := blobs.Open(ctx, f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := make([]byte, len(first)+1)
	n, _ := rc.Read(got)
	if string(got[:n]) != string(first) {
		t.Errorf("the kept record is not the first record byte for byte (%d vs %d bytes)", n, len(first))
	}
}
