package bench

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark/warc"
)

// The webindex scenario's crawl: a link graph with the shape of a real web
// crawl, written as gzipped WARC files. Domains are ranked by popularity
// (Zipf): the popular ones are captured more often and linked to far more
// often, and within a domain the first pages (the home page, then the
// pages near it) draw most links, so a few URLs and domains get most
// inbound links and a long tail gets one or two. Some links lead to pages
// the crawl never captured. The last pages of the crawl are re-captures of
// earlier pages, later, with some links dropped and some added, so that an
// ingest replaces pages' links as well as adding them.

// Shape of the generated graph.
const (
	webMeanLinks     = 13   // links per page, on average (geometric)
	webInternal      = 0.45 // share of a page's links to its own domain
	webDomainS       = 1.0  // Zipf exponent of domain popularity
	webURLS          = 1.2  // exponent of the power law of links to a domain's pages
	webUncaptured    = 3    // each domain's linked-to URLs never captured, per captured page
	webDropLink      = 0.25 // chance a re-capture drops each old link
	webMeanAdded     = 3    // links a re-capture adds, on average
	webRecaptureDays = 45   // re-captures come this long after the first crawl
)

// Salts of the generator's random streams.
const (
	webSaltLayout    = 0x7765_6249_6478_0001
	webSaltPage      = 0x7765_6249_6478_0002
	webSaltRecapture = 0x7765_6249_6478_0003
)

// webEpoch is the capture time of the first page.
var webEpoch = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// WebGraph is a generated crawl: First pages captured once each, then
// Pages-First re-captures of earlier pages. It is deterministic: the same
// seed and sizes give the same pages, links and bytes.
type WebGraph struct {
	Seed    uint64
	Pages   int // pages written, re-captures included
	First   int // pages [0, First) are first captures; the rest re-captures
	Domains int

	names    []string  // domain names by popularity rank
	cdf      []float64 // cumulative Zipf weights of the domains
	dom, idx []int32   // first capture i: its domain, and its number in the domain
	captured []int32   // pages captured per domain
}

// webTarget is a URL of the graph: the k-th page of domain d.
type webTarget struct{ d, k int32 }

// WebPage is one generated capture.
type WebPage struct {
	// N is the page's number in the crawl; Of is the first capture it
	// captures again (N itself for a first capture).
	N, Of int
	URL   string
	Time  time.Time
	// Links are the page's link targets as URLs, in document order, with
	// repeats.
	Links []string
	self  webTarget
	links []webTarget
	// Dropped and Added count, for a re-capture, the old links it left
	// out and the new ones it holds.
	Dropped, Added int
}

// Recapture reports whether the page captures an earlier page again.
func (p *WebPage) Recapture() bool { return p.Of != p.N }

// NewWebGraph lays out a crawl of pages captures, the last recapture share
// of them re-captures of earlier pages, over domains domains (0: one per 20
// first captures, between 50 and 50,000).
func NewWebGraph(seed uint64, pages, domains int, recapture float64) *WebGraph {
	first := pages - int(math.Round(float64(pages)*recapture))
	first = max(1, min(first, pages))
	if domains <= 0 {
		domains = min(50000, max(50, first/20))
	}
	g := &WebGraph{Seed: seed, Pages: pages, First: first, Domains: domains}
	g.cdf = make([]float64, domains)
	sum := 0.0
	for r := range domains {
		sum += math.Pow(float64(r+1), -webDomainS)
		g.cdf[r] = sum
	}
	for r := range g.cdf {
		g.cdf[r] /= sum
	}
	tlds := []string{"com", "org", "net", "de", "co.uk", "fr", "edu", "info"}
	g.names = make([]string, domains)
	for r := range g.names {
		w := webWords[(r*7919)%len(webWords)]
		g.names[r] = fmt.Sprintf("%s%d.%s", w, r, tlds[(r*31)%len(tlds)])
	}
	// half of the captures go to domains as popular, half spread evenly,
	// as a crawler that caps pages per site would
	r := rand.New(rand.NewPCG(seed^webSaltLayout, uint64(pages)))
	g.dom, g.idx = make([]int32, first), make([]int32, first)
	g.captured = make([]int32, domains)
	for i := range first {
		d := int32(r.IntN(domains))
		if r.IntN(2) == 0 {
			d = g.popularDomain(r)
		}
		g.dom[i], g.idx[i] = d, g.captured[d]
		g.captured[d]++
	}
	return g
}

// popularDomain draws a domain by popularity.
func (g *WebGraph) popularDomain(r *rand.Rand) int32 {
	u := r.Float64()
	d, _ := slices.BinarySearch(g.cdf, u)
	return int32(min(d, len(g.cdf)-1))
}

// linkedPage draws a page of domain d by the power law: the home page
// most, the tail least; past the domain's captured pages lie URLs never
// captured.
func (g *WebGraph) linkedPage(r *rand.Rand, d int32) int32 {
	n := float64(g.captured[d])
	space := n + math.Ceil(n*webUncaptured) + 2
	// inverse of the bounded power law P(k) ∝ (k+1)^-s on [0, space)
	a := 1 - webURLS
	hi := math.Pow(space+1, a)
	k := math.Pow(1+r.Float64()*(hi-1), 1/a) - 1
	return int32(min(math.Floor(k), space-1))
}

// DomainName returns the name of the domain of popularity rank r (0 the
// most popular).
func (g *WebGraph) DomainName(r int) string { return g.names[r] }

// host is the host of domain d: most sites answer at www.
func (g *WebGraph) host(d int32) string {
	if d%3 == 1 {
		return g.names[d]
	}
	return "www." + g.names[d]
}

func (g *WebGraph) scheme(d int32) string {
	if d%4 == 0 {
		return "https"
	}
	return "http"
}

// path is the path of the k-th page of a domain.
func (g *WebGraph) path(t webTarget) string {
	if t.k == 0 {
		return "/"
	}
	return "/" + webSections[(int(t.k)*7+int(t.d))%len(webSections)] + "/" + strconv.Itoa(int(t.k)) + ".html"
}

func (g *WebGraph) url(t webTarget) string {
	return g.scheme(t.d) + "://" + g.host(t.d) + g.path(t)
}

// HomePage returns the URL of the home page of the domain of rank r.
func (g *WebGraph) HomePage(r int) string { return g.url(webTarget{int32(r), 0}) }

// geometric draws a count with the given mean (0, 1, 2, …).
func geometric(r *rand.Rand, mean float64) int {
	p := 1 / (mean + 1)
	return int(math.Floor(math.Log(1-r.Float64()) / math.Log(1-p)))
}

// drawLink draws one link of a page of domain own.
func (g *WebGraph) drawLink(r *rand.Rand, own int32) webTarget {
	d := own
	if r.Float64() >= webInternal {
		d = g.popularDomain(r)
	}
	return webTarget{d, g.linkedPage(r, d)}
}

// firstLinks returns the links of first capture i, with its random stream
// positioned after them.
func (g *WebGraph) firstLinks(i int) ([]webTarget, *rand.Rand) {
	r := rand.New(rand.NewPCG(g.Seed^webSaltPage, uint64(i)))
	n := geometric(r, webMeanLinks)
	links := make([]webTarget, n)
	for j := range links {
		links[j] = g.drawLink(r, g.dom[i])
	}
	return links, r
}

// Page returns capture n (0 ≤ n < Pages).
func (g *WebGraph) Page(n int) *WebPage {
	if n < g.First {
		self := webTarget{g.dom[n], g.idx[n]}
		links, _ := g.firstLinks(n)
		return g.page(n, n, self, webEpoch.Add(time.Duration(n)*time.Second), links)
	}
	r := rand.New(rand.NewPCG(g.Seed^webSaltRecapture, uint64(n)))
	of := r.IntN(g.First)
	old, _ := g.firstLinks(of)
	links := make([]webTarget, 0, len(old)+webMeanAdded)
	dropped := 0
	for _, l := range old {
		if r.Float64() < webDropLink {
			dropped++
			continue
		}
		links = append(links, l)
	}
	added := geometric(r, webMeanAdded)
	for range added {
		links = append(links, g.drawLink(r, g.dom[of]))
	}
	// the new links among the old ones
	r.Shuffle(len(links), func(a, b int) { links[a], links[b] = links[b], links[a] })
	at := webEpoch.Add(webRecaptureDays*24*time.Hour + time.Duration(n-g.First)*time.Second)
	p := g.page(n, of, webTarget{g.dom[of], g.idx[of]}, at, links)
	p.Dropped, p.Added = dropped, added
	return p
}

func (g *WebGraph) page(n, of int, self webTarget, at time.Time, links []webTarget) *WebPage {
	p := &WebPage{N: n, Of: of, URL: g.url(self), Time: at, self: self, links: links, Links: make([]string, len(links))}
	for j, l := range links {
		p.Links[j] = g.url(l)
	}
	return p
}

// href is how page p writes its link to t: links within the site are
// mostly relative (to the root or to the page's directory), links to
// other sites absolute.
func (g *WebGraph) href(p *WebPage, t webTarget, r *rand.Rand) string {
	if t.d != p.self.d {
		return g.url(t)
	}
	switch v := r.IntN(10); {
	case v < 6:
		return g.path(t)
	case v < 8 && t.k != 0:
		// every page but the home page sits one directory down
		if p.self.k == 0 {
			return strings.TrimPrefix(g.path(t), "/")
		}
		return ".." + g.path(t)
	default:
		return g.url(t)
	}
}

// HTML returns the page's body: a title, a few hundred bytes of text and
// its links in a list, with a mailto link that is no web link.
func (g *WebGraph) HTML(p *WebPage) []byte {
	r := rand.New(rand.NewPCG(g.Seed^webSaltPage^0xff, uint64(p.N)))
	var b strings.Builder
	b.Grow(600 + 90*len(p.links))
	title := webSentence(r, 3+r.IntN(4))
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
	b.WriteString(title)
	b.WriteString("</title></head>\n<body><header><h1>")
	b.WriteString(title)
	b.WriteString("</h1></header>\n<main>")
	for range 1 + r.IntN(3) {
		b.WriteString("<p>")
		for range 2 + r.IntN(3) {
			b.WriteString(webSentence(r, 6+r.IntN(10)))
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("<ul>\n")
	for _, l := range p.links {
		b.WriteString(`<li><a href="`)
		b.WriteString(g.href(p, l, r))
		b.WriteString(`">`)
		b.WriteString(webWords[r.IntN(len(webWords))])
		b.WriteString("</a></li>\n")
	}
	b.WriteString("</ul></main>\n<footer><a href=\"mailto:webmaster@")
	b.WriteString(g.names[p.self.d])
	b.WriteString("\">contact</a></footer></body></html>\n")
	return []byte(b.String())
}

// WebCrawlFiles describes the WARC files of a generated crawl.
type WebCrawlFiles struct {
	Dir   string
	Paths []string
	Bytes int64
	// Seconds is the time the generation took (0 when the files were
	// there already).
	Seconds float64
}

// webManifest names the file that records what a directory's crawl was
// generated from, so that a later run with the same settings reuses it.
const webManifest = "webindex-crawl.txt"

// WriteWebCrawl writes the crawl's pages in order as gzipped WARC 1.1
// files of perFile pages each (a warcinfo record, then one response record
// per page) into dir, on workers goroutines, and reports progress in pages
// written. When dir already holds the files of the same crawl (same seed
// and sizes), they are reused.
func WriteWebCrawl(ctx context.Context, g *WebGraph, dir string, perFile, workers int, progress func(done int)) (*WebCrawlFiles, error) {
	if perFile <= 0 {
		perFile = 100000
	}
	if workers <= 0 {
		workers = 2
	}
	nfiles := (g.Pages + perFile - 1) / perFile
	out := &WebCrawlFiles{Dir: dir}
	for f := range nfiles {
		out.Paths = append(out.Paths, filepath.Join(dir, fmt.Sprintf("webindex-%05d.warc.gz", f)))
	}
	sig := fmt.Sprintf("seed=%d pages=%d first=%d domains=%d per-file=%d format=1\n", g.Seed, g.Pages, g.First, g.Domains, perFile)
	if b, err := os.ReadFile(filepath.Join(dir, webManifest)); err == nil && string(b) == sig {
		for _, p := range out.Paths {
			fi, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("crawl in %s: %w", dir, err)
			}
			out.Bytes += fi.Size()
		}
		if progress != nil {
			progress(g.Pages)
		}
		return out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(dir, webManifest))
	start := time.Now()
	var done, size atomic.Int64
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range next {
				n, err := g.writeFile(ctx, out.Paths[f], f*perFile, min(g.Pages, (f+1)*perFile), func() {
					if d := done.Add(1); progress != nil && d%1000 == 0 {
						progress(int(d))
					}
				})
				size.Add(n)
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
feed:
	for f := range nfiles {
		select {
		case next <- f:
		case err := <-errs:
			close(next)
			wg.Wait()
			return nil, err
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(g.Pages)
	}
	if err := os.WriteFile(filepath.Join(dir, webManifest), []byte(sig), 0o644); err != nil {
		return nil, err
	}
	out.Bytes, out.Seconds = size.Load(), time.Since(start).Seconds()
	return out, nil
}

// writeFile writes pages [from, to) to path.
func (g *WebGraph) writeFile(ctx context.Context, path string, from, to int, each func()) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := warc.NewWriter(bw, true, "1.1")
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(path)
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if _, _, err := w.WriteWarcinfoAt(webEpoch, filepath.Base(path), [][2]string{{"software", "Shelfmark bench webindex"}, {"format", "WARC File Format 1.1"}}); err != nil {
		return fail(err)
	}
	for n := from; n < to; n++ {
		if n%1000 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
		p := g.Page(n)
		if _, _, err := w.WriteResponse(p.URL, p.Time, 200, "text/html; charset=utf-8", g.HTML(p)); err != nil {
			return fail(err)
		}
		each()
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return w.Offset(), nil
}

// webSentence is a capitalised sentence of n words.
func webSentence(r *rand.Rand, n int) string {
	w := make([]string, n)
	for k := range w {
		w[k] = webWords[r.IntN(len(webWords))]
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

var webSections = strings.Fields(`news about blog products docs archive events people`)

var webWords = strings.Fields(`library archive collection record catalogue shelf reading room
manuscript letter map photograph recording film newspaper journal volume issue
page chapter index note author editor publisher printer binding paper ink
history city river harbour market church school station garden museum theatre
winter summer spring autumn morning evening report survey census register
meeting council society club member friend family village county region
local national open public digital access service guide help contact`)
