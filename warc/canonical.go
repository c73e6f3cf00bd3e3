package warc

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/shelfmark/shelfmark"
)

// ErrNotHTTP reports a URL whose scheme is not http or https: such a URL
// has no place in the web index (dns:, mailto:, ftp: ...).
var ErrNotHTTP = errors.New("not an http or https URL")

// Canonical returns the index form of an absolute http or https URL: the
// URL with its fragment removed, host lowercased (IDNA hosts in punycode),
// default port removed and bytes that cannot stand in a URL (invalid
// UTF-8, controls, spaces, non-ASCII) percent-encoded; its SURT as the
// Internet Archive's surt library computes it by default (the key pywb and
// the Wayback machine sort captures by); and its registered domain.
//
// Another scheme is ErrNotHTTP (wrapped); a URL without a host or with an
// invalid port is an error.
func Canonical(raw string) (shelfmark.WebURL, error) {
	p, err := splitURL(raw)
	if err != nil {
		return shelfmark.WebURL{}, err
	}
	return p.webURL(), nil
}

// parts is a URL split as surt's handyurl splits it, cleaned.
type parts struct {
	scheme   string // "http" or "https", lowercase
	userinfo string // as found, with '@'
	host     string // as found (lowercased later)
	port     int    // 0: none or default
	path     string
	query    string
	hasQuery bool
}

// cleanURL trims surrounding whitespace, removes tabs and newlines and
// percent-encodes invalid UTF-8, other control bytes and spaces, as a
// browser does with an href.
func cleanURL(raw string) string {
	raw = strings.TrimSpace(raw)
	clean := true
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw) + 8)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\t' || c == '\n' || c == '\r':
			i++
		case c < ' ' || c == ' ' || c == 0x7f:
			pct(&b, c)
			i++
		case c < 0x80:
			b.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(raw[i:])
			if r == utf8.RuneError && n <= 1 {
				pct(&b, c)
				i++
				continue
			}
			b.WriteString(raw[i : i+n])
			i += n
		}
	}
	return b.String()
}

const hexUpper = "0123456789ABCDEF"

func pct(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(hexUpper[c>>4])
	b.WriteByte(hexUpper[c&15])
}

// splitURL parses an absolute http(s) URL.
func splitURL(raw string) (*parts, error) {
	s := cleanURL(raw)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return nil, fmt.Errorf("url %q: not absolute", trunc(raw))
	}
	scheme := strings.ToLower(s[:colon])
	if scheme != "http" && scheme != "https" {
		if validScheme(scheme) {
			return nil, fmt.Errorf("url %q: %w", trunc(raw), ErrNotHTTP)
		}
		return nil, fmt.Errorf("url %q: not absolute", trunc(raw))
	}
	rest := s[colon+1:]
	// surt collapses repeated protocols ("http://http://x")
	for {
		l := strings.ToLower(rest)
		if strings.HasPrefix(l, "//http://") {
			rest = rest[len("//http:"):]
		} else if strings.HasPrefix(l, "//https://") {
			rest = rest[len("//https:"):]
		} else {
			break
		}
	}
	if !strings.HasPrefix(rest, "//") {
		return nil, fmt.Errorf("url %q: no host", trunc(raw))
	}
	rest = rest[2:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	p := &parts{scheme: scheme}
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	rest = rest[end:]
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		p.path, p.query, p.hasQuery = rest[:i], rest[i+1:], true
	} else {
		p.path = rest
	}
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		p.userinfo, auth = auth[:i+1], auth[i+1:]
	}
	host, port := auth, ""
	if strings.HasPrefix(host, "[") {
		i := strings.IndexByte(host, ']')
		if i < 0 {
			return nil, fmt.Errorf("url %q: bad IPv6 host", trunc(raw))
		}
		host, port = auth[:i+1], strings.TrimPrefix(auth[i+1:], ":")
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 || port[0] == '+' || port[0] == '-' {
			return nil, fmt.Errorf("url %q: bad port %q", trunc(raw), port)
		}
		if !(scheme == "http" && n == 80) && !(scheme == "https" && n == 443) {
			p.port = n
		}
	}
	if host == "" {
		return nil, fmt.Errorf("url %q: no host", trunc(raw))
	}
	p.host = host
	if strings.IndexByte(host, '%') >= 0 || hasNonASCII(host) {
		h, err := url.PathUnescape(host)
		if err != nil {
			return nil, fmt.Errorf("url %q: bad host: %v", trunc(raw), err)
		}
		p.host = h
	}
	if hasNonASCII(p.host) {
		a, err := idna.Lookup.ToASCII(p.host)
		if err != nil {
			a, err = idna.Punycode.ToASCII(p.host)
		}
		if err != nil {
			return nil, fmt.Errorf("url %q: bad host: %v", trunc(raw), err)
		}
		p.host = a
	}
	p.host = strings.ToLower(p.host)
	if strings.HasPrefix(p.host, "[") {
		if len(p.host) < 4 || p.host[len(p.host)-1] != ']' || strings.Trim(p.host[1:len(p.host)-1], "0123456789abcdef:.") != "" {
			return nil, fmt.Errorf("url %q: bad IPv6 host", trunc(raw))
		}
		return p, nil
	}
	for i := 0; i < len(p.host); i++ {
		c := p.host[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("<>\"{}|\\^`/?#@%:[]", c) >= 0 {
			return nil, fmt.Errorf("url %q: bad host", trunc(raw))
		}
	}
	return p, nil
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// webURL builds the WebURL of a split URL.
func (p *parts) webURL() shelfmark.WebURL {
	var b strings.Builder
	b.Grow(len(p.host) + len(p.path) + len(p.query) + 16)
	b.WriteString(p.scheme)
	b.WriteString("://")
	b.WriteString(p.userinfo)
	b.WriteString(p.host)
	if p.port != 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.port))
	}
	if p.path == "" {
		b.WriteByte('/')
	} else {
		escapeURLPart(&b, p.path)
	}
	if p.hasQuery {
		b.WriteByte('?')
		escapeURLPart(&b, p.query)
	}
	return shelfmark.WebURL{URL: b.String(), SURT: p.surt(), Domain: domainOf(p.host)}
}

// escapeURLPart writes s with non-ASCII bytes percent-encoded (cleanURL
// already encoded the others).
func escapeURLPart(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			pct(b, c)
		} else {
			b.WriteByte(c)
		}
	}
}

// domainOf returns the registered domain of a lowercase host, or the host.
func domainOf(host string) string {
	h := strings.TrimPrefix(strings.TrimRight(host, "."), "www.")
	if h == "" || strings.HasPrefix(host, "[") || isIPv4(h) {
		return host
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return h
}

func isIPv4(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// surt computes the SURT the way surt.surt(url) does by default:
// GoogleURLCanonicalizer then IAURLCanonicalizer, without scheme.
func (p *parts) surt() string {
	// host: unescape, ".." -> ".", trim dots, IP forms, escape, lowercase
	host := unescapeRepeatedly(p.host)
	host = strings.Trim(strings.ReplaceAll(host, "..", "."), ".")
	if ip, ok := attemptIP(host); ok {
		host = ip
	} else {
		host = escapeOnce(strings.ToLower(host))
	}
	host = stripWWW(strings.ToLower(host))
	var b strings.Builder
	b.Grow(len(host) + len(p.path) + len(p.query) + 8)
	labels := strings.Split(host, ".")
	for i := len(labels) - 1; i >= 0; i-- {
		b.WriteString(labels[i])
		if i > 0 {
			b.WriteByte(',')
		}
	}
	if p.port != 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.port))
	}
	b.WriteByte(')')
	path := strings.ToLower(escapeOnce(normalizePath(unescapeRepeatedly(p.path))))
	if strings.Contains(path, ".aspx") {
		for _, re := range pathSessionID {
			if m := re.FindStringSubmatch(path); m != nil {
				path = m[1] + m[3]
			}
		}
	}
	if len(path) > 1 && strings.HasSuffix(path, "/") {
		path = path[:len(path)-1]
	}
	b.WriteString(path)
	if p.hasQuery && p.query != "" {
		q := escapeOnce(unescapeRepeatedly(p.query))
		lq := strings.ToLower(q)
		if strings.Contains(lq, "sid=") || strings.Contains(lq, "sessionid") || strings.Contains(lq, "cfid=") {
			for _, re := range querySessionID {
				if m := re.FindStringSubmatch(q); m != nil {
					q = m[1] + m[2]
				}
			}
			lq = strings.ToLower(q)
		}
		q = alphaReorder(lq)
		if q != "" {
			b.WriteByte('?')
			b.WriteString(q)
		}
	}
	return b.String()
}

// stripWWW drops a leading "www." or "www" digits "." (surt's
// massageHost).
func stripWWW(host string) string {
	if !strings.HasPrefix(host, "www") {
		return host
	}
	i := 3
	for i < len(host) && host[i] >= '0' && host[i] <= '9' {
		i++
	}
	if i < len(host) && host[i] == '.' {
		return host[i+1:]
	}
	return host
}

var (
	pathSessionID = []*regexp.Regexp{
		regexp.MustCompile(`(?is)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$`),
		regexp.MustCompile(`(?is)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$`),
	}
	querySessionID = []*regexp.Regexp{
		regexp.MustCompile(`(?is)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?is)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?is)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?is)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$`),
		regexp.MustCompile(`(?is)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$`),
	}
)

// alphaReorder sorts query arguments as surt does (by name, then value;
// a name without '=' before the same name with one).
func alphaReorder(q string) string {
	if len(q) <= 1 || strings.IndexByte(q, '&') < 0 {
		return q
	}
	args := strings.Split(q, "&")
	slices.SortStableFunc(args, func(a, b string) int {
		ak, av, aok := strings.Cut(a, "=")
		bk, bv, bok := strings.Cut(b, "=")
		if c := strings.Compare(ak, bk); c != 0 {
			return c
		}
		if aok != bok {
			if !aok {
				return -1
			}
			return 1
		}
		return strings.Compare(av, bv)
	})
	return strings.Join(args, "&")
}

// unescapeRepeatedly decodes %XX escapes until nothing changes, leaving a
// '%' that starts no escape as it is (python's unquote_to_bytes).
func unescapeRepeatedly(s string) string {
	for strings.IndexByte(s, '%') >= 0 {
		u := unquote(s)
		if u == s {
			break
		}
		s = u
	}
	return s
}

func unquote(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			if b == nil {
				b = make([]byte, 0, len(s))
				b = append(b, s[:i]...)
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// escapeOnce percent-encodes what python's quote leaves unsafe with
// surt's safe set: controls, space, '#', '%' and bytes >= 0x7f.
func escapeOnce(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; needEscape(c) {
			pct(&b, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needEscape(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == '#' || c == '%'
}

// normalizePath resolves "." and ".." segments and drops empty ones
// except the last, as surt's GoogleURLCanonicalizer does.
func normalizePath(path string) string {
	if path == "" {
		return "/"
	}
	if path[0] == '/' && !strings.Contains(path, "//") && !strings.Contains(path, "/.") {
		return path
	}
	segs := strings.Split(path, "/")[1:]
	kept := segs[:0:0]
	for _, s := range segs {
		switch s {
		case ".":
		case "..":
			if len(kept) > 0 {
				kept = kept[:len(kept)-1]
			} else {
				kept = append(kept, s)
			}
		default:
			kept = append(kept, s)
		}
	}
	var b bytes.Buffer
	b.WriteByte('/')
	for i, s := range kept {
		if i == len(kept)-1 {
			b.WriteString(s)
		} else if s != "" {
			b.WriteString(s)
			b.WriteByte('/')
		}
	}
	return b.String()
}

// attemptIP turns the numeric host forms surt accepts (a plain number,
// dotted decimal or octal as inet_aton reads them) into dotted quads.
func attemptIP(host string) (string, bool) {
	if host == "" || host[0] < '0' || host[0] > '9' {
		return "", false // every form surt reads starts with a digit
	}
	digits := true
	for i := 0; i < len(host); i++ {
		if host[i] < '0' || host[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		// python masks int(host) & 0xffffffff: arithmetic modulo 2^32
		var v uint32
		for i := 0; i < len(host); i++ {
			v = v*10 + uint32(host[i]-'0')
		}
		return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&255, v>>8&255, v&255), true
	}
	if !decimalIP.MatchString(host) && !octalIP.MatchString(host) {
		return "", false
	}
	labels := strings.Split(host, ".")
	vals := make([]uint64, len(labels))
	for i, l := range labels {
		base := 10
		if len(l) > 1 && l[0] == '0' {
			base = 8
		}
		v, err := strconv.ParseUint(l, base, 32)
		if err != nil {
			return "", false
		}
		vals[i] = v
	}
	var v uint64
	switch len(vals) {
	case 1:
		v = vals[0]
	case 2:
		if vals[0] > 255 || vals[1] > 0xffffff {
			return "", false
		}
		v = vals[0]<<24 | vals[1]
	case 3:
		if vals[0] > 255 || vals[1] > 255 || vals[2] > 0xffff {
			return "", false
		}
		v = vals[0]<<24 | vals[1]<<16 | vals[2]
	case 4:
		for _, x := range vals {
			if x > 255 {
				return "", false
			}
		}
		v = vals[0]<<24 | vals[1]<<16 | vals[2]<<8 | vals[3]
	}
	return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&255, v>>8&255, v&255), true
}

var (
	octalIP   = regexp.MustCompile(`^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$`)
	decimalIP = regexp.MustCompile(`^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$`)
)
