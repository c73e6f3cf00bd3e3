package webarchive

import "testing"

// TestWebCDXJString: CDXJ values are JSON strings as Python writes them,
// non-ASCII escaped.
func TestWebCDXJString(t *testing.T) {
	for in, want := range map[string]string{
		`a"b\c`:     `"a\"b\\c"`,
		"tab\there": `"tab\there"`,
		"é":         `"\u00e9"`,
		"😀":         `"\ud83d\ude00"`,
		"\x01":      `"\u0001"`,
		"/path?q=1": `"/path?q=1"`,
	} {
		if got := string(appendPyString(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
