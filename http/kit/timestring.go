package kit

import "time"

// TimeString is how the REST API writes a time: RFC 3339 in UTC, with
// as many fractional digits as it has.
func TimeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
