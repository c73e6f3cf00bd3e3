package warc

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// surtCases are URLs whose SURT the python surt package (0.3.1) gives as
// in the table; TestCanonicalSurtAgreement checks them against it.
var surtCases = []struct{ in, surt string }{
	{"http://www.Example.com:80/a/B?b=2&a=1#x", "com,example)/a/b?a=1&b=2"},
	{"https://example.com", "com,example)/"},
	{"https://example.com:443/", "com,example)/"},
	{"http://example.com:8080/x/", "com,example:8080)/x"},
	{"http://www2.example.co.uk/Index.HTML", "uk,co,example)/index.html"},
	{"http://wwwexample.com/", "com,wwwexample)/"},
	{"http://user:pw@example.com/p", "com,example)/p"},
	{"http://example.com/a/./b/../c", "com,example)/a/c"},
	{"http://example.com/a//b", "com,example)/a/b"},
	{"http://example.com/caf%C3%A9", "com,example)/caf%c3%a9"},
	{"http://example.com/café", "com,example)/caf%c3%a9"},
	{"http://example.com/%7Euser", "com,example)/~user"},
	{"http://example.com/a%20b?q=a%20b", "com,example)/a%20b?q=a%20b"},
	{"http://example.com/100%", "com,example)/100%25"},
	{"http://example.com/%2541", "com,example)/a"},
	{"http://example.com/?", "com,example)/"},
	{"http://example.com/p?", "com,example)/p"},
	{"http://example.com/p?a&a=&b", "com,example)/p?a&a=&b"},
	{"http://example.com/p?z=1&A=2", "com,example)/p?a=2&z=1"},
	{"http://example.com/p?jsessionid=0123456789abcdef0123456789ABCDEF&x=1", "com,example)/p?x=1"},
	{"http://EXAMPLE.com./", "com,example)/"},
	{"http://127.0.0.1/x", "1,0,0,127)/x"},
	{"http://3232235777/", "1,1,168,192)/"},
	{"http://bücher.example/", "example,xn--bcher-kva)/"},
	{"http://example.com/a#b?c", "com,example)/a"},
	{"  http://example.com/\tx\n ", "com,example)/x"},
	{"http://example.com/a/../../b", "com,example)/../b"},
	{"http://example.com/path;jsessionid=x/", "com,example)/path;jsessionid=x"},
	{"http://example.com/p?q=%26", "com,example)/p?&q="},
	{"http://example.com/a\"b<c>", "com,example)/a\"b<c>"},
	{"http://www.example.com/\xff", "com,example)/%ff"},
}

func TestCanonical(t *testing.T) {
	for _, c := range surtCases {
		u, err := Canonical(c.in)
		if err != nil {
			t.Errorf("Canonical(%q): %v", c.in, err)
			continue
		}
		if u.SURT != c.surt {
			t.Errorf("Canonical(%q).SURT = %q, want %q", c.in, u.SURT, c.surt)
		}
	}
	urls := []struct{ in, url, domain string }{
		{"http://www.Example.com:80/a/B?b=2&a=1#x", "http://www.example.com/a/B?b=2&a=1", "example.com"},
		{"HTTPS://Sub.Example.co.uk:443", "https://sub.example.co.uk/", "example.co.uk"},
		{"http://example.com:8080/x", "http://example.com:8080/x", "example.com"},
		{"http://127.0.0.1/x", "http://127.0.0.1/x", "127.0.0.1"},
		{"http://localhost/", "http://localhost/", "localhost"},
		{"http://bücher.example/ü", "http://xn--bcher-kva.example/%C3%BC", "xn--bcher-kva.example"},
		{"http://example.com/\xff\xfe x", "http://example.com/%FF%FE%20x", "example.com"},
		{"http://[::1]:8080/", "http://[::1]:8080/", "[::1]"},
	}
	for _, c := range urls {
		u, err := Canonical(c.in)
		if err != nil {
			t.Errorf("Canonical(%q): %v", c.in, err)
			continue
		}
		if u.URL != c.url || u.Domain != c.domain {
			t.Errorf("Canonical(%q) = %q %q, want %q %q", c.in, u.URL, u.Domain, c.url, c.domain)
		}
	}
	for _, bad := range []string{"", "/relative", "example.com/x", "http://", "http:///x", "http://x:99999/", "http://x:ab/", "http://a b/", "http:example.com"} {
		if u, err := Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %+v, want an error", bad, u)
		}
	}
	for _, other := range []string{"mailto:a@b.c", "dns:example.com", "ftp://example.com/", "javascript:alert(1)"} {
		if _, err := Canonical(other); !errors.Is(err, ErrNotHTTP) {
			t.Errorf("Canonical(%q): %v, want ErrNotHTTP", other, err)
		}
	}
}

// venvPython returns the test virtualenv's python (scripts/testdeps.sh
// makes it), or skips.
func venvPython(t testing.TB, module string) string {
	t.Helper()
	dir := os.Getenv("SHELFMARK_BUILD_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".build")
	}
	py := filepath.Join(dir, "venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no test virtualenv at %s (scripts/testdeps.sh makes it)", py)
	}
	if out, err := exec.Command(py, "-c", "import "+module).CombinedOutput(); err != nil {
		t.Fatalf("%s has no %s (run scripts/testdeps.sh): %v %s", py, module, err, out)
	}
	return py
}

// TestCanonicalSurtAgreement checks the SURTs against the python surt
// package itself.
func TestCanonicalSurtAgreement(t *testing.T) {
	py := venvPython(t, "surt")
	var in []string
	for _, c := range surtCases {
		if utf8.ValidString(c.in) { // JSON would turn bad bytes into U+FFFD
			in = append(in, c.in)
		}
	}
	in = append(in, extraSurtURLs...)
	in = append(in, randomURLs(2000)...)
	js, _ := json.Marshal(in)
	cmd := exec.Command(py, "-c", `import sys, json, surt
for u in json.load(sys.stdin):
    print(json.dumps(surt.surt(u)))`)
	cmd.Stdin = strings.NewReader(string(js))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("surt: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(in) {
		t.Fatalf("%d answers for %d URLs:\n%s", len(lines), len(in), out)
	}
	for i, l := range lines {
		var want string
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatal(err)
		}
		u, err := Canonical(in[i])
		if err != nil {
			t.Errorf("Canonical(%q): %v", in[i], err)
			continue
		}
		if u.SURT != want {
			t.Errorf("Canonical(%q).SURT = %q, python surt says %q", in[i], u.SURT, want)
		}
	}
}

// extraSurtURLs are checked against python surt only.
var extraSurtURLs = []string{
	"http://www.archive.org/index.html",
	"http://archive.org/goo/?a=2&b&a=1",
	"http://archive.org/goo/?",
	"https://www.google.com/search?q=%E2%82%AC&hl=en",
	"http://a.b.c.example.com/x/y/z.aspx",
	"http://example.com/(S(0123456789abcdefghijklmn))/page.aspx",
	"http://example.com/x?PHPSESSID=0123456789abcdef0123456789abcdef",
	"http://example.com/x?a=1&sid=0123456789abcdef0123456789abcdef&b=2",
	"http://www12.example.com/",
	"http://example.com/%zz",
	"http://example.com/a%2Fb",
	"http://example.com/a+b?c+d=e+f",
	"http://example.com/~x/{y}|z^",
	"http://example.com/a?b=c=d",
	"http://1.2.3/",
	"http://0x7f.0.0.1/",
	"http://010.0.0.1/",
	"http://example.com/a/b/",
	"http://example.com//",
	"http://example.com/./",
	"http://example.com/%2e%2e/a",
	"http://example.com:80",
	"https://example.com:80/",
	"http://example.com:0/",
	"http://example.com/?&",
	"http://example.com/?a=1&&b=2",
}

// randomURLs builds n URLs from awkward pieces (hosts with www prefixes,
// numeric and IDN hosts, default and odd ports, escapes, dot segments,
// session ids, unsorted queries).
func randomURLs(n int) []string {
	hosts := []string{"www.Example.com", "WWW2.example.co.uk", "example.com.", "ex..ample.com", "1.2.3.4", "3232235777", "010.1.1.1", "127.1",
		"1.2.3.4.5", "bücher.de", "xn--bcher-kva.de", "a-b.example", "EXAMPLE.org", "%77ww.example.com"}
	ports := []string{"", ":80", ":443", ":8080", ":0", ":080"}
	segs := []string{"a", "B", "%41", "%2e", "..", ".", "", "caf%C3%A9", "é", "x y", "%25", "%", "a%2Fb", "~u", "(x)", "[y]", "index.html", "Foo.ASPX", "%zz", "a+b", "%7e"}
	queries := []string{"", "?", "?b=2&a=1", "?a", "?a=&a", "?Q=%41", "?x=%26y", "?jsessionid=0123456789abcdef0123456789abcdef", "?a=1&&b=2", "?z=é", "?a=b=c",
		"?%20=1", "?sid=0123456789ABCDEF0123456789abcdef&k=v"}
	rng := rand.New(rand.NewPCG(7, 15))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		b.WriteString(pick([]string{"http", "https", "HTTP"}) + "://" + pick(hosts) + pick(ports))
		for range rng.IntN(5) {
			b.WriteString("/" + pick(segs))
		}
		if rng.IntN(5) == 0 {
			b.WriteString("/")
		}
		b.WriteString(pick(queries))
		if rng.IntN(5) == 0 {
			b.WriteString("#frag")
		}
		out[i] = b.String()
	}
	return out
}
