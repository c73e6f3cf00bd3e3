package shelfmark

import (
	"strings"
	"testing"
)

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"scan.tif":               "scan.tif",
		"../../x":                "x",
		`..\..\x`:                "x",
		`C:\scans\p1.tif`:        "p1.tif",
		"/etc/passwd":            "passwd",
		"dir/":                   "dir",
		"a/./b.txt":              "b.txt",
		"":                       "",
		".":                      "",
		"..":                     "",
		"/":                      "",
		"sub/..":                 "",
		"naïve file (2).txt":     "naïve file (2).txt",
		".hidden":                ".hidden",
		strings.Repeat("é", 127): strings.Repeat("é", 127),
	} {
		got, err := CleanFileName(in)
		if got != want || err != nil {
			t.Errorf("CleanFileName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		strings.Repeat("n", MaxFileNameBytes+1),
		"../" + strings.Repeat("é", 128),
		"a\x00b", "a\nb", "a\tb", "a\x7fb", "a\u0085b", "a\u202eb", "a\u2066b", "a\xffb",
	} {
		if _, err := CleanFileName(in); ErrorCode(err) != EINVALID || len(ErrorMessage(err)) > 200 {
			t.Errorf("CleanFileName(%.40q): %v", in, err)
		}
	}
}

// TestValidateFile checks the engine's own check of a file's description:
// names must already be clean (a path is refused, not cut), and media
// types and uses are bounded.
func TestValidateFile(t *testing.T) {
	ok := &File{Name: "a.txt", MediaType: "text/plain; charset=utf-8", Use: "original"}
	if err := validateFile(ok); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []File{
		{Name: "../x", MediaType: "text/plain", Use: "original"},
		{Name: "", MediaType: "text/plain", Use: "original"},
		{Name: "..", MediaType: "text/plain", Use: "original"},
		{Name: strings.Repeat("n", MaxFileNameBytes+1), MediaType: "text/plain", Use: "original"},
		{Name: "a\nb", MediaType: "text/plain", Use: "original"},
		{Name: "a", MediaType: "text/plain\x00", Use: "original"},
		{Name: "a", MediaType: "text/" + strings.Repeat("p", MaxMediaTypeBytes), Use: "original"},
		{Name: "a", MediaType: "text/plain", Use: strings.Repeat("u", MaxUseBytes+1)},
		{Name: "a", MediaType: "text/plain", Use: "orig\rinal"},
	} {
		if err := validateFile(&f); ErrorCode(err) != EINVALID {
			t.Errorf("validateFile(%.60q, %.60q, %.60q): %v", f.Name, f.MediaType, f.Use, err)
		}
	}
}

func TestSafeFileName(t *testing.T) {
	for _, c := range []struct {
		in   string
		room int
		want string
	}{
		{"scan.tif", 32, "scan.tif"},
		{`C:\in\a` + "\n\xff\u202eb.tif", 32, "a___b.tif"},
		{"..", 32, "file"},
		{strings.Repeat("é", 200), 32, strings.Repeat("é", (MaxFileNameBytes-32)/2)},
	} {
		got := SafeFileName(c.in, c.room)
		if got != c.want {
			t.Errorf("SafeFileName(%.40q, %d) = %.40q, want %.40q", c.in, c.room, got, c.want)
		}
		if err := CheckFileName(got + strings.Repeat("x", c.room)); err != nil {
			t.Errorf("SafeFileName(%.40q) with %d bytes more: %v", c.in, c.room, err)
		}
	}
}
