package oai

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// parsed is the part of a response the tests look at.
type parsed struct {
	ResponseDate string `xml:"responseDate"`
	Request      struct {
		Verb  string `xml:"verb,attr"`
		Attrs []xml.Attr
		URL   string `xml:",chardata"`
	} `xml:"request"`
	Errors []struct {
		Code string `xml:"code,attr"`
		Text string `xml:",chardata"`
	} `xml:"error"`
	Identify struct {
		Name       string   `xml:"repositoryName"`
		BaseURL    string   `xml:"baseURL"`
		Emails     []string `xml:"adminEmail"`
		Earliest   string   `xml:"earliestDatestamp"`
		Deleted    string   `xml:"deletedRecord"`
		Repository string   `xml:"description>oai-identifier>repositoryIdentifier"`
		Sample     string   `xml:"description>oai-identifier>sampleIdentifier"`
	} `xml:"Identify"`
	Formats []string    `xml:"ListMetadataFormats>metadataFormat>metadataPrefix"`
	Sets    []xmlSet    `xml:"ListSets>set"`
	Headers []xmlHeader `xml:"ListIdentifiers>header"`
	Records []xmlRecord `xml:"ListRecords>record"`
	Record  []xmlRecord `xml:"GetRecord>record"`
	Token   *xmlToken   `xml:"ListRecords>resumptionToken"`
	IDToken *xmlToken   `xml:"ListIdentifiers>resumptionToken"`
	SToken  *xmlToken   `xml:"ListSets>resumptionToken"`
}

type xmlSet struct {
	Spec string `xml:"setSpec"`
	Name string `xml:"setName"`
}

type xmlHeader struct {
	Status     string   `xml:"status,attr"`
	Identifier string   `xml:"identifier"`
	Datestamp  string   `xml:"datestamp"`
	Sets       []string `xml:"setSpec"`
}

type xmlRecord struct {
	Header   xmlHeader `xml:"header"`
	Metadata struct {
		Inner string `xml:",innerxml"`
	} `xml:"metadata"`
}

type xmlToken struct {
	Text   string `xml:",chardata"`
	Size   string `xml:"completeListSize,attr"`
	Cursor string `xml:"cursor,attr"`
}

func parse(t testing.TB, body string) *parsed {
	t.Helper()
	var p parsed
	if err := xml.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("response is not XML: %v\n%s", err, body)
	}
	return &p
}

// wantError checks a response is exactly one error with code.
func wantError(t testing.TB, body, code string) *parsed {
	t.Helper()
	p := parse(t, body)
	if len(p.Errors) != 1 || p.Errors[0].Code != code {
		t.Fatalf("want error %s, got %+v\n%s", code, p.Errors, body)
	}
	if strings.TrimSpace(p.Errors[0].Text) == "" {
		t.Errorf("error %s without a message", code)
	}
	return p
}

func wantOK(t testing.TB, body string) *parsed {
	t.Helper()
	p := parse(t, body)
	if len(p.Errors) > 0 {
		t.Fatalf("unexpected error %+v\n%s", p.Errors, body)
	}
	return p
}

func title(s string) []shelfmark.Statement {
	return []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "title", Object: shelfmark.NewLiteral(s)}}
}

func (e *env) create(nr *shelfmark.NewResource) *shelfmark.Resource {
	e.t.Helper()
	r, err := e.repo.CreateResource(e.ctx, nr)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// works creates n public works in colls, titled prefix-i, one commit per
// 500.
func (e *env) works(n int, prefix string, colls ...shelfmark.ID) []shelfmark.ID {
	e.t.Helper()
	var ids []shelfmark.ID
	for start := 0; start < n; start += 500 {
		var nrs []*shelfmark.NewResource
		for i := start; i < min(n, start+500); i++ {
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: colls,
				Metadata: append(title(fmt.Sprintf("%s-%d", prefix, i)),
					shelfmark.Statement{Predicate: shelfmark.NSDCTerms + "creator", Object: shelfmark.NewLangLiteral("Écrivain & <Co>", "fr")})})
		}
		rs, errs := e.repo.CreateResources(e.ctx, nrs)
		for i, err := range errs {
			if err != nil {
				e.t.Fatal(err)
			}
			ids = append(ids, rs[i].ID)
		}
	}
	return ids
}

// harvest walks a whole list and returns its headers (from records for
// ListRecords), failing on any repeated identifier.
func (e *env) harvest(verb, query string) []xmlHeader {
	e.t.Helper()
	var out []xmlHeader
	seen := map[string]bool{}
	q := "verb=" + verb + "&" + query
	for pages := 0; ; pages++ {
		if pages > 10000 {
			e.t.Fatal("harvest does not end")
		}
		body := e.get(q)
		p := parse(e.t, body)
		if len(p.Errors) > 0 {
			if p.Errors[0].Code == errNoRecordsMatch && pages == 0 {
				return nil
			}
			e.t.Fatalf("page %d: %+v", pages, p.Errors)
		}
		hs := p.Headers
		tok := p.IDToken
		if verb == "ListRecords" {
			hs, tok = nil, p.Token
			for _, r := range p.Records {
				hs = append(hs, r.Header)
				if r.Header.Status == "" && !strings.Contains(r.Metadata.Inner, "<") {
					e.t.Errorf("record %s has no metadata", r.Header.Identifier)
				}
			}
		}
		for _, h := range hs {
			if seen[h.Identifier] {
				e.t.Fatalf("%s returned twice", h.Identifier)
			}
			seen[h.Identifier] = true
		}
		out = append(out, hs...)
		if tok == nil || tok.Text == "" {
			return out
		}
		q = "verb=" + verb + "&resumptionToken=" + url.QueryEscape(tok.Text)
	}
}

func ids(hs []xmlHeader, status string) []string {
	var out []string
	for _, h := range hs {
		if h.Status == status {
			out = append(out, h.Identifier)
		}
	}
	slices.Sort(out)
	return out
}

func (e *env) oaiIDs(ids ...shelfmark.ID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, "oai:repo.example.org:"+string(id))
	}
	slices.Sort(out)
	return out
}

func TestProvider(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 7, RepositoryName: "Test & Co", AdminEmails: []string{"a@repo.example.org", "b@repo.example.org"}})

		// nothing yet: Identify still answers (without the oai-identifier
		// description, whose sampleIdentifier has no record to name), lists
		// match nothing, no sets
		p := wantOK(t, e.get("verb=Identify"))
		if p.Identify.Name != "Test & Co" || len(p.Identify.Emails) != 2 || p.Identify.Deleted != "persistent" ||
			p.Identify.Repository != "" || !strings.HasSuffix(p.Identify.BaseURL, "/oai") {
			t.Errorf("Identify: %+v", p.Identify)
		}
		wantError(t, e.get("verb=ListRecords&metadataPrefix=oai_dc"), errNoRecordsMatch)
		wantError(t, e.get("verb=ListSets"), errNoSetHierarchy)
		wantError(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&set=abc"), errNoSetHierarchy)

		parent := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Parent")})
		child := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Child"), MemberOf: []shelfmark.ID{parent.ID}})
		hidden := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private, Metadata: title("Hidden")})
		inChild := e.works(20, "c", child.ID)
		inParent := e.works(9, "p", parent.ID)
		loose := e.works(3, "l")
		inHidden := e.works(2, "h", hidden.ID)
		private := e.create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, Metadata: title("private")})
		later := e.clock.Now().Add(48 * time.Hour)
		embargoed := e.create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &later, Metadata: title("embargoed")})
		e.project()
		t0 := e.clock.Now()

		// Identify's sampleIdentifier names a record GetRecord answers (a
		// collection was the first resource made, and is no record)
		p = wantOK(t, e.get("verb=Identify"))
		if p.Identify.Repository != "repo.example.org" || !strings.HasPrefix(p.Identify.Sample, "oai:repo.example.org:") {
			t.Errorf("Identify with records: %+v", p.Identify)
		}
		if r := wantOK(t, e.get("verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape(p.Identify.Sample))); len(r.Record) != 1 || r.Record[0].Header.Status != "" {
			t.Errorf("GetRecord of the sample identifier %s: %+v", p.Identify.Sample, r.Record)
		}

		// sets: public collections, nested specs
		p = wantOK(t, e.get("verb=ListSets"))
		wantSets := []xmlSet{{Spec: string(parent.ID), Name: "Parent"}, {Spec: string(parent.ID) + ":" + string(child.ID), Name: "Child"}}
		if !slices.Equal(p.Sets, wantSets) {
			t.Errorf("sets %+v, want %+v", p.Sets, wantSets)
		}

		// every public work once, nothing else
		all := slices.Concat(inChild, inParent, loose, inHidden)
		hs := e.harvest("ListRecords", "metadataPrefix=oai_dc")
		if got, want := ids(hs, ""), e.oaiIDs(all...); !slices.Equal(got, want) {
			t.Fatalf("harvested %d records, want %d", len(got), len(want))
		}
		for _, h := range hs {
			id := strings.TrimPrefix(h.Identifier, "oai:repo.example.org:")
			switch {
			case slices.Contains(inChild, shelfmark.ID(id)):
				if !slices.Equal(h.Sets, []string{string(parent.ID) + ":" + string(child.ID)}) {
					t.Errorf("%s sets %v", id, h.Sets)
				}
			case slices.Contains(inHidden, shelfmark.ID(id)) || slices.Contains(loose, shelfmark.ID(id)):
				if len(h.Sets) != 0 {
					t.Errorf("%s sets %v", id, h.Sets)
				}
			}
		}
		if got := ids(e.harvest("ListIdentifiers", "metadataPrefix=oai_dc"), ""); !slices.Equal(got, e.oaiIDs(all...)) {
			t.Errorf("ListIdentifiers gives %d", len(got))
		}
		// a set holds the records of the sets below it
		if got := ids(e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&set="+string(parent.ID)), ""); !slices.Equal(got, e.oaiIDs(slices.Concat(inChild, inParent)...)) {
			t.Errorf("set parent: %d records", len(got))
		}
		if got := ids(e.harvest("ListRecords", "metadataPrefix=oai_dc&set="+string(parent.ID)+":"+string(child.ID)), ""); !slices.Equal(got, e.oaiIDs(inChild...)) {
			t.Errorf("set child: %d records", len(got))
		}
		wantError(t, e.get("verb=ListRecords&metadataPrefix=oai_dc&set="+string(child.ID)), errNoRecordsMatch)
		wantError(t, e.get("verb=ListRecords&metadataPrefix=oai_dc&set="+string(hidden.ID)), errNoRecordsMatch)

		// the first page: a token with the size of the list and cursor 0
		p = wantOK(t, e.get("verb=ListRecords&metadataPrefix=oai_dc"))
		if len(p.Records) != 7 || p.Token == nil || p.Token.Size != fmt.Sprint(len(all)) || p.Token.Cursor != "0" || p.Token.Text == "" {
			t.Fatalf("first page: %d records, token %+v", len(p.Records), p.Token)
		}
		// completeListSize only where the kept counts give it: a whole
		// format (from before every record), a leaf set; not a set with
		// sets below it
		for q, want := range map[string]string{
			"set=" + string(parent.ID) + ":" + string(child.ID): fmt.Sprint(len(inChild)),
			"set=" + string(parent.ID):                          "",
			"from=" + t0.Add(-time.Hour).Format(time.RFC3339):   fmt.Sprint(len(all)),
		} {
			p := wantOK(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&"+q))
			if p.IDToken == nil || p.IDToken.Size != want {
				t.Errorf("%s: token %+v, want completeListSize %q", q, p.IDToken, want)
			}
		}
		first := p.Records[0]
		if !strings.Contains(first.Metadata.Inner, `<dc:title>`) || !strings.Contains(first.Metadata.Inner, `<dc:creator xml:lang="fr">Écrivain &amp; &lt;Co&gt;</dc:creator>`) {
			t.Errorf("oai_dc: %s", first.Metadata.Inner)
		}
		p2 := wantOK(t, e.get("verb=ListRecords&resumptionToken="+url.QueryEscape(p.Token.Text)))
		if p2.Token == nil || p2.Token.Cursor != "7" {
			t.Errorf("second page token %+v", p2.Token)
		}
		// POST answers as GET does
		pp := wantOK(t, e.post("verb=ListRecords&resumptionToken="+url.QueryEscape(p.Token.Text)))
		if len(pp.Records) != len(p2.Records) || pp.Records[0].Header.Identifier != p2.Records[0].Header.Identifier {
			t.Error("POST and GET differ")
		}

		// GetRecord, ListMetadataFormats by identifier
		id := "oai:repo.example.org:" + string(loose[0])
		g := wantOK(t, e.get("verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape(id)))
		if len(g.Record) != 1 || g.Record[0].Header.Identifier != id {
			t.Fatalf("GetRecord: %+v", g.Record)
		}
		if f := wantOK(t, e.get("verb=ListMetadataFormats&identifier="+url.QueryEscape(id))).Formats; !slices.Equal(f, []string{"oai_dc"}) {
			t.Errorf("formats of a work without MARC: %v", f)
		}
		if f := wantOK(t, e.get("verb=ListMetadataFormats")).Formats; !slices.Equal(f, []string{"oai_dc", "marcxml"}) {
			t.Errorf("formats: %v", f)
		}
		wantError(t, e.get("verb=GetRecord&metadataPrefix=marcxml&identifier="+url.QueryEscape(id)), errCannotDisseminate)
		wantError(t, e.get("verb=GetRecord&metadataPrefix=mods&identifier="+url.QueryEscape(id)), errCannotDisseminate)
		for _, bad := range []string{"oai:repo.example.org:" + string(private.ID), "oai:repo.example.org:" + string(embargoed.ID),
			"oai:other.org:" + string(loose[0]), "oai:repo.example.org:zzzzzzzzz", "x"} {
			wantError(t, e.get("verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape(bad)), errIDDoesNotExist)
			wantError(t, e.get("verb=ListMetadataFormats&identifier="+url.QueryEscape(bad)), errIDDoesNotExist)
		}

		// changes an hour later: a deletion, a withdrawal, an edit, an
		// embargo that ends, a new work
		e.clock.Set(t0.Add(time.Hour))
		t1 := e.clock.Now()
		if err := e.repo.DeleteResource(e.ctx, loose[0], 0); err != nil {
			t.Fatal(err)
		}
		priv := shelfmark.Private
		if _, err := e.repo.UpdateResource(e.ctx, loose[1], shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.repo.UpdateResource(e.ctx, inParent[0], shelfmark.ResourceUpdate{Add: title("second title")}); err != nil {
			t.Fatal(err)
		}
		// a change that does not alter the record's bytes makes no new row
		if _, err := e.repo.UpdateResource(e.ctx, inParent[1], shelfmark.ResourceUpdate{Add: []shelfmark.Statement{{Predicate: "http://example.org/internal", Object: shelfmark.NewLiteral("x")}}}); err != nil {
			t.Fatal(err)
		}
		fresh := e.works(1, "new")
		e.project()
		e.clock.Set(t0.Add(72 * time.Hour)) // the embargo ended
		e.project()

		day := func(t time.Time) string { return t.Format("2006-01-02T15:04:05Z") }
		hs = e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&from="+day(t1))
		if got, want := ids(hs, "deleted"), e.oaiIDs(loose[0], loose[1]); !slices.Equal(got, want) {
			t.Errorf("deleted since t1: %v, want %v", got, want)
		}
		if got, want := ids(hs, ""), e.oaiIDs(inParent[0], fresh[0], embargoed.ID); !slices.Equal(got, want) {
			t.Errorf("changed since t1: %v, want %v", got, want)
		}
		// until before the changes: the old state of the list, minus the
		// rows that changed since (they moved to their new datestamps)
		hs = e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&until="+day(t0))
		if len(hs) != len(all)-3 {
			t.Errorf("until t0: %d records, want %d", len(hs), len(all)-3)
		}
		// lists that from or until cut have no completeListSize (only a
		// count over the list could give it)
		for _, q := range []string{"until=" + day(t0), "from=" + day(t0.Add(time.Minute)) + "&until=" + day(t0.Add(73*time.Hour))} {
			p := wantOK(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&"+q))
			if p.IDToken != nil && p.IDToken.Size != "" {
				t.Errorf("%s: completeListSize %q", q, p.IDToken.Size)
			}
		}
		// day granularity: the whole day of t0
		hs = e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&from="+t0.Format("2006-01-02")+"&until="+t0.Format("2006-01-02"))
		if len(hs) != len(all)+1 { // 3 rows moved within the day, plus the new work
			t.Errorf("day of t0: %d records, want %d", len(hs), len(all)+1)
		}
		wantError(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&from="+day(t0.Add(100*time.Hour))), errNoRecordsMatch)
		wantError(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&until=2001-01-01"), errNoRecordsMatch)
		// a deleted record keeps answering, as a tombstone
		g = wantOK(t, e.get("verb=GetRecord&metadataPrefix=oai_dc&identifier="+url.QueryEscape("oai:repo.example.org:"+string(loose[0]))))
		if len(g.Record) != 1 || g.Record[0].Header.Status != "deleted" || g.Record[0].Metadata.Inner != "" {
			t.Errorf("tombstone: %+v", g.Record)
		}
		if p := wantOK(t, e.get("verb=Identify")); p.Identify.Earliest != day(t0) {
			t.Errorf("earliestDatestamp %s, want %s", p.Identify.Earliest, day(t0))
		}
	})
}

func TestProviderErrors(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 2})
		coll := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("C")})
		e.works(5, "w", coll.ID)
		e.project()
		for _, c := range []struct{ query, code string }{
			{"", errBadVerb},
			{"verb=Nonsense", errBadVerb},
			{"verb=Identify&verb=Identify", errBadVerb},
			{"verb=Identify&extra=1", errBadArgument},
			{"verb=ListRecords", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&metadataPrefix=oai_dc", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&from=2020-13-01", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01T00:00:00+01:00", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-01&until=2020-01-02T00:00:00Z", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&from=2020-01-02&until=2020-01-01", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&set=a%20b", errBadArgument},
			{"verb=ListRecords&metadataPrefix=oai_dc&resumptionToken=x", errBadArgument},
			{"verb=ListRecords&metadataPrefix=nope", errCannotDisseminate},
			{"verb=ListRecords&resumptionToken=garbage", errBadResumption},
			{"verb=ListSets&resumptionToken=garbage", errBadResumption},
			{"verb=ListIdentifiers&metadataPrefix=marcxml", errNoRecordsMatch},
			{"verb=GetRecord&identifier=oai:repo.example.org:x", errBadArgument},
			{"verb=GetRecord&metadataPrefix=oai_dc", errBadArgument},
			{"verb=ListMetadataFormats&metadataPrefix=oai_dc", errBadArgument},
			{"verb=ListSets&set=x", errBadArgument},
			{"verb=Identify&a=%zz", errBadArgument},
		} {
			p := wantError(t, e.get(c.query), c.code)
			if (c.code == errBadVerb || c.code == errBadArgument) && (p.Request.Verb != "" || len(p.Request.Attrs) != 0) {
				t.Errorf("%s: request element has attributes %+v", c.query, p.Request.Attrs)
			}
			if c.code != errBadVerb && c.code != errBadArgument && p.Request.Verb == "" {
				t.Errorf("%s: request element lost its verb", c.query)
			}
		}

		// tokens: truncated, altered in one character, used with another
		// verb
		p := wantOK(t, e.get("verb=ListRecords&metadataPrefix=oai_dc"))
		tok := p.Token.Text
		flip := []byte(tok)
		flip[len(flip)/2] ^= 1
		if flip[len(flip)/2] == '-' || flip[len(flip)/2] == '_' {
			flip[len(flip)/2] = 'A'
		}
		for _, bad := range []string{tok[:len(tok)-1], tok[:len(tok)/2], string(flip), tok + "A"} {
			wantError(t, e.get("verb=ListRecords&resumptionToken="+url.QueryEscape(bad)), errBadResumption)
		}
		wantError(t, e.get("verb=ListIdentifiers&resumptionToken="+url.QueryEscape(tok)), errBadResumption)
		wantError(t, e.get("verb=ListSets&resumptionToken="+url.QueryEscape(tok)), errBadResumption)
		// the same token from a restarted provider (a new Provider on the
		// same database) still works
		other, err := NewProvider(e.store, DefaultRegistry(), Config{Domain: "repo.example.org", PageSize: 2, Now: e.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		e.prov.key = nil
		if k1, k2 := must(e.prov.tokenKey(e.ctx)), must(other.tokenKey(e.ctx)); string(k1) != string(k2) {
			t.Error("token keys differ between providers of one database")
		}
		wantOK(t, e.get("verb=ListRecords&resumptionToken="+url.QueryEscape(tok)))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSetsFollowCollections: moving a collection under another parent
// changes its setSpec, the specs in its records' headers and which set
// lists hold them; a collection made private is no longer a set.
func TestSetsFollowCollections(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 5})
		a := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("A")})
		b := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("B")})
		c := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("C"), MemberOf: []shelfmark.ID{a.ID}})
		ws := e.works(12, "w", c.ID)
		e.project()
		if got := ids(e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&set="+string(a.ID)), ""); !slices.Equal(got, e.oaiIDs(ws...)) {
			t.Fatalf("under A: %d", len(got))
		}
		// move C from A to B
		if err := e.repo.RemoveMembers(e.ctx, a.ID, []shelfmark.ID{c.ID}); err != nil {
			t.Fatal(err)
		}
		if err := e.repo.AddMembers(e.ctx, b.ID, []shelfmark.ID{c.ID}); err != nil {
			t.Fatal(err)
		}
		e.project()
		p := wantOK(t, e.get("verb=ListSets"))
		want := []xmlSet{{Spec: string(a.ID), Name: "A"}, {Spec: string(b.ID), Name: "B"}, {Spec: string(b.ID) + ":" + string(c.ID), Name: "C"}}
		if !slices.Equal(p.Sets, want) {
			t.Errorf("sets after the move %+v, want %+v", p.Sets, want)
		}
		wantError(t, e.get("verb=ListIdentifiers&metadataPrefix=oai_dc&set="+string(a.ID)), errNoRecordsMatch)
		hs := e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&set="+string(b.ID))
		if got := ids(hs, ""); !slices.Equal(got, e.oaiIDs(ws...)) {
			t.Errorf("under B: %d", len(got))
		}
		for _, h := range hs {
			if !slices.Equal(h.Sets, []string{string(b.ID) + ":" + string(c.ID)}) {
				t.Fatalf("%s sets %v", h.Identifier, h.Sets)
			}
		}
		// C made private: no longer a set, and gone from the headers
		priv := shelfmark.Private
		if _, err := e.repo.UpdateResource(e.ctx, c.ID, shelfmark.ResourceUpdate{Visibility: &priv}); err != nil {
			t.Fatal(err)
		}
		e.project()
		if p := wantOK(t, e.get("verb=ListSets")); len(p.Sets) != 2 {
			t.Errorf("sets with C private: %+v", p.Sets)
		}
		for _, h := range e.harvest("ListIdentifiers", "metadataPrefix=oai_dc") {
			if len(h.Sets) != 0 {
				t.Fatalf("%s still in %v", h.Identifier, h.Sets)
			}
		}
	})
}

// TestListSetsPages: ListSets pages by key with resumption tokens.
func TestListSetsPages(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 5})
		var want []string
		for i := 0; i < 12; i++ {
			c := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title(fmt.Sprintf("S%d", i))})
			want = append(want, string(c.ID))
		}
		e.project()
		var got []string
		q := "verb=ListSets"
		for pages := 1; ; pages++ {
			p := wantOK(t, e.get(q))
			for _, s := range p.Sets {
				got = append(got, s.Spec)
			}
			if p.SToken == nil || p.SToken.Text == "" {
				if pages != 3 || p.SToken == nil || p.SToken.Cursor != "10" {
					t.Errorf("last page %d, token %+v", pages, p.SToken)
				}
				break
			}
			q = "verb=ListSets&resumptionToken=" + url.QueryEscape(p.SToken.Text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("sets %v, want %v", got, want)
		}
	})
}

// TestDeepNestingDoesNotStopTheView: collections nested deeper than sets
// may be (a chain of 40, built from the bottom up, which the engine
// allows) are left out of the sets; the others stay sets, works in any of
// them are harvested, and the projector goes on with unrelated work.
func TestDeepNestingDoesNotStopTheView(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{PageSize: 50})
		chain := []*shelfmark.Resource{e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("level 39")})}
		for len(chain) < 40 {
			top := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title(fmt.Sprintf("level %d", 39-len(chain)))})
			if err := e.repo.AddMembers(e.ctx, top.ID, []shelfmark.ID{chain[len(chain)-1].ID}); err != nil {
				t.Fatal(err)
			}
			chain = append(chain, top)
		}
		deepest := e.works(3, "deepest", chain[0].ID)
		at32 := e.works(2, "at 32", chain[7].ID) // chain[i] is 39-i deep
		e.project()
		loose := e.works(1, "unrelated")
		e.project()

		p := wantOK(t, e.get("verb=ListSets"))
		if len(p.Sets) != 33 {
			t.Fatalf("%d sets, want the 33 collections up to 32 deep", len(p.Sets))
		}
		var spec []string
		for i := 39; i >= 7; i-- {
			spec = append(spec, string(chain[i].ID))
		}
		full := strings.Join(spec, ":")
		hs := e.harvest("ListIdentifiers", "metadataPrefix=oai_dc")
		if got, want := ids(hs, ""), e.oaiIDs(append(append(deepest, at32...), loose...)...); !slices.Equal(got, want) {
			t.Fatalf("harvested %v, want %v", got, want)
		}
		for _, h := range hs {
			switch {
			case slices.Contains(e.oaiIDs(at32...), h.Identifier) && !slices.Equal(h.Sets, []string{full}):
				t.Errorf("%s in sets %v, want %s", h.Identifier, h.Sets, full)
			case !slices.Contains(e.oaiIDs(at32...), h.Identifier) && len(h.Sets) != 0:
				t.Errorf("%s in sets %v", h.Identifier, h.Sets)
			}
		}
		if got := ids(e.harvest("ListIdentifiers", "metadataPrefix=oai_dc&set="+url.QueryEscape(full)), ""); !slices.Equal(got, e.oaiIDs(at32...)) {
			t.Errorf("set 32 deep: %v", got)
		}
	})
}
