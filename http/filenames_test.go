package http

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestFileNames sends file names with paths, control characters and
// excessive length through every path that names a file (upload by ?name=
// and by Content-Disposition, and /api/v1/groups): paths are cut to their
// last element, the rest is refused with 400 before any byte is stored;
// the Content-Disposition of the content carries the exact name safely.
func TestFileNames(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files"
	upload := func(query string, hdrs ...string) *response {
		return e.do("POST", up+query, "bytes", hdrs...)
	}
	nameOf := func(r *response) string {
		t.Helper()
		var f resource
		r.want(t, http.StatusCreated).json(t, &f)
		return f.File.Name
	}
	huge := strings.Repeat("n", 100_000)
	over := strings.Repeat("é", shelfmark.MaxFileNameBytes/2) // 2 bytes each: 254, then one more
	for _, c := range []struct{ query, cd, want string }{
		{"?name=" + url.QueryEscape("../../x"), "", "x"},
		{"?name=" + url.QueryEscape(`..\..\win.txt`), "", "win.txt"},
		{"?name=" + url.QueryEscape("/etc/passwd"), "", "passwd"},
		{"?name=" + url.QueryEscape(".."), "", "file"},
		{"", `attachment; filename="../../cd.txt"`, "cd.txt"},
		{"", `attachment; filename*=UTF-8''na%C3%AFve%20%22q%22%3B.txt`, `naïve "q";.txt`},
		{"?name=" + url.QueryEscape(over), "", over},
	} {
		var hdrs []string
		if c.cd != "" {
			hdrs = []string{"Content-Disposition", c.cd}
		}
		if got := nameOf(upload(c.query, hdrs...)); got != c.want {
			t.Errorf("%q %q: name %q, want %q", c.query, c.cd, got, c.want)
		}
	}
	before, blobs := e.counts(), e.blobFiles()
	for _, c := range []struct{ query, cd, says string }{
		{"?name=" + huge, "", fmt.Sprint(shelfmark.MaxFileNameBytes)},
		{"?name=" + url.QueryEscape(over+"é"), "", fmt.Sprint(shelfmark.MaxFileNameBytes)},
		{"?name=" + url.QueryEscape("a\nb.txt"), "", "U+000A"},
		{"?name=" + url.QueryEscape("a\x00b.txt"), "", "U+0000"},
		{"?name=" + url.QueryEscape("a\u202etxt.exe"), "", "U+202E"},
		{"?name=%ff.txt", "", "UTF-8"},
		{"", `attachment; filename="` + huge + `"`, fmt.Sprint(shelfmark.MaxFileNameBytes)},
	} {
		var hdrs []string
		if c.cd != "" {
			hdrs = []string{"Content-Disposition", c.cd}
		}
		r := upload(c.query, hdrs...)
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		if !strings.Contains(eb.Message, c.says) || len(eb.Message) > 500 {
			t.Errorf("%.40q: message %.600q, want it to say %q (and be short)", c.query, eb.Message, c.says)
		}
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
	if got := e.blobFiles(); fmt.Sprint(got) != fmt.Sprint(blobs) {
		t.Errorf("refused uploads stored bytes: %q, before %q", got, blobs)
	}

	// The content's Content-Disposition round-trips any name, and uses
	// only the characters RFC 8187 allows in filename*.
	for _, name := range []string{`naïve "q";.txt`, "plain.txt", "100% done, (v2).pdf", "日本語.tif"} {
		var f resource
		e.do("POST", up+"?name="+url.QueryEscape(name), "bytes").want(t, http.StatusCreated).json(t, &f)
		res := e.do("GET", "/api/v1/resources/"+string(f.ID)+"/content", nil).want(t, http.StatusOK)
		cd := res.Header.Get("Content-Disposition")
		_, params, err := mime.ParseMediaType(cd)
		if err != nil || params["filename"] != name {
			t.Errorf("%q: Content-Disposition %q gives %q (%v)", name, cd, params["filename"], err)
		}
		ext := cd[strings.Index(cd, "filename*=UTF-8''")+len("filename*=UTF-8''"):]
		if strings.Trim(ext, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~%") != "" {
			t.Errorf("%q: filename* %q has characters outside attr-char", name, ext)
		}
		for _, c := range cd {
			if c < 0x20 || c > 0x7e {
				t.Errorf("%q: Content-Disposition %q is not printable ASCII", name, cd)
				break
			}
		}
	}
}

// TestGroupFileNames checks the names of files stored through
// /api/v1/groups: a path keeps its last element, and a control character
// or an over-long name fails the group with 400.
func TestGroupFileNames(t *testing.T) {
	e := newEnv(t, Options{})
	data := []byte("group bytes")
	sha := e.postBlob(t, data)
	group := func(name string) string {
		return fmt.Sprintf(`{"resources": [{"ref": "w", "kind": "work"}, {"ref": "fs", "kind": "fileset", "parent": "w"},
			{"ref": "f", "kind": "file", "parent": "fs", "file": {"name": %q, "sha256": %q, "size": %d}}]}`, name, sha, len(data))
	}
	var out struct {
		Results []struct {
			Status int                     `json:"status"`
			IDs    map[string]shelfmark.ID `json:"ids"`
			Error  *apiError               `json:"error"`
		} `json:"results"`
	}
	names := []string{"../../x", `C:\scans\p1.tif`, "ok.txt", "a\tb", strings.Repeat("n", 100_000), ".."}
	var groups []string
	for _, n := range names {
		groups = append(groups, group(n))
	}
	e.do("POST", "/api/v1/groups", `{"groups": [`+strings.Join(groups, ",")+`]}`, "Content-Type", "application/json").want(t, http.StatusOK).json(t, &out)
	if len(out.Results) != len(names) {
		t.Fatalf("%d results", len(out.Results))
	}
	for i, want := range []string{"x", "p1.tif", "ok.txt", "", "", "file"} {
		res := out.Results[i]
		if want == "" {
			if res.Status != http.StatusBadRequest || res.Error == nil || res.Error.Code != shelfmark.EINVALID || len(res.Error.Message) > 500 {
				t.Errorf("name %.40q: %+v", names[i], res)
			}
			continue
		}
		if res.Status != http.StatusCreated {
			t.Errorf("name %.40q: %+v", names[i], res)
			continue
		}
		if got := e.get(res.IDs["f"]); got.File == nil || got.File.Name != want {
			t.Errorf("name %q stored as %+v, want %q", names[i], got.File, want)
		}
	}
}

// TestUploadDescriptionCheckedFirst checks that a use or media type the
// engine would refuse is refused before the upload's bytes are stored.
func TestUploadDescriptionCheckedFirst(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	blobs := e.blobFiles()
	for _, q := range []string{"?use=" + strings.Repeat("u", shelfmark.MaxUseBytes+1), "?use=a%0Ab"} {
		r := e.do("POST", "/api/v1/resources/"+string(fs)+"/files"+q, "some bytes never stored")
		r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		r.wantNoWrites(t)
	}
	if got := e.blobFiles(); fmt.Sprint(got) != fmt.Sprint(blobs) {
		t.Errorf("refused uploads stored bytes: %q, before %q", got, blobs)
	}
}
