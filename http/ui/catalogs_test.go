package ui

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/http/labels"
)

// fmtVerbs lists the fmt verbs of a message, in order.
var fmtVerbs = regexp.MustCompile(`%[-+# 0]*[0-9]*(\.[0-9]+)?[a-zA-Z%]`)

// TestUICatalogs: every language has exactly the English keys, with the
// same verbs, and every key the templates and the Go code ask for exists.
func TestUICatalogs(t *testing.T) {
	c, err := labels.Load(uiFiles, "locales")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.Langs(), "de") {
		t.Fatalf("languages %v: German is missing", c.Langs())
	}
	en := c.Messages("en")
	for _, lang := range c.Langs() {
		m := c.Messages(lang)
		for k, v := range en {
			got, ok := m[k]
			switch {
			case !ok:
				t.Errorf("%s: no message %q (English: %q)", lang, k, v)
			case strings.TrimSpace(got) == "":
				t.Errorf("%s: message %q is empty", lang, k)
			case !slices.Equal(fmtVerbs.FindAllString(got, -1), fmtVerbs.FindAllString(v, -1)):
				t.Errorf("%s: message %q has verbs %q, English %q", lang, k, fmtVerbs.FindAllString(got, -1), fmtVerbs.FindAllString(v, -1))
			}
		}
		for k := range m {
			if _, ok := en[k]; !ok {
				t.Errorf("%s: message %q is not in the English catalog", lang, k)
			}
		}
		if m["lang.name"] == "" {
			t.Errorf("%s: no lang.name", lang)
		}
	}
	// keys the templates ask for: .T "key" and $.T "key"
	used := map[string]string{}
	tmplKey := regexp.MustCompile(`\.T "([^"]+)"`)
	fs.WalkDir(uiFiles, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(uiFiles, p)
		for _, m := range tmplKey.FindAllSubmatch(b, -1) {
			used[string(m[1])] = p
		}
		return nil
	})
	// keys the Go code asks for: .T("key" and page(w, r, "key"
	goKey := regexp.MustCompile(`(?:\.T\(|\bpage\(w, r, )"([a-z][^"]*)"`)
	files, _ := filepath.Glob("../*.go") // the shell
	sub, _ := filepath.Glob("../*/*.go") // the faces in packages of their own, this one too
	files = append(files, sub...)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goKey.FindAllSubmatch(b, -1) {
			used[string(m[1])] = f
		}
	}
	for _, st := range []int{400, 401, 403, 404, 409, 410, 413, 429, 503} { // Error's keys
		used["error."+fmtInt(st)] = "ui.go"
	}
	if len(used) < 20 {
		t.Fatalf("found only %d message keys in use: the scan is broken", len(used))
	}
	for k, where := range used {
		if _, ok := en[k]; !ok {
			t.Errorf("%s asks for message %q, which no catalog has", where, k)
		}
	}
}

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
