package shelfmark_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestEngineRefusesBadFileNames stores files through the engine, as ingest
// and the workers do, bypassing the HTTP layer's normalisation: a name with
// a path, a control character or too many bytes is refused with EINVALID
// and nothing is stored.
func TestEngineRefusesBadFileNames(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "names.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	work, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) *shelfmark.NewResource {
		return &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: name, MediaType: "text/plain", Size: 1, SHA256: fmt.Sprintf("%064x", 1), Use: "original"}}
	}
	for _, name := range []string{"../../x", `a\b`, "a\nb", strings.Repeat("n", shelfmark.MaxFileNameBytes+1), ""} {
		if _, err := repo.CreateResource(ctx, file(name)); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("name %.40q: %v", name, err)
		}
	}
	if _, err := repo.CreateResource(ctx, file(strings.Repeat("n", shelfmark.MaxFileNameBytes))); err != nil {
		t.Errorf("a name of %d bytes: %v", shelfmark.MaxFileNameBytes, err)
	}
}
