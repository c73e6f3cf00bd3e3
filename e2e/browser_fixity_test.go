package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testBrowserFixity damages an original in the content store, runs
// shelfmark fixity run without the preservation copy to repair it from,
// and has the administrator find it: the dashboard says files are damaged
// and links to the fixity page, which lists the damaged copy; both pages
// pass axe; the file's download fails before any byte.
func testBrowserFixity(t *testing.T, s *browserServer, axe string) {
	var res struct{ ID string }
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Ledger of the lighthouse"}, "visibility": "public"},
		http.StatusCreated, &res)
	work := res.ID
	s.api(t, "POST", "/filesets", map[string]any{"parent": work, "visibility": "public"}, http.StatusCreated, &res)
	body := bytes.Repeat([]byte("lighthouse ledger "), 6000) // past the pack database's 64 KiB: a file of its own
	s.api(t, "POST", "/resources/"+res.ID+"/files?name=ledger.bin", rawBody{"application/octet-stream", body}, http.StatusCreated, &res)
	file := res.ID
	sum := sha256.Sum256(body)
	sha := hex.EncodeToString(sum[:])
	p := filepath.Join(s.data, "blobs", sha[0:2], sha[2:4], sha)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(body)
	damaged[1000] ^= 1
	if err := os.WriteFile(p, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "fixity", "run", "--data", s.data, "--preservation", "off")
	cmd.Env = cleanEnv(filepath.Dir(s.bin))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 damaged") {
		t.Fatalf("shelfmark fixity run over a damaged original: %v\n%s", err, out)
	}

	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/admin")
	if text := b.text(); !strings.Contains(text, "Files damaged in every copy: 1.") {
		t.Errorf("the dashboard does not say a file is damaged: %.600s", text)
	}
	b.axe("the dashboard with a damaged file", axe)
	b.expect("open the fixity results", http.StatusOK, chromedp.Click(`a[href="/admin/fixity?failed=1"]`, chromedp.ByQuery))
	text := b.text()
	for _, want := range []string{"Files damaged now: 1.", file, "Damaged", "Content store", sha} {
		if !strings.Contains(text, want) {
			t.Errorf("the fixity page lacks %q: %.1200s", want, text)
		}
	}
	b.shot("admin-fixity")
	b.axe("the fixity page", axe)
	b.checkClean("the fixity pages")

	status, got, err := do(s.hc, "GET", s.base+"/api/v1/resources/"+file+"/content", "", nil, nil)
	if err != nil || status != http.StatusInternalServerError || bytes.Contains(got, damaged[:100]) {
		t.Errorf("the damaged file's download: %d %.300s %v", status, got, err)
	}
}
