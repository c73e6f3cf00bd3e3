package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestFixityCommand: shelfmark fixity run checks every original and
// prints what it found; a damaged original (no preservation copy to
// repair it from) makes it fail and shows in fixity report --failed, as
// text and as CSV; fixity run ID checks the one file.
func TestFixityCommand(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	var files []*shelfmark.Resource
	var shas []string
	w, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		body := bytes.Repeat([]byte{byte('a' + i)}, 100<<10)
		b, err := blobs.Put(ctx, bytes.NewReader(body), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		set, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID})
		if err != nil {
			t.Fatal(err)
		}
		f, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
			Name: "p.bin", MediaType: "application/octet-stream", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
		if err != nil {
			t.Fatal(err)
		}
		files, shas = append(files, f), append(shas, b.Digests[shelfmark.SHA256])
	}
	repo.Close()
	blobs.Close()
	db.Close()
	run := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		root.SetErr(&errw)
		root.SetArgs(append(args[:1:1], append([]string{args[1], "--data", data}, args[2:]...)...))
		err := root.ExecuteContext(ctx)
		return out.String(), err
	}
	out, err := run("fixity", "run", "--preservation", "off")
	if err != nil || !strings.Contains(out, "checked 2 copies (204800 bytes): 2 whole, 0 repaired, 0 damaged") {
		t.Fatalf("a pass over whole copies: %q, %v", out, err)
	}
	p := filepath.Join(data, "blobs", shas[1][0:2], shas[1][2:4], shas[1])
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte{'z'}, 100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run("fixity", "run", "--all", "--preservation", "off")
	if err == nil || !strings.Contains(out, "1 whole, 0 repaired, 1 damaged") {
		t.Fatalf("a pass over a damaged copy: %q, %v", out, err)
	}
	out, err = run("fixity", "run", "--preservation", "off", string(files[0].ID))
	if err != nil || !strings.Contains(out, "checked 1 copies") {
		t.Fatalf("a run over one whole file: %q, %v", out, err)
	}
	out, err = run("fixity", "report", "--failed")
	if err != nil || !strings.Contains(out, "files damaged now: 1") || !strings.Contains(out, string(files[1].ID)) || strings.Contains(out, string(files[0].ID)) {
		t.Fatalf("the report of failures: %q, %v", out, err)
	}
	out, err = run("fixity", "report", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][0] != "id" {
		t.Fatalf("the CSV report: %q, %v", out, err)
	}
	for _, r := range recs[1:] {
		damaged := r[0] == string(files[1].ID)
		if want := map[bool]string{true: "damaged", false: "ok"}[damaged]; r[4] != want || r[5] != map[bool]string{true: "true", false: "false"}[damaged] {
			t.Errorf("a CSV row: %v", r)
		}
	}
}
