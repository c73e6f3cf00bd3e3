package sqlstore

import (
	"time"

	"github.com/shelfmark/shelfmark"
)

// SearchTimeout returns the bound of a backend's Options.SearchTimeout: 0
// is shelfmark.DefaultSearchTimeout, less than 0 none (returned as 0).
func SearchTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return shelfmark.DefaultSearchTimeout
	case d < 0:
		return 0
	}
	return d
}

// Full returns err as ESTORAGEFULL (shelfmark.StorageFull of the
// database, keeping err wrapped for the logs) when noSpace says the
// database or its disk ran out of space; otherwise, and when err already
// is ESTORAGEFULL, err unchanged. noSpace is the backend's reading of its
// driver's errors.
func Full(err error, noSpace func(error) bool) error {
	if err == nil || shelfmark.ErrorCode(err) == shelfmark.ESTORAGEFULL || !noSpace(err) {
		return err
	}
	return shelfmark.StorageFull("the database", err)
}
