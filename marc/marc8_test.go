package marc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestMARC8Lines checks the conversion against pymarc's test_marc8.txt /
// test_utf8.txt pairs (one string per line, 1515 lines).
func TestMARC8Lines(t *testing.T) {
	m8 := bytes.Split(readTestFile(t, "test_marc8.txt"), []byte("\n"))
	u8 := bytes.Split(readTestFile(t, "test_utf8.txt"), []byte("\n"))
	count, bad := 0, 0
	for i := 0; i < len(m8) && i < len(u8); i++ {
		if len(m8[i]) == 0 || len(u8[i]) == 0 {
			break
		}
		count++
		got, err := MARC8ToUTF8(m8[i])
		if err != nil {
			t.Errorf("line %d: %v", i+1, err)
			bad++
		} else if got != string(u8[i]) {
			t.Errorf("line %d: %q\n got  %q\n want %q", i+1, m8[i], got, u8[i])
			bad++
		}
		if bad > 10 {
			t.Fatal("too many failures")
		}
	}
	if count != 1515 {
		t.Fatalf("compared %d lines, want 1515", count)
	}
}

func TestMARC8Special(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"CO\x1bb2\x1bs is a gas", "CO\u2082 is a gas"},
		{"CO\x1bb2\x1bs", "CO\u2082"},
		{"ESZETT SYMBOL: \xc7 is U+00DF", "ESZETT SYMBOL: \u00df is U+00DF"},
		{"EURO SIGN: \xc8 is U+20AC", "EURO SIGN: \u20ac is U+20AC"},
		{"ALIF: \xae is U+02BC", "ALIF: \u02bc is U+02BC"},
		{"De la solitude \xe1a la communaut\xe2e.", "De la solitude \u00e0 la communaut\u00e9."},
		// Two combining marks: dot below (ccc 220) and acute (230), NFC
		// composes the dot below first.
		{"\xf2\xe2a", "\u1ea1\u0301"},
		{"x\x1bp2\x1bs", "x\u00b2"},
		{"\x1b(S\x41\x1b(B", "\u0391"},
		{"\x1b)!E\xe1e", "\u00e8"},
	} {
		got, err := MARC8ToUTF8([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("MARC8ToUTF8(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"a\x1b", "a\x1bz", "\x1b$1!!", "\x1b$1\x7f\x7f\x7f", "\x1b(Z"} {
		if _, err := MARC8ToUTF8([]byte(in)); !errors.Is(err, errMARC8) {
			t.Errorf("MARC8ToUTF8(%q) error = %v, want MARC-8 error", in, err)
		}
	}
}

// TestMARC8ManyCombining makes sure long runs of combining marks of
// alternating classes are not quadratic.
func TestMARC8ManyCombining(t *testing.T) {
	in := append(bytes.Repeat([]byte{0xE2, 0xF2}, 20000), 'a')
	got, err := MARC8ToUTF8(in)
	if err != nil {
		t.Fatal(err)
	}
	// NFC: a + dot below composes to U+1EA1, then 19999 dots below (220)
	// before 20000 acutes (230).
	want := "\u1ea1" + strings.Repeat("\u0323", 19999) + strings.Repeat("\u0301", 20000)
	if got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
}
