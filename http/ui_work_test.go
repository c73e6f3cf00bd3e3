package http

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// book makes a work in a collection with n pages (file sets), each with an
// original and a thumbnail; the first page's original is a PDF. It returns
// the work.
func book(t *testing.T, e *policyEnv, n int, vis shelfmark.Visibility, meta []shelfmark.Statement, colls ...shelfmark.ID) *shelfmark.Resource {
	t.Helper()
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: vis, Metadata: meta, MemberOf: colls}})[0]
	sets := make([]*shelfmark.NewResource, n)
	for i := range sets {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, len(fss))
	var files []*shelfmark.NewResource
	pdf := e.putBytes("book.pdf", "application/pdf", []byte("%PDF-1.4 a small book"))
	thumb := e.putBytes("thumb.jpg", "image/jpeg", []byte("a thumbnail"))
	for i, fs := range fss {
		ids[i] = fs.ID
		orig := *pdf
		if i > 0 {
			orig = *e.putBytes(fmt.Sprintf("page%04d.tif", i+1), "image/tiff", []byte(fmt.Sprintf("page %d", i+1)))
		}
		th := *thumb
		th.Use = shelfmark.UseThumbnail
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &orig},
			&shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &th})
	}
	e.createAll(ctx, files)
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	return w
}

// lit is a statement with a literal object.
func lit(pred, v string) shelfmark.Statement {
	return shelfmark.Statement{Predicate: pred, Object: shelfmark.NewLiteral(v)}
}

func iri(pred, v string) shelfmark.Statement {
	return shelfmark.Statement{Predicate: pred, Object: shelfmark.NewIRI(v)}
}

var (
	ldRE      = regexp.MustCompile(`(?s)<script type="application/ld\+json">(.*?)</script>`)
	liRE      = regexp.MustCompile(`<li id="page-`)
	nextRE    = regexp.MustCompile(`href="(/works/[^"?]+\?after=[^"]+)" rel="next"`)
	metaTagRE = regexp.MustCompile(`<meta name="(citation_[a-z_]+)" content="([^"]*)">`)
)

// metaTags returns the citation_* tags of a page, by name.
func metaTags(body string) map[string][]string {
	out := map[string][]string{}
	for _, m := range metaTagRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = append(out[m[1]], html.UnescapeString(m[2]))
	}
	return out
}

func TestUIWorkPage(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Maps & Atlases")}})[0]
	hidden := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private, Metadata: titled("Secret shelf")}})[0]
	title := `Atlas </script><script>alert(1)</script> {of} the "World"`
	w := book(t, e, 3, shelfmark.Public, []shelfmark.Statement{
		lit(shelfmark.NSDC+"title", title),
		lit(shelfmark.NSDC+"creator", "Mercator, Gerardus"),
		lit(shelfmark.NSDC+"creator", "Hondius, Jodocus"),
		lit(shelfmark.NSDCTerms+"issued", "1595-03-02"),
		lit(shelfmark.NSDC+"publisher", "Rumold Mercator"),
		lit(shelfmark.NSDC+"description", `<script>alert("x")</script> a description`),
		iri(shelfmark.NSDCTerms+"license", "https://creativecommons.org/publicdomain/mark/1.0/"),
		iri(shelfmark.NSDC+"relation", "javascript:alert(1)"),
		lit("http://example.org/ns#shelfNote", "kept in the map room"),
		lit(labels.NSBibo+"volume", "2"),
	}, coll.ID, hidden.ID)
	// characterization ran on the first page's original
	kids, err := e.repo.ListChildren(ctx, w.ID, shelfmark.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.repo.ChildFiles(ctx, w.ID, []shelfmark.ID{kids.Items[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	pdfFile := first[kids.Items[0].ID][0]
	key, _ := e.repo.IDs().Key(pdfFile.ID)
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.SetFileFormats(ctx, []int64{key}, []*shelfmark.Format{{PRONOM: "fmt/18", Name: "Acrobat PDF 1.4 - Portable Document Format", Version: "1.4", MediaType: "application/pdf"}})
	}); err != nil {
		t.Fatal(err)
	}

	// an external file on the third page: no size, no checksum
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: kids.Items[2].ID, File: &shelfmark.File{
		Name: "scan.tif", MediaType: "image/tiff", Size: -1, Use: shelfmark.UseOriginal, ExternalURL: "https://images.example.org/scan.tif"}}})

	b := newVisitor(t, e.testEnv)
	p := b.get("/works/" + string(w.ID))
	if p.Status != http.StatusOK {
		t.Fatalf("work page: %d %.500s", p.Status, p.Body)
	}
	if !regexp.MustCompile(`download>scan\.tif</a> <span class="badge">held elsewhere</span></td><td>Original</td><td>Not identified yet</td><td class="num">unknown</td></tr>`).MatchString(p.Body) {
		t.Error("the external file's row is not as expected")
	}
	if !strings.Contains(p.Body, `<script src="/static/work.js?v=`) {
		t.Error("the page does not load work.js")
	}
	body := p.Body
	// the title and a script in a value are text, never markup
	if strings.Contains(body, "<script>alert") {
		t.Fatal("a script in a metadata value reached the page as markup")
	}
	for _, want := range []string{
		`<h1 id="work-title">Atlas &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; {of} the &#34;World&#34;</h1>`,
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; a description`,
		// human labels, and a compact name for a predicate without one
		"<dt>Creator", "<dt>Published", "<dt>Publisher", "<dt>License", "<dt>Volume", "http://example.org/ns#shelfNote",
		// an http(s) IRI is a link, another is text
		`<a href="https://creativecommons.org/publicdomain/mark/1.0/" rel="nofollow">`,
		"<dd>javascript:alert(1)</dd>",
		// files: format, size, download (no checksum: that is for staff)
		"Acrobat PDF 1.4 - Portable Document Format 1.4", "Not identified yet", "Media type image/jpeg", // an original waits, a derivative has its type
		`href="/api/v1/resources/` + string(pdfFile.ID) + `/content" download>book.pdf</a>`, "21 B",
		// where the work is, and a reader's tools: the viewer first, the
		// whole work as PDF, the manifest for other viewers, sharing
		`<nav class="breadcrumbs" aria-label="You are here">`, `<li><a href="/">Home</a></li>`,
		`<li><a href="/collections/` + string(coll.ID) + `">Maps &amp; Atlases</a></li>`,
		`<a class="iiif" href="` + e.ts.URL + `/iiif/` + string(w.ID) + `/manifest"`,
		`id="work-share" data-url="` + e.ts.URL + `/works/` + string(w.ID) + `"`,
		// thumbnails load as they scroll into view
		`loading="lazy"`,
		`id="viewer"`,
		// the readable collection, not the hidden one
		`<a href="/collections/` + string(coll.ID) + `">Maps &amp; Atlases</a>`,
		`href="/works/` + string(w.ID) + `/cite.bib"`, `href="/works/` + string(w.ID) + `/cite.ris"`,
		`<link rel="canonical" href="` + e.ts.URL + `/works/` + string(w.ID) + `">`,
		"Page 1", "Page 3",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the work page lacks %q", want)
		}
	}
	if strings.Contains(body, "Secret shelf") || strings.Contains(body, string(hidden.ID)) {
		t.Error("the page names a collection the visitor may not see")
	}
	if strings.Contains(body, pdfFile.File.SHA256) || strings.Contains(body, "(fmt/18)") || strings.Contains(body, `class="technical"`) {
		t.Error("a reader is shown the technical view of the files")
	}
	if v, m := strings.Index(body, `id="viewer"`), strings.Index(body, `id="meta-h"`); v < 0 || m < v {
		t.Errorf("the viewer (at %d) does not come before the description (at %d)", v, m)
	}
	// the whole work as a PDF is offered once a page has a JPEG image
	// to make it of (here only thumbnails: the PDF would be 404)
	pdfButton := `<a class="button" href="/iiif/` + string(w.ID) + `/pdf" rel="nofollow" download>Download PDF</a>`
	if strings.Contains(body, "Download PDF") {
		t.Error("Download PDF is offered for a work without a JPEG page image")
	}
	access := *e.putBytes("p2.jpg", "image/jpeg", []byte("an access copy"))
	access.Use = shelfmark.UseAccess
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: kids.Items[1].ID, File: &access}})
	if p := b.get("/works/" + string(w.ID)); !strings.Contains(p.Body, pdfButton) {
		t.Errorf("a work with a JPEG access copy is not offered its PDF: %.300s", p.Body)
	}
	if strings.Contains(body, "/edit\"") {
		t.Error("an anonymous visitor is offered the edit links")
	}
	if n := len(liRE.FindAllString(body, -1)); n != 3 {
		t.Errorf("%d pages shown, want 3", n)
	}

	// Highwire Press tags
	tags := metaTags(body)
	for name, want := range map[string][]string{
		"citation_title":             {title},
		"citation_author":            {"Mercator, Gerardus", "Hondius, Jodocus"},
		"citation_publication_date":  {"1595/03/02"},
		"citation_publisher":         {"Rumold Mercator"},
		"citation_volume":            {"2"},
		"citation_pdf_url":           {e.ts.URL + kit.ContentURL(pdfFile.ID)},
		"citation_abstract_html_url": {e.ts.URL + "/works/" + string(w.ID)},
	} {
		if got := tags[name]; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	// the JSON-LD is one block, valid JSON, and the title's </script> did
	// not end it
	blocks := ldRE.FindAllStringSubmatch(body, -1)
	if len(blocks) != 1 {
		t.Fatalf("%d JSON-LD blocks", len(blocks))
	}
	var ld map[string]any
	if err := json.Unmarshal([]byte(blocks[0][1]), &ld); err != nil {
		t.Fatalf("JSON-LD: %v: %s", err, blocks[0][1])
	}
	if ld["name"] != title || ld["@type"] != "CreativeWork" || ld["url"] != e.ts.URL+"/works/"+string(w.ID) || ld["datePublished"] != "1595-03-02" {
		t.Errorf("JSON-LD: %v", ld)
	}
	if authors, _ := ld["author"].([]any); len(authors) != 2 {
		t.Errorf("JSON-LD authors: %v", ld["author"])
	}

	// German labels
	b.lang = "de"
	if p := b.get("/works/" + string(w.ID)); !strings.Contains(p.Body, "<dt>Urheber") || !strings.Contains(p.Body, "Seite 2") {
		t.Errorf("German page lacks its labels: %.300s", p.Body)
	}
	b.lang = ""

	// the admin is offered the edit links
	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)
	p = admin.get("/works/" + string(w.ID))
	for _, link := range []string{"/edit", "/pages", "/access", "/delete"} {
		if !strings.Contains(p.Body, `href="/works/`+string(w.ID)+link+`"`) {
			t.Errorf("the admin is not offered %s", link)
		}
	}
	if !strings.Contains(p.Body, "Secret shelf") {
		t.Error("the admin does not see the private collection")
	}
	// staff get the files' checksums and PRONOM ids, folded under Technical
	tech := p.Body[max(0, strings.Index(p.Body, `<details class="technical" id="technical">`)):]
	for _, want := range []string{`<summary><h2 id="files-h">Technical: files, formats and checksums</h2></summary>`, pdfFile.File.SHA256, "(fmt/18)", "SHA-256 checksum"} {
		if !strings.Contains(tech, want) {
			t.Errorf("the admin's technical view lacks %q", want)
		}
	}

	// a file set's page is its work's
	if p := b.get("/works/" + string(kids.Items[1].ID)); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/works/"+string(w.ID) {
		t.Errorf("a file set's page: %d %s", p.Status, p.Header.Get("Location"))
	}
}

func TestUIWorkAccess(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	priv := book(t, e, 2, shelfmark.Private, titled("A private diary"))
	gone := book(t, e, 2, shelfmark.Public, titled("Withdrawn"))
	if err := e.repo.DeleteResource(ctx, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	anon := newVisitor(t, e.testEnv)
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/works/" + string(priv.ID), 404, "Not found"},
		{"/works/" + string(priv.ID) + "/cite.bib", 404, "Not found"},
		{"/works/" + string(priv.ID) + "/cite.ris", 404, "Not found"},
		{"/works/" + string(gone.ID), 410, "This item was deleted."},
		{"/works/not-an-id", 404, "Not found"},
		{"/works/" + string(e.repo.IDs().Encode(shelfmark.MaxKey-3)), 404, "Not found"},
		{"/works/" + string(gone.ID) + "/cite.bib", 410, "Deleted"},
	} {
		p := anon.get(c.path)
		if p.Status != c.status || !strings.Contains(p.Body, c.want) || !strings.Contains(p.Body, "<h1>") {
			t.Errorf("anonymous GET %s: %d, want %d with %q: %.300s", c.path, p.Status, c.status, c.want, p.Body)
		}
	}
	if p := anon.get("/works/" + string(priv.ID)); strings.Contains(p.Body, "private diary") {
		t.Error("the 404 page shows the hidden work's title")
	}
	// an embargo still ahead makes a public work private until then
	until := time.Now().Add(90 * 24 * time.Hour)
	embargoed := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Embargo: &until, Metadata: titled("Under embargo")}})[0]
	// a part of a private work
	part := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Parent: priv.ID, Metadata: titled("Volume two")}})[0]
	if p := anon.get("/works/" + string(embargoed.ID)); p.Status != http.StatusNotFound {
		t.Errorf("anonymous, embargoed work: %d", p.Status)
	}
	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)
	p := admin.get("/works/" + string(embargoed.ID))
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "Embargoed until "+until.UTC().Format("2006-01-02")) ||
		!strings.Contains(p.Body, `<span class="badge">Private</span>`) || !strings.Contains(p.Body, `content="noindex"`) {
		t.Errorf("the admin's page of an embargoed work: %d %.2000s", p.Status, p.Body)
	}
	p = admin.get("/works/" + string(part.ID))
	if !strings.Contains(p.Body, `Part of <a href="/works/`+string(priv.ID)+`">A private diary</a>`) {
		t.Errorf("a part's page does not link its work: %.2000s", p.Body)
	}
	p = admin.get("/works/" + string(priv.ID))
	if !strings.Contains(p.Body, `<a href="/works/`+string(part.ID)+`">`) {
		t.Errorf("a work's page does not link its part: %.2000s", p.Body)
	}
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "A private diary") || !strings.Contains(p.Body, `<span class="badge">Private</span>`) ||
		!strings.Contains(p.Body, `<meta name="robots" content="noindex">`) {
		t.Errorf("the admin's page of a private work: %d %.300s", p.Status, p.Body)
	}
}

func TestUIWorkPaging(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w := book(t, e, 2*uiWorkPageSize+7, shelfmark.Public, titled("A long book"))
	b := newVisitor(t, e.testEnv)
	path := "/works/" + string(w.ID)
	var counts []int
	for pages := 0; path != "" && pages < 5; pages++ {
		p := b.get(path)
		if p.Status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, p.Status)
		}
		counts = append(counts, len(liRE.FindAllString(p.Body, -1)))
		path = ""
		if m := nextRE.FindStringSubmatch(p.Body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	if fmt.Sprint(counts) != fmt.Sprint([]int{uiWorkPageSize, uiWorkPageSize, 7}) {
		t.Errorf("pages per work page: %v", counts)
	}
	// ?page= (a search hit in a page's text) starts the pages at that
	// page, however deep; a page of another work, or none, starts at the
	// first
	ctx := context.Background()
	kids, err := e.repo.ListChildren(ctx, w.ID, shelfmark.PageRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	deep := kids.Items[uiWorkPageSize+3].ID
	p := b.get("/works/" + string(w.ID) + "?page=" + string(deep))
	first := regexp.MustCompile(`<li id="page-([^"]+)"`).FindStringSubmatch(p.Body)
	if p.Status != 200 || first == nil || first[1] != string(deep) {
		t.Errorf("?page=%s: %d, first page shown %v", deep, p.Status, first)
	}
	other := book(t, e, 2, shelfmark.Public, titled("Another book"))
	for _, pg := range []string{string(kids.Items[uiWorkPageSize+3].ID) + "x", string(other.ID)} {
		p := b.get("/works/" + string(w.ID) + "?page=" + pg)
		first := regexp.MustCompile(`<li id="page-([^"]+)"`).FindStringSubmatch(p.Body)
		if p.Status != 200 || first == nil || first[1] != string(kids.Items[0].ID) {
			t.Errorf("?page=%s: %d, first page shown %v", pg, p.Status, first)
		}
	}
	for _, bad := range []string{"garbage", "p", "p-1", "pzzzzzzzzzzzzzzzzzz"} {
		if p := b.get("/works/" + string(w.ID) + "?after=" + bad); p.Status != http.StatusBadRequest {
			t.Errorf("?after=%s: %d, want 400", bad, p.Status)
		}
	}
}

// TestUIWorkCost: the work page of a 300-page book in five collections runs
// the statements the page of a 10-page one in one collection runs (R15),
// for anonymous and signed-in readers.
func TestUIWorkCost(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		ctx := context.Background()
		// the large work also belongs to more collections: their names
		// are read at once
		var colls []shelfmark.ID
		for i := 0; i < 5; i++ {
			colls = append(colls, e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled(fmt.Sprint("Books ", i))}})[0].ID)
		}
		small := book(t, e, 10, shelfmark.Public, titled("Ten pages"), colls[0])
		large := book(t, e, 300, shelfmark.Public, titled("Three hundred pages"), colls...)
		anon := newVisitor(t, e.testEnv)
		admin := newVisitor(t, e.testEnv)
		admin.signIn("admin", adminPassword)
		for _, v := range []struct {
			who string
			b   *visitor
		}{{"anonymous", anon}, {"admin", admin}} {
			stmts := func(w shelfmark.ID) []string {
				v.b.get("/works/" + string(w)) // warm the caches (sessions) alike
				mark := e.tr.mark()
				if p := v.b.get("/works/" + string(w)); p.Status != http.StatusOK {
					t.Fatalf("%s: %d", w, p.Status)
				}
				return e.tr.since(mark)
			}
			a, b := stmts(small.ID), stmts(large.ID)
			if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) == 0 {
				t.Errorf("%s: the page of a 10-page work ran %d statements, of a 300-page one %d:\n%s\n---\n%s", v.who, len(a), len(b),
					strings.Join(a, "\n"), strings.Join(b, "\n"))
			}
			t.Logf("%s: %d statements for the page of a 10-page and of a 300-page work", v.who, len(a))
		}
	})
}

func TestUIWorkCite(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	w := book(t, e, 1, shelfmark.Public, []shelfmark.Statement{
		lit(shelfmark.NSDC+"title", `Braces {and} 100% $pecial & more_`),
		lit(shelfmark.NSDC+"creator", "Curie, Marie"),
		lit(shelfmark.NSDC+"creator", "Acme Research and Development"),
		lit(shelfmark.NSDC+"date", "1903"),
		lit(shelfmark.NSDC+"type", "Book"),
		lit(shelfmark.NSDC+"description", "two\nlines"),
	})
	b := newVisitor(t, e.testEnv)
	r := b.get("/works/" + string(w.ID) + "/cite.bib")
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-bibtex; charset=utf-8" {
		t.Fatalf("cite.bib: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		"@book{shelfmark" + string(w.ID) + ",",
		`title = {Braces \{and\} 100\% \$pecial \& more\_},`,
		`author = {Curie, Marie and {Acme Research and Development}},`,
		"year = {1903},",
		"url = {" + e.ts.URL + "/works/" + string(w.ID) + "},",
		"abstract = {two lines},",
	} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("cite.bib lacks %q:\n%s", want, r.Body)
		}
	}
	// braces balance: no value can end its field early
	if strings.Count(strings.ReplaceAll(r.Body, `\{`, ""), "{") != strings.Count(strings.ReplaceAll(r.Body, `\}`, ""), "}") {
		t.Errorf("unbalanced braces:\n%s", r.Body)
	}
	r = b.get("/works/" + string(w.ID) + "/cite.ris")
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/x-research-info-systems; charset=utf-8" {
		t.Fatalf("cite.ris: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	want := "TY  - BOOK\r\nTI  - Braces {and} 100% $pecial & more_\r\nAU  - Curie, Marie\r\nAU  - Acme Research and Development\r\nPY  - 1903\r\nDA  - 1903\r\n" +
		"AB  - two lines\r\nUR  - " + e.ts.URL + "/works/" + string(w.ID) + "\r\nER  - \r\n"
	if r.Body != want {
		t.Errorf("cite.ris:\n%q\nwant\n%q", r.Body, want)
	}
}

func TestUISitemap(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	pub := book(t, e, 1, shelfmark.Public, titled("Public"))
	priv := book(t, e, 1, shelfmark.Private, titled("Private"))
	if _, err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, e.testEnv)
	r := b.get("/sitemap.xml")
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/xml; charset=utf-8" {
		t.Fatalf("sitemap index: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	var index struct {
		XMLName  xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemapindex"`
		Sitemaps []struct {
			Loc string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
		} `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemap"`
	}
	if err := xml.Unmarshal([]byte(r.Body), &index); err != nil || len(index.Sitemaps) == 0 {
		t.Fatalf("sitemap index: %v %s", err, r.Body)
	}
	var urls []string
	for _, sm := range index.Sitemaps {
		path := strings.TrimPrefix(sm.Loc, e.ts.URL)
		r := b.get(path)
		var set struct {
			XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
			URLs    []struct {
				Loc     string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
				LastMod string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
			} `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
		}
		if err := xml.Unmarshal([]byte(r.Body), &set); r.Status != 200 || err != nil {
			t.Fatalf("%s: %d %v %s", path, r.Status, err, r.Body)
		}
		if len(set.URLs) > 50000 {
			t.Errorf("%s lists %d URLs", path, len(set.URLs))
		}
		for _, u := range set.URLs {
			urls = append(urls, u.Loc)
			if u.Loc != e.ts.URL+"/" && !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(u.LastMod) {
				t.Errorf("%s: lastmod %q", u.Loc, u.LastMod)
			}
		}
	}
	got := strings.Join(urls, " ")
	if !strings.Contains(got, e.ts.URL+"/works/"+string(pub.ID)) || strings.Contains(got, string(priv.ID)) {
		t.Errorf("the sitemaps list %s; want the public work %s and not the private %s", got, pub.ID, priv.ID)
	}
	for _, bad := range []string{"/sitemaps/0.xml", "/sitemaps/01.xml", "/sitemaps/x.xml", "/sitemaps/1", "/sitemaps/999999.xml"} {
		if r := b.get(bad); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, r.Status)
		}
	}
	r = b.get("/robots.txt")
	if r.Status != 200 || !strings.Contains(r.Body, "Sitemap: "+e.ts.URL+"/sitemap.xml\n") || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("robots.txt: %d %s", r.Status, r.Body)
	}
}
