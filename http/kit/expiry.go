package kit

import (
	"regexp"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
)

// lifetimeRE matches a token lifetime: up to 36500 days, or hours or
// minutes.
var lifetimeRE = regexp.MustCompile(`^([0-9]{1,5})([dhm])$`)

// ParseExpiry reads when a token expires: a lifetime ("90d", "12h",
// "30m") or a date or RFC 3339 time, which must lie in the future
// (after now); anything else is EINVALID.
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	if m := lifetimeRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute}[m[2]]
		if n > 0 {
			return now.Add(time.Duration(n) * unit), nil
		}
	}
	t, err := ParseTime("expires", s)
	if err != nil {
		return time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "expires: %q is neither a lifetime (90d, 12h, 30m) nor a date (2030-01-31) or RFC 3339 time.", s)
	}
	if !t.After(now) {
		return time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "expires: %s has passed.", s)
	}
	return t, nil
}
