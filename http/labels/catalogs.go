package labels

// This file holds the interface's message catalogs: every string a page
// shows comes from one. A catalog is a set of flat JSON files per language
// (ui/locales/{lang}/*.json, one per part of the interface), merged; a key
// may be defined in one file only. English is the fallback and the
// reference: the tests require every language to have exactly its keys,
// with the same fmt verbs.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"sort"

	"golang.org/x/text/language"
)

// langCookie remembers the language a reader chose.
const langCookie = "shelfmark_lang"

// Catalogs holds the messages of every language the interface ships; it
// is read only once loaded, so any number of requests may share it.
type Catalogs struct {
	langs   []string                     // "en" first
	msgs    map[string]map[string]string // lang -> key -> message
	names   map[string]string            // lang -> its name, from its catalog's "lang.name"
	matcher language.Matcher
}

// Load reads the catalogs dir/{lang}/*.json from fsys: every language
// directory must be a language tag, a key may be defined in one file of a
// language only, and English must be there.
func Load(fsys fs.FS, dir string) (*Catalogs, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("ui: read Catalogs: %w", err)
	}
	c := &Catalogs{msgs: map[string]map[string]string{}, names: map[string]string{}}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		lang := e.Name()
		if _, err := language.Parse(lang); err != nil {
			return nil, fmt.Errorf("ui: catalog %s: not a language tag: %w", lang, err)
		}
		files, err := fs.Glob(fsys, path.Join(dir, lang, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("ui: list catalog %s: %w", lang, err)
		}
		m := map[string]string{}
		from := map[string]string{}
		for _, f := range files {
			b, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, fmt.Errorf("ui: read %s: %w", f, err)
			}
			var part map[string]string
			if err := json.Unmarshal(b, &part); err != nil {
				return nil, fmt.Errorf("ui: catalog %s: %w", f, err)
			}
			for k, v := range part {
				if prev, dup := from[k]; dup {
					return nil, fmt.Errorf("ui: message %q is in both %s and %s", k, prev, f)
				}
				m[k], from[k] = v, f
			}
		}
		c.msgs[lang] = m
		c.names[lang] = m["lang.name"]
		c.langs = append(c.langs, lang)
	}
	if c.msgs["en"] == nil {
		return nil, fmt.Errorf("ui: no English catalog in %s", dir)
	}
	sort.Slice(c.langs, func(i, j int) bool { return c.langs[i] == "en" || (c.langs[j] != "en" && c.langs[i] < c.langs[j]) })
	tags := make([]language.Tag, len(c.langs))
	for i, l := range c.langs {
		tags[i] = language.MustParse(l)
	}
	c.matcher = language.NewMatcher(tags)
	return c, nil
}

// Messages returns the catalog of lang (English when unknown); the map is
// shared and must not be changed.
func (c *Catalogs) Messages(lang string) map[string]string {
	if m, ok := c.msgs[lang]; ok {
		return m
	}
	return c.msgs["en"]
}

// Negotiate picks the language of a page: ?lang= (which the reader's
// choice in the footer sends, remembered in a cookie), then that cookie,
// then Accept-Language, then English.
func (c *Catalogs) Negotiate(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); l != "" && slices.Contains(c.langs, l) {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", MaxAge: 365 * 24 * 3600, SameSite: http.SameSiteLaxMode, HttpOnly: true, Secure: r.TLS != nil})
		return l
	}
	if ck, err := r.Cookie(langCookie); err == nil && slices.Contains(c.langs, ck.Value) {
		return ck.Value
	}
	if al := r.Header.Get("Accept-Language"); al != "" {
		tags, _, err := language.ParseAcceptLanguage(al)
		if err == nil && len(tags) > 0 {
			_, i, conf := c.matcher.Match(tags...)
			if conf != language.No {
				return c.langs[i]
			}
		}
	}
	return "en"
}

// Langs returns the languages the interface ships, English first; the
// slice is shared and must not be changed.
func (c *Catalogs) Langs() []string { return c.langs }

// Names returns each language's name in that language, from its own
// catalog's "lang.name"; the map is shared and must not be changed.
func (c *Catalogs) Names() map[string]string { return c.names }

// Translate is the message key of msgs (one language's catalog), args
// filling its verbs as fmt.Sprintf does. A key missing from the catalog
// is answered as itself (the interface's tests refuse any). Without args
// it allocates nothing.
func Translate(msgs map[string]string, key string, args ...any) string {
	m, ok := msgs[key]
	if !ok {
		return key
	}
	if len(args) == 0 {
		return m
	}
	return fmt.Sprintf(m, args...)
}
