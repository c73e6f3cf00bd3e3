package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/warc"
)

// TestWebGraphShape: the generated crawl has the stated shape — about 13
// links a page, a few URLs and domains drawing most links and a long tail
// drawing one or two, links to pages never captured, relative and absolute
// hrefs that resolve to the page's links, and re-captures that drop and
// add links — and is the same for the same seed.
func TestWebGraphShape(t *testing.T) {
	g := NewWebGraph(3, 40000, 0, 0.15)
	if g.First != 34000 || g.Domains != 1700 {
		t.Fatalf("first %d, domains %d", g.First, g.Domains)
	}
	var links, external, uncaptured int
	inbound := map[webTarget]int{}     // distinct linking pages per URL (first captures)
	domainIn := make([]int, g.Domains) // external links per domain
	for n := range g.First {
		p := g.Page(n)
		if p.Recapture() || p.Time.Before(webEpoch) {
			t.Fatalf("page %d: %+v", n, p)
		}
		links += len(p.links)
		seen := map[webTarget]bool{}
		for _, l := range p.links {
			if l.d != p.self.d {
				external++
				domainIn[l.d]++
			}
			if l.k >= g.captured[l.d] {
				uncaptured++
			}
			if !seen[l] && l != p.self {
				seen[l] = true
				inbound[l]++
			}
		}
	}
	mean := float64(links) / float64(g.First)
	if mean < 12.5 || mean > 13.5 {
		t.Errorf("%.2f links a page on average, want about 13", mean)
	}
	if f := float64(external) / float64(links); f < 0.5 || f > 0.6 {
		t.Errorf("%.2f of the links lead to other domains, want 0.55", f)
	}
	if f := float64(uncaptured) / float64(links); f < 0.05 || f > 0.35 {
		t.Errorf("%.3f of the links lead to pages never captured", f)
	}
	// URLs: the top 1% draw a large share of the links, most draw one or two
	counts := make([]int, 0, len(inbound))
	total, few := 0, 0
	for _, c := range inbound {
		counts = append(counts, c)
		total += c
		if c <= 2 {
			few++
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	top := 0
	for _, c := range counts[:len(counts)/100] {
		top += c
	}
	if f := float64(top) / float64(total); f < 0.25 {
		t.Errorf("the top 1%% of URLs draw %.2f of the inbound links, want a heavy head", f)
	}
	if f := float64(few) / float64(len(counts)); f < 0.5 {
		t.Errorf("%.2f of the URLs have one or two inbound links, want a long tail", f)
	}
	// domains: the most popular draws far more than the median one
	if domainIn[0] < external/20 {
		t.Errorf("the top domain draws %d of %d external links", domainIn[0], external)
	}
	sorted := slices.Clone(domainIn)
	slices.Sort(sorted)
	if med := sorted[len(sorted)/2]; med*100 > domainIn[0] {
		t.Errorf("the median domain draws %d external links, the top one %d", med, domainIn[0])
	}
	t.Logf("%.2f links/page; top 1%% of %d URLs: %.2f of inbound; %.2f with ≤ 2; top domain %d of %d external links; %.3f to pages never captured",
		mean, len(counts), float64(top)/float64(total), float64(few)/float64(len(counts)), domainIn[0], external, float64(uncaptured)/float64(links))

	// re-captures: later, of earlier pages, some links dropped and added
	var dropped, added int
	last := g.Page(g.First - 1).Time
	for n := g.First; n < g.Pages; n++ {
		p := g.Page(n)
		if !p.Recapture() || p.Of >= g.First || !p.Time.After(last) || p.URL != g.Page(p.Of).URL {
			t.Fatalf("re-capture %d: of %d at %s", n, p.Of, p.Time)
		}
		dropped, added = dropped+p.Dropped, added+p.Added
	}
	if r := g.Pages - g.First; dropped < r || added < r {
		t.Errorf("%d re-captures dropped %d links and added %d", r, dropped, added)
	}

	// the hrefs: absolute and relative, resolving to the page's links
	var abs, rel int
	for n := range 300 {
		p := g.Page(n + g.First - 150) // first captures and re-captures
		body := g.HTML(p)
		for _, m := range bytes.Split(body, []byte(`href="`))[1:] {
			h := string(m[:bytes.IndexByte(m, '"')])
			switch {
			case strings.HasPrefix(h, "mailto:"):
			case strings.HasPrefix(h, "http://") || strings.HasPrefix(h, "https://"):
				abs++
			default:
				rel++
			}
		}
		got, err := warc.ExtractLinks(bytes.NewReader(body), p.URL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(p.Links) {
			t.Fatalf("page %d: %d links extracted, %d generated", p.N, len(got), len(p.Links))
		}
		for j, u := range p.Links {
			c, err := warc.Canonical(u)
			if err != nil || c.SURT != got[j].SURT {
				t.Fatalf("page %d link %d: %s extracted as %s (%v)", p.N, j, u, got[j].SURT, err)
			}
		}
	}
	if abs < 1000 || rel < 1000 {
		t.Errorf("%d absolute and %d relative hrefs", abs, rel)
	}

	// deterministic
	h := NewWebGraph(3, 40000, 0, 0.15)
	for _, n := range []int{0, 777, 33999, 34000, 39999} {
		a, b := g.Page(n), h.Page(n)
		if !reflect.DeepEqual(a, b) || !bytes.Equal(g.HTML(a), h.HTML(b)) {
			t.Fatalf("page %d differs for the same seed", n)
		}
	}
	if reflect.DeepEqual(g.Page(5).Links, NewWebGraph(4, 40000, 0, 0.15).Page(5).Links) {
		t.Error("another seed gives the same links")
	}
}

// TestWebIndexScenario runs the scenario at a tiny size on SQLite and on
// PostgreSQL (when SHELFMARK_TEST_DATABASE_URL is set) and checks its
// report: the shared fields, the scenario's own, the index's rows against
// an independent count from the generated graph, the raw limit, and the
// HTML report with its charts.
func TestWebIndexScenario(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "store.db")
		db, err := sqlite.Open(ctx, path, sqlite.Options{Relaxed: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testWebIndexScenario(t, db, "", path)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
		if dsn == "" {
			t.Skip("SHELFMARK_TEST_DATABASE_URL is not set")
		}
		ctx := context.Background()
		admin, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		schema := fmt.Sprintf("webindex%d_%d", os.Getpid(), rand.IntN(1e9))
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			t.Fatal(err)
		}
		defer admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		db, err := postgres.Open(ctx, u.String(), postgres.Options{Relaxed: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testWebIndexScenario(t, db, u.String(), "")
	})
}

// webIndexRepo returns a repository on db and a content store in dir,
// and what closes them both (before db is closed).
func webIndexRepo(t *testing.T, db shelfmark.Storage, dir string) (*shelfmark.Repository, *blob.LocalStore, func()) {
	t.Helper()
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := shelfmark.LoadIDCodec(context.Background(), db)
	if err != nil {
		blobs.Close()
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{IDs: ids})
	return repo, blobs, func() {
		repo.Close()
		blobs.Close()
	}
}

func testWebIndexScenario(t *testing.T, db shelfmark.Storage, database, path string) {
	ctx := context.Background()
	dir := t.TempDir()
	repo, blobs, done := webIndexRepo(t, db, dir)
	defer done()
	cfg := WebIndexConfig{Pages: 3000, PagesPerFile: 1000, Batch: 200, Buckets: 10, QRate: 50, ParseOnly: true,
		Database: database, StorePath: path, Relaxed: true, RawSeconds: 0.5, Seed: 9, Dir: filepath.Join(dir, "crawl")}
	stages := map[string]bool{}
	cfg.Progress = func(stage string, done, total int) { stages[stage] = true }
	rep, err := RunWebIndex(ctx, repo, blobs, cfg)
	if err != nil {
		t.Fatal(err)
	}

	// the reference: the graph's current links, counted here
	g := NewWebGraph(9, 3000, 0, 0.15)
	current := map[webTarget]map[webTarget]bool{}
	urls := map[webTarget]bool{}
	doms := map[int32]bool{}
	var links int64
	for n := range g.Pages {
		p := g.Page(n)
		links += int64(len(p.links))
		set := map[webTarget]bool{}
		for _, u := range append([]webTarget{p.self}, p.links...) {
			urls[u], doms[u.d] = true, true
			if u != p.self {
				set[u] = true
			}
		}
		current[p.self] = set // a later capture replaces the links
	}
	var linkRows, homeIn int64
	home := webTarget{0, 0}
	for _, set := range current {
		linkRows += int64(len(set))
		if set[home] {
			homeIn++
		}
	}
	want := WebRows{Domains: int64(len(doms)), URLs: int64(len(urls)), Captures: 3000, Links: linkRows}
	if rep.Rows != nil {
		want.Bytes = rep.Rows.Bytes
	}
	if rep.Rows == nil || *rep.Rows != want {
		t.Errorf("index rows %+v, want %+v", rep.Rows, want)
	}
	// a link row holds two ids, a capture row a record's metadata: the
	// size on disk lies between their bare bytes and a page per link
	if min, max := 16*linkRows, 4096*linkRows; rep.Rows != nil && (rep.Rows.Bytes < min || rep.Rows.Bytes > max) {
		t.Errorf("index size %d bytes for %d link rows, want between %d and %d", rep.Rows.Bytes, linkRows, min, max)
	}
	if b := rep.BytesPerLink(); rep.Rows != nil && b != float64(rep.Rows.Bytes)/float64(links) {
		t.Errorf("BytesPerLink %v, want %d bytes over the crawl's %d links", b, rep.Rows.Bytes, links)
	}
	hc, _ := warc.Canonical(g.HomePage(0))
	info, err := repo.WebLinks(shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test")), shelfmark.WebLinkQuery{SURT: hc.SURT, Limit: 10})
	if err != nil || info.InboundCount != homeIn {
		t.Errorf("inbound links of %s: %+v, %v; want %d", hc.SURT, info, err, homeIn)
	}

	r := rep.Report
	if r.Scenario != "webindex" || r.Backend != db.Backend() || r.Items != links || rep.Pages != 3000 || r.Errors != 0 || len(rep.IngestErrors) != 0 {
		t.Fatalf("report: scenario %q backend %q items %d (want %d) pages %d errors %d %v", r.Scenario, r.Backend, r.Items, links, rep.Pages, r.Errors, rep.IngestErrors)
	}
	if r.Seconds <= 0 || r.RatePerS <= 0 || rep.PagesPerS <= 0 || r.Flatness <= 0 || r.PeakRSSBytes <= 0 || rep.ParseOnlyLinksPerS <= 0 || rep.WARCFiles != 3 || rep.WARCBytes <= 0 {
		t.Errorf("report figures: %+v", rep)
	}
	if rep.Raw == nil || rep.Raw.Pages == 0 || rep.Raw.LinkRows == 0 || rep.Raw.URLRows == 0 || r.RawLimitPerS != rep.Raw.LinksPerS || r.FractionLimit <= 0 || r.RawLimitWhat == "" {
		t.Errorf("raw limit: %+v, %v %v", rep.Raw, r.RawLimitPerS, r.FractionLimit)
	}
	// the raw limit at the index's size: rows of new pages inserted into
	// the index's tables, some of their links to URLs the crawl holds, and
	// taken out again
	if a := rep.RawAtSize; a == nil || a.Pages == 0 || a.CaptureRows != a.Pages || a.URLRows < a.Pages || a.LinkRows == 0 || a.HeldLinks == 0 ||
		a.HeldLinks >= a.LinkRows || a.LinksPerS <= 0 || rep.FractionAtSize != r.RatePerS/a.LinksPerS || rep.LastFractionAtSize <= 0 {
		t.Errorf("raw limit at the index's size: %+v, fraction %v, last %v", a, rep.FractionAtSize, rep.LastFractionAtSize)
	}
	if after, err := CountWebRows(ctx, database, path); err != nil || rep.Rows == nil ||
		[4]int64{after.Domains, after.URLs, after.Captures, after.Links} != [4]int64{rep.Rows.Domains, rep.Rows.URLs, rep.Rows.Captures, rep.Rows.Links} {
		t.Errorf("index rows after the raw limit at its size: %+v, %v; want those before, %+v", after, err, rep.Rows)
	}
	if rep.Queries.Top == 0 || rep.Queries.Links == 0 || rep.Queries.Reads == 0 || rep.Queries.Errors != 0 ||
		rep.QueryTopMS.Max <= 0 || rep.QueryLinksMS.Max <= 0 || rep.QueryReadMS.Max <= 0 || r.LatencyMS.Max <= 0 {
		t.Errorf("queries: %+v, top %+v, links %+v, read %+v", rep.Queries, rep.QueryTopMS, rep.QueryLinksMS, rep.QueryReadMS)
	}
	if len(r.Steps) < 2 || len(rep.Timeline) != len(r.Steps) {
		t.Fatalf("%d steps, %d buckets", len(r.Steps), len(rep.Timeline))
	}
	var sum, pages int64
	for i, s := range r.Steps {
		sum += s.Items
		pages += rep.Timeline[i].Pages
		if s.Seconds <= 0 || s.RawLimit != r.RawLimitPerS {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	if sum != r.Items || pages != rep.Pages {
		t.Errorf("steps hold %d links and %d pages, want %d and %d", sum, pages, r.Items, rep.Pages)
	}
	if rep.RecaptureStartS <= 0 || rep.RecaptureStartS >= r.Seconds || !rep.Timeline[len(rep.Timeline)-1].Recapture || rep.Timeline[0].Recapture {
		t.Errorf("re-captures began at %.2f s of %.2f: %+v", rep.RecaptureStartS, r.Seconds, rep.Timeline)
	}
	for _, s := range []string{"generate", "parse only", "ingest", "raw limit", "raw limit at the index's size"} {
		if !stages[s] {
			t.Errorf("no progress of stage %q", s)
		}
	}

	// the JSON has the fields every report has, and the scenario's own
	out := filepath.Join(dir, "r.json")
	if err := rep.WriteJSON(out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "backend", "items", "seconds", "rate_per_s", "flatness", "raw_limit_per_s", "fraction_of_limit",
		"latency_ms", "peak_rss_bytes", "errors", "steps", "pages", "pages_per_s", "parse_only_links_per_s", "query_top_ms", "query_links_ms", "rows", "raw", "timeline"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON report without %q", k)
		}
	}
	back, err := ReadWebIndexReport(out)
	if err != nil || back.LinksChart().svg() != rep.LinksChart().svg() || back.LatencyChart().svg() != rep.LatencyChart().svg() {
		t.Errorf("the report read back draws other charts (%v)", err)
	}
	if !strings.Contains(rep.Summary(), "links/s") {
		t.Errorf("summary: %s", rep.Summary())
	}

	// the HTML report and its charts
	html := filepath.Join(dir, "html")
	if err := rep.WriteHTML(html); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(html, "index.html"))
	for _, s := range []string{"links indexed per second", `data-name="re-captures"`, `data-name="re-captures begin"`, `data-name="raw limit, empty tables"`, `data-name="raw limit at the final size"`, "inbound p99", "pages indexed per second"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("report page without %q", s)
		}
	}
	for _, f := range []string{"links.svg", "latency.svg"} {
		svg, _ := os.ReadFile(filepath.Join(html, f))
		if !bytes.HasPrefix(svg, []byte("<?xml")) || !bytes.Contains(svg, []byte(`xmlns="http://www.w3.org/2000/svg"`)) {
			t.Errorf("%s is no standalone SVG", f)
		}
	}

	// a second run over the same directory reuses the crawl
	files, err := WriteWebCrawl(ctx, g, cfg.Dir, cfg.PagesPerFile, 0, nil)
	if err != nil || files.Seconds != 0 || len(files.Paths) != 3 || files.Bytes != rep.WARCBytes {
		t.Errorf("crawl not reused: %+v, %v", files, err)
	}
}

// TestInterpolatedSteps: a bucket's count is interpolated between the
// samples around its end, and the steps add up to the last sample.
func TestInterpolatedSteps(t *testing.T) {
	s := []progressSample{{0, 0}, {time.Second, 100}, {3 * time.Second, 300}, {4 * time.Second, 300}}
	steps := interpolatedSteps(s, 4*time.Second, 4)
	var got []int64
	for _, st := range steps {
		got = append(got, st.Items)
		if st.Seconds != 1 || st.RatePerS != float64(st.Items) {
			t.Errorf("step %+v", st)
		}
	}
	if !reflect.DeepEqual(got, []int64{100, 100, 100, 0}) {
		t.Errorf("steps %v", got)
	}
	steps = interpolatedSteps(s, 4*time.Second, 3)
	if n := steps[0].Items + steps[1].Items + steps[2].Items; n != 300 || steps[0].Items != 133 {
		t.Errorf("steps %+v", steps)
	}
}
