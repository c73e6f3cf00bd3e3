package http

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// catalogueRows are a form's metadata rows: pairs of a field (its IRI,
// or a Dublin Core element's name) and a value, sent as a form without
// script sends them (no kind: the value is typed text).
func catalogueRows(pairs ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		field := pairs[i]
		if !strings.Contains(field, ":") {
			field = shelfmark.NSDC + field
		}
		v.Add("field", field)
		v.Add("value", pairs[i+1])
		v.Add("kind", "")
	}
	return v
}

// objectsOf are the objects of a resource's statements of a predicate.
func objectsOf(res *shelfmark.Resource, pred string) []shelfmark.Term {
	var out []shelfmark.Term
	for _, st := range res.Metadata {
		if st.Predicate == pred {
			out = append(out, st.Object)
		}
	}
	return out
}

// wantObjects checks a resource's objects of a predicate, in order.
func wantObjects(t *testing.T, res *shelfmark.Resource, pred string, want ...shelfmark.Term) {
	t.Helper()
	got := objectsOf(res, pred)
	if len(got) != len(want) {
		t.Errorf("%s: %+v, want %+v", pred, got, want)
		return
	}
	for i := range want {
		g := got[i]
		if g.Datatype == shelfmark.XSDString {
			g.Datatype = ""
		}
		if g != want[i] {
			t.Errorf("%s[%d]: %+v, want %+v", pred, i, got[i], want[i])
		}
	}
}

// TestUIDepositPickers: the deposit form starts with a required title
// and lists each vocabulary once, named in the page's language; a
// language given by its name or its code is stored as a plain code, a
// licence, rights statement or type given by its name, short name or
// address is stored as an IRI, and any other http(s) address is taken.
func TestUIDepositPickers(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/deposit")
	first := regexp.MustCompile(`(?s)<select id="field-0" name="field">.*?</select>`).FindString(p.Body)
	if !regexp.MustCompile(`<option value="` + regexp.QuoteMeta(shelfmark.NSDC+"title") + `"[^>]* selected>Title</option>`).MatchString(first) {
		t.Errorf("the first row is not the title: %.300s", first)
	}
	if !regexp.MustCompile(`<input id="value-0" name="value" type="text" value="" [^>]*required`).MatchString(p.Body) {
		t.Error("the title's value is not required")
	}
	for _, want := range []string{
		`<datalist id="vocab-language">`, `<option value="de">German</option>`, `<option value="gsw">Swiss German</option>`,
		`<datalist id="vocab-rights"><option value="http://rightsstatements.org/vocab/InC/1.0/">In Copyright</option>`,
		`<option value="https://creativecommons.org/licenses/by-sa/4.0/">CC BY-SA 4.0 – Attribution-ShareAlike</option>`,
		`<option value="http://purl.org/dc/dcmitype/StillImage">Still image</option>`,
		`data-vocab="language"`, `data-vocab="licence"`, `>Licence</option>`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the deposit form lacks %s", want)
		}
	}
	for _, id := range []string{"vocab-language", "vocab-licence", "vocab-rights", "vocab-type"} {
		if n := strings.Count(p.Body, `<datalist id="`+id+`"`); n != 1 {
			t.Errorf("%s listed %d times", id, n)
		}
	}
	if n := strings.Count(p.Body, `<option value="de">`); n != 1 {
		t.Errorf("German offered %d times", n)
	}
	// in German, the names are German
	if p := b.get("/deposit?lang=de"); !strings.Contains(p.Body, `<option value="de">Deutsch</option>`) ||
		!strings.Contains(p.Body, `>Urheberrechtlich geschützt</option>`) || !strings.Contains(p.Body, `>Lizenz</option>`) {
		t.Errorf("the German form's lists are not in German")
	}
	b.get("/deposit?lang=en")

	f := catalogueRows("title", "Picked", "language", "German", "language", "ger", "language", "swiss german",
		"rights", "InC", "rights", "http://rightsstatements.org/vocab/NoC-US/1.0/",
		shelfmark.NSDCTerms+"license", "CC BY-SA 4.0 – Attribution-ShareAlike", shelfmark.NSDCTerms+"license", "https://example.org/licence",
		"type", "text", "type", "Still image", "type", "http://vocab.getty.edu/aat/300026877")
	f.Set("visibility", "public")
	w := find(t, e, locationID(t, postDeposit(b, f, nil, true)))
	lit, iri := shelfmark.NewLiteral, shelfmark.NewIRI
	wantObjects(t, w, shelfmark.NSDC+"language", lit("de"), lit("ger"), lit("gsw"))
	wantObjects(t, w, shelfmark.NSDC+"rights", iri("http://rightsstatements.org/vocab/InC/1.0/"), iri("http://rightsstatements.org/vocab/NoC-US/1.0/"))
	wantObjects(t, w, shelfmark.NSDCTerms+"license", iri("https://creativecommons.org/licenses/by-sa/4.0/"), iri("https://example.org/licence"))
	wantObjects(t, w, shelfmark.NSDC+"type", iri("http://purl.org/dc/dcmitype/Text"), iri("http://purl.org/dc/dcmitype/StillImage"), iri("http://vocab.getty.edu/aat/300026877"))

	// the edit form names the stored values in the page's language
	p = b.get("/works/" + string(w.ID) + "/edit?lang=de")
	for _, want := range []string{`>Schweizerdeutsch</span>`, `>Urheberrechtlich geschützt</span>`, `>Text</span>`, `list="vocab-rights"`, `value="iri"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the edit form lacks %s", want)
		}
	}
	b.get("/deposit?lang=en")
}

// TestUIDepositPickerRefusals: a value a picked field does not take is
// refused with the row and what the field takes, in the page's language;
// the form comes back with the values as sent and the row marked, and
// nothing is stored.
func TestUIDepositPickerRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	b.get("/deposit")
	before := e.counts()
	for _, tc := range []struct {
		field, value, want string
	}{
		{"language", "Klingonish", `Row 2: “Klingonish” is not a language this form knows.`},
		{"language", "http://id.loc.gov/vocabulary/iso639-2/ger", `is not a language this form knows`},
		{"rights", "All rights reserved", `Row 2: “All rights reserved” is not a rights statement.`},
		{"rights", "javascript:alert(1)", `is not a rights statement`},
		{shelfmark.NSDCTerms + "license", "ftp://example.org/licence", `is not a licence.`},
		{shelfmark.NSDCTerms + "license", "http://exa mple.org/", `is not a licence.`},
		{"type", "Letter", `Row 2: “Letter” is not a type.`},
		{"type", "https://", `is not a type.`},
	} {
		f := catalogueRows("title", "Refused", tc.field, tc.value, "creator", "Ann")
		f.Set("visibility", "public")
		p := postDeposit(b, f, nil, true)
		if p.Status != 400 || !strings.Contains(p.Body, tc.want) {
			t.Errorf("%s %q: %d, want 400 with %q: %.600s", tc.field, tc.value, p.Status, tc.want, p.Body)
			continue
		}
		if !regexp.MustCompile(`<input id="value-1" name="value" type="text" value="` + regexp.QuoteMeta(templateAttr(tc.value)) + `"[^>]*aria-invalid="true"`).MatchString(p.Body) {
			t.Errorf("%s %q: the row is not marked, or its value not kept", tc.field, tc.value)
		}
		if !strings.Contains(p.Body, `value="Ann"`) || !strings.Contains(p.Body, `value="Refused"`) {
			t.Errorf("%s %q: the other values are lost", tc.field, tc.value)
		}
	}
	e.wantCounts(before)
	// in German
	b.get("/deposit?lang=de")
	f := catalogueRows("title", "Abgelehnt", "type", "Brief")
	f.Set("visibility", "public")
	if p := postDeposit(b, f, nil, true); p.Status != 400 || !strings.Contains(p.Body, "Zeile 2: „Brief“ ist kein Typ.") {
		t.Errorf("German refusal: %d %.600s", p.Status, p.Body)
	}
	e.wantCounts(before)
	b.get("/deposit?lang=en")
}

// templateAttr writes s as html/template writes an attribute's value
// (enough for the test's values).
func templateAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// TestUIEditKeepsStoredValues: values a work already holds in picked
// fields that the form would not take now (a licence in words, a
// language named in full, a language-tagged type) are shown and kept as
// they are stored when the form is saved; a new value the field does not
// take is refused and nothing is saved.
func TestUIEditKeepsStoredValues(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.create("/api/v1/works", `{"metadata": {"dc:title": "Legacy", "dc:rights": "All rights reserved",
		"dcterms:license": "CC-BY", "dc:language": "Latin, mostly", "dc:type": {"@value": "Brief", "@language": "de"},
		"dcterms:rights": {"@id": "http://rightsstatements.org/vocab/CNE/1.0/"}}}`)
	b := newVisitor(t, e)
	b.signIn("admin", adminPassword)
	p := b.get("/works/" + string(w.ID) + "/edit")
	for _, want := range []string{`value="All rights reserved"`, `value="CC-BY"`, `value="Latin, mostly"`, `value="Brief"`, `value="lang:de"`,
		`value="http://rightsstatements.org/vocab/CNE/1.0/"`, `>Copyright Not Evaluated</span>`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the edit form lacks %s", want)
		}
	}
	if !regexp.MustCompile(`<select id="field-0" name="field">(?s:.*?)<option value="` + regexp.QuoteMeta(shelfmark.NSDC+"title") + `" selected>`).MatchString(p.Body) {
		t.Error("the edit form does not start with the title")
	}
	fields := regexp.MustCompile(`<select id="field-\d+" name="field">(?s:.*?)<option value="([^"]+)"[^>]* selected>`).FindAllStringSubmatch(p.Body, -1)
	values := regexp.MustCompile(`<input id="value-\d+" name="value" type="text" value="([^"]*)"`).FindAllStringSubmatch(p.Body, -1)
	kinds := regexp.MustCompile(`<input type="hidden" name="kind" value="([^"]*)">`).FindAllStringSubmatch(p.Body, -1)
	if len(fields) != len(values) || len(kinds) != len(values) || len(values) < 6 {
		t.Fatalf("rows: %d fields, %d values, %d kinds", len(fields), len(values), len(kinds))
	}
	form := url.Values{"version": {strconv.FormatInt(w.Version, 10)}}
	for i := range values {
		v := strings.NewReplacer("&#34;", `"`, "&amp;", "&", "&#43;", "+").Replace(values[i][1])
		if v == "Legacy" {
			v = "Legacy, saved"
		}
		form.Add("field", fields[i][1])
		form.Add("value", v)
		form.Add("kind", kinds[i][1])
	}
	// a new rights note in words is refused, and nothing saved
	bad := url.Values{}
	for k, v := range form {
		bad[k] = append([]string(nil), v...)
	}
	bad.Add("field", shelfmark.NSDC+"rights")
	bad.Add("value", "Ask the library")
	bad.Add("kind", "")
	if p := b.post("/works/"+string(w.ID)+"/edit", bad); p.Status != 400 || !strings.Contains(p.Body, "“Ask the library” is not a rights statement") {
		t.Errorf("a new rights note: %d %.500s", p.Status, p.Body)
	}
	if got := find(t, e, w.ID); got.Version != w.Version {
		t.Errorf("a refused form saved: version %d, was %d", got.Version, w.Version)
	}
	p = b.post("/works/"+string(w.ID)+"/edit", form)
	if p.Status != 303 {
		t.Fatalf("save: %d %.800s", p.Status, p.Body)
	}
	got := find(t, e, w.ID)
	lit := shelfmark.NewLiteral
	wantObjects(t, got, shelfmark.NSDC+"title", lit("Legacy, saved"))
	wantObjects(t, got, shelfmark.NSDC+"rights", lit("All rights reserved"))
	wantObjects(t, got, shelfmark.NSDCTerms+"license", lit("CC-BY"))
	wantObjects(t, got, shelfmark.NSDC+"language", lit("Latin, mostly"))
	wantObjects(t, got, shelfmark.NSDC+"type", shelfmark.NewLangLiteral("Brief", "de"))
	wantObjects(t, got, shelfmark.NSDCTerms+"rights", shelfmark.NewIRI("http://rightsstatements.org/vocab/CNE/1.0/"))
}
