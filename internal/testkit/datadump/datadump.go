// Package datadump gives tests the canonical dump of the SQLite repository
// in a data directory (storagetest.Dump of its database), so that a
// backup, a restore or a copy is compared with its original in one line.
// It is a package of its own because it opens the SQLite store and uses
// storagetest, which the packages that use testkit must not depend on.
package datadump

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/storagetest"
)

// SQLite is the canonical dump of the repository whose SQLite database is
// in the data directory data (data/shelfmark.db, as serve keeps it). The
// test fails at once when it cannot be read.
func SQLite(t testing.TB, data string) string {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := storagetest.Dump(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
