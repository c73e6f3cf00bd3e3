package ui

import (
	"bytes"
	"html"
	"html/template"
	"net/url"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestHref: href escapes each query value once, keeps the pairs' order,
// and html/template escapes its result for the attribute only, so a
// browser sends every value back as it was; a path that is not one of
// this site, or a name without a value, is an error.
func TestHref(t *testing.T) {
	tpl := template.Must(template.New("t").Funcs(template.FuncMap{"href": href, "path": url.PathEscape}).
		Parse(`<a href="{{href .Path "next" .Next "actor" .Actor "id" .ID "n" .N}}">x</a>`))
	for _, c := range []struct {
		next, actor string
		want        string
	}{
		{"/web?match=exact&url=http%3A%2F%2Fexample.org%2Fa", "system:worker",
			`<a href="/login?next=%2Fweb%3Fmatch%3Dexact%26url%3Dhttp%253A%252F%252Fexample.org%252Fa&amp;actor=system%3Aworker&amp;id=q2w3e4r5t&amp;n=7">x</a>`},
		{"/search?q=café & tea", `ann@example.org "<>'`,
			`<a href="/login?next=%2Fsearch%3Fq%3Dcaf%C3%A9&#43;%26&#43;tea&amp;actor=ann%40example.org&#43;%22%3C%3E%27&amp;id=q2w3e4r5t&amp;n=7">x</a>`},
	} {
		var b bytes.Buffer
		if err := tpl.Execute(&b, map[string]any{"Path": "/login", "Next": c.next, "Actor": c.actor, "ID": shelfmark.ID("q2w3e4r5t"), "N": 7}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("href of %q, %q:\n%s\nwant\n%s", c.next, c.actor, b.String(), c.want)
		}
		// what a browser sends back
		h := html.UnescapeString(strings.TrimSuffix(strings.TrimPrefix(b.String(), `<a href="`), `">x</a>`))
		u, err := url.Parse(h)
		if err != nil {
			t.Fatal(err)
		}
		if q := u.Query(); q.Get("next") != c.next || q.Get("actor") != c.actor || q.Get("id") != "q2w3e4r5t" || q.Get("n") != "7" || u.Path != "/login" {
			t.Errorf("%s reads back as %q", h, q)
		}
	}
	for _, bad := range []struct {
		path  string
		pairs []any
	}{
		{"login", nil}, {"//evil.example/x", nil}, {"/\\evil.example", nil}, {"https://evil.example/", nil},
		{"/a?b=c", nil}, {"/a#top", nil}, {"/a b", nil}, {"/a\nb", nil},
		{"/a", []any{"name"}}, {"/a", []any{"", "v"}}, {"/a", []any{1, "v"}},
	} {
		if u, err := href(bad.path, bad.pairs...); err == nil {
			t.Errorf("href(%q, %v) = %q, want an error", bad.path, bad.pairs, u)
		}
	}
	if u, err := href("/works/" + url.PathEscape("a/b c")); err != nil || u != "/works/a%2Fb%20c" {
		t.Errorf("a path alone: %q, %v", u, err)
	}
}
