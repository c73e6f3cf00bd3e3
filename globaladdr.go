package shelfmark

import (
	"net/netip"
	"strings"
	"unicode"
)

// nonGlobal4 are the IPv4 blocks that are not globally routable: the
// special-purpose blocks of the IANA registry (RFC 6890 and its
// successors) that are not globally reachable, multicast, and the
// reserved space with the limited broadcast address. The table is never
// written.
var nonGlobal4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local (cloud metadata services)
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved; 255.255.255.255, the limited broadcast
}

// IPv6 blocks: global unicast is 2000::/3 (everything else, loopback,
// unspecified, IPv4-compatible ::/96, discard-only 100::/64, local-use
// NAT64 64:ff9b:1::/48, unique local fc00::/7, link-local fe80::/10,
// site-local fec0::/10 and multicast ff00::/8 among them, is not), less
// the special-purpose blocks inside it that are not globally routable.
// Three blocks outside or inside it carry an IPv4 address a client would
// reach, judged as that address.
var (
	global6    = netip.MustParsePrefix("2000::/3")
	nonGlobal6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("3fff::/20"),     // documentation
	}
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64: the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4: bits 16 to 48
)

// globalAddr reports whether a is a globally routable unicast address,
// judging an IPv4 address embedded in an IPv6 one (IPv4-mapped
// ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::) as that
// IPv4 address. An address with a zone is never global.
func globalAddr(a netip.Addr) bool {
	if a.Zone() != "" {
		return false
	}
	if a.Is4() || a.Is4In6() {
		a = a.Unmap()
		for _, p := range nonGlobal4 {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return globalAddr(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		if !globalAddr(netip.AddrFrom4([4]byte(b[2:6]))) {
			return false
		}
	}
	if !global6.Contains(a) {
		return false
	}
	for _, p := range nonGlobal6 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// internalHost reports whether a URL's host names the local machine or
// an address that is not globally routable (see globalAddr), or is a
// form a client may read as an IPv4 address: a last label without a
// letter (decimal, octal, 0x hex: 2130706433, 0177.0.0.1, 127.1), after
// the mapping browsers apply to a host (full-width characters, and
// ideographic full stops as dots: １２７。０。０。１).
func internalHost(h string) bool {
	h = strings.ToLower(strings.Map(foldHostRune, h))
	h = strings.TrimSuffix(h, ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return !globalAddr(a)
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" || strings.HasPrefix(last, "0x") {
		return true
	}
	return !strings.ContainsFunc(last, unicode.IsLetter)
}

// foldHostRune maps the full-width forms of ASCII and the ideographic full
// stops to ASCII, as the IDNA mapping of browsers does.
func foldHostRune(r rune) rune {
	switch {
	case r == '\u3002' || r == '\uFF0E' || r == '\uFF61': // 。．｡
		return '.'
	case r >= '\uFF01' && r <= '\uFF5E':
		return r - 0xFEE0
	}
	return r
}
