package storagetest

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/warc"
)

// A generated crawl with a known link graph, and an in-memory reference of
// what the link index must hold after it, computed from the graph alone.

// CrawlRecord is one record of a generated crawl.
type CrawlRecord struct {
	// File is the index of the file that holds it.
	File int
	// Kind is "html" (an HTML response), "png" (a non-HTML response),
	// "request", "revisit" or "wat" (a WAT metadata record).
	Kind string
	URL  string
	Time time.Time
	// Status is the HTTP status of a response.
	Status int
	// Hrefs are the links as written in the page (relative, repeated,
	// with fragments, malformed, ...); Targets the absolute URLs the
	// valid ones must resolve to, with repeats.
	Hrefs, Targets []string
}

// Crawl is a generated crawl.
type Crawl struct {
	Records []CrawlRecord
	Files   int
}

var crawlHosts = []string{"a.example", "b.example.org", "www.c.example", "d.example.co.uk", "news.d.example.co.uk", "192.0.2.7"}

// GenerateCrawl makes a crawl of pages pages over a few hosts, captured
// first in file 0, then again (later, and some earlier) in the other files
// with links dropped and added, with repeated links, self-links, relative,
// malformed and non-ASCII links, non-HTML records and WAT records.
func GenerateCrawl(seed int64, pages, files int) *Crawl {
	rnd := rand.New(rand.NewSource(seed))
	if files < 2 {
		files = 2
	}
	c := &Crawl{Files: files}
	pageURL := func(i int) string {
		return fmt.Sprintf("http://%s/p%d", crawlHosts[i%len(crawlHosts)], i)
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	// one capture of a URL per second: WARC 1.0 dates have whole seconds,
	// and the reference must not need record ids to break ties
	used := map[string]bool{}
	at := func(i, round int) time.Time {
		for {
			t := base.Add(time.Duration(round)*24*time.Hour + time.Duration(rnd.Intn(86400))*time.Second + time.Duration(rnd.Intn(1000))*time.Microsecond)
			if k := fmt.Sprintf("%d|%d", i, t.Unix()); !used[k] {
				used[k] = true
				return t
			}
		}
	}
	links := func(i int) (hrefs, targets []string) {
		n := rnd.Intn(16)
		host := crawlHosts[i%len(crawlHosts)]
		for range n {
			// a few popular targets, a long tail
			j := rnd.Intn(pages)
			if rnd.Intn(3) == 0 {
				j = rnd.Intn(3)
			}
			t := pageURL(j)
			switch {
			case strings.Contains(t, "//"+host+"/") && rnd.Intn(2) == 0:
				hrefs = append(hrefs, t[strings.Index(t, host)+len(host):]) // "/p12"
			case strings.Contains(t, "//"+host+"/"):
				hrefs = append(hrefs, fmt.Sprintf("p%d", j)) // relative to "/"
			case rnd.Intn(4) == 0:
				hrefs = append(hrefs, strings.ToUpper(t[:strings.Index(t, "/p")])+fmt.Sprintf("/p%d#top", j))
			default:
				hrefs = append(hrefs, t)
			}
			targets = append(targets, t)
		}
		if rnd.Intn(4) == 0 { // a repeated link
			if len(hrefs) > 0 {
				hrefs = append(hrefs, hrefs[0])
				targets = append(targets, targets[0])
			}
		}
		if rnd.Intn(4) == 0 { // a self-link, which does not count
			hrefs = append(hrefs, "")
			targets = append(targets, pageURL(i))
		}
		if rnd.Intn(5) == 0 { // the page with a query: another URL
			hrefs = append(hrefs, "?q=1")
			targets = append(targets, pageURL(i)+"?q=1")
		}
		if rnd.Intn(5) == 0 { // not links
			hrefs = append(hrefs, "mailto:a@b.example", "javascript:void(0)", "http://[::1")
		}
		if rnd.Intn(6) == 0 { // Latin-1 bytes in a URL
			hrefs = append(hrefs, "http://a.example/caf\xe9")
			targets = append(targets, "http://a.example/caf\xe9")
		}
		return hrefs, targets
	}
	for i := range pages {
		h, t := links(i)
		c.Records = append(c.Records, CrawlRecord{File: 0, Kind: "html", URL: pageURL(i), Time: at(i, 0), Status: 200, Hrefs: h, Targets: t})
		if i%7 == 0 {
			c.Records = append(c.Records, CrawlRecord{File: 0, Kind: "png", URL: pageURL(i) + ".png", Time: at(i, 0), Status: 200})
		}
		if i%5 == 0 {
			c.Records = append(c.Records, CrawlRecord{File: 0, Kind: "request", URL: pageURL(i), Time: at(i, 0)})
		}
	}
	for f := 1; f < files; f++ {
		for i := range pages {
			switch rnd.Intn(6) {
			case 0, 1: // captured again later, links changed
				h, t := links(i)
				status := 200
				if rnd.Intn(8) == 0 {
					status = 404 // an error page is a page too
				}
				c.Records = append(c.Records, CrawlRecord{File: f, Kind: "html", URL: pageURL(i), Time: at(i, f), Status: status, Hrefs: h, Targets: t})
			case 2: // an older capture found later: must not win
				h, t := links(i)
				c.Records = append(c.Records, CrawlRecord{File: f, Kind: "html", URL: pageURL(i), Time: at(i, -f), Status: 200, Hrefs: h, Targets: t})
			case 3: // WAT metadata with links
				h, t := links(i)
				abs, absT := watLinks(h, t)
				c.Records = append(c.Records, CrawlRecord{File: f, Kind: "wat", URL: pageURL(i), Time: at(i, f), Hrefs: abs, Targets: absT})
			case 4:
				c.Records = append(c.Records, CrawlRecord{File: f, Kind: "revisit", URL: pageURL(i), Time: at(i, f), Status: 200})
			}
		}
	}
	rnd.Shuffle(len(c.Records), func(a, b int) { c.Records[a], c.Records[b] = c.Records[b], c.Records[a] })
	return c
}

// watLinks keeps the absolute links (a WAT file holds resolved URLs): the
// same pairs as the page's, without its relative and malformed ones.
func watLinks(hrefs, targets []string) (abs, absTargets []string) {
	ti := 0
	for _, h := range hrefs {
		valid := !strings.HasPrefix(h, "mailto:") && !strings.HasPrefix(h, "javascript:") && h != "http://[::1"
		if !valid {
			continue
		}
		t := targets[ti]
		ti++
		if (strings.HasPrefix(h, "http://") || strings.HasPrefix(h, "HTTP://")) && utf8.ValidString(h) {
			abs = append(abs, h)
			absTargets = append(absTargets, t)
		}
	}
	return abs, absTargets
}

// version is the WARC version file f is written in.
func (c *Crawl) version(f int) string {
	if f%3 == 1 {
		return "1.0"
	}
	return "1.1"
}

// timeOf is a record's capture time as its file states it: WARC 1.0 dates
// have whole seconds.
func (c *Crawl) timeOf(r *CrawlRecord) time.Time {
	if c.version(r.File) == "1.0" {
		return r.Time.Truncate(time.Second)
	}
	return r.Time
}

// Write writes the crawl's files into dir, alternating gzipped and plain
// files and WARC 1.0 and 1.1, and returns their paths by file index.
func (c *Crawl) Write(dir string) ([]string, error) {
	paths := make([]string, c.Files)
	ws := make([]*warc.Writer, c.Files)
	fs := make([]*os.File, c.Files)
	for f := range c.Files {
		gz := f%2 == 0
		version := c.version(f)
		name := fmt.Sprintf("crawl-%02d.warc", f)
		if gz {
			name += ".gz"
		}
		paths[f] = filepath.Join(dir, name)
		file, err := os.Create(paths[f])
		if err != nil {
			return nil, err
		}
		fs[f] = file
		ws[f] = warc.NewWriter(file, gz, version)
		if err := ws[f].WriteWarcinfo(name); err != nil {
			return nil, err
		}
	}
	for _, r := range c.Records {
		w := ws[r.File]
		var err error
		switch r.Kind {
		case "html":
			var b strings.Builder
			b.WriteString("<!doctype html><html><head><title>p</title></head><body>\n")
			for _, h := range r.Hrefs {
				fmt.Fprintf(&b, "<p><a class=x href=\"%s\">link</a></p>\n", h)
			}
			b.WriteString("</body></html>\n")
			_, _, err = w.WriteResponse(r.URL, r.Time, r.Status, "text/html; charset=utf-8", []byte(b.String()))
		case "png":
			_, _, err = w.WriteResponse(r.URL, r.Time, r.Status, "image/png", []byte("\x89PNG\r\n\x1a\n not really"))
		case "request":
			_, _, err = w.WriteRecord("request", [][2]string{{"WARC-Target-URI", r.URL}, {"WARC-Date", c.timeOf(&r).Format(time.RFC3339Nano)}, {"Content-Type", "application/http;msgtype=request"}},
				[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		case "revisit":
			_, _, err = w.WriteRecord("revisit", [][2]string{{"WARC-Target-URI", r.URL}, {"WARC-Date", c.timeOf(&r).Format(time.RFC3339Nano)},
				{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}, {"WARC-Payload-Digest", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}, nil)
		case "wat":
			_, _, err = w.WriteMetadataWAT(r.URL, r.Time, r.Hrefs)
		}
		if err != nil {
			return nil, err
		}
	}
	for f := range c.Files {
		if err := ws[f].Close(); err != nil {
			return nil, err
		}
		if err := fs[f].Close(); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// WebReference is what the link index must hold, computed in memory.
type WebReference struct {
	// URLs maps every SURT seen to its URL row's expectations.
	URLs map[string]*RefURL
	// Domains maps each domain to its inbound sum and URL count.
	Domains map[string]*RefDomain
}

// RefURL is one URL of the reference.
type RefURL struct {
	Domain   string
	Inbound  map[string]bool // SURTs of the pages linking to it
	Outbound map[string]bool // SURTs it links to (nil: no capture with links)
}

// RefDomain is one domain of the reference.
type RefDomain struct {
	Inbound, URLs int64
}

// Reference computes the link index after ingesting every file, then
// removing the files in removed.
func (c *Crawl) Reference(removed map[int]bool) (*WebReference, error) {
	ref := &WebReference{URLs: map[string]*RefURL{}, Domains: map[string]*RefDomain{}}
	canon := func(raw string) (shelfmark.WebURL, error) {
		u, err := warc.Canonical(raw)
		if err != nil {
			return u, fmt.Errorf("reference: %q: %w", raw, err)
		}
		if ref.URLs[u.SURT] == nil {
			ref.URLs[u.SURT] = &RefURL{Domain: u.Domain, Inbound: map[string]bool{}}
			if ref.Domains[u.Domain] == nil {
				ref.Domains[u.Domain] = &RefDomain{}
			}
			ref.Domains[u.Domain].URLs++
		}
		return u, nil
	}
	type cur struct {
		t       time.Time
		targets map[string]bool
	}
	current := map[string]*cur{}
	for _, r := range c.Records {
		page, err := canon(r.URL)
		if err != nil {
			return nil, err
		}
		if r.Kind != "html" && r.Kind != "wat" {
			continue
		}
		set := map[string]bool{}
		for _, t := range r.Targets {
			u, err := canon(t)
			if err != nil {
				return nil, err
			}
			if u.SURT != page.SURT {
				set[u.SURT] = true
			}
		}
		if removed[r.File] {
			continue
		}
		if t := c.timeOf(&r); current[page.SURT] == nil || t.After(current[page.SURT].t) {
			current[page.SURT] = &cur{t: t, targets: set}
		}
	}
	for src, cc := range current {
		ref.URLs[src].Outbound = cc.targets
		for dst := range cc.targets {
			ref.URLs[dst].Inbound[src] = true
			ref.Domains[ref.URLs[dst].Domain].Inbound++
		}
	}
	return ref, nil
}

// CheckWebIndex compares the link index of repo with ref: every URL's
// inbound count, inbound pages (read in small pages, to cross page
// boundaries) and outbound links; every domain's counts and its top pages;
// the top domains.
func CheckWebIndex(t testing.TB, ctx context.Context, repo *shelfmark.Repository, ref *WebReference) {
	t.Helper()
	surtOf := func(raw string) string {
		u, err := warc.Canonical(raw)
		if err != nil {
			t.Fatalf("index holds %q, which does not canonicalise: %v", raw, err)
		}
		return u.SURT
	}
	bad := 0
	for s, want := range ref.URLs {
		got, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: s, Limit: 3})
		if err != nil {
			t.Fatalf("links of %s: %v", s, err)
		}
		in := map[string]bool{}
		for _, u := range got.Inbound {
			in[surtOf(u)] = true
		}
		for next := got.NextInbound; next != ""; {
			p, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: s, Limit: 3, InboundAfter: next})
			if err != nil {
				t.Fatalf("links of %s after %s: %v", s, next, err)
			}
			for _, u := range p.Inbound {
				if in[surtOf(u)] {
					t.Errorf("%s: inbound page %s listed twice", s, u)
				}
				in[surtOf(u)] = true
			}
			next = p.NextInbound
		}
		out := map[string]bool{}
		for _, u := range got.Outbound {
			out[surtOf(u)] = true
		}
		for next := got.NextOutbound; next != ""; {
			p, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: s, Limit: 3, OutboundAfter: next})
			if err != nil {
				t.Fatalf("links of %s after %s: %v", s, next, err)
			}
			for _, u := range p.Outbound {
				out[surtOf(u)] = true
			}
			next = p.NextOutbound
		}
		switch {
		case got.InboundCount != int64(len(want.Inbound)):
			t.Errorf("%s: inbound_count %d, want %d", s, got.InboundCount, len(want.Inbound))
		case !sameSet(in, want.Inbound):
			t.Errorf("%s: inbound %v, want %v", s, keys(in), keys(want.Inbound))
		case got.OutboundKnow != (want.Outbound != nil):
			t.Errorf("%s: outbound known %v, want %v", s, got.OutboundKnow, want.Outbound != nil)
		case !sameSet(out, want.Outbound):
			t.Errorf("%s: outbound %v, want %v", s, keys(out), keys(want.Outbound))
		default:
			continue
		}
		if bad++; bad > 10 {
			t.Fatal("too many differences")
		}
	}
	tops, err := repo.WebTop(ctx, "", shelfmark.MaxWebTop)
	if err != nil {
		t.Fatal(err)
	}
	gotDomains := map[string]shelfmark.WebCount{}
	for i, d := range tops {
		gotDomains[d.Name] = d
		if i > 0 && d.Inbound > tops[i-1].Inbound {
			t.Errorf("top domains out of order at %d: %v", i, tops)
		}
	}
	for name, want := range ref.Domains {
		got, ok := gotDomains[name]
		if want.Inbound == 0 {
			if ok {
				t.Errorf("domain %s listed with %d inbound links, want none", name, got.Inbound)
			}
			continue
		}
		if !ok || got.Inbound != want.Inbound || got.URLs != want.URLs {
			t.Errorf("domain %s: %+v, want inbound %d, urls %d", name, got, want.Inbound, want.URLs)
		}
		pages, err := repo.WebTop(ctx, name, shelfmark.MaxWebTop)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, p := range pages {
			seen[p.SURT] = true
			if w := ref.URLs[p.SURT]; w == nil || int64(len(w.Inbound)) != p.Inbound || w.Domain != name {
				t.Errorf("domain %s: top page %+v does not match the reference", name, p)
			}
			if i > 0 && p.Inbound > pages[i-1].Inbound {
				t.Errorf("domain %s: top pages out of order at %d", name, i)
			}
		}
		for s, w := range ref.URLs {
			if w.Domain == name && len(w.Inbound) > 0 && !seen[s] {
				t.Errorf("domain %s: %s (%d inbound) missing from its top pages", name, s, len(w.Inbound))
			}
		}
	}
	for name, got := range gotDomains {
		if ref.Domains[name] == nil {
			t.Errorf("domain %s (%+v) is not in the reference", name, got)
		}
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// CheckCaptures compares the captures of every URL of the crawl with its
// records (those of the files in removed left out): each record is one
// capture, never two, with its time, type and URL.
func CheckCaptures(t testing.TB, ctx context.Context, repo *shelfmark.Repository, c *Crawl, removed map[int]bool) {
	t.Helper()
	want := map[string][]string{}
	for _, r := range c.Records {
		if removed[r.File] {
			continue
		}
		u, err := warc.Canonical(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		typ := map[string]string{"html": "response", "png": "response", "wat": "metadata"}[r.Kind]
		if typ == "" {
			typ = r.Kind
		}
		want[u.SURT] = append(want[u.SURT], fmt.Sprintf("%d %s %s", c.timeOf(&r).UnixNano(), typ, u.URL))
	}
	for s, w := range want {
		var got []string
		q := shelfmark.WebCaptureQuery{SURT: s, Limit: 2}
		for {
			p, err := repo.WebCaptures(ctx, q)
			if err != nil {
				t.Fatalf("captures of %s: %v", s, err)
			}
			for _, c := range p.Captures {
				got = append(got, fmt.Sprintf("%d %s %s", c.Time.UnixNano(), c.Type, c.URL))
			}
			if p.Next == "" {
				break
			}
			q.After = p.Next
		}
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Fatalf("captures of %s: %v, want %v", s, got, w)
		}
	}
}
