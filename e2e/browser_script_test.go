package e2e

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserHostile are metadata values that would run script if a page put
// them into its HTML unescaped: as markup, as an attribute's end, as a
// link's address, and out of a JSON-LD block.
var browserHostile = map[string]string{
	"dc:title":       `Hostile <img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script> title`,
	"dc:description": `"><svg onload="window.__pwned=1"></svg><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>`,
	"dc:creator":     `</script><script>window.__pwned=1</script>`,
	"dc:subject":     `' onmouseover='window.__pwned=1`,
	"dc:relation":    `javascript:window.__pwned=1`,
	"dc:source":      `{{.CSRF}} </title><script>window.__pwned=1</script>`,
}

// testBrowserScript stores a work whose metadata carries script and shows
// it on every page that shows metadata: the values are shown as text, no
// script of theirs runs, and no page reports a CSP violation (which an
// injected inline script would cause).
func testBrowserScript(t *testing.T, s *browserServer) {
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": browserHostile["dc:title"],
		"dc:description": browserHostile["dc:description"]}, "visibility": "public"}, http.StatusCreated, &res)
	coll := res.ID
	md := map[string]any{}
	for k, v := range browserHostile {
		md[k] = v
	}
	s.api(t, "POST", "/works", map[string]any{"metadata": md, "memberOf": []string{coll}, "visibility": "public"},
		http.StatusCreated, &res)
	work := res.ID

	b := newBrowser(t, s.base)
	pages := []struct {
		name, path string
		signedIn   bool
		// shows says the page shows the title as text
		shows bool
	}{
		{"work", "/works/" + work, false, true},
		{"collection", "/collections/" + coll, false, true},
		{"home", "/", false, true},
		{"search", "/search?q=" + url.QueryEscape("hostile"), false, true},
		{"search-query", "/search?q=" + url.QueryEscape(`"><script>window.__pwned=1</script>`), false, false},
		{"edit", "/works/" + work + "/edit", true, false},
		{"work-signed-in", "/works/" + work, true, true},
	}
	signedIn := false
	for _, p := range pages {
		if p.signedIn && !signedIn {
			b.signIn("admin", browserAdminPassword, "/login")
			signedIn = true
		}
		if err := b.load(http.StatusOK, chromedp.Navigate(s.base+p.path)); err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		b.shot("script-" + p.name)
		b.checkPwned(p.name+" ("+p.path+")", p.shows)
	}

	// forms shown again with what was typed: the deposit refused for its
	// blank title, and the edit form of a work changed meanwhile
	hostile := browserHostile["dc:title"]
	b.open("/deposit", http.StatusOK)
	b.run("type a hostile creator", chromedp.SendKeys("#value-1", hostile, chromedp.ByQuery),
		chromedp.SendKeys("#value-0", " ", chromedp.ByQuery))
	b.expect("send the deposit", http.StatusBadRequest, chromedp.Click("#deposit-submit", chromedp.ByQuery))
	b.shot("script-deposit-again")
	b.checkPwned("the deposit form shown again", false)
	var typed string
	b.eval("the creator kept", `document.querySelector("#value-1").value`, &typed)
	if typed != hostile {
		t.Errorf("the deposit form shown again has the creator %q, want %q", typed, hostile)
	}

	b.open("/works/"+work+"/edit", http.StatusOK)
	s.api(t, "PATCH", "/resources/"+work, map[string]any{"add": map[string]any{"dc:date": "1900"}}, http.StatusOK, nil)
	b.expect("send the stale edit", http.StatusConflict, chromedp.Click(`#edit-form button[type="submit"]:not(.default-submit):not([name])`, chromedp.ByQuery))
	b.shot("script-conflict")
	b.checkPwned("the conflict page", true)
}

// checkPwned fails the test if a script of a metadata value ran, left an
// element in the page, or was refused by the page's CSP; shows says the
// page shows the hostile title as text.
func (b *browser) checkPwned(what string, shows bool) {
	b.t.Helper()
	var pwned string
	b.eval("window.__pwned", `typeof window.__pwned`, &pwned)
	if pwned != "undefined" {
		b.t.Errorf("%s: a script of a metadata value ran (window.__pwned is %s)", what, pwned)
	}
	var injected []string
	b.eval("injected elements", `Array.from(document.querySelectorAll(
  'script:not([src]):not([type="application/ld+json"]), [onerror], [onload], [onmouseover], iframe, svg[onload], img[src="x"], a[href^="javascript:"]'
)).map(e => e.outerHTML.slice(0, 120))`, &injected)
	if len(injected) > 0 {
		b.t.Errorf("%s: elements from metadata values: %v", what, injected)
	}
	if shows {
		if text := b.text(); !strings.Contains(text, "<script>window.__pwned=1</script>") {
			b.t.Errorf("%s: the title is not shown as text: %.600s", what, text)
		}
	}
	b.checkClean(what)
}

// testBrowserForgery signs in, then opens a page of another origin whose
// form posts to the interface (a visibility change) with a wrong form
// token and with none: the server refuses both (403) and the work stays
// public.
func testBrowserForgery(t *testing.T, s *browserServer) {
	var res struct{ ID string }
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Not to be hidden"}, "visibility": "public"},
		http.StatusCreated, &res)
	work := res.ID
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := ""
		if r.URL.Query().Has("token") {
			token = `<input type="hidden" name="csrf" value="` + html.EscapeString(r.URL.Query().Get("token")) + `">`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><title>Win a prize</title><form method="post" action="%s/works/%s/access">
<input type="hidden" name="visibility" value="private">%s<button id="go" type="submit">Claim</button></form></html>`, s.base, work, token)
	}))
	t.Cleanup(evil.Close)

	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/")
	for _, q := range []string{"?token=forged-token-of-the-right-length-0123456789abcdef", ""} {
		if err := b.load(http.StatusOK, chromedp.Navigate(evil.URL+"/"+q)); err != nil {
			t.Fatalf("the other site's page: %v", err)
		}
		b.expect("send the other site's form", http.StatusForbidden, chromedp.Click("#go", chromedp.ByQuery))
		b.shot("forgery-refused")
		var got struct{ Visibility string }
		s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &got)
		if got.Visibility != "public" {
			t.Fatalf("a form of another site (%q) made the work %s", q, got.Visibility)
		}
	}
	b.takeProblems() // the refusals are 403 documents, on purpose
}
