package e2e

// The helpers of the browser tests (browser_test.go): a real `shelfmark
// serve` in a fresh directory, Debian's chromium driven headless through
// the DevTools protocol (chromedp), screenshots, axe-core's accessibility
// rules and the page's Content-Security-Policy reports.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browserAdminPassword is the administrator's password in the browser
// tests (set with `shelfmark user password admin`).
const browserAdminPassword = "browser-test-password"

// browserStep bounds one step of a browser test (a page load, a form
// sent, a condition polled for): generous, for a busy two-core machine.
const browserStep = 2 * time.Minute

// requireTools reports whether a missing tool fails a test instead of
// skipping it: in CI, and under scripts/test.sh.
func requireTools() bool {
	return os.Getenv("CI") != "" || os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1"
}

// chromiumPath returns Debian's chromium, or skips the test without it
// (fails in CI: scripts/testdeps.sh installs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("SHELFMARK_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if requireTools() {
		t.Fatal("no chromium (scripts/testdeps.sh installs Debian's chromium)")
	}
	t.Skip("no chromium installed (scripts/testdeps.sh installs Debian's chromium)")
	return ""
}

// buildDir is where scripts/testdeps.sh puts test tools and data.
func buildDir() string {
	if d := os.Getenv("SHELFMARK_BUILD_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", ".build")
}

// axeSource returns axe-core's script (scripts/testdeps.sh fetches it
// into .build/axe-core/), or skips the test without it (fails in CI).
func axeSource(t *testing.T) string {
	t.Helper()
	p := filepath.Join(buildDir(), "axe-core", "axe.min.js")
	b, err := os.ReadFile(p)
	if err != nil {
		if requireTools() {
			t.Fatalf("no axe-core (scripts/testdeps.sh fetches it): %v", err)
		}
		t.Skipf("no axe-core at %s (scripts/testdeps.sh fetches it)", p)
	}
	return string(b)
}

// browserServer is a `shelfmark serve` with its background workers, on a
// fresh data directory, listening on 127.0.0.1.
type browserServer struct {
	bin, data, base string
	// token is an administrator's API token, for setting up pages
	// through the REST API.
	token string
	hc    *http.Client
}

// startBrowserServer builds shelfmark, starts serve in a temporary
// directory and gives its administrator a known password.
func startBrowserServer(t *testing.T) *browserServer {
	t.Helper()
	bin := buildShelfmark(t)
	dir := t.TempDir()
	env := cleanEnv(filepath.Dir(bin))
	addr := startReadmeServe(t, bin, dir, env)
	s := &browserServer{bin: bin, data: filepath.Join(dir, "shelfmark-data"), base: "http://" + addr,
		hc: &http.Client{Timeout: browserStep}}
	cmd := exec.Command(bin, "user", "password", "admin", "--data", s.data)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(browserAdminPassword+"\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark user password admin: %v\n%s", err, out)
	}
	s.token = adminToken(t, s.data)
	t.Cleanup(s.hc.CloseIdleConnections)
	return s
}

// api sends a request to the REST API with the administrator's token and
// decodes a JSON answer into out (when not nil); a status other than want
// fails the test.
func (s *browserServer) api(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	var raw []byte
	ctype := ""
	switch b := body.(type) {
	case nil:
	case rawBody:
		raw, ctype = b.data, b.ctype
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
		ctype = "application/json"
	}
	status, got, err := do(s.hc, method, s.base+"/api/v1"+path, ctype, raw, http.Header{"Authorization": {"Bearer " + s.token}})
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, got)
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, got)
		}
	}
}

// browser is one headless chromium tab, with what it reported about the
// pages it showed.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	// shots are the directories screenshots go to.
	shots []string
	n     int
	// axeRules counts the axe-core rules pages passed.
	axeRules int
	// close ends chromium (once; the test's cleanup calls it too).
	close func()

	mu sync.Mutex
	// problems are Content-Security-Policy violations, script errors and
	// failed requests of a page's parts reported since the last check.
	problems []string
}

// personUA is the user agent of a person's Chrome on Linux.
const personUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// newBrowser starts chromium headless (one at a time: each test closes
// its own before it ends) with a fresh profile.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	return newBrowserIn(t, base, t.Name())
}

// newBrowserIn is newBrowser with its screenshots in .build/screenshots/dir.
func newBrowserIn(t *testing.T, base, dir string) *browser {
	t.Helper()
	exe := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("lang", "en-US"),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("hide-scrollbars", true),
		// a person's browser: headless chromium names itself
		// HeadlessChrome, which the COUNTER robots list (and so the
		// server's admission) takes for a robot
		chromedp.UserAgent(personUA),
	)
	if os.Geteuid() == 0 {
		// chromium refuses to run as root with its sandbox
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	b := &browser{t: t, ctx: ctx, base: base, shots: screenshotDirs(t, dir)}
	b.close = sync.OnceFunc(func() {
		// close chromium and wait for it (chromedp then removes the
		// profile it made)
		if err := chromedp.Cancel(ctx); err != nil {
			t.Logf("close chromium: %v", err)
		}
		cancelCtx()
		cancelAlloc()
	})
	t.Cleanup(b.close)
	// the first run starts chromium, which lives as long as the context
	// it is given: b.ctx, not a step's
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	chromedp.ListenTarget(ctx, b.listen)
	start, cancel := context.WithTimeout(ctx, browserStep)
	defer cancel()
	// every document reports CSP violations into window.__cspViolations,
	// before any script of its own runs
	err := chromedp.Run(start, cdplog.Enable(), network.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`).Do(ctx)
		return err
	}))
	if err != nil {
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	return b
}

// readmeShots are the screenshots of the main pages, by the name the
// tests take them under, and the file each is saved as in
// $SHELFMARK_SCREENSHOTS (docs/screenshots, which the README shows).
var readmeShots = map[string]string{
	"home":                        "home",
	"collection":                  "collection",
	"flow-identified-thumbnailed": "work",
	"flow-search":                 "search",
	"flow-deposit-files":          "deposit",
	"flow-pages":                  "reorder",
	"conflict":                    "edit-conflict",
	"bulk-preview":                "bulk-preview",
	"bulk-started":                "bulk-run",
	"admin":                       "admin",
	"viewer":                      "viewer",
	"workspace":                   "workspace",
}

// screenshotDirs are where screenshots go: .build/screenshots always,
// and $SHELFMARK_SCREENSHOTS (the main pages only, see readmeShots) when
// set. The first directory is emptied first; screenshots there are
// numbered in the order taken.
func screenshotDirs(t *testing.T, dir string) []string {
	dirs := []string{filepath.Join(buildDir(), "screenshots", dir)}
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	if d := os.Getenv("SHELFMARK_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// listen collects what the browser reports about the pages: CSP
// violations and script errors.
func (b *browser) listen(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		p = "script error: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			p += " " + ev.ExceptionDetails.Exception.Description
		}
		p += fmt.Sprintf(" (%s:%d)", ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber)
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
		}
	case *network.EventResponseReceived:
		// a style sheet, script, image or request of a script that fails
		// (documents answer what each check expects)
		if ev.Type != network.ResourceTypeDocument && ev.Response.Status >= 400 {
			p = fmt.Sprintf("%s %s answered %d", ev.Type, ev.Response.URL, ev.Response.Status)
		}
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		// a page answered 404 or 410 on purpose is logged as a network
		// error; CSP refusals come from "security" or "violation"
		if e.Level == cdplog.LevelError && e.Source != cdplog.SourceNetwork ||
			strings.Contains(e.Text, "Content Security Policy") {
			p = fmt.Sprintf("%s %s: %s (%s)", e.Source, e.Level, e.Text, e.URL)
		}
	}
	if p != "" {
		b.mu.Lock()
		b.problems = append(b.problems, p)
		b.mu.Unlock()
	}
}

// run runs actions with a step's time limit.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStep)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads path (relative to the server) and fails the test unless the
// document answers status.
func (b *browser) open(path string, status int) {
	b.t.Helper()
	b.expect("open "+path, status, chromedp.Navigate(b.base+path))
}

// expect runs actions that load a document (a navigation, a form sent)
// and fails the test unless it answers status.
func (b *browser) expect(what string, status int, actions ...chromedp.Action) {
	b.t.Helper()
	if err := b.load(status, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// load runs actions that load a document and waits for its body; it
// fails unless the document answers status.
func (b *browser) load(status int, actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(b.ctx, browserStep)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, actions...)
	if err != nil {
		return err
	}
	if resp == nil {
		return fmt.Errorf("no document loaded")
	}
	if int(resp.Status) != status {
		return fmt.Errorf("%s answered %d, want %d", resp.URL, resp.Status, status)
	}
	return chromedp.Run(ctx, chromedp.WaitReady("body", chromedp.ByQuery))
}

// location is the address the tab shows, without the server's base.
func (b *browser) location() string {
	b.t.Helper()
	var u string
	b.run("location", chromedp.Location(&u))
	return strings.TrimPrefix(u, b.base)
}

// eval evaluates a script expression in the page (awaiting a promise) and
// stores its JSON value in out (when not nil).
func (b *browser) eval(what, expr string, out any) {
	b.t.Helper()
	b.run(what, chromedp.Evaluate(expr, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	}))
}

// waitFor polls a script condition (an expression true when met) until it
// holds, or fails the test after limit; describe (an expression) tells
// what the page showed instead.
func (b *browser) waitFor(what, cond, describe string, limit time.Duration) {
	b.t.Helper()
	b.poll(what, cond, describe, limit, 250*time.Millisecond, false)
}

// reloadUntil reloads the page until a script condition holds, or fails
// the test after limit (for work the background jobs do).
func (b *browser) reloadUntil(what, cond, describe string, limit time.Duration) {
	b.t.Helper()
	b.poll(what, cond, describe, limit, time.Second, true)
}

// poll checks cond every interval (reloading the page first when reload
// is set) until it holds, or fails the test after limit.
func (b *browser) poll(what, cond, describe string, limit, interval time.Duration, reload bool) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		b.eval(what, "!!("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var got any
			if describe != "" {
				b.eval(what, describe, &got)
			}
			b.t.Fatalf("%s: not so after %v (page %s): %v", what, limit, b.location(), got)
		}
		time.Sleep(interval)
		if reload {
			b.run("reload for "+what, chromedp.Reload())
		}
	}
}

// text is the visible text of the page's main landmark.
func (b *browser) text() string {
	b.t.Helper()
	var s string
	b.eval("read the page", `(document.querySelector("main") || document.body).innerText`, &s)
	return s
}

// shot saves a full-page PNG screenshot named name (numbered in the
// order taken) into every screenshot directory.
func (b *browser) shot(name string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	b.n++
	for i, d := range b.shots {
		file := fmt.Sprintf("%02d-%s.png", b.n, name)
		if i > 0 {
			readme, ok := readmeShots[name]
			if !ok {
				continue
			}
			file = readme + ".png"
		}
		if err := os.WriteFile(filepath.Join(d, file), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// takeProblems returns the CSP violations and script errors reported
// since the last call, those the page collected included.
func (b *browser) takeProblems() []string {
	b.t.Helper()
	var inPage []string
	b.eval("read CSP violations", `window.__cspViolations || []`, &inPage)
	b.mu.Lock()
	defer b.mu.Unlock()
	ps := append(b.problems, inPage...)
	b.problems = nil
	return ps
}

// reported reports whether the browser (not the page) reported a problem
// containing s since the last takeProblems.
func (b *browser) reported(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}

// checkClean fails the test if the page reported a CSP violation or a
// script error.
func (b *browser) checkClean(what string) {
	b.t.Helper()
	for _, p := range b.takeProblems() {
		b.t.Errorf("%s: %s", what, p)
	}
}

// axeViolation is one rule axe-core found broken, with the elements that
// break it.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	URL    string `json:"helpUrl"`
	Nodes  []struct {
		Target  string `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

// axeTags are the rule sets the pages must pass: WCAG 2.0 and 2.1, levels
// A and AA.
const axeTags = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]`

// axe runs axe-core's WCAG 2.1 A/AA rules on the page and fails the test
// for each violation (its id, impact, the elements and the help).
func (b *browser) axe(what, src string) {
	b.t.Helper()
	for _, v := range b.axeRun(src) {
		var nodes []string
		for _, n := range v.Nodes {
			nodes = append(nodes, fmt.Sprintf("    %s\n      %s\n      %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n      ")))
		}
		b.t.Errorf("%s: axe %s (%s): %s <%s>\n%s", what, v.ID, v.Impact, v.Help, v.URL, strings.Join(nodes, "\n"))
	}
}

// axeRun runs axe-core's WCAG 2.1 A/AA rules on the page and returns the
// violations.
func (b *browser) axeRun(src string) []axeViolation {
	b.t.Helper()
	var loaded bool
	b.eval("inject axe-core", src+";\ntypeof window.axe === 'object'", &loaded)
	if !loaded {
		b.t.Fatal("axe-core did not load")
	}
	var res struct {
		Violations []axeViolation
		Passes     int
	}
	b.eval("run axe-core", `axe.run(document, {runOnly: {type: "tag", values: `+axeTags+`}, resultTypes: ["violations"]})
  .then(r => ({passes: r.passes.length, violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html, summary: n.failureSummary}))}))}))`, &res)
	b.axeRules += res.Passes
	return res.Violations
}

// press sends key presses to the focused element, as a keyboard does:
// keys are names ("Tab", "Enter", " ", "ArrowDown") or text, each with
// the modifiers given.
func (b *browser) press(what string, keys []string, mods ...string) {
	b.t.Helper()
	var opts []chromedp.KeyOption
	for _, m := range mods {
		switch m {
		case "Shift":
			opts = append(opts, chromedp.KeyModifiers(input.ModifierShift))
		case "Alt":
			opts = append(opts, chromedp.KeyModifiers(input.ModifierAlt))
		case "Ctrl":
			opts = append(opts, chromedp.KeyModifiers(input.ModifierCtrl))
		}
	}
	for _, k := range keys {
		b.run(what+": press "+k, chromedp.KeyEvent(keyCode(k), opts...))
	}
}

// keyCode turns a key's name into what chromedp.KeyEvent sends.
func keyCode(k string) string {
	switch k {
	case "Tab":
		return kb.Tab
	case "Enter":
		return kb.Enter
	case "Escape":
		return kb.Escape
	case "ArrowUp":
		return kb.ArrowUp
	case "ArrowDown":
		return kb.ArrowDown
	case "ArrowLeft":
		return kb.ArrowLeft
	case "ArrowRight":
		return kb.ArrowRight
	case "Home":
		return kb.Home
	case "End":
		return kb.End
	case "Backspace":
		return kb.Backspace
	}
	return k
}

// focused describes the focused element (tag, id, name, type, text).
func (b *browser) focused() string {
	b.t.Helper()
	var s string
	b.eval("focused element", `(() => { const e = document.activeElement; if (!e) return "";
  return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.name ? "[name=" + e.name + "]" : "") +
    (e.type ? "[type=" + e.type + "]" : "") + " " + (e.innerText || e.value || e.getAttribute("aria-label") || "").trim().slice(0, 60) })()`, &s)
	return s
}

// tabTo presses Tab (or Shift+Tab when back) until the focused element
// matches the CSS selector, at most limit times; it fails the test if
// focus never gets there.
func (b *browser) tabTo(what, selector string, back bool, limit int) {
	b.t.Helper()
	var mods []string
	if back {
		mods = []string{"Shift"}
	}
	var seen []string
	for i := 0; i < limit; i++ {
		var ok bool
		b.eval(what, fmt.Sprintf(`!!(document.activeElement && document.activeElement.matches(%q))`, selector), &ok)
		if ok {
			return
		}
		seen = append(seen, b.focused())
		b.press(what, []string{"Tab"}, mods...)
	}
	b.t.Fatalf("%s: %d Tab presses never reached %s; focus went %s", what, limit, selector, strings.Join(seen, " → "))
}

// focusInfo is what tabWalk reads of the focused element.
type focusInfo struct {
	Desc string `json:"desc"`
	// Body is set when no element has the focus (Tab left the page);
	// Again when the element was reached before (Tab came round).
	Body    bool `json:"body"`
	Again   bool `json:"again"`
	Visible bool `json:"visible"`
}

// focusJS describes the focused element and whether its focus is seen:
// an outline, or a box shadow, drawn around it (WCAG 2.4.7).
const focusJS = `(() => { const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement) return {body: true, desc: "body", visible: true};
  const again = e.dataset.tabWalked === "1"; e.dataset.tabWalked = "1";
  const s = getComputedStyle(e);
  const visible = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || (s.boxShadow !== "none" && s.boxShadow !== "");
  let d = e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.name ? "[name=" + e.name + "]" : "");
  if (e.getAttribute("href")) d += "[href=" + e.getAttribute("href").slice(0, 60) + "]";
  const label = (e.innerText || e.value || e.getAttribute("aria-label") || "").trim().replace(/\s+/g, " ").slice(0, 40);
  return {desc: d + (label ? " \"" + label + "\"" : ""), body: false, again: again, visible: visible} })()`

// tabWalk presses Tab from the top of the page through its controls (at
// most limit presses) and returns them in order, with those whose focus
// is not drawn.
func (b *browser) tabWalk(limit int) (stops []string, unseen []string) {
	b.t.Helper()
	b.eval("start at the top", `document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0); true`, nil)
	for i := 0; i < limit; i++ {
		b.press("tab through the page", []string{"Tab"})
		var f focusInfo
		b.eval("the focused element", focusJS, &f)
		if f.Body || f.Again {
			break
		}
		stops = append(stops, f.Desc)
		if !f.Visible {
			unseen = append(unseen, f.Desc)
		}
	}
	return stops, unseen
}

// reflowJS lists the elements that stick out of a narrow window: those
// whose right edge is past the window's, unless they are a data table or
// in one (WCAG 1.4.10 excepts content that needs two dimensions), or a
// box that scrolls sideways holds them.
const reflowJS = `(() => { const w = document.documentElement.clientWidth, out = [];
  const held = e => { if (e.closest("table")) return true;
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll") return true } return false };
  for (const e of document.body.querySelectorAll("*")) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 1 && !held(e)) out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
      (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") +
      (e.getAttribute("href") ? "[href=" + e.getAttribute("href").slice(0, 80) + "]" : "") + " (right edge " + Math.round(r.right) + ")");
  }
  return {scrollWidth: document.documentElement.scrollWidth, width: w, out: out.slice(0, 8)} })()`

// reflow reports what sticks out of the page at a width of 320 CSS
// pixels (WCAG 1.4.10: no scrolling in two directions).
func (b *browser) reflow() (scrollWidth int, out []string) {
	b.t.Helper()
	b.run("a narrow window", chromedp.EmulateViewport(320, 800))
	defer b.run("the window as it was", chromedp.EmulateViewport(1280, 900))
	var r struct {
		ScrollWidth int      `json:"scrollWidth"`
		Width       int      `json:"width"`
		Out         []string `json:"out"`
	}
	b.eval("what sticks out", reflowJS, &r)
	return r.ScrollWidth, r.Out
}

// typeText types text into the focused element, key by key.
func (b *browser) typeText(what, text string) {
	b.t.Helper()
	b.run(what, chromedp.KeyEvent(text))
}

// setFiles puts files into a file input, as a user picks them in its
// file dialog.
func (b *browser) setFiles(what, selector string, files []string) {
	b.t.Helper()
	b.run(what, chromedp.SetUploadFiles(selector, files, chromedp.ByQuery))
}

// chooseFiles presses key on the focused file input, which opens the file
// dialog; the test answers the dialog with files.
func (b *browser) chooseFiles(what string, files []string, key string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserStep)
	defer cancel()
	opened := make(chan cdp.BackendNodeID, 1)
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*page.EventFileChooserOpened); ok {
			select {
			case opened <- ev.BackendNodeID:
			default:
			}
		}
	})
	if err := chromedp.Run(ctx, page.SetInterceptFileChooserDialog(true), chromedp.KeyEvent(keyCode(key))); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	var node cdp.BackendNodeID
	select {
	case node = <-opened:
	case <-ctx.Done():
		b.t.Fatalf("%s: no file dialog opened (focus on %s)", what, b.focused())
	}
	if err := chromedp.Run(ctx, dom.SetFileInputFiles(files).WithBackendNodeID(node),
		page.SetInterceptFileChooserDialog(false)); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// signIn signs in through the sign-in form and comes back to next.
func (b *browser) signIn(name, password, next string) {
	b.t.Helper()
	b.open("/login?next="+url.QueryEscape(next), http.StatusOK)
	b.run("fill the sign-in form",
		chromedp.SendKeys("#login-name", name, chromedp.ByQuery),
		chromedp.SendKeys("#login-password", password, chromedp.ByQuery))
	b.expect("sign in", http.StatusOK, chromedp.Click(`main form[action="/login"] button[type="submit"]`, chromedp.ByQuery))
	if b.nodeCount(`form[action="/logout"]`) != 1 {
		b.t.Fatalf("not signed in after the sign-in form: %s", b.text())
	}
	if got := b.location(); got != next {
		b.t.Fatalf("signed in at %s, want %s", got, next)
	}
}

// nodeCount counts the elements a CSS selector matches.
func (b *browser) nodeCount(selector string) int {
	b.t.Helper()
	var n int
	b.eval("count "+selector, fmt.Sprintf(`document.querySelectorAll(%q).length`, selector), &n)
	return n
}
