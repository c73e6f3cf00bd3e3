package storagetest

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
)

// testCostWebLinks: a page of a URL's links (its row, domain and current
// capture; a page of the pages linking to it; the access of the capture's
// WARC file; the names of a page of its outbound links) is four
// statements, whatever the page's size; on a server the last three go in
// one round trip.
func testCostWebLinks(t *testing.T, open Opener) {
	crawl := GenerateCrawl(11, 150, 1)
	paths, err := crawl.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	blobs := localBlobs(t)
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	if _, err := ingest.IngestWARC(ctx, e.repo, blobs, paths, ingest.WARCOptions{Crawl: "cost"}); err != nil {
		t.Fatal(err)
	}
	// a URL with pages linking to it and a current capture with links
	var surt string
	domains, err := e.repo.WebTop(ctx, "", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		top, err := e.repo.WebTop(ctx, d.Name, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range top {
			info, err := e.repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: u.SURT})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Inbound) > 2 && len(info.Outbound) > 2 && info.Current != nil {
				surt = u.SURT
				break
			}
		}
		if surt != "" {
			break
		}
	}
	if surt == "" {
		t.Fatal("the crawl has no URL that is linked to and was captured with links")
	}
	page := func(limit int) []call {
		return e.rec.capture(func() {
			info, err := e.repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: surt, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Inbound) == 0 || len(info.Outbound) == 0 || info.Current == nil {
				t.Fatalf("links of %s, %d a page: %+v", surt, limit, info)
			}
		})
	}
	small, large := page(1), page(100)
	if len(small) != 4 || len(large) != 4 {
		t.Errorf("a page of links: %d statements (1 a page) and %d (100 a page), want 4:\n%s\n%s", len(small), len(large), dump(small), dump(large))
	}
	for i := range min(len(small), len(large)) {
		if small[i].query != large[i].query {
			t.Errorf("statement %d: %q with 1 a page, %q with 100", i, small[i].query, large[i].query)
		}
	}
	if reads := countCalls(large, "FROM resources"); reads != 1 {
		t.Errorf("the access of the capture's file read resources in %d statements, want 1:\n%s", reads, dump(large))
	}
}
