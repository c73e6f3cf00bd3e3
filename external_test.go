package shelfmark

import (
	"strings"
	"testing"
)

func TestCheckExternalURL(t *testing.T) {
	allow := []string{
		"https://images.example.org/iiif/",
		"http://archive.example.net",
		"https://",               // any https host, but no internal address
		"http://127.0.0.1:8182/", // an internal server, named explicitly
		"http://[::1]/named/",
	}
	for _, u := range []string{
		"https://images.example.org/iiif/a.jp2",
		"https://IMAGES.example.org/iiif/b/c.jp2",
		"http://archive.example.net/x/y.tif",
		"http://archive.example.net",
		"https://anywhere.example.com/z",
		"http://127.0.0.1:8182/iiif/a",
		"http://[::1]/named/a",
	} {
		if err := CheckExternalURL(allow, u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{
		"file:///etc/passwd",
		"ftp://images.example.org/iiif/a",
		"http://images.example.org/iiif/a.jp2", // http, the prefix is https
		"http://archive.example.net.evil.example/x",
		"http://archive.example.netx/x",
		"http://169.254.169.254/latest/meta-data/",
		"https://169.254.169.254/latest/meta-data/",
		"https://127.0.0.1/a",
		"https://127.0.0.1:8182/a",
		"http://127.0.0.1:8183/iiif/a",
		"https://[::1]/a",
		"https://[::ffff:127.0.0.1]/a",
		"https://10.1.2.3/a",
		"https://192.168.0.1/a",
		"https://172.16.0.1/a",
		"https://[fd00::1]/a",
		"https://[fe80::1]/a",
		"https://0.0.0.0/a",
		"https://[::]/a",
		"https://localhost/a",
		"https://db.localhost/a",
		"https://2130706433/a",
		"https://0x7f.1/a",
		"https://0177.0.0.1/a",
		"https://images.example.org/iiif/../secret",
		"https://images.example.org/iiif/%2e%2e/secret",
		"https://user:pass@anywhere.example.com/a",
		"/relative",
		"javascript:alert(1)",
		"",
	} {
		err := CheckExternalURL(allow, u)
		if ErrorCode(err) != EINVALID {
			t.Errorf("%q: %v, want EINVALID", u, err)
		}
	}
	// No allow-list: everything is refused, naming the setting.
	err := CheckExternalURL(nil, "https://images.example.org/iiif/a.jp2")
	if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "external-content-allow") {
		t.Errorf("empty list: %v", err)
	}
	// A malformed prefix never matches.
	if err := CheckExternalURL([]string{"::bad"}, "https://images.example.org/a"); ErrorCode(err) != EINVALID {
		t.Errorf("bad prefix: %v", err)
	}
}
