package e2e

import (
	"testing"
)

// TestBrowser drives the web interface in a real browser (Debian's
// chromium, headless) against a real `shelfmark serve` with its
// background workers, on a fresh data directory on 127.0.0.1. One server
// serves the subtests; each starts its own chromium, one at a time:
//
//   - pages: every page template, shown to the reader it is for, in
//     English and German, passes axe-core's WCAG 2.1 A and AA rules,
//     reflows at 320 CSS pixels, is walked by Tab with its focus drawn,
//     and reports no Content-Security-Policy violation, script error or
//     failed request;
//   - script: a script in a metadata value is shown as text, never run;
//   - forgery: a form of another site, posted by a signed-in browser, is
//     refused;
//   - flow: a user signs in, deposits a work with three page images, sees
//     them identified and thumbnailed, reorders them (dragging and by
//     keyboard), edits the title, finds the work by a word of its pages'
//     OCR text, opens it, makes it private, signs out and no longer finds
//     it;
//   - keyboard: the deposit and reorder flows by key presses alone;
//   - noscript: deposit, reorder, edit and access forms in a browser
//     that runs no script;
//   - longwork: a work longer than one list of pages shows the rest as
//     its "more pages" link scrolls into view;
//   - bulk: a CSV manifest previewed, started and followed until done;
//   - dashboard: the administrators' dashboard shows a queue paused and
//     resumed as it happens;
//   - history: a work's History compares two versions and restores one.
//
// Screenshots go to .build/screenshots/, and also to
// $SHELFMARK_SCREENSHOTS when set (docs/screenshots for the README).
func TestBrowser(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	t.Run("pages", func(t *testing.T) { testBrowserPages(t, s, axe) })
	t.Run("script", func(t *testing.T) { testBrowserScript(t, s) })
	t.Run("forgery", func(t *testing.T) { testBrowserForgery(t, s) })
	t.Run("flow", func(t *testing.T) { testBrowserFlow(t, s) })
	t.Run("keyboard", func(t *testing.T) { testBrowserKeyboard(t, s) })
	t.Run("noscript", func(t *testing.T) { testBrowserNoScript(t, s) })
	t.Run("longwork", func(t *testing.T) { testBrowserLongWork(t, s, axe) })
	t.Run("bulk", func(t *testing.T) { testBrowserBulk(t, s) })
	t.Run("dashboard", func(t *testing.T) { testBrowserDashboard(t, s) })
	t.Run("history", func(t *testing.T) { testBrowserHistory(t, s, axe) })
	t.Run("fixity", func(t *testing.T) { testBrowserFixity(t, s, axe) })
}
