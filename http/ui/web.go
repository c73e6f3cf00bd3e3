package ui

// This file serves the web interface's web archive pages: a lookup of
// captures by URL (with the domains most linked to), a domain's page (its
// captures and its pages most linked to) and a capture's page (its
// fields, its WARC and HTTP headers, its links in and out). They ask the
// engine what the API's web routes ask, with the request's caller on the
// context: one keyset page of bounded size per list, the link lists only
// for callers who may read the link index.

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/warc"
)

// Sizes of the web archive pages' lists.
const (
	// webUIPage is how many captures a page lists.
	webUIPage = 50
	// webUITop is how many domains or pages a top list shows.
	webUITop = 20
	// webUILinks is how many links in and out a capture page lists.
	webUILinks = 50
	// webUIHeaders caps the headers of each kind a capture page shows.
	webUIHeaders = 200
)

// uiWebRoutes are the routes of this file.
func (s *Handler) uiWebRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/web", Handle: s.uiWrap(s.webPage)},
		{Method: "GET", Pattern: "/web/domains/{domain}", Handle: s.uiWrap(s.webDomainPage)},
		{Method: "GET", Pattern: "/web/captures/{id}", Handle: s.uiWrap(s.webCapturePage)},
		{Method: "GET", Pattern: "/web/files/{id}", Handle: s.uiWrap(s.webFilePage)}, // web_files.go
	}
}

// webOption is one choice of a select.
type webOption struct {
	Value, Label string
	Selected     bool
}

// webCaptureItem is one capture of a list.
type webCaptureItem struct {
	ID     int64
	URL    string
	Time   time.Time
	Type   string
	Status int
	MIME   string
	// Page is the capture's page.
	Page string
}

// webTopItem is one entry of a top list.
type webTopItem struct {
	Name    string
	Inbound int64
	URLs    int64
	// Page is where the entry leads.
	Page string
}

// webCaptureList is a page of captures with its pager (the template
// webcaptures of frame/web.html).
type webCaptureList struct {
	Page     *uiPage
	Captures []webCaptureItem
	// First and Next are the pager's addresses ("" when there is none).
	First, Next string
}

// webLookupData is the content of /web.
type webLookupData struct {
	URL     string
	Matches []webOption
	// Error says what is wrong with the URL asked for.
	Error string
	// Looked is set when a URL was looked up.
	Looked bool
	List   webCaptureList
	// MayLinks is set when the caller may read the link index; Top are
	// then the domains most linked to.
	MayLinks bool
	Top      []webTopItem
	// Links are the links of the URL of an exact lookup, for readers of
	// the link index.
	Links *webLinksView
}

// webCaptureItems turns a page of the engine into list items.
func webCaptureItems(cs []*shelfmark.Capture) []webCaptureItem {
	out := make([]webCaptureItem, 0, len(cs))
	for _, c := range cs {
		out = append(out, webCaptureItem{ID: c.ID, URL: c.URL, Time: c.Time, Type: c.Type, Status: c.Status, MIME: c.MIME,
			Page: "/web/captures/" + strconv.FormatInt(c.ID, 10)})
	}
	return out
}

// webPager fills a list's pager: the same address with cursor=next, and
// the first page when a cursor was given.
func webPager(r *http.Request, l *webCaptureList, next string) {
	v := r.URL.Query()
	if v.Get("cursor") != "" {
		v.Del("cursor")
		l.First = r.URL.Path + "?" + v.Encode()
		if len(v) == 0 {
			l.First = r.URL.Path
		}
	}
	if next != "" {
		v.Set("cursor", next)
		l.Next = r.URL.Path + "?" + v.Encode()
	}
}

// webTopDomains reads the domains most linked to, when the caller may
// read the link index.
func (s *Handler) webTopDomains(r *http.Request, wi WebIndex) (bool, []webTopItem, error) {
	ok, err := wi.MayReadWebLinks(r.Context())
	if err != nil || !ok {
		return false, nil, err
	}
	top, err := wi.WebTop(r.Context(), "", webUITop)
	if err != nil {
		return false, nil, err
	}
	out := make([]webTopItem, 0, len(top))
	for _, d := range top {
		out = append(out, webTopItem{Name: d.Name, Inbound: d.Inbound, URLs: d.URLs, Page: "/web/domains/" + url.PathEscape(d.Name)})
	}
	return true, out, nil
}

// webPage serves /web?url=&match=&cursor=: the lookup form, the captures
// it finds, and the domains most linked to.
func (s *Handler) webPage(w http.ResponseWriter, r *http.Request) error {
	wi, err := s.opts.WebArchive.Index()
	if err != nil {
		return err
	}
	p := s.page(w, r, "web.title")
	p.Nav = "web"
	v := r.URL.Query()
	d := &webLookupData{URL: v.Get("url"), List: webCaptureList{Page: p}}
	match := v.Get("match")
	for _, m := range []webOption{{shelfmark.MatchExact, p.T("web.match.exact"), false}, {shelfmark.MatchPrefix, p.T("web.match.prefix"), false},
		{shelfmark.MatchHost, p.T("web.match.host"), false}, {shelfmark.MatchDomain, p.T("web.match.domain"), false}} {
		m.Selected = m.Value == match
		d.Matches = append(d.Matches, m)
	}
	if d.MayLinks, d.Top, err = s.webTopDomains(r, wi); err != nil {
		return err
	}
	status := http.StatusOK
	if strings.TrimSpace(d.URL) != "" {
		d.Looked = true
		q, err := s.opts.WebArchive.CaptureQuery(url.Values{"url": {d.URL}, "match": {match}, "cursor": {v.Get("cursor")}})
		q.Limit = webUIPage
		var page *shelfmark.WebCapturePage
		if err == nil {
			page, err = wi.WebCaptures(r.Context(), q)
		}
		switch {
		case shelfmark.ErrorCode(err) == shelfmark.EINVALID:
			d.Error, status = shelfmark.ErrorMessage(err), http.StatusBadRequest
		case err != nil:
			return err
		default:
			d.List.Captures = webCaptureItems(page.Captures)
			webPager(r, &d.List, page.Next)
			if d.MayLinks && q.Match == shelfmark.MatchExact {
				if d.Links, err = webLinks(r, wi, p, q.SURT, 0); err != nil {
					return err
				}
			}
		}
	}
	p.Data = d
	return s.render(w, r, status, "web", p)
}

// webDomainData is the content of /web/domains/{domain}.
type webDomainData struct {
	Domain   string
	List     webCaptureList
	MayLinks bool
	Top      []webTopItem
}

// webDomainPage serves /web/domains/{domain}?cursor=: the domain's
// captures and, for callers who may read the link index, its pages most
// linked to.
func (s *Handler) webDomainPage(w http.ResponseWriter, r *http.Request) error {
	wi, err := s.opts.WebArchive.Index()
	if err != nil {
		return err
	}
	domain, err := s.opts.WebArchive.DomainParam("domain", r.PathValue("domain"))
	if err != nil {
		return err
	}
	if domain != r.PathValue("domain") {
		// the registered domain of a host, or its lowercase form
		http.Redirect(w, r, "/web/domains/"+url.PathEscape(domain), http.StatusSeeOther)
		return nil
	}
	u, err := s.opts.WebArchive.Canonical("domain", "http://"+domain+"/")
	if err != nil {
		return err
	}
	page, err := wi.WebCaptures(r.Context(), shelfmark.WebCaptureQuery{SURT: u.SURT, Match: shelfmark.MatchDomain, After: r.URL.Query().Get("cursor"), Limit: webUIPage})
	if err != nil {
		return err
	}
	p := s.page(w, r, "web.domain.title", domain)
	p.Nav = "web"
	d := &webDomainData{Domain: domain, List: webCaptureList{Page: p, Captures: webCaptureItems(page.Captures)}}
	webPager(r, &d.List, page.Next)
	if d.MayLinks, err = wi.MayReadWebLinks(r.Context()); err != nil {
		return err
	}
	if d.MayLinks {
		top, err := wi.WebTop(r.Context(), domain, webUITop)
		if err != nil {
			return err
		}
		for _, t := range top {
			d.Top = append(d.Top, webTopItem{Name: t.Name, Inbound: t.Inbound, Page: "/web?" + url.Values{"url": {t.Name}}.Encode()})
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "web_domain", p)
}

// webHeader is one header line of a record.
type webHeader struct{ Name, Value string }

// webHeaderTable is a table of headers (the template webheaders of
// frame/web.html); Label is the id of its heading.
type webHeaderTable struct {
	Page  *uiPage
	Label string
	Rows  []webHeader
}

// webLinkItem is one link of a capture's lists.
type webLinkItem struct {
	URL string
	// Page is the lookup of the URL's captures.
	Page string
}

// webCaptureData is the content of /web/captures/{id}.
type webCaptureData struct {
	C *shelfmark.Capture
	// Domain is the capture's domain page ("" when the URL has none).
	Domain     string
	DomainName string
	// Record is the raw record's address in the API.
	Record string
	// WARC and HTTP are the record's headers; Status its HTTP status
	// line's code; HeadersError says why they could not be read.
	WARC, HTTP           []webHeader
	WARCTable, HTTPTable webHeaderTable
	Status               int
	HeadersError         string
	// MayLinks is set when the caller may read the link index; Links is
	// then what it knows of the URL.
	MayLinks bool
	Links    *webLinksView
}

// webCapturePage serves /web/captures/{id}?in=&out=: a capture's
// fields, headers and links.
func (s *Handler) webCapturePage(w http.ResponseWriter, r *http.Request) error {
	wi, err := s.opts.WebArchive.Index()
	if err != nil {
		return err
	}
	id, err := s.opts.WebArchive.CaptureID(r.PathValue("id"))
	if err != nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no such capture.")
	}
	ctx := r.Context()
	c, err := wi.WebCapture(ctx, id)
	if err != nil {
		return err
	}
	p := s.page(w, r, "web.capture.title", c.URL)
	p.Nav = "web"
	d := &webCaptureData{C: c, Record: "/api/v1/web/record?" + url.Values{"url": {c.URL}, "at": {c.Time.UTC().Format(time14)}}.Encode()}
	if u, err := s.opts.WebArchive.Canonical("url", c.URL); err == nil && u.Domain != "" {
		d.DomainName, d.Domain = u.Domain, "/web/domains/"+url.PathEscape(u.Domain)
	}
	if rec, done, err := s.opts.WebArchive.Open(ctx, c); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// the page still shows what the index holds
		s.log.Warn("capture page: the record cannot be read", "capture", c.ID, "err", err)
		d.HeadersError = p.T("web.capture.noheaders")
	} else {
		d.WARC, d.HTTP, d.Status = recordHeaders(rec)
		done()
		d.WARCTable = webHeaderTable{Page: p, Label: "web-warc-h", Rows: d.WARC}
		d.HTTPTable = webHeaderTable{Page: p, Label: "web-http-h", Rows: d.HTTP}
	}
	if d.MayLinks, err = wi.MayReadWebLinks(ctx); err != nil {
		return err
	}
	if d.MayLinks {
		if d.Links, err = webLinks(r, wi, p, c.SURT, c.ID); err != nil {
			return err
		}
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "web_capture", p)
}

// webLinksView is what a page shows of a URL's links (the template
// weblinks of frame/web.html).
type webLinksView struct {
	Page *uiPage
	Info *shelfmark.WebLinkInfo
	// Known is unset when the link index does not know the URL.
	Known   bool
	In, Out []webLinkItem
	// NextIn and NextOut page the lists; First starts them again.
	NextIn, NextOut, First string
	// Capture is the capture the page shows (0: none).
	Capture int64
}

// webLinks reads a page of the links of the URL with key surt, at the
// list positions of the request's in= and out=, for a page that shows
// capture (0: none).
func webLinks(r *http.Request, wi WebIndex, p *uiPage, surt string, capture int64) (*webLinksView, error) {
	v := r.URL.Query()
	q := shelfmark.WebLinkQuery{SURT: surt, InboundAfter: v.Get("in"), OutboundAfter: v.Get("out"), Limit: webUILinks}
	for _, c := range []string{q.InboundAfter, q.OutboundAfter} {
		if n, err := strconv.ParseInt(c, 10, 64); c != "" && (err != nil || n < 0) {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "The link list's position %q is not one this page gave.", kit.TruncateParam(c))
		}
	}
	lv := &webLinksView{Page: p, Capture: capture}
	info, err := wi.WebLinks(r.Context(), q)
	switch {
	case shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND:
		return lv, nil
	case err != nil:
		return nil, err
	}
	lv.Info, lv.Known = info, true
	lv.In, lv.Out = webLinkItems(info.Inbound), webLinkItems(info.Outbound)
	at := func(in, out string) string {
		v.Del("in")
		v.Del("out")
		if in != "" {
			v.Set("in", in)
		}
		if out != "" {
			v.Set("out", out)
		}
		if len(v) == 0 {
			return r.URL.Path
		}
		return r.URL.Path + "?" + v.Encode()
	}
	if info.NextInbound != "" {
		lv.NextIn = at(info.NextInbound, q.OutboundAfter) + "#links-in-h"
	}
	if info.NextOutbound != "" {
		lv.NextOut = at(q.InboundAfter, info.NextOutbound) + "#links-out-h"
	}
	if q.InboundAfter != "" || q.OutboundAfter != "" {
		lv.First = at("", "") + "#links-h"
	}
	return lv, nil
}

// webLinkItems makes the items of a link list.
func webLinkItems(urls []string) []webLinkItem {
	out := make([]webLinkItem, 0, len(urls))
	for _, u := range urls {
		out = append(out, webLinkItem{URL: u, Page: "/web?" + url.Values{"url": {u}}.Encode()})
	}
	return out
}

// time14 is the 14-digit timestamp of the Wayback machine, as the API's
// record route reads it.
const time14 = "20060102150405"

// recordHeaders lists an opened record's WARC headers in their order and
// its HTTP headers by name, each at most webUIHeaders.
func recordHeaders(rec *warc.Record) (warcH, httpH []webHeader, status int) {
	for _, f := range rec.Header {
		if len(warcH) == webUIHeaders {
			break
		}
		warcH = append(warcH, webHeader{f.Name, f.Value})
	}
	names := make([]string, 0, len(rec.HTTPHeader))
	for n := range rec.HTTPHeader {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range rec.HTTPHeader[n] {
			if len(httpH) < webUIHeaders {
				httpH = append(httpH, webHeader{n, v})
			}
		}
	}
	return warcH, httpH, rec.Status
}
