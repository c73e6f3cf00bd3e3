package ui

// This file serves what crawlers read to find the public works: a sitemap
// index at /sitemap.xml (the sitemaps.org protocol) and its sitemaps at
// /sitemaps/{n}.xml; /robots.txt points at it (robots.go).
//
// The public works are those of the OAI-PMH view (the projection that
// holds exactly the public works, by sequence number), so a sitemap is one
// index range of that view: sitemap n lists the works whose row has a
// sequence number in ((n-1)·sitemapSpan, n·sitemapSpan]. Each sitemap
// holds at most sitemapSpan URLs (the protocol allows 50,000) and costs
// the same however many works the repository holds; the index costs two
// reads. A sitemap whose range holds only rows of other formats or of
// works no longer public lists no work (sitemap 1 always lists the home
// page).

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

const (
	// sitemapSpan is the range of sequence numbers one sitemap covers,
	// and so the most URLs it lists.
	sitemapSpan = 10000
	// sitemapMaxFiles caps the sitemaps of the index (the protocol's
	// limit).
	sitemapMaxFiles = 50000
	// sitemapFormat is the format whose rows stand for the public works.
	sitemapFormat = "oai_dc"
	// sitemapNS is the namespace of the sitemaps.org protocol.
	sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	// sitemapMaxAge is how long any cache may keep a sitemap.
	sitemapMaxAge = 10 * time.Minute
)

// sitemapIndexXML is a sitemap index document.
type sitemapIndexXML struct {
	XMLName  xml.Name        `xml:"sitemapindex"`
	NS       string          `xml:"xmlns,attr"`
	Sitemaps []sitemapRefXML `xml:"sitemap"`
}

type sitemapRefXML struct {
	Loc string `xml:"loc"`
}

// urlsetXML is one sitemap.
type urlsetXML struct {
	XMLName xml.Name `xml:"urlset"`
	NS      string   `xml:"xmlns,attr"`
	URLs    []urlXML `xml:"url"`
}

type urlXML struct {
	Loc     string `xml:"loc"`
	LastMod string `xml:"lastmod,omitempty"`
}

// sitemapTally reads how far the view's rows of sitemapFormat reach.
func (s *Handler) sitemapTally(r *http.Request) (shelfmark.OAITally, error) {
	var tally shelfmark.OAITally
	if s.deps.Storage == nil {
		return tally, nil
	}
	err := s.deps.Storage.View(r.Context(), func(tx shelfmark.ReadTx) error {
		var err error
		tally, err = tx.OAICount(r.Context(), sitemapFormat, 0)
		return err
	})
	return tally, err
}

// sitemapRange is the range of sitemap numbers that may hold works: from
// the one holding the lowest sequence number of the view to the one
// holding the highest (at most sitemapMaxFiles, the newest); ok is false
// when the view holds no work. Sitemap 1 is always served.
func sitemapRange(t shelfmark.OAITally) (first, last int64, ok bool) {
	if t.N == 0 {
		return 0, 0, false
	}
	first, last = (t.First-1)/sitemapSpan+1, (t.Last-1)/sitemapSpan+1
	if last-first >= sitemapMaxFiles {
		first = last - sitemapMaxFiles + 1
	}
	return first, last, true
}

// sitemapServed reports whether sitemap n exists.
func sitemapServed(t shelfmark.OAITally, n int64) bool {
	first, last, ok := sitemapRange(t)
	return n == 1 || (ok && first <= n && n <= last)
}

// sitemapIndex handles GET /sitemap.xml.
func (s *Handler) sitemapIndex(w http.ResponseWriter, r *http.Request) error {
	tally, err := s.sitemapTally(r)
	if err != nil {
		return err
	}
	base := s.deps.Base(r)
	doc := sitemapIndexXML{NS: sitemapNS}
	ref := func(n int64) sitemapRefXML {
		return sitemapRefXML{Loc: base + "/sitemaps/" + strconv.FormatInt(n, 10) + ".xml"}
	}
	doc.Sitemaps = append(doc.Sitemaps, ref(1))
	if first, last, ok := sitemapRange(tally); ok {
		for n := max(first, 2); n <= last && len(doc.Sitemaps) < sitemapMaxFiles; n++ {
			doc.Sitemaps = append(doc.Sitemaps, ref(n))
		}
	}
	return writeXML(w, r, doc)
}

// sitemapPage handles GET /sitemaps/{n}.xml.
func (s *Handler) sitemapPage(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	num, ok := strings.CutSuffix(name, ".xml")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n < 1 || strconv.FormatInt(n, 10) != num {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no sitemap %q; the sitemap index is /sitemap.xml.", truncateString(name, 40))
	}
	tally, err := s.sitemapTally(r)
	if err != nil {
		return err
	}
	if !sitemapServed(tally, n) {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no sitemap %d; the sitemap index is /sitemap.xml.", n)
	}
	base := s.deps.Base(r)
	doc := urlsetXML{NS: sitemapNS}
	if n == 1 {
		doc.URLs = append(doc.URLs, urlXML{Loc: base + "/"})
	}
	if tally.N > 0 {
		var recs []*shelfmark.OAIRecord
		err := s.deps.Storage.View(r.Context(), func(tx shelfmark.ReadTx) error {
			var err error
			recs, err = tx.OAIRecords(r.Context(), shelfmark.OAIList{Prefix: sitemapFormat, After: (n - 1) * sitemapSpan, Max: n * sitemapSpan, Limit: sitemapSpan})
			return err
		})
		if err != nil {
			return err
		}
		ids := s.deps.Resources.IDs()
		for _, rec := range recs {
			if rec.Deleted {
				continue
			}
			doc.URLs = append(doc.URLs, urlXML{Loc: base + "/works/" + string(ids.Encode(rec.Key)), LastMod: rec.Datestamp.UTC().Format(time.RFC3339)})
		}
	}
	return writeXML(w, r, doc)
}

// writeXML sends an XML document, with its validator (the hash of its
// bytes), answering 304 when the client holds it.
func writeXML(w http.ResponseWriter, r *http.Request, doc any) error {
	b, err := xml.Marshal(doc)
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), b...)
	h := w.Header()
	// a sitemap lists public works only, the same for every caller
	kit.SetCache(h, kit.CachePublic, sitemapMaxAge)
	if kit.NotModified(w, r, kit.Validators{ETag: kit.BodyETag(b)}) {
		return nil
	}
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = w.Write(b)
	return err
}

// truncateString cuts s to at most n bytes for a message.
func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
