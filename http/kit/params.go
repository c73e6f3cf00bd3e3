package kit

import "strings"

// TruncateParam shortens a parameter quoted in an error message to its
// first 40 bytes (cut to valid UTF-8) and an ellipsis; a shorter one is
// returned as it is, without allocating.
func TruncateParam(s string) string {
	if len(s) <= 40 {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}
