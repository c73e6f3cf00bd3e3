package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/warc"
)

// The raw limit at the index's size. Into empty scratch tables (RawWebLimit)
// every insert lands on the right edge of small B-trees; an index of
// millions of pages pays for keys spread over large ones (a URL's SURT, a
// link filed under its target). So the comparison that says how near the
// index is to what its rows cost is made again after the ingest, in the
// index's own tables, which then hold the whole crawl.

// webSaltAtSize seeds the pages RawWebAtSize draws.
const webSaltAtSize = 0x5a17e

// RawWebAtSize measures, after an ingest into the store (the SQLite file
// sqlitePath when database is "", else the PostgreSQL database, whose
// search_path names the store's schema), the raw limit of the rows the
// index adds for new pages at the size it has reached:
//
//   - the pages are drawn as the crawl draws its first captures (a domain
//     by the same popularity, links by the same laws), each at a URL of
//     its own that the crawl never names;
//   - their rows (new domains and URLs with their count rows, a capture
//     each with its links packed, the distinct links but the self-link)
//     are inserted plainly, batch pages per durable transaction, into the
//     index's own tables, for d of inserting;
//   - a link to a URL the index holds keeps that URL's id, as the
//     index's would; a new one gets a new id.
//
// Finding the ids of the URLs the index holds is done before each
// transaction and is not in the time measured, nor is taking the rows out
// again afterwards (by their keys), which leaves the index as it was.
func RawWebAtSize(ctx context.Context, database, sqlitePath string, relaxed bool, g *WebGraph, batch int, d time.Duration) (*RawWebResult, error) {
	if batch <= 0 {
		batch = 1000
	}
	r := &RawDB{names: rawNames{domains: "web_domains", urls: "web_urls", counts: "web_url_counts", captures: "web_captures", links: "web_links"}}
	var err error
	if database == "" {
		r.Backend = "sqlite"
		r.DB, err = openRawSQLite(sqlitePath, relaxed)
	} else {
		r.Backend = "postgres"
		r.DB, err = openRawPostgres(database, "", relaxed)
	}
	if err != nil {
		return nil, err
	}
	defer r.DB.Close()
	s := &atSize{r: r, g: g, urls: map[webTarget]int64{}, doms: map[string]int64{}}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	res := &RawWebResult{Batch: batch}
	var took time.Duration
	var t rawTables
	for n := 0; took < d; {
		if err := ctx.Err(); err != nil {
			return nil, s.undo(ctx, err)
		}
		t.reset()
		pages := make([]*WebPage, batch)
		for k := range pages {
			pages[k] = s.page(n + k)
		}
		if err := s.resolve(ctx, pages, &t); err != nil {
			return nil, s.undo(ctx, err)
		}
		for _, p := range pages {
			src := s.urls[p.self]
			ids := make([]int64, 0, len(p.links))
			for _, l := range p.links {
				ids = append(ids, s.urls[l])
			}
			s.cap++
			rawPageRows(&t, p, src, ids, s.cap)
			res.Links += int64(len(p.links))
		}
		t0 := time.Now()
		if err := r.insert(ctx, &t); err != nil {
			return nil, s.undo(ctx, fmt.Errorf("raw web rows at the index's size: %w", err))
		}
		took += time.Since(t0)
		s.links = append(s.links, rawLinkKeys{slices.Clone(t.dst), slices.Clone(t.src)})
		res.DomainRows += int64(len(t.domID))
		res.URLRows += int64(len(t.urlID))
		res.CaptureRows += int64(len(t.capID))
		res.LinkRows += int64(len(t.dst))
		for _, dst := range t.dst {
			if dst <= s.maxURL {
				res.HeldLinks++
			}
		}
		n += batch
		res.Pages = int64(n)
	}
	res.Seconds = took.Seconds()
	if res.Seconds > 0 {
		res.PagesPerS = float64(res.Pages) / res.Seconds
		res.LinksPerS = float64(res.Links) / res.Seconds
		res.LinkRowsPerS = float64(res.LinkRows) / res.Seconds
	}
	return res, s.undo(ctx, nil)
}

// atSize is the state of RawWebAtSize: the highest keys the index held
// before it, the ids it gave or found, and the links it inserted.
type atSize struct {
	r *RawDB
	g *WebGraph
	// the index's highest keys before the first insert; the rows above
	// them are RawWebAtSize's
	maxDom, maxURL, maxCap int64
	dom, url, cap          int64 // the last ids given
	urls                   map[webTarget]int64
	doms                   map[string]int64 // by name
	links                  []rawLinkKeys
}

// rawLinkKeys are the keys of the links one transaction inserted.
type rawLinkKeys struct{ dst, src []int64 }

// start reads the index's highest keys and the file of its last capture
// (the new captures' file).
func (s *atSize) start(ctx context.Context) error {
	for _, q := range []struct {
		sql string
		v   *int64
	}{
		{"SELECT coalesce(max(id), 0) FROM web_domains", &s.maxDom},
		{"SELECT coalesce(max(id), 0) FROM web_urls", &s.maxURL},
		{"SELECT coalesce(max(id), 0) FROM web_captures", &s.maxCap},
		{"SELECT coalesce((SELECT file FROM web_captures ORDER BY id DESC LIMIT 1), 1)", &s.r.file},
	} {
		if err := s.r.DB.QueryRowContext(ctx, q.sql).Scan(q.v); err != nil {
			return fmt.Errorf("raw limit at the index's size: %w", err)
		}
	}
	s.dom, s.url, s.cap = s.maxDom, s.maxURL, s.maxCap
	return nil
}

// page is the n-th new page: a first capture of a domain drawn as the
// crawl draws them, at a page number no domain of the crawl reaches.
func (s *atSize) page(n int) *WebPage {
	g := s.g
	r := rand.New(rand.NewPCG(g.Seed^webSaltAtSize, uint64(n)))
	d := int32(r.IntN(g.Domains))
	if r.IntN(2) == 0 {
		d = g.popularDomain(r)
	}
	links := make([]webTarget, geometric(r, webMeanLinks))
	for j := range links {
		links[j] = g.drawLink(r, d)
	}
	self := webTarget{d, 1<<30 + int32(n)}
	at := webEpoch.Add(2*webRecaptureDays*24*time.Hour + time.Duration(n)*time.Second)
	return g.page(g.Pages+n, g.Pages+n, self, at, links)
}

// resolve gives every URL of pages an id: the index's for those it holds
// (one read of them all), else a new one, whose row (and its domain's,
// when new) goes into t.
func (s *atSize) resolve(ctx context.Context, pages []*WebPage, t *rawTables) error {
	type want struct {
		t   webTarget
		url shelfmark.WebURL
	}
	var wants []want
	seen := map[webTarget]bool{}
	add := func(x webTarget) {
		if _, ok := s.urls[x]; ok || seen[x] {
			return
		}
		seen[x] = true
		u := s.g.url(x)
		c, err := warc.Canonical(u)
		if err != nil {
			c = shelfmark.WebURL{URL: u, SURT: u, Domain: s.g.host(x.d)}
		}
		c.URL = u
		wants = append(wants, want{x, c})
	}
	for _, p := range pages {
		add(p.self)
		for _, l := range p.links {
			add(l)
		}
	}
	var surts, names []string
	asked := map[string]bool{}
	for _, w := range wants {
		surts = append(surts, w.url.SURT)
		if _, ok := s.doms[w.url.Domain]; !ok && !asked[w.url.Domain] {
			asked[w.url.Domain] = true
			names = append(names, w.url.Domain)
		}
	}
	found, err := s.ids(ctx, "SELECT surt, id FROM web_urls WHERE surt", surts)
	if err != nil {
		return err
	}
	doms, err := s.ids(ctx, "SELECT name, id FROM web_domains WHERE name", names)
	if err != nil {
		return err
	}
	for name, id := range doms {
		s.doms[name] = id
	}
	for _, w := range wants {
		if id, ok := found[w.url.SURT]; ok {
			s.urls[w.t] = id
			continue
		}
		dom, ok := s.doms[w.url.Domain]
		if !ok {
			s.dom++
			dom = s.dom
			s.doms[w.url.Domain] = dom
			t.domID, t.domName = append(t.domID, dom), append(t.domName, w.url.Domain)
		}
		s.url++
		s.urls[w.t] = s.url
		found[w.url.SURT] = s.url // two targets of one SURT share its row
		t.urlID, t.urlSURT, t.urlURL, t.urlDom = append(t.urlID, s.url), append(t.urlSURT, w.url.SURT), append(t.urlURL, w.url.URL), append(t.urlDom, dom)
	}
	return nil
}

// ids reads the ids of keys (a query ending in the key's column) in one
// statement, by key.
func (s *atSize) ids(ctx context.Context, query string, keys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	var rows *sql.Rows
	var err error
	if s.r.Backend == "postgres" {
		rows, err = s.r.DB.QueryContext(ctx, query+" = ANY($1)", keys)
	} else {
		b, _ := json.Marshal(keys)
		rows, err = s.r.DB.QueryContext(ctx, query+" IN (SELECT value FROM json_each(?))", string(b))
	}
	if err != nil {
		return nil, fmt.Errorf("raw limit at the index's size: find ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			return nil, err
		}
		out[k] = id
	}
	return out, rows.Err()
}

// undo takes RawWebAtSize's rows out again (the links by their keys, the
// rest above the index's highest keys), in one transaction, and returns
// err, or the error of undoing when err is nil.
func (s *atSize) undo(ctx context.Context, err error) error {
	ctx = context.WithoutCancel(ctx) // taken out even when ctx has ended
	tx, uerr := s.r.DB.BeginTx(ctx, nil)
	if uerr == nil {
		defer tx.Rollback()
		for _, k := range s.links {
			if uerr != nil {
				break
			}
			if s.r.Backend == "postgres" {
				_, uerr = tx.ExecContext(ctx, `DELETE FROM web_links l USING unnest($1::bigint[], $2::bigint[]) AS k(dst, src) WHERE l.dst = k.dst AND l.src = k.src`, k.dst, k.src)
				continue
			}
			pairs := make([][2]int64, len(k.dst))
			for i := range pairs {
				pairs[i] = [2]int64{k.dst[i], k.src[i]}
			}
			b, _ := json.Marshal(pairs)
			_, uerr = tx.ExecContext(ctx, `DELETE FROM web_links WHERE (dst, src) IN
  (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))`, string(b))
		}
		for _, q := range []struct {
			sql string
			max int64
		}{{"web_captures", s.maxCap}, {"web_url_counts", s.maxURL}, {"web_urls", s.maxURL}, {"web_domains", s.maxDom}} {
			if uerr == nil {
				_, uerr = tx.ExecContext(ctx, "DELETE FROM "+q.sql+" WHERE id > "+strconv.FormatInt(q.max, 10))
			}
		}
		if uerr == nil {
			uerr = tx.Commit()
		}
	}
	if err == nil && uerr != nil {
		err = fmt.Errorf("raw limit at the index's size: take its rows out: %w", uerr)
	}
	return err
}

// rawPageRows adds page p's capture (id capID, of URL src) and its
// distinct links to ids, the self-link left out, to t.
func rawPageRows(t *rawTables, p *WebPage, src int64, ids []int64, capID int64) {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if i, ok := slices.BinarySearch(ids, src); ok {
		ids = slices.Delete(ids, i, i+1)
	}
	for _, dst := range ids {
		t.dst, t.src = append(t.dst, dst), append(t.src, src)
	}
	t.capID, t.capURL, t.capOff, t.capTime = append(t.capID, capID), append(t.capURL, src), append(t.capOff, (capID-1)*900), append(t.capTime, p.Time.UnixNano())
	t.capDig = append(t.capDig, warc.Digest([]byte(p.URL)))
	t.capRID = append(t.capRID, warc.RecordID("response", p.URL, p.Time))
	t.capLink = append(t.capLink, shelfmark.EncodeLinkIDs(ids))
}
