package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// TestStemLanguages: the tokenizer shelfmark (stem.c) stems the languages
// of shelfmark.SearchLanguages, in their order; a document in any other
// locale is stemmed in English.
func TestStemLanguages(t *testing.T) {
	if got, want := stemLanguages(), shelfmark.SearchLanguages(); !slices.Equal(got, want) {
		t.Fatalf("stem.c stems %q, the root package's SearchLanguages are %q", got, want)
	}
}

// TestPutSearchDocsPlan: the statements that write documents read no
// table whole: the language of a page's work is a look-up of its text
// by key, and the pages of the records written are found through
// search_docs_work (one look-up a record) and their text by key.
func TestPutSearchDocsPlan(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	docs := []shelfmark.SearchDoc{{Key: 1, Work: 1, Kind: shelfmark.KindWork, Title: "t", Lang: "french"},
		{Key: 2, Work: 1, Kind: shelfmark.KindFileSet, Body: "b"}}
	rows := sqlstore.Rows{Cols: sqlstore.SearchDocCols, N: len(docs), Row: func(i int, v []any) {
		for j := range v {
			v[j] = nil
		}
		v[0], v[1], v[2], v[3], v[4], v[5], v[6] = docs[i].Key, docs[i].Work, string(docs[i].Kind), "", docs[i].Title, docs[i].Body, docs[i].Work
		v[7], v[8], v[9], v[13] = "", "", "", docs[i].Lang
	}}
	from, args, err := fromRows(rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, stmt := range putSearchDocs {
		plan := explain(t, db, stmt(from), args)
		for _, d := range plan {
			if strings.HasPrefix(d, "SCAN ") && !strings.Contains(d, "json_each") && !strings.HasPrefix(d, "SCAN v") {
				t.Errorf("statement %d reads a table whole (%s):\n%s", i, d, strings.Join(plan, "\n"))
			}
		}
		t.Logf("statement %d:\n%s", i, strings.Join(plan, "\n"))
	}
}
