package http

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// zipEntries reads an archive: each entry's name and bytes, in order.
func zipEntries(t *testing.T, b []byte) (names []string, data map[string]string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("not a ZIP: %v (%.60q)", err, b)
	}
	data = map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		d, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		names = append(names, f.Name)
		data[f.Name] = string(d)
	}
	return names, data
}

// TestIIIFZip: "Download all" is a ZIP of the original files of the
// work's pages the caller may read, in the work's order, each as stored
// and named with its page's number, without the derivatives; a download
// named after the work, offered to every origin only when the work is
// public; Python's zipfile finds it sound.
func TestIIIFZip(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	w := book(t, e, 3, shelfmark.Public, titled("Atlas: sheets/plates"))
	kids, err := e.repo.ListChildren(ctx, w.ID, shelfmark.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// a fourth page only editors may read
	hidden := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID, Visibility: shelfmark.Private}})[0]
	hf := e.putBytes("secret.tif", "image/tiff", []byte("the hidden page"))
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: hidden.ID, File: hf}})
	order := []shelfmark.ID{kids.Items[0].ID, kids.Items[1].ID, kids.Items[2].ID, hidden.ID}
	if _, err := e.repo.SetOrder(ctx, w.ID, order, 0); err != nil {
		t.Fatal(err)
	}

	r := e.do("GET", "/iiif/"+string(w.ID)+"/zip", nil, anonymously...)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("anonymous: %d %s %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="Atlas: sheets-plates.zip"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
		t.Errorf("a public work's ZIP: CORS %q, Cache-Control %q", r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Cache-Control"))
	}
	names, data := zipEntries(t, r.Body)
	if got := strings.Join(names, " "); got != "0001-book.pdf 0002-page0002.tif 0003-page0003.tif" {
		t.Errorf("anonymous: entries %s", got)
	}
	if data["0001-book.pdf"] != "%PDF-1.4 a small book" || data["0003-page0003.tif"] != "page 3" {
		t.Errorf("the files are not as stored: %q", data)
	}
	if bytes.Contains(r.Body, []byte("the hidden page")) || bytes.Contains(r.Body, []byte("a thumbnail")) {
		t.Error("the public's ZIP holds the hidden page or a thumbnail")
	}
	if py, err := exec.LookPath("python3"); err == nil {
		p := filepath.Join(t.TempDir(), "work.zip")
		if err := os.WriteFile(p, r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(py, "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); bad = z.testzip(); print(bad or 'ok', len(z.namelist()))", p).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok 3" {
			t.Errorf("Python's zipfile: %v %s", err, out)
		}
	}

	// the administrator reads the hidden page too, privately
	r = e.do("GET", "/iiif/"+string(w.ID)+"/zip", nil)
	names, data = zipEntries(t, r.Body)
	if len(names) != 4 || names[3] != "0004-secret.tif" || data["0004-secret.tif"] != "the hidden page" {
		t.Errorf("admin: entries %v", names)
	}
	if !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("the administrator's ZIP: Cache-Control %q, CORS %q", r.Header.Get("Cache-Control"), r.Header.Get("Access-Control-Allow-Origin"))
	}

	// the work page offers it
	p := newVisitor(t, e.testEnv).get("/works/" + string(w.ID))
	if !strings.Contains(p.Body, `href="/iiif/`+string(w.ID)+`/zip" rel="nofollow" download`) || !strings.Contains(p.Body, "Download all") {
		t.Errorf("the work page does not offer Download all")
	}
}

// TestIIIFZipAccess: a private work's ZIP is refused to whoever may not
// read it; what is not a work, or a work without files, has none; names
// within the archive are unique and never a path.
func TestIIIFZipAccess(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	priv := book(t, e, 1, shelfmark.Private, titled("A private diary"))
	path := "/iiif/" + string(priv.ID) + "/zip"
	r := e.do("GET", path, nil, anonymously...)
	if r.Status != http.StatusNotFound || r.Header.Get("Content-Type") == "application/zip" || strings.Contains(string(r.Body), "diary") {
		t.Errorf("anonymous, private work: %d %s %.200s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if r := e.do("GET", path, nil); r.Status != http.StatusOK {
		t.Errorf("admin, private work: %d", r.Status)
	}
	kids, err := e.repo.ListChildren(ctx, priv.ID, shelfmark.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	bare := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("Nothing yet")}})[0]
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Diaries")}})[0]
	for _, c := range []struct{ path, want string }{
		{"/iiif/" + string(kids.Items[0].ID) + "/zip", "is a page (file set)"},
		{"/iiif/" + string(coll.ID) + "/zip", "not a work"},
		{"/iiif/" + string(bare.ID) + "/zip", "no files to download"},
		{"/iiif/not-an-id/zip", ""},
	} {
		r := e.do("GET", c.path, nil)
		if r.Status/100 != 4 || !strings.Contains(string(r.Body), c.want) || r.Header.Get("Content-Type") == "application/zip" {
			t.Errorf("GET %s: %d %s, want 4xx with %q", c.path, r.Status, r.Body, c.want)
		}
	}
	if r := newVisitor(t, e.testEnv).get("/works/" + string(bare.ID)); strings.Contains(r.Body, "/zip") {
		t.Error("a work without files offers Download all")
	}
}

// iiifZipProbes probe a work's ZIP (workFileProbes).
func (m *matrix) iiifZipProbes(notFound rule) []probe {
	return m.workFileProbes("zip", "application/zip", "PK\x03\x04", notFound)
}

// TestIIIFZipCost: the ZIP of a 60-page work runs the statements the ZIP
// of a 3-page one runs (a read of the children and one of their files
// per 1,000 pages), on both backends: the files are read from the blob
// store, once each.
func TestIIIFZipCost(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		small, large := book(t, e, 3, shelfmark.Public, titled("A book")), book(t, e, 60, shelfmark.Public, titled("A book"))
		sameStatements(t, e, backend, "ZIP", "/iiif/{id}/zip", small.ID, large.ID)
	})
}
