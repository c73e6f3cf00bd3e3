package kit

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// Values from RFC 9530: the content {"hello": "world"} without and with a
// final LF (Appendices B and D, and section 2), and empty content (B.2).
const (
	helloJSON     = `{"hello": "world"}`
	helloSHA256   = "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
	helloSHA512   = "WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="
	helloLFSHA256 = "RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg="
	helloLFSHA512 = "YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4yP+pgk4vf2aCsyRZOtw8MjkM7iw7yZ/WkppmM44T3qg=="
	emptySHA256   = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
)

func b64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func d(alg shelfmark.DigestAlgorithm, v []byte) shelfmark.Digest {
	return shelfmark.Digest{Algorithm: alg, Value: v}
}

// TestRFCVectors checks the published values against the hashes, so that a
// typo in a constant cannot make the parsing tests pass for wrong reasons.
func TestRFCVectors(t *testing.T) {
	s256 := sha256.Sum256([]byte(helloJSON))
	s512 := sha512.Sum512([]byte(helloJSON))
	l256 := sha256.Sum256([]byte(helloJSON + "\n"))
	l512 := sha512.Sum512([]byte(helloJSON + "\n"))
	e256 := sha256.Sum256(nil)
	for _, c := range []struct {
		sum  []byte
		want string
	}{{s256[:], helloSHA256}, {s512[:], helloSHA512}, {l256[:], helloLFSHA256}, {l512[:], helloLFSHA512}, {e256[:], emptySHA256}} {
		if got := base64.StdEncoding.EncodeToString(c.sum); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func TestParseContentDigest(t *testing.T) {
	sha256hello := d(shelfmark.SHA256, b64(helloSHA256))
	sha512hello := d(shelfmark.SHA512, b64(helloSHA512))
	md5 := md5.Sum([]byte(helloJSON))
	md5hello := d(shelfmark.MD5, md5[:])
	sha1 := sha1.Sum([]byte(helloJSON))
	sha1hello := d(shelfmark.SHA1, sha1[:])
	md5b64 := base64.StdEncoding.EncodeToString(md5[:])
	sha1b64 := base64.StdEncoding.EncodeToString(sha1[:])

	for _, c := range []struct {
		in   string
		want []shelfmark.Digest
	}{
		// RFC 9530 examples.
		{"sha-256=:" + helloSHA256 + ":", []shelfmark.Digest{sha256hello}},
		{"sha-512=:" + helloSHA512 + ":", []shelfmark.Digest{sha512hello}},
		{"sha-512=:" + helloLFSHA512 + ":", []shelfmark.Digest{d(shelfmark.SHA512, b64(helloLFSHA512))}},
		{"sha-256=:" + helloLFSHA256 + ":", []shelfmark.Digest{d(shelfmark.SHA256, b64(helloLFSHA256))}},
		{"sha-256=:" + emptySHA256 + ":", []shelfmark.Digest{d(shelfmark.SHA256, b64(emptySHA256))}},
		{"sha-256=:" + helloSHA256 + ":, sha-512=:" + helloSHA512 + ":", []shelfmark.Digest{sha256hello, sha512hello}},
		// Order is the header's.
		{"sha-512=:" + helloSHA512 + ":,sha-256=:" + helloSHA256 + ":", []shelfmark.Digest{sha512hello, sha256hello}},
		// Deprecated algorithms are accepted.
		{"md5=:" + md5b64 + ":, sha=:" + sha1b64 + ":", []shelfmark.Digest{md5hello, sha1hello}},
		// Whitespace: leading and trailing SP, OWS (SP and HTAB) around commas.
		{"   sha-256=:" + helloSHA256 + ":  \t,\t  md5=:" + md5b64 + ":   ", []shelfmark.Digest{sha256hello, md5hello}},
		// Parameters of every type are tolerated and ignored.
		{"sha-256=:" + helloSHA256 + ":;a;b=1;c=-2.5;d=\"x\\\"y\";e=tok/en:1;f=?0;g=:AA==:;h=@1659578233;i=%\"caf%c3%a9\"", []shelfmark.Digest{sha256hello}},
		// Unknown algorithms are ignored, whatever their value type.
		{"unixsum=30637, sha-256=:" + helloSHA256 + ":, id-sha-512=:AAAA:, adler=tok, x=(1 2 \"a\");p=1, crc32c=:AAAAAA==:, y", []shelfmark.Digest{sha256hello}},
		{"crc32c=:AAAAAA==:, unixcksum=1", nil},
		{"", nil},
		{"   ", nil},
		// A key given twice keeps its last value (RFC 8941 4.2.2).
		{"sha-256=:" + emptySHA256 + ":, md5=:" + md5b64 + ":, sha-256=:" + helloSHA256 + ":", []shelfmark.Digest{sha256hello, md5hello}},
		{"sha-256=1, sha-256=:" + helloSHA256 + ":", []shelfmark.Digest{sha256hello}},
		// Padding may be left out.
		{"sha-256=:" + strings.TrimRight(helloSHA256, "=") + ":", []shelfmark.Digest{sha256hello}},
		// Non-zero pad bits are tolerated (RFC 8941 4.2.7): ...PE= is ...PF=.
		{"sha-256=:" + strings.Replace(helloSHA256, "PE=", "PF=", 1) + ":", []shelfmark.Digest{sha256hello}},
	} {
		got, err := ParseContentDigest(c.in)
		if err != nil {
			t.Errorf("ParseContentDigest(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseContentDigest(%q) = %v, want %v", c.in, got, c.want)
		}
		if c.want == nil && got != nil {
			t.Errorf("ParseContentDigest(%q) = %#v, want nil", c.in, got)
		}
	}
}

func TestParseContentDigestMalformed(t *testing.T) {
	good := "sha-256=:" + helloSHA256 + ":"
	for _, c := range []struct {
		in     string
		column int    // 0: not checked
		msg    string // a part of the message
	}{
		{"sha-256=:" + helloSHA256, 54, `closing ":" to end the byte sequence, found the end of the value`},
		{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", 0, `closing ":"`},
		{"sha-256=:X48E9q$OokqqrvdtsOJRJN3OWDUoyWxBf7kbu9DBPE=:", 16, "base64 character"},
		{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE-:", 0, "base64 character"}, // URL alphabet
		{"sha-256=:" + helloSHA256 + ";a=1:", 0, "base64 character"},
		{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE===:", 9, "not valid base64"},
		{"sha-256=:X48E=9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE:", 9, "not valid base64"},
		{"sha-256=:X:", 9, "not valid base64"},
		{good + ",", 0, "a member after the comma"},
		{good + ", ", 0, "a member after the comma"},
		{good + ",, md5=:AA==:", 0, "a key"},
		{", " + good, 1, "a key"},
		{good + " md5=:AA==:", 56, `"," between members`},
		{good + ";", 0, "a key"},
		{good + "; ", 0, "a key"},
		{good + ";A=1", 56, "a key"},
		{good + ";a=", 0, "a value"},
		{good + ";a=1.2345", 0, "at most 3 digits"},
		{good + ";a=1.", 0, "a digit after the decimal point"},
		{good + ";a=1234567890123456", 0, "at most 15 digits"},
		{good + ";a=\"unterminated", 0, `closing '"'`},
		{good + ";a=\"bad\\escape\"", 0, "after a backslash"},
		{good + ";a=?2", 0, "boolean"},
		{good + ";a=@1.5", 0, "date"},
		{good + ";a=%\"caf%C3%A9\"", 0, "lower-case hex"},
		{good + ";a=%\"%ff\"", 0, "UTF-8"},
		{"SHA-256=:" + helloSHA256 + ":", 1, "a key"},
		{"\tsha-256=:" + helloSHA256 + ":", 1, "a key"},
		{"=:" + helloSHA256 + ":", 1, "a key"},
		{"sha-256=(1 2", 0, `")"`},
		{"sha-256=(1,2)", 0, `" " or ")"`},
		{"sha-256=é", 0, "the byte 0xc3"},
		// Recognised algorithms with values that are not byte sequences.
		{"sha-256=" + helloSHA256, 52, `"," between members, found "="`}, // a token cannot hold "="
		{"sha-256=" + strings.TrimRight(helloSHA256, "="), 9, "not a byte sequence"},
		{"sha-256=\"" + helloSHA256 + "\"", 0, "not a byte sequence"},
		{"sha-256", 0, "not a byte sequence"},
		{"sha-256=(:" + helloSHA256 + ":)", 0, "not a byte sequence"},
		// Wrong lengths, including the truncated sha-512 example of RFC 9530
		// appendix C.
		{"sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4:", 0, "is 32 bytes long; a sha-512 digest has 64 bytes"},
		{"sha-256=:" + helloSHA512 + ":", 0, "is 64 bytes long"},
		{"md5=::", 0, "is 0 bytes long"},
		{"sha=:" + helloSHA256 + ":", 0, "is 32 bytes long; a sha digest has 20 bytes"},
	} {
		got, err := ParseContentDigest(c.in)
		var e *shelfmark.Error
		if !errors.As(err, &e) || e.Code != shelfmark.EINVALID {
			t.Errorf("ParseContentDigest(%q) = %v, %v; want EINVALID", c.in, got, err)
			continue
		}
		if !strings.Contains(e.Message, c.msg) {
			t.Errorf("ParseContentDigest(%q): message %q does not contain %q", c.in, e.Message, c.msg)
		}
		if e.Details["header"] != "Content-Digest" {
			t.Errorf("ParseContentDigest(%q): Details = %v", c.in, e.Details)
		}
		if c.column != 0 && e.Details["column"] != c.column {
			t.Errorf("ParseContentDigest(%q): column %v, want %d (%s)", c.in, e.Details["column"], c.column, e.Message)
		}
	}
}

func TestParseLegacyDigest(t *testing.T) {
	in := []byte(helloJSON)
	s1 := sha1.Sum(in)
	s256 := sha256.Sum256(in)
	s512 := sha512.Sum512(in)
	m5 := md5.Sum(in)
	hex1, hex256, hex512, hexMD5 := hex.EncodeToString(s1[:]), hex.EncodeToString(s256[:]), hex.EncodeToString(s512[:]), hex.EncodeToString(m5[:])
	std := base64.StdEncoding.EncodeToString
	url := base64.RawURLEncoding.EncodeToString
	fedora, _ := hex.DecodeString("cf23df2207d99a74fbe169e3eba035e633b65d94")

	for _, c := range []struct {
		in   string
		want []shelfmark.Digest
	}{
		// The example of the Fedora API specification: hex, not base64.
		{"sha=cf23df2207d99a74fbe169e3eba035e633b65d94", []shelfmark.Digest{d(shelfmark.SHA1, fedora)}},
		{"SHA=" + strings.ToUpper(hex1), []shelfmark.Digest{d(shelfmark.SHA1, s1[:])}},
		{"sha-1=" + std(s1[:]), []shelfmark.Digest{d(shelfmark.SHA1, s1[:])}},
		{"sha1=" + url(s1[:]), []shelfmark.Digest{d(shelfmark.SHA1, s1[:])}},
		{"sha-256=" + helloSHA256, []shelfmark.Digest{d(shelfmark.SHA256, s256[:])}},
		{"SHA-256=" + hex256, []shelfmark.Digest{d(shelfmark.SHA256, s256[:])}},
		{"sha256=" + strings.TrimRight(helloSHA256, "="), []shelfmark.Digest{d(shelfmark.SHA256, s256[:])}},
		{"SHA-512=" + helloSHA512, []shelfmark.Digest{d(shelfmark.SHA512, s512[:])}},
		{"sha512=" + hex512, []shelfmark.Digest{d(shelfmark.SHA512, s512[:])}},
		{"sha-512=" + url(s512[:]), []shelfmark.Digest{d(shelfmark.SHA512, s512[:])}},
		{"md5=" + hexMD5, []shelfmark.Digest{d(shelfmark.MD5, m5[:])}},
		{"MD5=" + std(m5[:]), []shelfmark.Digest{d(shelfmark.MD5, m5[:])}},
		{" md5 = " + hexMD5 + " ,\tsha-256=" + helloSHA256 + " ,", []shelfmark.Digest{d(shelfmark.MD5, m5[:]), d(shelfmark.SHA256, s256[:])}},
		// Unknown algorithms are ignored; the same digest twice is kept once.
		{"UNIXsum=30637, crc32c=abc, sha=" + hex1 + ", SHA-1=" + std(s1[:]), []shelfmark.Digest{d(shelfmark.SHA1, s1[:])}},
		{"UNIXsum=30637", nil},
		{"", nil},
		{" , ", nil},
	} {
		got, err := ParseLegacyDigest(c.in)
		if err != nil {
			t.Errorf("ParseLegacyDigest(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseLegacyDigest(%q) = %v, want %v", c.in, got, c.want)
		}
	}

	for _, c := range []struct{ in, msg string }{
		{"sha-256", "not of the form algorithm=value"},
		{"sha-256=", "no value for sha-256"},
		{"sha-256=!!!", "neither 64 hex digits nor base64"},
		{"sha-256=" + hex1, "is 30 bytes long"},                        // 40 hex digits read as base64
		{"sha=" + hex256, "is 48 bytes long"},                          // a sha-256 hex value under sha
		{"md5=" + std(s1[:]), "is 20 bytes long; a md5 digest has 16"}, // a sha-1 value under md5
		{"sha=" + hex1 + ", sha1=" + hex256[:40], "two different sha digests"},
		{"sha-256=" + strings.Replace(helloSHA256, "+", "-", 1) + "/", "nor base64"}, // both alphabets
		{"sha-256=\"" + helloSHA256 + "\"", "nor base64"},
	} {
		got, err := ParseLegacyDigest(c.in)
		var e *shelfmark.Error
		if !errors.As(err, &e) || e.Code != shelfmark.EINVALID {
			t.Errorf("ParseLegacyDigest(%q) = %v, %v; want EINVALID", c.in, got, err)
			continue
		}
		if !strings.Contains(e.Message, c.msg) || e.Details["header"] != "Digest" {
			t.Errorf("ParseLegacyDigest(%q): %q, %v; want a message with %q", c.in, e.Message, e.Details, c.msg)
		}
	}
}

func TestRequestDigests(t *testing.T) {
	in := []byte(helloJSON)
	m5 := md5.Sum(in)
	s1 := sha1.Sum(in)
	s256, s512 := b64(helloSHA256), b64(helloSHA512)
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}

	for _, c := range []struct {
		name string
		h    http.Header
		want []shelfmark.Digest
	}{
		{"none", header(), nil},
		{"only unknown", header("Content-Digest", "crc32c=:AAAAAA==:", "Digest", "UNIXsum=1"), nil},
		{"content", header("Content-Digest", "sha-256=:"+helloSHA256+":"), []shelfmark.Digest{d(shelfmark.SHA256, s256)}},
		{"repr", header("repr-digest", "sha-512=:"+helloSHA512+":"), []shelfmark.Digest{d(shelfmark.SHA512, s512)}},
		{"legacy", header("Digest", "md5="+hex.EncodeToString(m5[:])), []shelfmark.Digest{d(shelfmark.MD5, m5[:])}},
		{"all agree, merged in order of preference", header(
			"Digest", "sha="+hex.EncodeToString(s1[:])+", sha-256="+helloSHA256,
			"Repr-Digest", "sha-512=:"+helloSHA512+":, sha-256=:"+helloSHA256+":",
			"Content-Digest", "sha-256=:"+helloSHA256+":",
		), []shelfmark.Digest{d(shelfmark.SHA256, s256), d(shelfmark.SHA512, s512), d(shelfmark.SHA1, s1[:])}},
		{"several field lines", header(
			"Content-Digest", "sha-256=:"+helloSHA256+":",
			"Content-Digest", "",
			"Content-Digest", "md5=:"+base64.StdEncoding.EncodeToString(m5[:])+":",
		), []shelfmark.Digest{d(shelfmark.SHA256, s256), d(shelfmark.MD5, m5[:])}},
	} {
		got, err := RequestDigests(c.h)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: RequestDigests = %v, %v; want %v", c.name, got, err, c.want)
		}
	}

	other := bytes.Clone(s256)
	other[0] ^= 1
	otherB64 := base64.StdEncoding.EncodeToString(other)
	for _, c := range []struct {
		name    string
		h       http.Header
		headers []string
		msg     string
	}{
		{"content vs repr", header("Content-Digest", "sha-256=:"+helloSHA256+":", "Repr-Digest", "sha-256=:"+otherB64+":"),
			[]string{"Content-Digest", "Repr-Digest"}, "different sha-256 digests"},
		{"content vs legacy hex", header("Content-Digest", "sha-256=:"+otherB64+":", "Digest", "SHA-256="+hex.EncodeToString(s256)),
			[]string{"Content-Digest", "Digest"}, "different sha-256 digests"},
		{"repr vs legacy", header("Repr-Digest", "sha-256=:"+otherB64+":", "Digest", "sha256="+helloSHA256),
			[]string{"Repr-Digest", "Digest"}, "different sha-256 digests"},
		{"malformed repr", header("Content-Digest", "sha-256=:"+helloSHA256+":", "Repr-Digest", "sha-256=:"+helloSHA256),
			nil, "The Repr-Digest header is not a valid structured field dictionary"},
		{"malformed legacy", header("Digest", "sha-256"), nil, "The Digest header is malformed"},
	} {
		_, err := RequestDigests(c.h)
		var e *shelfmark.Error
		if !errors.As(err, &e) || e.Code != shelfmark.EINVALID {
			t.Errorf("%s: error = %v, want EINVALID", c.name, err)
			continue
		}
		if !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: message %q does not contain %q", c.name, e.Message, c.msg)
		}
		if c.headers != nil && !reflect.DeepEqual(e.Details["headers"], c.headers) {
			t.Errorf("%s: Details = %v", c.name, e.Details)
		}
	}
}

// formatContentDigest serializes digests as an RFC 9530 Dictionary.
func formatContentDigest(ds []shelfmark.Digest) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = string(d.Algorithm) + "=:" + base64.StdEncoding.EncodeToString(d.Value) + ":"
	}
	return strings.Join(parts, ", ")
}

func FuzzParseContentDigest(f *testing.F) {
	for _, s := range []string{
		"sha-256=:" + helloSHA256 + ":",
		"sha-256=:" + helloSHA256 + ":, sha-512=:" + helloSHA512 + ":",
		"sha-256=:" + helloSHA256 + ":;a;b=1;c=-2.5;d=\"x\\\"y\";e=tok/en:1;f=?0;g=:AA==:;h=@1659578233;i=%\"caf%c3%a9\"",
		"unixsum=30637, x=(1 2 \"a\");p=1, md5=:AAAAAAAAAAAAAAAAAAAAAA==:, y",
		"sha=:AAAAAAAAAAAAAAAAAAAAAAAAAAA=:\t,  *k=?1",
		"sha-512=:YMAam51Jz/jOATT6/zvHrLVgOYTGFy1d6GJiOHTohq4:",
		"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		ds, err := ParseContentDigest(v)
		if err != nil {
			var e *shelfmark.Error
			if !errors.As(err, &e) || e.Code != shelfmark.EINVALID || e.Message == "" {
				t.Fatalf("ParseContentDigest(%q): error %v is not EINVALID", v, err)
			}
			if ds != nil {
				t.Fatalf("ParseContentDigest(%q) = %v with an error", v, ds)
			}
			return
		}
		if ds != nil && len(ds) == 0 {
			t.Fatalf("ParseContentDigest(%q) = empty, not nil", v)
		}
		seen := map[shelfmark.DigestAlgorithm]bool{}
		for _, d := range ds {
			if n := d.Algorithm.Size(); n == 0 || len(d.Value) != n || seen[d.Algorithm] {
				t.Fatalf("ParseContentDigest(%q) = %v", v, ds)
			}
			seen[d.Algorithm] = true
		}
		// What was accepted serializes and parses back to the same.
		if ds != nil {
			again, err := ParseContentDigest(formatContentDigest(ds))
			if err != nil || !reflect.DeepEqual(again, ds) {
				t.Fatalf("round trip of %q: %v, %v; want %v", v, again, err, ds)
			}
		}
	})
}
