package e2e

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserStaffSearch: the search page shows each reader what that
// reader may read, in a real browser on a real `shelfmark serve`. A
// depositor of a collection finds its public work, a private work of the
// collection (her role) and a private work she deposited that has since
// left the collection (her deposit), and not an administrator's private
// work outside it; an anonymous reader finds the public work alone; the
// administrator finds all four. On a phone's width the facets fold
// behind their heading, which opens them from the keyboard. The pages are
// clean (no CSP violation, script error or failed request) and axe-core's
// rules pass.
func TestBrowserStaffSearch(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	const password = "harbour pilot's word"
	env := cleanEnv(filepath.Dir(s.bin))
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(s.bin, append(args, "--data", s.data)...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("shelfmark %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(password+"\n", "user", "add", "dora", "--password-stdin")
	lines := strings.Fields(run("", "token", "create", "--user", "dora"))
	doraToken := lines[len(lines)-1]

	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Harbour records"}, "visibility": "public"},
		http.StatusCreated, &res)
	coll := res.ID
	s.api(t, "PUT", "/resources/"+coll+"/roles", map[string]any{"grants": []map[string]string{{"principal": "user:dora", "role": "depositor"}}},
		http.StatusOK, nil)
	work := func(title, vis string, in ...string) string {
		t.Helper()
		body := map[string]any{"metadata": map[string]any{"dc:title": title}, "visibility": vis}
		if len(in) > 0 {
			body["memberOf"] = in
		}
		s.api(t, "POST", "/works", body, http.StatusCreated, &res)
		return res.ID
	}
	public := work("Tide tables of the harbour", "public", coll)
	roleOnly := work("Letters of the harbour pilots", "private", coll)
	adminOnly := work("Ledger of the harbour master", "private")
	// dora deposits a private work in the collection, which is then taken
	// out of it: hers by deposit alone
	status, body, err := do(s.hc, "POST", s.base+"/api/v1/works", "application/json",
		[]byte(`{"metadata": {"dc:title": "Sketches of the harbour wall"}, "visibility": "private", "memberOf": ["`+coll+`"]}`),
		http.Header{"Authorization": {"Bearer " + doraToken}})
	if err != nil || status != http.StatusCreated {
		t.Fatalf("dora deposits: %d %v: %s", status, err, body)
	}
	if err := json.Unmarshal(body, &res); err != nil || res.ID == "" {
		t.Fatalf("dora's deposit: %v: %s", err, body)
	}
	deposit := res.ID
	s.api(t, "DELETE", "/resources/"+coll+"/members/"+deposit, nil, http.StatusNoContent, nil)

	b := newBrowser(t, s.base)
	// the search index follows the changes in the background: the public
	// work found means the others are indexed too (one indexer, in order)
	b.searchUntil("harbour", public, true)
	found := func(who string, want map[string]bool) {
		t.Helper()
		for id, w := range want {
			if got := b.nodeCount(`main a[href^="/works/`+id+`"]`) > 0; got != w {
				t.Errorf("%s: the search page lists %s: %v, want %v\n%.600s", who, id, got, w, b.text())
			}
		}
	}
	found("an anonymous reader", map[string]bool{public: true, roleOnly: false, adminOnly: false, deposit: false})
	b.shot("search-anonymous")
	b.checkClean("the anonymous search page")

	b.signIn("dora", password, "/")
	b.open("/search?q=harbour", http.StatusOK)
	found("the depositor", map[string]bool{public: true, roleOnly: true, adminOnly: false, deposit: true})
	if text := b.text(); !strings.Contains(text, "Results: 4") { // the three works and the collection
		t.Errorf("the depositor's search counts: %.400s", text)
	}
	b.shot("search-depositor")
	b.checkClean("the depositor's search page")
	b.axe("the depositor's search page", axe)
	// on a phone the facets fold behind their heading, which opens them
	// from the keyboard
	b.run("a phone's window", chromedp.EmulateViewport(375, 800))
	b.open("/search?q=harbour", http.StatusOK)
	facetsOpen := func() bool {
		var open bool
		b.eval("the facets open", `document.querySelector("details.fold").open`, &open)
		return open
	}
	if facetsOpen() {
		t.Error("at 375 px the facets are open when the page loads")
	}
	b.shot("search-phone")
	b.tabTo("the facets' heading", "details.fold > summary", false, 40)
	b.press("open the facets", []string{"Enter"})
	if !facetsOpen() {
		t.Error("at 375 px Enter on the facets' heading does not open them")
	}
	b.shot("search-phone-facets")
	b.axe("the search page on a phone", axe)
	b.run("the window as it was", chromedp.EmulateViewport(1280, 900))
	b.open("/search?q=harbour", http.StatusOK)
	if !facetsOpen() {
		t.Error("on a wide screen the facets are folded")
	}

	// her collection's browse counts what she may read there
	b.open("/search?collection="+coll, http.StatusOK)
	found("the depositor's browse of the collection", map[string]bool{public: true, roleOnly: true, deposit: false})

	b.close()
	admin := newBrowserIn(t, s.base, t.Name()+"-admin")
	admin.signIn("admin", browserAdminPassword, "/")
	admin.open("/search?q=harbour", http.StatusOK)
	for _, id := range []string{public, roleOnly, adminOnly, deposit} {
		if admin.nodeCount(`main a[href^="/works/`+id+`"]`) == 0 {
			t.Errorf("the administrator's search lacks %s: %.600s", id, admin.text())
		}
	}
	admin.shot("search-admin")
	admin.checkClean("the administrator's search page")
}
