package postgres

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/oai"
)

var (
	oaiIdentifier = regexp.MustCompile(`<identifier>([^<]+)</identifier>`)
	oaiToken      = regexp.MustCompile(`<resumptionToken[^>]*>([^<]*)</resumptionToken>`)
)

// checkHarvestBehind runs inside TestReplicaPaused (replay paused, a lag
// bound the pause does not reach): a harvest whose first page came from
// the primary (one server) and whose next pages are marked for the
// replica (another server, behind it) still lists every record once,
// because a page that ends before the record the previous page saw next
// is read again from the primary.
func checkHarvestBehind(t *testing.T, db *DB) {
	ctx := context.Background()
	s := newReplicaServer(t, db)
	for range 5 {
		res, body := s.do("POST", "/api/v1/works", `{"visibility":"public"}`)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("create a public work: %d %s", res.StatusCode, body)
		}
	}
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	formats := oai.DefaultRegistry()
	if _, err := oai.NewProjector(db, blobs, formats, oai.ProjectorOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := oai.NewProvider(db, formats, oai.Config{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context, query string) (ids []string, token string) {
		t.Helper()
		req := httptest.NewRequest("GET", "/oai?"+query, nil).WithContext(ctx)
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /oai?%s: %d %s", query, rec.Code, truncateBody(body))
		}
		for _, m := range oaiIdentifier.FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		if m := oaiToken.FindStringSubmatch(body); m != nil {
			token = m[1]
		}
		return ids, token
	}
	harvest := func(next context.Context) map[string]int {
		seen := map[string]int{}
		ids, token := get(ctx, "verb=ListIdentifiers&metadataPrefix=oai_dc") // the first page: the primary
		for pages := 1; ; pages++ {
			for _, id := range ids {
				seen[id]++
			}
			if token == "" || pages > 50 {
				return seen
			}
			ids, token = get(next, "verb=ListIdentifiers&resumptionToken="+token)
		}
	}
	all := harvest(ctx) // every page from the primary
	if len(all) < 5 {
		t.Fatalf("the primary lists %d records, want at least the 5 public works", len(all))
	}
	before := db.ReplicaStats().ReadsReplica
	seen := harvest(shelfmark.WithReplicaRead(ctx, ""))
	if len(seen) != len(all) {
		t.Errorf("the harvest with later pages marked for the replica listed %d records, the primary %d", len(seen), len(all))
	}
	for id, n := range seen {
		if n != 1 || all[id] != 1 {
			t.Errorf("%s listed %d times (the primary: %d)", id, n, all[id])
		}
	}
	if db.ReplicaStats().ReadsReplica == before {
		t.Errorf("no page was read from the replica first")
	}
}
