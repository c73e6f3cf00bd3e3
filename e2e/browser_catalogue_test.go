package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserCatalogue: a cataloguer deposits a work with the keyboard
// alone, in a real browser on a real `shelfmark serve`: the title first
// (required), then a row's field switched to Rights, Type, Language and
// Licence, each value picked from its list by typing part of its name
// and choosing with the arrow keys, its name shown under it. A language
// the form does not know is refused on the page, the row marked, in the
// page's language. The work stores the language as its code and the
// others as IRIs; its edit form names them. The deposit and edit forms
// pass axe-core's rules in English and German, and are clean.
func TestBrowserCatalogue(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/deposit")
	b.shot("catalogue-deposit")
	b.axe("the deposit form", axe)
	b.checkClean("the deposit form")

	// the title is the first row, and required
	var first struct {
		Field    string `json:"field"`
		Required bool   `json:"required"`
	}
	b.eval("the first row", `({field: document.querySelector("#field-0").value, required: document.querySelector("#value-0").required})`, &first)
	if first.Field != "http://purl.org/dc/elements/1.1/title" || !first.Required {
		t.Errorf("the first row: %+v, want a required title", first)
	}
	b.tabTo("the title", "#value-0", false, 40)
	b.typeText("type the title", "Harbour master's log")
	b.tabTo("the second row's value", "#value-1", false, 5)
	b.typeText("type the creator", "Ann Smith")

	// pick sets a row's field by typing its name on the closed select,
	// then types part of a value into the value input, takes the
	// browser's first suggestion with the arrow keys, and reads what the
	// row shows
	shown := false
	pick := func(row, field, typed string) (value, name string) {
		t.Helper()
		sel, val := "#field-"+row, "#value-"+row
		b.tabTo("row "+row+"'s field", sel, false, 10)
		b.typeText("choose "+field, field)
		b.tabTo("row "+row+"'s value", val, false, 5)
		b.run("clear row "+row, chromedp.Evaluate(`document.querySelector("`+val+`").select()`, nil))
		b.typeText("type "+typed, typed)
		b.press("open the suggestions", []string{"ArrowDown"})
		if b.nodeCount(`#picker-list:not([hidden]) [role="option"][aria-selected="true"]`) != 1 {
			t.Errorf("row %s: no suggestion is chosen after ArrowDown", row)
		}
		if row == "5" && !shown {
			b.shot("catalogue-suggestions")
			b.axe("the deposit form with its suggestions open", axe)
			shown = true
		}
		b.press("take the first", []string{"Enter"})
		var got struct{ Value, Name, List string }
		b.eval("row "+row, `({Value: document.querySelector("`+val+`").value, List: document.querySelector("`+val+`").getAttribute("list") || "",
  Name: document.querySelector("#value-name-`+row+`").textContent})`, &got)
		t.Logf("row %s: %s %q -> %+v", row, field, typed, got)
		return got.Value, got.Name
	}
	for _, tc := range []struct{ row, field, typed, value, name string }{
		{"3", "Rights", "Educational", "http://rightsstatements.org/vocab/InC-EDU/1.0/", "In Copyright – Educational Use Permitted"},
		{"4", "Type", "Still", "http://purl.org/dc/dcmitype/StillImage", "Still image"},
	} {
		if v, n := pick(tc.row, tc.field, tc.typed); v != tc.value || n != tc.name {
			t.Errorf("row %s: %q (%q), want %q (%q)", tc.row, v, n, tc.value, tc.name)
		}
	}
	// two more rows, added with the keyboard (the script adds each at
	// once and puts the focus in its value)
	for _, tc := range []struct{ row, field, typed, value, name string }{
		{"5", "Language", "Germ", "de", "German"},
		{"6", "Licence", "Attribution-ShareAlike", "https://creativecommons.org/licenses/by-sa/4.0/", "CC BY-SA 4.0 – Attribution-ShareAlike"},
	} {
		b.tabTo("add a row", "[data-add-row]", false, 30)
		b.press("add a row", []string{"Enter"})
		if f := b.focused(); !strings.HasPrefix(f, "input#value-"+tc.row) {
			t.Fatalf("after adding a row the focus is on %s", f)
		}
		b.press("back to its field", []string{"Tab"}, "Shift")
		b.press("back to its field", []string{"Tab"}, "Shift")
		if v, n := pick(tc.row, tc.field, tc.typed); v != tc.value || n != tc.name {
			t.Errorf("row %s: %q (%q), want %q (%q)", tc.row, v, n, tc.value, tc.name)
		}
	}
	b.shot("catalogue-picked")
	b.axe("the deposit form, picked", axe)
	b.checkClean("the deposit form, picked")

	// a language the form does not know: refused, in German
	b.open("/deposit?lang=de", http.StatusOK)
	b.axe("the German deposit form", axe)
	b.tabTo("the title", "#value-0", false, 40)
	b.typeText("type the title", "Logbuch")
	b.tabTo("the second row's field", "#field-1", false, 5)
	b.typeText("choose Sprache", "Sprache")
	b.tabTo("the second row's value", "#value-1", false, 5)
	b.typeText("type a language", "Elbisch")
	b.expect("send the form", http.StatusBadRequest, chromedp.KeyEvent(kb.Enter))
	if txt := b.text(); !strings.Contains(txt, "Zeile 2: „Elbisch“ ist keine Sprache") {
		t.Errorf("the refusal: %.600s", txt)
	}
	if b.nodeCount(`#value-1[aria-invalid="true"]`) != 1 {
		t.Error("the refused row is not marked")
	}
	b.shot("catalogue-refused-de")
	b.axe("the German deposit form, refused", axe)
	b.checkClean("the German deposit form, refused")

	// the first form, sent in English: stored as codes and IRIs
	b.open("/deposit?lang=en", http.StatusOK)
	b.tabTo("the title", "#value-0", false, 40)
	b.typeText("type the title", "Harbour master's log")
	for _, tc := range []struct{ row, field, typed string }{
		{"1", "Language", "Germ"}, {"2", "Rights", "Educational"}, {"3", "Type", "Still"}, {"4", "Licence", "Attribution-ShareAlike"},
	} {
		pick(tc.row, tc.field, tc.typed)
	}
	b.tabTo("the deposit button", "#deposit-submit", false, 40)
	b.expect("deposit", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	loc := b.location()
	if !strings.HasPrefix(loc, "/works/") {
		t.Fatalf("after depositing: %s %.500s", loc, b.text())
	}
	work := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], "/works/")
	var res struct {
		Metadata map[string]any `json:"metadata"`
	}
	s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &res)
	md := res.Metadata
	for pred, want := range map[string]string{
		"dc:language":     `"de"`,
		"dc:rights":       `{"@id":"http://rightsstatements.org/vocab/InC-EDU/1.0/"}`,
		"dc:type":         `{"@id":"http://purl.org/dc/dcmitype/StillImage"}`,
		"dcterms:license": `{"@id":"https://creativecommons.org/licenses/by-sa/4.0/"}`,
	} {
		if got := jsonOf(t, md[pred]); got != want {
			t.Errorf("%s stored as %s, want %s (metadata %v)", pred, got, want, md)
		}
	}

	// the edit form names them, in English and in German
	for _, lang := range []string{"en", "de"} {
		b.open("/works/"+work+"/edit?lang="+lang, http.StatusOK)
		var names []string
		b.eval("the values' names", `Array.from(document.querySelectorAll(".value-name")).map(e => e.textContent).filter(s => s)`, &names)
		want := map[string]string{"en": "German|In Copyright – Educational Use Permitted|Still image|CC BY-SA 4.0 – Attribution-ShareAlike",
			"de": "Deutsch|Urheberrechtlich geschützt – Nutzung für Bildungszwecke erlaubt|Standbild|CC BY-SA 4.0 – Namensnennung, Weitergabe unter gleichen Bedingungen"}[lang]
		if strings.Join(names, "|") != want {
			t.Errorf("%s edit form names %q, want %q", lang, names, want)
		}
		b.shot("catalogue-edit-" + lang)
		b.axe("the edit form ("+lang+")", axe)
		b.checkClean("the edit form (" + lang + ")")
	}
	b.open("/?lang=en", http.StatusOK)
}

// jsonOf writes a decoded JSON value back as compact JSON.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
