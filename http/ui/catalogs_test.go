package ui

import (
	"encoding/json"
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

// miradorEnglish is Mirador's English translation, read from the served
// vendor/mirador.min.js (where it is a JSON.parse('…') of a string).
func miradorEnglish(t *testing.T) (map[string]string, string) {
	t.Helper()
	b, err := fs.ReadFile(uiFiles, "static/vendor/mirador.min.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	const open = `JSON.parse('{"translation":{"aboutMirador":"About Project Mirador"`
	i := strings.Index(src, open)
	if i < 0 {
		t.Fatal("mirador.min.js: no English translation found")
	}
	j := strings.Index(src[i:], "')")
	raw := strings.ReplaceAll(src[i+len("JSON.parse('"):i+j], `\\`, `\`)
	var doc struct{ Translation map[string]string }
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || len(doc.Translation) < 100 {
		t.Fatalf("mirador.min.js: the English translation: %v (%d keys)", err, len(doc.Translation))
	}
	return doc.Translation, src
}

// placeholders are i18next's {{name}} in a Mirador message.
var placeholders = regexp.MustCompile(`\{\{[^}]*\}\}`)

// TestViewerTranslations: every language of the interface is one the book
// viewer speaks, Mirador's own or one of static/viewer-lang.js; and each
// translation there has exactly Mirador's English keys, none empty, with
// the same {{placeholders}}.
func TestViewerTranslations(t *testing.T) {
	en, mirador := miradorEnglish(t)
	b, err := fs.ReadFile(uiFiles, "static/viewer-lang.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start, end := strings.Index(src, "= {"), strings.LastIndex(src, "};")
	if start < 0 || end < start {
		t.Fatal("viewer-lang.js: no translations object")
	}
	ours := map[string]map[string]string{}
	if err := json.Unmarshal([]byte(src[start+2:end+1]), &ours); err != nil {
		t.Fatalf("viewer-lang.js: %v", err)
	}
	c, err := labels.Load(uiFiles, "locales")
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range c.Langs() {
		_, own := ours[lang]
		shipped := lang == "en" || regexp.MustCompile(`availableLanguages:\{[^}]*\b`+regexp.QuoteMeta(lang)+`:`).MatchString(mirador)
		if !own && !shipped {
			t.Errorf("%s: the interface speaks it, the viewer does not (add it to static/viewer-lang.js)", lang)
		}
	}
	if len(ours) == 0 {
		t.Fatal("viewer-lang.js: no language")
	}
	for lang, m := range ours {
		for k, v := range en {
			got, ok := m[k]
			switch {
			case !ok:
				t.Errorf("viewer %s: no message %q (English: %q)", lang, k, v)
			case strings.TrimSpace(got) == "":
				t.Errorf("viewer %s: message %q is empty", lang, k)
			case !slices.Equal(sorted(placeholders.FindAllString(got, -1)), sorted(placeholders.FindAllString(v, -1))):
				t.Errorf("viewer %s: message %q has %q, English %q", lang, k, got, v)
			}
		}
		for k := range m {
			if _, ok := en[k]; !ok {
				t.Errorf("viewer %s: message %q is not Mirador's", lang, k)
			}
		}
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }
