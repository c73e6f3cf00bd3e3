package http

// The leak test: a private work and an embargoed one, with unique words in
// their titles, in their file's text and file names and a unique byte
// string in their bytes, sit in a public collection beside a public work.
// Clients that may not see them (anonymous, a signed-in user without a
// role, the manager of another collection, an expired token) crawl every
// GET route of the OpenAPI document and of the web interface with every id
// and cursor they find (following the interface's links to next pages),
// search with and without the unique words, harvest OAI-PMH, fetch content
// with and without Range, and send every write naming the hidden ids. No
// response (body or header) may hold the unique words, the unique bytes or
// the hidden ids.
//
// One echo is allowed: an error may say "No resource has the id X." for
// an id the client sent, because it says exactly the same for an id that
// names nothing (so it confirms nothing). Every other mention of a hidden
// id fails the test.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// The secrets.
const (
	leakTitle      = "zqxjkvelvet"  // the private work's title
	leakText       = "zqxjkplover"  // a word in the text of its file
	leakFileName   = "zqxjkmarten"  // its file's name
	leakEmbargoed  = "zqxjkbramble" // the embargoed work's title
	leakEmbText    = "zqxjkthistle" // a word in the embargoed work's text
	leakBytesMagic = "\x00\xffLEAKqv7\x01\x02"
	leakSourceKey  = "leak-source-item-1"
	leakFormat     = "Zqxjkformat" // the format of the hidden works' pages
)

// leakFixture is the repository of the leak test.
type leakFixture struct {
	e *policyEnv
	C shelfmark.ID // public collection holding every work
	D shelfmark.ID // the other manager's collection
	// pub is a public work, its file set and file: the crawler finds them.
	pub, pubFS, pubF shelfmark.ID
	// the hidden resources, and an id that names nothing
	secret  []shelfmark.ID
	missing shelfmark.ID
	words   []string
	bytes   [][]byte
	// shapes are the resources hidden by what holds them or what they
	// were made from (leak_shapes_test.go)
	shapes *leakShapes
}

func newLeakFixture(t *testing.T, backend string) *leakFixture {
	e := newPolicyEnv(t, backend, Options{MaxAuthFailures: 1 << 30})
	f := &leakFixture{e: e}
	ctx := context.Background()
	colls := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindCollection, Metadata: titled("Leak collection")},
		{Kind: shelfmark.KindCollection, Metadata: titled("Other collection")},
	})
	f.C, f.D = colls[0].ID, colls[1].ID
	future := time.Now().Add(30 * 24 * time.Hour)
	// Every public resource is made before every hidden one, so that a
	// listing that starts after a hidden id (keys are in the order they
	// were made) lists no more than it does after the id of nothing
	// (whose key is above every other).
	works := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("Public whales")},
		// the public works of the shapes (leak_shapes_test.go)
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("Public puffins")},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("Public terns")},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Metadata: titled("Public catalogue")},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Visibility: shelfmark.Private, Metadata: append(titled(leakTitle+" diaries"),
			shelfmark.Statement{Predicate: shelfmark.NSDC + "subject", Object: shelfmark.NewLiteral("whales")})},
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Embargo: &future, Metadata: append(titled(leakEmbargoed+" letters"),
			shelfmark.Statement{Predicate: shelfmark.NSDC + "subject", Object: shelfmark.NewLiteral("whales")})},
	})
	pub, priv, emb := works[0].ID, works[4].ID, works[5].ID
	f.shapes = &leakShapes{early: works[1].ID, late: works[2].ID, recordWork: works[3].ID}
	pubSets := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFileSet, Parent: pub}, {Kind: shelfmark.KindFileSet, Parent: f.shapes.early}, {Kind: shelfmark.KindFileSet, Parent: f.shapes.late},
	})
	f.shapes.earlyFS, f.shapes.lateFS = pubSets[1].ID, pubSets[2].ID
	sets := append(pubSets[:1:1], e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFileSet, Parent: priv}, {Kind: shelfmark.KindFileSet, Parent: emb},
	})...)
	text := e.putBytes(leakFileName+".txt", "text/plain", []byte("Logbook text: "+leakText+" and whales."))
	raw := e.putBytes("scan.bin", "application/octet-stream", []byte("header"+leakBytesMagic+"trailer"))
	embText := e.putBytes("letter.txt", "text/plain", []byte("Letter: "+leakEmbText+" "+leakBytesMagic))
	pubFile := e.putBytes("public.txt", "text/plain", []byte("public whales text"))
	files := e.createAll(ctx, []*shelfmark.NewResource{
		{Kind: shelfmark.KindFile, Parent: sets[0].ID, File: pubFile},
		{Kind: shelfmark.KindFile, Parent: sets[1].ID, File: text},
		{Kind: shelfmark.KindFile, Parent: sets[1].ID, File: raw},
		{Kind: shelfmark.KindFile, Parent: sets[2].ID, File: embText},
	})
	// a thumbnail of the private work, and a private work an ingest
	// stored under a source key
	thumb := e.putBytes("thumb.png", "image/png", []byte("PNG thumbnail "+leakBytesMagic))
	thumb.Use = "thumbnail"
	thumbs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: sets[1].ID, File: thumb}})
	roots, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{{SourceKey: leakSourceKey, Resources: []*shelfmark.NewResource{
		{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.C}, Visibility: shelfmark.Private, Metadata: titled(leakTitle + " ingested")}}}})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	f.pub, f.pubFS, f.pubF = pub, sets[0].ID, files[0].ID
	f.secret = []shelfmark.ID{priv, sets[1].ID, files[1].ID, files[2].ID, thumbs[0].ID, emb, sets[2].ID, files[3].ID, roots[0].ID}
	f.missing = e.repo.IDs().Encode(shelfmark.MaxKey - 7)
	f.words = []string{leakTitle, leakText, leakFileName, leakEmbargoed, leakEmbText, strings.ToLower(leakFormat)}
	f.bytes = [][]byte{[]byte(leakBytesMagic), []byte("LEAKqv7")}
	f.addLeakShapes(t, f.shapes)

	// The search index: the indexer writes the metadata documents; the
	// text of pages is what the extraction jobs would write (this stack
	// runs no workers).
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Logger: e.srv.log}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	k := func(id shelfmark.ID) int64 {
		key, err := e.repo.IDs().Key(id)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	docs := []shelfmark.SearchDoc{
		{Key: k(sets[0].ID), Work: k(pub), Kind: shelfmark.KindFileSet, Format: "Plain Text", Body: "public whales text"},
		{Key: k(sets[1].ID), Work: k(priv), Kind: shelfmark.KindFileSet, Format: leakFormat, Body: "Logbook text: " + leakText + " and whales."},
		{Key: k(sets[2].ID), Work: k(emb), Kind: shelfmark.KindFileSet, Format: leakFormat, Body: "Letter: " + leakEmbText + " whales"},
	}
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	// the admin sees them all (so the words are there to be found)
	for _, id := range f.secret {
		e.do("GET", resPath(id, ""), nil).want(t, http.StatusOK)
	}
	var sb searchBody
	e.do("GET", "/api/v1/search?q=whales", nil).want(t, http.StatusOK).json(t, &sb)
	if len(sb.Hits) == 0 {
		t.Fatal("the search index holds nothing")
	}
	return f
}

// idRE finds candidate ids in a response.
var idRE = regexp.MustCompile(`[0-9bcdfghjkmnpqrstvwxz]{9}`)

// allowedEcho matches the messages that may name a hidden id the client
// sent, because they say the same of an id that names nothing (the test
// also checks that they do): "No resource has the id X." of the API, its
// refusal of a listing cursor it did not give out (which quotes the
// parameter), and OAI-PMH's echo of the request (<request
// identifier="…">, which the protocol requires) and its idDoesNotExist
// error.
func allowedEcho(id shelfmark.ID) *regexp.Regexp {
	q := `(?:"|&#34;|&quot;)`
	return regexp.MustCompile(`(?i)no resource has the id ` + string(id) + `\.` +
		// the web interface sends a signed-out browser to sign in and back
		// to the address it asked for, before looking at it
		`|/login\?next=[^\s"]*` +
		`|after: \\"` + string(id) + `\\" is not a cursor this list gave out\.` +
		`|<request [^>]*>[^<]*</request>` +
		`|No item has the identifier ` + q + `oai:repo\.example\.org:` + string(id) + q + `\.`)
}

// crawler is one unauthorised client's walk.
type crawler struct {
	f        *leakFixture
	name     string
	token    string
	seen     map[string]bool // requests sent
	ids      map[shelfmark.ID]bool
	queue    []req
	requests int
	leaks    []string
	echo     map[shelfmark.ID]*regexp.Regexp
	// control marks a crawl by someone who may see everything: it sends
	// no writes, and what it finds goes to found instead of leaks.
	control bool
	found   map[string]bool
	answers map[string]*response // by reqKey
}

// scan checks one response for the secrets.
func (c *crawler) scan(rq req, r *response) {
	html := strings.HasPrefix(r.Header.Get("Content-Type"), "text/html")
	var hdr strings.Builder
	for k, vs := range r.Header {
		for _, v := range vs {
			fmt.Fprintf(&hdr, "%s: %s\n", k, v)
		}
	}
	for where, text := range map[string][]byte{"body": r.Body, "headers": []byte(hdr.String())} {
		// an answer may name itself by the address it was asked for (a
		// IIIF search's id), which holds the words asked for
		lower := bytes.ToLower(bytes.ReplaceAll(text, []byte(rq.path), nil))
		for _, w := range c.f.words {
			if html && strings.Contains(strings.ToLower(rq.path), w) {
				// a page echoes the words it was asked for (the search
				// box); a hit would also link its hidden id
				continue
			}
			if bytes.Contains(lower, []byte(w)) {
				c.leak(rq, r, where, fmt.Sprintf("the word %q", w))
			}
		}
		for _, b := range c.f.bytes {
			if bytes.Contains(text, b) {
				c.leak(rq, r, where, fmt.Sprintf("the bytes %q", b))
			}
		}
		for _, id := range c.f.secret {
			if html && strings.Contains(rq.path, string(id)) {
				// a page echoes the address it was asked for (its forms,
				// its links to other languages and to signing in); that
				// it answers a hidden id exactly as a missing one is
				// checked by the crawl's twins
				continue
			}
			rest := c.echo[id].ReplaceAll(text, nil)
			if bytes.Contains(rest, []byte(id)) {
				c.leak(rq, r, where, fmt.Sprintf("the hidden id %s", id))
			}
		}
	}
}

func (c *crawler) leak(rq req, r *response, where, what string) {
	if c.control {
		c.found[what] = true
		return
	}
	c.leaks = append(c.leaks, fmt.Sprintf("%s: %s %s (%s) -> %d: %s in the %s: %.400s", c.name, rq.method, rq.path, strings.Join(rq.hdrs, " "), r.Status, what, where, r.Body))
}

func reqKey(rq req) string {
	return rq.method + " " + rq.path + " " + strings.Join(rq.hdrs, "|") + " " + rq.body
}

// swapID returns rq with id replaced by other.
func swapID(rq req, id, other shelfmark.ID) req {
	out := req{method: rq.method, path: strings.ReplaceAll(rq.path, string(id), string(other)), body: strings.ReplaceAll(rq.body, string(id), string(other))}
	for _, h := range rq.hdrs {
		out.hdrs = append(out.hdrs, strings.ReplaceAll(h, string(id), string(other)))
	}
	return out
}

var (
	responseDateRE = regexp.MustCompile(`<responseDate>[^<]*</responseDate>`)
	csrfValueRE    = regexp.MustCompile(`(?:name="csrf-token" content|name="csrf" value)="[^"]*"`)
	// the web interface's links to further pages
	uiNextRE = regexp.MustCompile(`href="(/[^"]*[?&](?:amp;)?(?:after|page)=[^"]*)"`)
)

// normal is a response as compared between a hidden and a missing id:
// status, the headers that say something, and the body, with both ids
// written X.
func (c *crawler) normal(r *response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.Status)
	for _, h := range []string{"Content-Type", "Allow", "Location", "ETag", "Link", "WWW-Authenticate", "Content-Range", "Content-Disposition"} {
		if v := r.Header.Values(h); len(v) > 0 {
			if h == "ETag" && strings.HasPrefix(v[0], "W/") {
				continue // a weak tag hashes the body (kit.BodyETag), compared below with the ids written X
			}
			line := strings.Join(v, ", ")
			for _, id := range append(slices.Clone(c.f.secret), c.f.missing) {
				line = strings.ReplaceAll(line, string(id), "X") // an echo of the address asked for
			}
			fmt.Fprintf(&b, "%s: %s\n", h, line)
		}
	}
	body := responseDateRE.ReplaceAll(r.Body, nil)
	body = csrfValueRE.ReplaceAll(body, nil) // a form token differs per browser
	for _, id := range c.f.secret {
		body = bytes.ReplaceAll(body, []byte(id), []byte("X"))
	}
	b.Write(bytes.ReplaceAll(body, []byte(c.f.missing), []byte("X")))
	return b.String()
}

// send sends a request once and scans its answer.
func (c *crawler) send(rq req) *response {
	key := reqKey(rq)
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	c.requests++
	var body any
	if rq.body != "" {
		body = rq.body
	}
	r := c.f.e.do(rq.method, rq.path, body, as(c.token, rq.hdrs...)...)
	c.scan(rq, r)
	c.answers[key] = r
	return r
}

// learn collects the ids and the next pages a response names.
func (c *crawler) learn(rq req, r *response) {
	if r == nil || r.Status >= 300 {
		return
	}
	for _, m := range idRE.FindAll(r.Body, -1) {
		id := shelfmark.ID(m)
		if id.Valid() && !c.ids[id] {
			c.ids[id] = true
			c.queueID(id)
		}
	}
	// next pages: JSON "next" fields and Link rel=next
	var b struct {
		Next string `json:"next"`
	}
	if json.Unmarshal(r.Body, &b) == nil && b.Next != "" {
		switch {
		case strings.HasPrefix(b.Next, "/"):
			c.queue = append(c.queue, req{method: "GET", path: b.Next})
		case strings.HasPrefix(rq.path, "/api/v1/search"):
			u, _ := url.Parse(rq.path)
			q := u.Query()
			q.Set("cursor", b.Next)
			c.queue = append(c.queue, req{method: "GET", path: u.Path + "?" + q.Encode()})
		case strings.HasPrefix(rq.path, "/api/v1/jobs") || strings.HasPrefix(rq.path, "/api/v1/audit"):
			u, _ := url.Parse(rq.path)
			q := u.Query()
			q.Set("after", b.Next)
			q.Set("cursor", b.Next)
			c.queue = append(c.queue, req{method: "GET", path: u.Path + "?" + q.Encode()})
		}
	}
	for _, l := range r.Header.Values("Link") {
		if m := regexp.MustCompile(`<([^>]+)>;\s*rel="next"`).FindStringSubmatch(l); m != nil {
			c.queue = append(c.queue, req{method: "GET", path: m[1]})
		}
	}
	// the web interface: links to further pages of a listing
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		for _, m := range uiNextRE.FindAllSubmatch(r.Body, -1) {
			c.queue = append(c.queue, req{method: "GET", path: html.UnescapeString(string(m[1]))})
		}
	}
	// OAI-PMH: resumption tokens and set specs
	if strings.HasPrefix(rq.path, "/oai") {
		u, _ := url.Parse(rq.path)
		verb := u.Query().Get("verb")
		if m := regexp.MustCompile(`<resumptionToken[^>]*>([^<]+)</resumptionToken>`).FindSubmatch(r.Body); m != nil {
			c.queue = append(c.queue, req{method: "GET", path: "/oai?verb=" + verb + "&resumptionToken=" + url.QueryEscape(string(m[1]))})
		}
		for _, m := range regexp.MustCompile(`<setSpec>([^<]+)</setSpec>`).FindAllSubmatch(r.Body, -1) {
			for _, p := range []string{"oai_dc", "marcxml"} {
				c.queue = append(c.queue, req{method: "GET", path: "/oai?verb=ListRecords&metadataPrefix=" + p + "&set=" + url.QueryEscape(string(m[1]))})
			}
		}
	}
}

// getOps are the GET operations of the OpenAPI document; uiGetOps those of
// the web interface.
var getOps, uiGetOps []string

// queueID queues every GET route that takes an id, and the OAI-PMH
// records, for id.
func (c *crawler) queueID(id shelfmark.ID) { c.queue = append(c.queue, c.reads(id)...) }

// reads are the reads of an id: every GET route that takes one, content
// with ranges, other representations, conditional requests, listings
// that start after it, the audit trail and search in it, its OAI-PMH
// records.
func (c *crawler) reads(id shelfmark.ID) []req {
	var out []req
	for _, op := range getOps {
		p := strings.TrimPrefix(op, "GET ")
		if !strings.Contains(p, "{id}") {
			continue
		}
		out = append(out, req{method: "GET", path: strings.ReplaceAll(p, "{id}", string(id))})
	}
	for _, op := range uiGetOps {
		p := strings.TrimPrefix(op, "GET ")
		if strings.Contains(p, "{id}") {
			out = append(out, req{method: "GET", path: strings.ReplaceAll(p, "{id}", string(id)), hdrs: []string{"Accept", "text/html"}})
		}
	}
	out = append(out, req{method: "GET", path: "/search?collection=" + string(id)},
		req{method: "GET", path: "/search?q=whales&collection=" + string(id)},
		req{method: "GET", path: "/works/" + string(c.f.pub) + "?page=" + string(id)},
		req{method: "GET", path: "/collections/" + string(c.f.C) + "?after=" + string(id)})
	content := resPath(id, "/content")
	for _, rg := range []string{"bytes=0-5", "bytes=-4", "bytes=0-2,4-8,1-3", "bytes=10-"} {
		out = append(out, req{method: "GET", path: content, hdrs: []string{"Range", rg}})
	}
	out = append(out, req{method: "GET", path: resPath(id, ""), hdrs: []string{"Accept", "text/turtle"}},
		req{method: "GET", path: resPath(id, ""), hdrs: []string{"Accept", "application/ld+json"}},
		req{method: "GET", path: resPath(id, ""), hdrs: []string{"If-None-Match", `"1"`}},
		req{method: "GET", path: resPath(id, ""), hdrs: []string{"If-None-Match", "*"}},
		req{method: "GET", path: resPath(id, "/members?limit=1")}, req{method: "GET", path: resPath(id, "/children?limit=1")},
		req{method: "GET", path: resPath(c.f.C, "/members?after="+string(id))},
		req{method: "GET", path: resPath(c.f.pub, "/children?after="+string(id))},
		req{method: "GET", path: "/api/v1/audit?resource=" + string(id)},
		req{method: "GET", path: "/api/v1/search?collection=" + string(id)},
		req{method: "GET", path: "/api/v1/search?q=whales&collection=" + string(id)})
	for _, p := range []string{"oai_dc", "marcxml"} {
		out = append(out, req{method: "GET", path: "/oai?verb=GetRecord&metadataPrefix=" + p + "&identifier=oai:repo.example.org:" + string(id)})
	}
	out = append(out, iiifReads(id)...)
	return append(out, req{method: "GET", path: "/oai?verb=ListMetadataFormats&identifier=oai:repo.example.org:" + string(id)})
}

// writes are the changes an unauthorised client tries on a hidden id.
func (c *crawler) writes(id shelfmark.ID) []req {
	f := c.f
	j := []string{"Content-Type", ctJSON}
	ids := func(v ...shelfmark.ID) []shelfmark.ID { return v }
	return []req{
		{"PUT", resPath(id, ""), `{"metadata": {"dcterms:title": "mine"}}`, j},
		{"PUT", resPath(id, ""), "<> <http://purl.org/dc/terms/title> \"mine\" .", []string{"Content-Type", "text/turtle"}},
		{"PATCH", resPath(id, ""), `{"visibility": "public"}`, j},
		{"PATCH", resPath(id, ""), `{"add": {"dcterms:title": "mine"}}`, j},
		{"DELETE", resPath(id, ""), "", nil},
		{"DELETE", resPath(id, ""), "", []string{"If-Match", `"1"`}},
		{"POST", resPath(id, "/members"), jsonBody(map[string]any{"members": ids(f.pub)}), j},
		{"POST", resPath(f.C, "/members"), jsonBody(map[string]any{"members": ids(id)}), j},
		{"POST", resPath(f.D, "/members"), jsonBody(map[string]any{"members": ids(id)}), j},
		{"DELETE", resPath(f.C, "/members/"+string(id)), "", nil},
		{"DELETE", resPath(id, "/members/"+string(f.pub)), "", nil},
		{"PUT", resPath(id, "/order"), `{"children": []}`, j},
		{"PUT", resPath(f.pub, "/order"), jsonBody(map[string]any{"children": ids(id)}), j},
		{"POST", resPath(id, "/files?name=x.txt"), "bytes", []string{"Content-Type", "text/plain"}},
		{"POST", "/api/v1/filesets", jsonBody(map[string]any{"parent": id}), j},
		{"POST", "/api/v1/works", jsonBody(map[string]any{"parent": id}), j},
		{"POST", "/api/v1/works", jsonBody(map[string]any{"memberOf": ids(id)}), j},
		{"POST", "/api/v1/collections", jsonBody(map[string]any{"memberOf": ids(id)}), j},
		{"POST", "/api/v1/works?memberOf=" + string(id), "<> <http://purl.org/dc/terms/title> \"t\" .", []string{"Content-Type", "text/turtle"}},
		{"POST", "/api/v1/batch", jsonBody(map[string]any{"resources": []any{map[string]any{"kind": "fileset", "parent": id}}}), j},
		{"POST", "/api/v1/batch", jsonBody(map[string]any{"resources": []any{map[string]any{"kind": "work", "memberOf": ids(id)}}}), j},
		{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"resources": []any{
			map[string]any{"ref": "a", "kind": "fileset", "parent": string(id)}}}}}), j},
		{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"resources": []any{
			map[string]any{"ref": "a", "kind": "work", "memberOf": []string{string(id)}}}}}}), j},
		{"PUT", resPath(id, "/files-access"), `{"visibility": "public"}`, j},
		{"PUT", resPath(id, "/files-default"), `{"visibility": "public"}`, j},
		{"POST", resPath(id, "/access-requests"), `{"message": "let me read it"}`, j},
		{"DELETE", resPath(id, "/access-grants/user:nobody"), "", nil},
		{"PUT", resPath(id, "/pages/"+string(id)+"/file?name=x.txt"), "bytes", []string{"Content-Type", "text/plain"}},
		{"PUT", resPath(f.pub, "/pages/"+string(id)+"/file?name=x.txt"), "bytes", []string{"Content-Type", "text/plain"}},
		{"PUT", resPath(id, "/thumbnail"), `{"page": null}`, j},
		{"PUT", resPath(f.pub, "/thumbnail"), jsonBody(map[string]any{"page": id}), j},
		{"GET", resPath(id, "/roles"), "", nil},
		{"PUT", resPath(id, "/roles"), `{"grants": [{"principal": "user:nobody", "role": "manager"}]}`, j},
		{"POST", "/api/v1/sources/lookup", jsonBody(map[string]any{"keys": []string{leakSourceKey}}), j},
		{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"sourceKey": leakSourceKey, "resources": []any{
			map[string]any{"ref": "a", "kind": "work", "memberOf": []shelfmark.ID{f.C}}}}}}), j},
		{"POST", "/api/v1/groups", jsonBody(map[string]any{"groups": []any{map[string]any{"sourceKey": leakSourceKey, "resources": []any{
			map[string]any{"ref": "a", "kind": "work", "memberOf": []shelfmark.ID{f.D}}}}}}), j},
		{"POST", "/api/v1/jobs/characterize/retry", jsonBody(map[string]any{"ids": []int64{1, 2, 3}}), j},
	}
}

// searchCounts checks that the total and the facet counts of a search
// are those of the hits the client gets: a count of hidden works would
// tell of them without naming them.
func (c *crawler) searchCounts(q string) {
	rq := req{method: "GET", path: "/api/v1/search?limit=100&q=" + url.QueryEscape(q)}
	r := c.f.e.do(rq.method, rq.path, nil, as(c.token)...)
	c.requests++
	c.scan(rq, r)
	if r.Status != http.StatusOK {
		return
	}
	var b searchBody
	if err := json.Unmarshal(r.Body, &b); err != nil || b.Next != "" || b.Total == nil || b.Facets == nil || (b.Estimated != nil && *b.Estimated) {
		c.leak(rq, r, "body", "a first page that is not the whole answer")
		return
	}
	kinds, formats := map[string]int64{}, map[string]int64{}
	for _, h := range b.Hits {
		kinds[h.Kind]++
		if h.Format != "" {
			formats[h.Format]++
		}
	}
	facet := func(fs []facetJSON) map[string]int64 {
		out := map[string]int64{}
		for _, f := range fs {
			out[f.Value] = f.Count
		}
		return out
	}
	if *b.Total != int64(len(b.Hits)) {
		c.leak(rq, r, "body", fmt.Sprintf("a total of %d for %d hits", *b.Total, len(b.Hits)))
	}
	if got := facet(b.Facets.Kind); fmt.Sprint(got) != fmt.Sprint(kinds) {
		c.leak(rq, r, "body", fmt.Sprintf("kind facets %v for hits of kinds %v", got, kinds))
	}
	for _, f := range b.Facets.Collection {
		if f.Count > int64(len(b.Hits)) {
			c.leak(rq, r, "body", fmt.Sprintf("%d hits in the collection %s, of %d hits", f.Count, f.Value, len(b.Hits)))
		}
	}
	if got := facet(b.Facets.Format); fmt.Sprint(got) != fmt.Sprint(formats) {
		c.leak(rq, r, "body", fmt.Sprintf("format facets %v for hits of formats %v", got, formats))
	}
}

// crawl walks everything the client can reach.
func (c *crawler) crawl() {
	f := c.f
	for _, op := range getOps {
		p := strings.TrimPrefix(op, "GET ")
		switch {
		case strings.Contains(p, "{id}"):
		case strings.Contains(p, "{queue}"):
			for _, q := range shelfmark.Queues {
				c.queue = append(c.queue, req{method: "GET", path: strings.ReplaceAll(p, "{queue}", q)})
			}
		default:
			c.queue = append(c.queue, req{method: "GET", path: p})
		}
	}
	for _, op := range uiGetOps {
		p := strings.TrimPrefix(op, "GET ")
		switch {
		case strings.Contains(p, "{id}"):
		case strings.Contains(p, "{queue}"):
			for _, q := range shelfmark.Queues {
				c.queue = append(c.queue, req{method: "GET", path: strings.ReplaceAll(p, "{queue}", q)})
			}
		case p == "/admin/events":
			// a live stream for minutes: what it says is the dashboard's
			// (admins only), sent once by HEAD
			c.queue = append(c.queue, req{method: "HEAD", path: p})
		case p == "/{$}":
			c.queue = append(c.queue, req{method: "GET", path: "/"})
		case strings.Contains(p, "{file...}"):
			c.queue = append(c.queue, req{method: "GET", path: strings.ReplaceAll(p, "{file...}", "app.css")})
		case strings.Contains(p, "{file}"): // the sitemaps
			c.queue = append(c.queue, req{method: "GET", path: strings.ReplaceAll(p, "{file}", "1.xml")}, req{method: "GET", path: strings.ReplaceAll(p, "{file}", "2.xml")})
		case strings.Contains(p, "{"):
		default:
			c.queue = append(c.queue, req{method: "GET", path: p})
		}
	}
	queries := []string{"", "whales", "text", "logbook", "letter", "diaries", "letters"}
	queries = append(queries, f.words...)
	for _, q := range queries {
		for _, extra := range []string{"", "&limit=1", "&kind=work", "&kind=fileset", "&collection=" + string(f.C), "&format=" + leakFormat} {
			c.queue = append(c.queue, req{method: "GET", path: "/api/v1/search?q=" + url.QueryEscape(q) + extra})
		}
		c.queue = append(c.queue, req{method: "GET", path: "/search?q=" + url.QueryEscape(q)},
			req{method: "GET", path: "/search?q=" + url.QueryEscape(q) + "&collection=" + string(f.C)})
	}
	for _, p := range []string{"oai_dc", "marcxml"} {
		c.queue = append(c.queue, req{method: "GET", path: "/oai?verb=ListRecords&metadataPrefix=" + p},
			req{method: "GET", path: "/oai?verb=ListIdentifiers&metadataPrefix=" + p})
	}
	c.queue = append(c.queue, req{method: "GET", path: "/oai?verb=ListSets"}, req{method: "GET", path: "/oai?verb=Identify"},
		req{method: "POST", path: "/oai", body: "verb=ListRecords&metadataPrefix=oai_dc", hdrs: []string{"Content-Type", "application/x-www-form-urlencoded"}})
	c.ids[f.C], c.ids[f.D] = true, true
	c.queueID(f.C)
	c.queueID(f.D)
	// the hidden ids, asked for directly, read and written; each request
	// also goes with an id that names nothing, which must be answered the
	// same way
	var twins [][2]req
	for _, id := range f.secret {
		rqs := c.reads(id)
		if !c.control {
			rqs = append(rqs, c.writes(id)...)
		}
		c.queue = append(c.queue, rqs...)
		for _, rq := range rqs {
			twins = append(twins, [2]req{rq, swapID(rq, id, f.missing)})
		}
	}
	if !c.control {
		for _, q := range queries {
			c.searchCounts(q)
		}
	}
	for len(c.queue) > 0 {
		rq := c.queue[0]
		c.queue = c.queue[1:]
		c.learn(rq, c.send(rq))
	}
	if c.control {
		return
	}
	for _, tw := range twins {
		hidden := c.answers[reqKey(tw[0])]
		missing := c.send(tw[1])
		if hidden == nil || missing == nil {
			continue
		}
		if h, m := c.normal(hidden), c.normal(missing); h != m {
			c.leaks = append(c.leaks, fmt.Sprintf("%s: %s %s (%s): a hidden id and a missing one are answered differently:\n  hidden:  %.400s\n  missing: %.400s",
				c.name, tw[0].method, tw[0].path, strings.Join(tw[0].hdrs, " "), h, m))
		}
	}
}

func TestLeak(t *testing.T) {
	doc, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	getOps = nil
	for _, op := range openAPIOperations(t, doc) {
		if strings.HasPrefix(op, "GET ") {
			getOps = append(getOps, op)
		}
	}
	slices.Sort(getOps)
	onBackends(t, func(t *testing.T, backend string) {
		uiGetOps = nil
		if len(uiGetOps) == 0 {
			for _, rt := range newEnv(t, Options{}).srv.uiRoutes() {
				if rt.method == "GET" {
					uiGetOps = append(uiGetOps, rt.method+" "+rt.pattern)
				}
			}
		}
		start := time.Now()
		f := newLeakFixture(t, backend)
		e := f.e
		ctx := context.Background()
		nobody := e.addUser("nobody", shelfmark.ScopeWrite)
		other := e.addUser("other", shelfmark.ScopeWrite)
		e.grantRoles(f.D, []api.GrantJSON{{Principal: "user:other", Role: "manager"}})
		expiring, _, err := e.accounts.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin,
			Expires: ptr(e.clock.now().Add(time.Hour))})
		if err != nil {
			t.Fatal(err)
		}
		e.do("GET", resPath(f.secret[0], ""), nil, as(expiring)...).want(t, http.StatusOK)
		e.clock.advance(2 * time.Hour)

		before := e.do("GET", resPath(f.secret[0], ""), nil).want(t, http.StatusOK).Body
		echo := map[shelfmark.ID]*regexp.Regexp{}
		for _, id := range f.secret {
			echo[id] = allowedEcho(id)
		}
		// The same crawl by the admin finds every secret: it reaches them
		// when allowed to.
		admin := &crawler{f: f, name: "admin", token: e.admin, seen: map[string]bool{}, ids: map[shelfmark.ID]bool{}, echo: echo, answers: map[string]*response{},
			control: true, found: map[string]bool{}}
		admin.crawl()
		var secrets []string
		for _, w := range f.words {
			if w != strings.ToLower(leakFormat) { // only in the search index, which shows public works to all
				secrets = append(secrets, fmt.Sprintf("the word %q", w))
			}
		}
		for _, b := range f.bytes {
			secrets = append(secrets, fmt.Sprintf("the bytes %q", b))
		}
		for _, id := range f.secret {
			secrets = append(secrets, fmt.Sprintf("the hidden id %s", id))
		}
		for _, s := range secrets {
			if !admin.found[s] {
				t.Errorf("the admin's crawl never met %s: the crawl does not reach it", s)
			}
		}
		total := admin.requests
		for _, cl := range []struct{ name, token string }{
			{"anonymous", ""}, {"signed in without a role", nobody}, {"manager of another collection", other}, {"expired admin token", expiring},
		} {
			c := &crawler{f: f, name: cl.name, token: cl.token, seen: map[string]bool{}, ids: map[shelfmark.ID]bool{}, echo: echo, answers: map[string]*response{}}
			c.crawl()
			total += c.requests
			for _, l := range c.leaks {
				t.Error(l)
			}
			// the crawl did reach the public work
			if cl.token != expiring && !c.ids[f.pubF] {
				t.Errorf("%s: the crawl never found the public file %s (found %d ids)", cl.name, f.pubF, len(c.ids))
			}
			t.Logf("%s: %s: %d requests, %d ids found, %d leaks", backend, cl.name, c.requests, len(c.ids), len(c.leaks))
		}
		// nothing the clients sent changed the hidden work
		if after := e.do("GET", resPath(f.secret[0], ""), nil).want(t, http.StatusOK).Body; !bytes.Equal(before, after) {
			t.Errorf("the private work changed:\n%s\n%s", before, after)
		}
		t.Logf("%s: %d requests in %v", backend, total, time.Since(start).Round(time.Millisecond))
	})
}
