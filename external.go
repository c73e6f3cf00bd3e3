package shelfmark

import (
	"fmt"
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
// Even when a prefix matches, a host that is not a name or address of
// the public Internet is refused unless the prefix names that very host
// (see internalHost): an IP literal that is not globally routable
// (loopback, private, shared, link-local, documentation, benchmarking,
// reserved, multicast, unspecified; an IPv4 address embedded in IPv6,
// IPv4-mapped, NAT64 or 6to4, judged as itself), "localhost" and its
// subdomains, and the forms browsers read as IPv4 addresses (2130706433,
// 0x7f.1, full-width digits). Names are not resolved. An empty allow
// refuses everything. Every refusal is EINVALID.
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
	internal := false // an unnamed prefix matched, but the host is internal
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
			internal = true // a later prefix may name the host
			continue
		}
		return nil
	}
	if internal {
		return refuse("its host is the local machine or an address that is not globally routable (private, shared, link-local, reserved, documentation…); only a prefix naming that host allows it")
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

// truncateURL cuts s to at most n bytes.
func truncateURL(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
