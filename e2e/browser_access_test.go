package e2e

import (
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestBrowserAccessRequest: a collection's manager closes a public work's
// files on its access page with the keyboard alone; a reader signed in
// sees the record and a notice instead of the pages, asks for the files
// with a message (keyboard only), and sees that her request waits; the
// manager finds it on the requests page and grants it with the keyboard;
// the reader then sees the pages. Every page is clean and passes
// axe-core.
func TestBrowserAccessRequest(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	users := map[string]string{"mona": "the keeper of theses", "rita": "a reader of harbours"}
	for name, password := range users {
		cmd := exec.Command(s.bin, "user", "add", name, "--password-stdin", "--data", s.data)
		cmd.Env, cmd.Stdin = cleanEnv(filepath.Dir(s.bin)), strings.NewReader(password+"\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("shelfmark user add %s: %v\n%s", name, err, out)
		}
	}
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Theses"}, "visibility": "public"},
		http.StatusCreated, &res)
	coll := res.ID
	s.api(t, "PUT", "/resources/"+coll+"/roles", map[string]any{"grants": []map[string]string{{"principal": "user:mona", "role": "manager"}}},
		http.StatusOK, nil)
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Harbours of the North Sea",
		"dc:description": "A thesis, its record open while its files wait for the defence."}, "visibility": "public",
		"memberOf": []string{coll}}, http.StatusCreated, &res)
	work := res.ID
	s.api(t, "POST", "/filesets", map[string]any{"parent": work, "visibility": "public", "metadata": map[string]any{"dc:title": "Title page"}},
		http.StatusCreated, &res)
	s.api(t, "POST", "/resources/"+res.ID+"/files?name=title.png",
		rawBody{"image/png", gen.PageImage(3, 1, strings.Fields("HARBOURS OF THE NORTH SEA"))}, http.StatusCreated, nil)
	path := "/works/" + work

	// the manager closes the files
	mona := newBrowser(t, s.base)
	mona.signIn("mona", users["mona"], path+"/access")
	mona.checkClean("the access page")
	mona.axe("the access page with the files' choice", axe)
	mona.tabTo("the files' choice", "#files-public", false, 30)
	mona.press("choose: only those with a role", []string{"ArrowDown", "ArrowDown"})
	if f := mona.focused(); !strings.Contains(f, "files-private") {
		t.Fatalf("the arrow keys reached %s, not the private choice", f)
	}
	mona.shot("access-files-private")
	mona.tabTo("the Save button", `main form[action$="/access"] button[type="submit"]`, false, 10)
	mona.expect("save with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := mona.location(); got != path+"?notice=accesssaved" {
		t.Fatalf("after saving the manager is at %s", got)
	}

	// the reader asks
	rita := newBrowser(t, s.base)
	rita.signIn("rita", users["rita"], path)
	if n := rita.nodeCount("#files-closed"); n != 1 || strings.Contains(rita.text(), "Title page") {
		t.Fatalf("the reader's work page: %d notices, %.800s", n, rita.text())
	}
	rita.checkClean("the work page with closed files")
	rita.axe("the work page with the request form", axe)
	rita.tabTo("the message field", "#request-message", false, 60)
	rita.typeText("type a message", "For my own thesis on the ports of Frisia.")
	rita.tabTo("the Ask button", `#files-closed button[type="submit"]`, false, 5)
	rita.expect("ask with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if txt := rita.text(); !strings.Contains(txt, "Your request was sent") || !strings.Contains(txt, "waiting for a decision") {
		t.Fatalf("after asking: %.800s", txt)
	}
	rita.shot("access-request-waiting")

	// the manager grants it
	mona.open("/access-requests", http.StatusOK)
	if txt := mona.text(); !strings.Contains(txt, "For my own thesis on the ports of Frisia.") || !strings.Contains(txt, "rita asked on") {
		t.Fatalf("the requests page: %.800s", txt)
	}
	mona.checkClean("the requests page")
	mona.axe("the requests page with a request waiting", axe)
	mona.shot("access-requests")
	mona.tabTo("the Grant button", `button[name="decision"][value="grant"]`, false, 40)
	mona.expect("grant with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if !strings.Contains(mona.text(), "Access granted.") {
		t.Fatalf("after granting: %.600s", mona.text())
	}

	// the reader reads the files
	rita.open(path, http.StatusOK)
	if n := rita.nodeCount("#files-closed"); n != 0 || !strings.Contains(rita.text(), "Title page") {
		t.Fatalf("after the grant, the reader's work page: %d notices, %.800s", n, rita.text())
	}
	rita.checkClean("the work page after the grant")
}
