package warc

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestExtractLinks(t *testing.T) {
	cases := []struct {
		name, html, base string
		want             []string
	}{
		{"relative and absolute", `<a href="b">1</a><a href="/c?x=1#f">2</a><A HREF="https://Other.example:443/d">3</A><a href="//proto.example/e">4</a>`,
			"http://a.example/dir/page", []string{"http://a.example/dir/b", "http://a.example/c?x=1", "https://other.example/d", "http://proto.example/e"}},
		{"base href", `<head><base target="_self"><base href="http://b.example/x/"><base href="http://ignored.example/"></head><a href="y">y</a><area href="../z">`,
			"http://a.example/", []string{"http://b.example/x/y", "http://b.example/z"}},
		{"relative base href", `<base href="/sub/"><a href="q">`, "http://a.example/dir/p", []string{"http://a.example/sub/q"}},
		{"duplicates kept", `<a href="/x">1</a><a href="/x">2</a><a href="">self</a>`, "http://a.example/p", []string{"http://a.example/x", "http://a.example/x", "http://a.example/p"}},
		{"skipped", `<a href="mailto:a@b.c">m</a><a href="javascript:void(0)">j</a><a href="tel:123">t</a><a href="http://exa mple.com/">bad host</a><a href="http://x:99999/">bad port</a><a>none</a><a name="n">`,
			"http://a.example/", nil},
		{"entities and whitespace", `<a href="  /a?x=1&amp;y=2&#38;z=3
 ">e</a>`, "http://a.example/", []string{"http://a.example/a?x=1&y=2&z=3"}},
		{"not in script or comments", `<script>var s = '<a href="/no">';</script><!-- <a href="/no2"> --><a href=/yes>`, "http://a.example/", []string{"http://a.example/yes"}},
		{"malformed markup", `<a href="/ok1"<a href='/ok2'><a href=/ok3 <p><a href="/unterminated`, "http://a.example/", []string{"http://a.example/ok1", "http://a.example/ok3"}},
		{"bad bytes", "<a href=\"/caf\xe9 x\">", "http://a.example/", []string{"http://a.example/caf%E9%20x"}},
		{"bad percent", `<a href="/100%">`, "http://a.example/", []string{"http://a.example/100%25"}},
		{"not link tags", `<img src="/i.png"><link href="/s.css"><form action="/f"><iframe src="/fr">`, "http://a.example/", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links, err := ExtractLinks(strings.NewReader(c.html), c.base, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range links {
				got = append(got, l.URL)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("links %q, want %q", got, c.want)
			}
		})
	}
	// a huge page is read up to max only
	page := strings.Repeat(`<p><a href="/l">l</a></p>`, 100000)
	links, err := ExtractLinks(strings.NewReader(page), "http://a.example/", 1000)
	if err != nil || len(links) != 1000/25 {
		t.Errorf("capped page: %d links, %v", len(links), err)
	}
	if _, err := ExtractLinks(strings.NewReader(""), "::", 0); err == nil {
		t.Error("bad base: no error")
	}
}

func TestResolve(t *testing.T) {
	base, _ := url.Parse("http://a.example/d/p?q#f")
	for href, want := range map[string]string{
		"x":                   "http://a.example/d/x",
		"?r":                  "http://a.example/d/p?r",
		"#g":                  "http://a.example/d/p?q",
		"../../../up":         "http://a.example/up",
		"HTTP://B.example/Y":  "http://b.example/Y",
		"javascript:alert(1)": "",
		"ftp://a.example/":    "",
		"http://[::1":         "",
	} {
		u, ok := Resolve(base, href)
		if ok != (want != "") || u.URL != want {
			t.Errorf("Resolve(%q) = %q %v, want %q", href, u.URL, ok, want)
		}
	}
}

// typicalPage is an HTML page of about 30 KB with 13 links.
func typicalPage(i int) []byte {
	var b bytes.Buffer
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A page</title><link rel="stylesheet" href="/s.css"><script>var x = 1; function f(a) { return a < 2 && a > 0; }</script></head><body><header><nav>`)
	for j := range 13 {
		fmt.Fprintf(&b, `<a class="nav-link" href="/section/%d/page-%d.html?ref=nav">Section %d</a> `, j, (i+j)%1000, j)
		if j%4 == 0 {
			b.WriteString(`<div class="x"><p>` + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ", 20) + `</p><img src="/i.png" alt="image"></div>`)
		}
	}
	b.WriteString(`</nav></header><main>` + strings.Repeat(`<p>Text with <em>markup</em>, &amp; entities and <span class="c">spans</span>.</p>`, 50) + `</main></body></html>`)
	return b.Bytes()
}

func BenchmarkExtractLinks(b *testing.B) {
	page := typicalPage(1)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		links, err := ExtractLinks(bytes.NewReader(page), "http://www.example.com/a/b.html", 0)
		if err != nil || len(links) != 13 {
			b.Fatal(len(links), err)
		}
	}
}
