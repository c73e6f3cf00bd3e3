package shelfmark

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// CheckExternalURL decides whether a file may refer to bytes held at the
// URL u (external content, which Shelfmark never fetches but hands to
// clients as a redirect). allow lists URL prefixes: u must be an absolute
// http or https URL without user information or dot segments in its path,
// and match one prefix: the same scheme, the same host and port
// (case-insensitive), and a path that starts with the prefix's path at a
// segment boundary. A prefix without a host ("https://") matches any host
// of that scheme.
//
// Even when a prefix matches, a host that names the local machine or a
// private network is refused unless the prefix names that very host: IP
// literals that are loopback, private, link-local, unspecified or
// multicast (IPv4-mapped IPv6 included), "localhost" and its subdomains,
// and the numeric forms browsers read as IPv4 addresses (2130706433,
// 0x7f.1). Names are not resolved. An empty allow refuses everything.
// Every refusal is EINVALID.
func CheckExternalURL(allow []string, u string) error {
	refuse := func(why string) error {
		return &Error{Code: EINVALID, Message: fmt.Sprintf("External content at %.200q is refused: %s.", u, why),
			Details: map[string]any{"url": truncateURL(u, 200)}}
	}
	t, err := url.Parse(u)
	if err != nil || !t.IsAbs() || t.Opaque != "" || t.Host == "" {
		return refuse("it must be an absolute http or https URL")
	}
	scheme := strings.ToLower(t.Scheme)
	if scheme != "http" && scheme != "https" {
		return refuse("only http and https URLs may be external content")
	}
	if t.User != nil {
		return refuse("the URL must not carry a user name or password")
	}
	if hasDotSegment(t.Path) || hasDotSegment(t.RawPath) {
		return refuse(`the path must not contain "." or ".." segments`)
	}
	if len(allow) == 0 {
		return refuse("this server accepts no external content; its operator lists the URL prefixes it allows with --external-content-allow")
	}
	host := strings.ToLower(t.Host)
	for _, a := range allow {
		p, err := url.Parse(strings.TrimSpace(a))
		if err != nil || !strings.EqualFold(p.Scheme, scheme) || p.User != nil {
			continue
		}
		named := p.Host != ""
		if named && strings.ToLower(p.Host) != host {
			continue
		}
		if !pathWithin(t.EscapedPath(), p.EscapedPath()) {
			continue
		}
		if !named && internalHost(t.Hostname()) {
			return refuse("its host is the local machine or a private network; only a prefix naming that host allows it")
		}
		return nil
	}
	return refuse("no prefix of the server's external content allow-list (--external-content-allow) matches it")
}

// pathWithin reports whether the escaped path p lies under the prefix
// path pre: equal, or continuing after pre at a "/".
func pathWithin(p, pre string) bool {
	if pre == "" || pre == "/" {
		return true
	}
	if p == strings.TrimSuffix(pre, "/") {
		return true
	}
	if !strings.HasSuffix(pre, "/") {
		pre += "/"
	}
	return strings.HasPrefix(p, pre)
}

// hasDotSegment reports whether a path (decoded or escaped) has a "." or
// ".." segment, which a client would resolve out of a prefix.
func hasDotSegment(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		switch strings.ToLower(seg) {
		case ".", "..", "%2e", "%2e%2e", ".%2e", "%2e.":
			return true
		}
	}
	return false
}

// internalHost reports whether a host names the local machine or a
// private network, or is a numeric form a client may read as an IPv4
// address.
func internalHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
			a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() ||
			(a.Is4() && a.As4()[0] == 0) // 0.0.0.0/8: "this network"
	}
	// WHATWG URL parsing reads a host whose last label is a number
	// (decimal, octal or 0x hex) as an IPv4 address.
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return true
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// truncateURL cuts s to at most n bytes.
func truncateURL(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
