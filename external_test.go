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

// TestCheckExternalURLNotGlobal: behind a prefix that names no host, only
// a globally routable address is accepted: every special-purpose block of
// IPv4 and IPv6 is refused, an IPv4 address embedded in an IPv6 one
// (IPv4-mapped, NAT64, 6to4) is judged as that IPv4 address, and the
// forms a browser reads as an IPv4 address (full-width digits,
// ideographic full stops) are refused; a prefix that names the host
// allows it.
func TestCheckExternalURLNotGlobal(t *testing.T) {
	allow := []string{"https://", "http://"}
	for _, h := range []string{
		"100.64.0.1", "100.127.255.254", // shared address space (CGNAT)
		"192.0.0.1", "192.0.0.170", "192.0.0.9", // IETF protocol assignments
		"198.18.0.1", "198.19.255.255", // benchmarking
		"192.0.2.1", "198.51.100.1", "203.0.113.1", // documentation
		"192.88.99.1",        // 6to4 relay anycast
		"0.1.2.3", "0.0.0.0", // this network
		"240.0.0.1", "255.255.255.254", "255.255.255.255", // reserved, broadcast
		"224.0.0.1", "239.255.255.250", // multicast
		"127.0.0.2", "10.0.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:100.64.0.1]", "[::ffff:169.254.169.254]", // IPv4-mapped
		"[::127.0.0.1]", "[::7f00:1]", "[::a00:1]", "[::8.8.8.8]", // IPv4-compatible
		"[::ffff:0:7f00:1]", "[::ffff:0:808:808]", // IPv4-translated
		"[64:ff9b::7f00:1]", "[64:ff9b::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[64:ff9b::a00:1]", "[64:ff9b::6440:1]", // NAT64
		"[64:ff9b:1::808:808]", "[64:ff9b:1::a00:1]", // local-use NAT64
		"[2002:7f00:1::1]", "[2002:a9fe:a9fe::1]", "[2002:c0a8:101::1]", "[2002:6440:1::]", // 6to4 of internal addresses
		"[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "[2001::1]", "[2001:2::1]", "[2001:10::1]", // Teredo, IETF
		"[2001:db8::1]", "[3fff::1]", // documentation
		"[fc00::1]", "[fd12:3456::1]", "[fe80::1]", "[fe80::1%25eth0]", "[febf::1]", "[fec0::1]",
		"[ff02::1]", "[ff0e::1]", "[100::1]", "[::]", "[::1]", "[5f00::1]", "[4000::1]",
		"１２７.０.０.１", "127。0。0。1", "127．0．0．1", "127｡0｡0｡1", "１０.０.０.１", "ｌｏｃａｌｈｏｓｔ", "127.1", "0x7f000001", "０ｘ７ｆ.1",
	} {
		for _, scheme := range []string{"https", "http"} {
			u := scheme + "://" + h + "/x"
			if err := CheckExternalURL(allow, u); ErrorCode(err) != EINVALID {
				t.Errorf("%s: %v, want EINVALID", u, err)
			}
		}
	}
	for _, h := range []string{
		"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "198.17.255.255", "198.20.0.1", "192.0.1.1", "223.255.255.255",
		"[2606:4700:4700::1111]", "[2a00:1450::1]", "[::ffff:8.8.8.8]", "[64:ff9b::808:808]", "[2002:808:808::1]",
		"images.example.org", "bücher.example", "xn--bcher-kva.example",
	} {
		if u := "https://" + h + "/x"; CheckExternalURL(allow, u) != nil {
			t.Errorf("%s refused: %v", u, CheckExternalURL(allow, u))
		}
	}
	// a prefix naming the host allows it, wherever it is in the list
	for _, h := range []string{"100.64.0.1", "198.18.0.1", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[::ffff:127.0.0.1]"} {
		if err := CheckExternalURL([]string{"https://", "https://" + h + "/iiif/"}, "https://"+h+"/iiif/a.jp2"); err != nil {
			t.Errorf("%s, named by its prefix: %v", h, err)
		}
		if err := CheckExternalURL([]string{"https://", "https://" + h + "/iiif/"}, "https://"+h+"/other/a.jp2"); ErrorCode(err) != EINVALID ||
			!strings.Contains(ErrorMessage(err), "not globally routable") {
			t.Errorf("%s, outside the prefix naming it: %v", h, err)
		}
	}
}
