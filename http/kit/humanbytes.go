package kit

import (
	"fmt"
	"strconv"
)

// HumanBytes writes a size the way people read it, in powers of 1000
// (1.5 MB); one small allocation.
func HumanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
