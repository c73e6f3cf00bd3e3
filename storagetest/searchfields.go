package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testSearchFields: a field term (title:, creator:, subject:, date:)
// matches that field of a record and nothing else: not the same words in
// another field, in the body or in a page; with a prefix, a phrase, a
// leading minus and OR; a date range finds the records whose years
// overlap it; a snippet never shows the date tokens; the records the
// indexer makes from metadata carry their creators, subjects and years;
// the date and title sorts order hits by their work's record.
func testSearchFields(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	stmt := func(p, v string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDCTerms + p, Object: shelfmark.NewLiteral(v)}
	}
	type rec struct {
		name string
		md   []shelfmark.Statement
	}
	recs := []rec{
		{"moby", []shelfmark.Statement{stmt("title", "Moby Dick"), stmt("creator", "Herman Melville"), stmt("subject", "Whaling"),
			stmt("subject", "Sea stories"), stmt("issued", "1851"), stmt("description", "The whale and the sea")}},
		{"typee", []shelfmark.Statement{stmt("title", "Typee"), stmt("creator", "Melville, Herman"), stmt("subject", "Travel"),
			stmt("date", "1846"), stmt("description", "A peep at Polynesian life")}},
		{"study", []shelfmark.Statement{stmt("title", "Melville and the whale"), stmt("creator", "Olson, Charles"), stmt("subject", "Melville, Herman"),
			stmt("created", "1947"), stmt("description", "On Herman Melville and whaling fiction")}},
		{"dickens", []shelfmark.Statement{stmt("title", "Bleak House"), stmt("creator", "Charles Dickens"), stmt("subject", "Fiction"),
			stmt("date", "1852/1853"), stmt("description", "Fog everywhere, and a whale of a lawsuit")}},
		{"undated", []shelfmark.Statement{stmt("title", "A whale's tale"), stmt("creator", "Anonymous"), stmt("description", "No date is known")}},
	}
	nrs := make([]*shelfmark.NewResource, len(recs))
	for i, r := range recs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: r.md}
	}
	made, errs := e.repo.CreateResources(ctx, nrs)
	key := map[string]int64{}
	name := map[int64]string{}
	for i, r := range recs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		key[r.name] = keyOf(t, made[i].ID)
		name[key[r.name]] = r.name
	}
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	// a page of Moby Dick that names the others' creators in its text
	page := key["moby"] + 1000
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: page, Work: key["moby"], Kind: shelfmark.KindFileSet, Format: "JPEG",
			Body: "Call me Ishmael. Charles Dickens, Melville, travel, fiction, 1851 1947 Typee title creator subject date"}})
	})
	view(t, e, func(tx shelfmark.ReadTx) error {
		d, err := tx.SearchDoc(ctx, key["dickens"])
		if err != nil {
			return err
		}
		if d.Creator != "Charles Dickens" || d.Subject != "Fiction" || d.DateLo != 1852 || d.DateHi != 1853 || !strings.Contains(d.Body, "Fog") {
			t.Errorf("the indexed record: %+v", d)
		}
		return nil
	})
	now := time.Now()
	find := func(text string, group bool) []string {
		t.Helper()
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: now, Group: group, Limit: shelfmark.MaxSearchLimit})
			return err
		})
		var out []string
		for _, h := range res.Hits {
			n := name[h.Key]
			if h.Key == page {
				n = "page"
			}
			if strings.Contains(h.Snippet, "y18") || strings.Contains(h.Snippet, "d18") || strings.Contains(h.Snippet, "m1 ") {
				t.Errorf("%q: the snippet of %s shows date tokens: %q", text, n, h.Snippet)
			}
			out = append(out, n)
		}
		slices.Sort(out)
		return out
	}
	for text, want := range map[string]string{
		"melville":                           "moby page study typee",
		"creator:melville":                   "moby typee",
		"creator:melv*":                      "moby typee",
		`creator:"herman melville"`:          "moby",
		`creator:"melville herman"`:          "typee",
		"subject:melville":                   "study",
		"title:melville":                     "study",
		"title:whale":                        "study undated",
		"title:whales":                       "study undated", // stemmed as any word
		"whale -title:whale":                 "dickens moby",
		"subject:whal*":                      "moby",
		"creator:dickens OR subject:whaling": "dickens moby",
		"creator:charles -subject:fiction":   "study",
		"date:1851":                          "moby",
		"date:1850..1860":                    "dickens moby",
		"date:1853-1847":                     "dickens moby",
		"date:..1850":                        "typee",
		"date:1900..":                        "study",
		"date:1800..1899 whale":              "dickens moby",
		"whale -date:1800..1899":             "study undated",
		"date:1852 OR date:1846":             "dickens typee",
		"typee":                              "page typee",
		"title:typee":                        "typee",
		"ishmael creator:melville":           "",
	} {
		got := strings.Join(find(text, false), " ")
		if got != want {
			t.Errorf("%q finds %q, want %q", text, got, want)
		}
	}
	// a field term's words are marked where the body holds them; a date
	// term marks nothing, and the snippet is the body's beginning
	for text, marked := range map[string]bool{"creator:melville": true, "date:1840..1860": false} {
		view(t, e, func(tx shelfmark.ReadTx) error {
			res, err := tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: now})
			if err != nil {
				return err
			}
			for _, h := range res.Hits {
				if strings.Contains(h.Snippet, shelfmark.SnippetStart) != marked || marked && !strings.Contains(strings.ToLower(h.Snippet), shelfmark.SnippetStart+"melville") {
					t.Errorf("%q: the snippet of %s is %q", text, name[h.Key], h.Snippet)
				}
			}
			return nil
		})
	}
	// the decades of the hits' works' records, counted as the other
	// facets: by document, or by work when grouped; undated works not
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, c := range []struct {
			group bool
			want  string
		}{{false, "[{1850 3} {1840 1} {1940 1}]"}, {true, "[{1850 2} {1840 1} {1940 1}]"}} {
			res, err := tx.Search(ctx, shelfmark.SearchQuery{Text: "whale OR typee OR ishmael", Now: now, Facets: true, Group: c.group})
			if err != nil {
				return err
			}
			if got := fmt.Sprint(res.Decades); got != c.want {
				t.Errorf("decades (grouped %v): %s, want %s", c.group, got, c.want)
			}
		}
		return nil
	})
	// grouped, a page's work comes once with its record
	if got := strings.Join(find("melville", true), " "); got != "moby study typee" {
		t.Errorf("melville, grouped: %q", got)
	}
	// the date sorts: by the year of each hit's work, either way, those
	// without a date last, page after page
	walk := func(text, sort string, group bool) []string {
		t.Helper()
		q := shelfmark.SearchQuery{Text: text, Now: now, Group: group, Sort: sort, Limit: 2}
		var out []string
		for range 10 {
			var res *shelfmark.SearchResult
			view(t, e, func(tx shelfmark.ReadTx) (err error) {
				res, err = tx.Search(ctx, q)
				return err
			})
			for _, h := range res.Hits {
				n := name[h.Key]
				if h.Key == page {
					n = "page"
				}
				out = append(out, fmt.Sprintf("%s:%v", n, h.Score))
			}
			if res.Next == nil {
				return out
			}
			q.After = res.Next
		}
		t.Fatalf("%q sorted by %s: no end", text, sort)
		return nil
	}
	for _, c := range []struct {
		text, sort string
		group      bool
		want       string
	}{
		{"whale", shelfmark.SearchSortDate, false, "typee:-1846 moby:-1851 page:-1851 dickens:-1852 study:-1947 undated:-100000"},
		{"whale", shelfmark.SearchSortDateDesc, false, "study:1947 dickens:1853 moby:1851 page:1851 typee:1846 undated:-100000"},
		{"whale", shelfmark.SearchSortDate, true, "typee:-1846 moby:-1851 dickens:-1852 study:-1947 undated:-100000"},
		{"", shelfmark.SearchSortDateDesc, true, "study:1947 dickens:1853 moby:1851 typee:1846 undated:-100000"},
		// by title, A to Z: Bleak House, Melville and the whale, Moby
		// Dick, Typee, (A) whale's tale; the page with its work
		{"whale", shelfmark.SearchSortTitle, false, "dickens study moby page typee undated"},
		{"", shelfmark.SearchSortTitle, true, "dickens study moby typee undated"},
	} {
		if c.text != "" { // every record, and the page
			c.text = "whale OR typee OR ishmael"
		}
		got := strings.Join(walk(c.text, c.sort, c.group), " ")
		if c.sort == shelfmark.SearchSortTitle { // the names alone: the keys are long
			var names []string
			for _, h := range strings.Fields(got) {
				n, _, _ := strings.Cut(h, ":")
				names = append(names, n)
			}
			got = strings.Join(names, " ")
		}
		if got != c.want {
			t.Errorf("%q sorted by %s (grouped %v): %s, want %s", c.text, c.sort, c.group, got, c.want)
		}
	}
}

// testSearchFieldWindows: a query that only records can match (a date
// range alone, a field term) is grouped without looking for each work's
// matches in newer windows, since a work has one record: walked a page at
// a time across two windows and a half, each record comes once, every
// one of them, by relevance and by date (earliest first, page after page
// in date order within each window).
func testSearchFieldWindows(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	n := 2*shelfmark.SearchWindow + 500
	nrs := make([]*shelfmark.NewResource, n)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork}
	}
	works, errs := e.repo.CreateResources(ctx, nrs)
	var docs []shelfmark.SearchDoc
	for i, w := range works {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		k := keyOf(t, w.ID)
		y := 1800 + i%150
		docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork, Title: "record", Creator: "Melville",
			DateLo: y, DateHi: y},
			// a page of each, with its record's words: never a hit
			shelfmark.SearchDoc{Key: k + int64(n)*10, Work: k, Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "record Melville 1850"})
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	now := time.Now()
	for _, q := range []shelfmark.SearchQuery{
		{Text: "date:1800..1949"},
		{Text: "creator:melville"},
		{Text: "date:1800..1949", Sort: shelfmark.SearchSortDate},
	} {
		q.Now, q.Group, q.Limit = now, true, shelfmark.MaxSearchLimit
		seen := map[int64]bool{}
		var last float64
		for page := 0; ; page++ {
			var res *shelfmark.SearchResult
			view(t, e, func(tx shelfmark.ReadTx) (err error) {
				res, err = tx.Search(ctx, q)
				return err
			})
			for i, h := range res.Hits {
				if seen[h.Key] || h.Key != h.Work || h.Matches != 0 {
					t.Fatalf("%q (%s), page %d: hit %+v again, or not a record alone", q.Text, q.Sort, page, h)
				}
				seen[h.Key] = true
				if q.Sort != "" && i > 0 && h.Score > last {
					t.Fatalf("%q by date, page %d: %v after %v", q.Text, page, h.Score, last)
				}
				last = h.Score
			}
			if res.Next == nil || page > 2*n/shelfmark.MaxSearchLimit {
				break
			}
			q.After = res.Next
		}
		if len(seen) != n {
			t.Errorf("%q (%s): %d records walked, want %d", q.Text, q.Sort, len(seen), n)
		}
	}
}
