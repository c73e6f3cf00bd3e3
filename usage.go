package shelfmark

import (
	"context"
	"strings"
	"time"
)

// UsageMetric is one of COUNTER Release 5.1's metric types that
// Shelfmark counts for items (works) and, summed, for collections and the
// whole repository.
type UsageMetric int

// The metrics counted. An investigation is a look at a work (its page); a
// request is a retrieval of its content (a file's bytes, the PDF or ZIP of
// its pages): a request is an investigation too. The unique metrics count
// a work once per user-session.
const (
	TotalInvestigations  UsageMetric = 1
	UniqueInvestigations UsageMetric = 2
	TotalRequests        UsageMetric = 3
	UniqueRequests       UsageMetric = 4
)

// UsageMetrics are the metrics, in COUNTER's order.
var UsageMetrics = []UsageMetric{TotalInvestigations, UniqueInvestigations, TotalRequests, UniqueRequests}

// String is the metric's COUNTER name (Total_Item_Investigations, …).
func (m UsageMetric) String() string {
	switch m {
	case TotalInvestigations:
		return "Total_Item_Investigations"
	case UniqueInvestigations:
		return "Unique_Item_Investigations"
	case TotalRequests:
		return "Total_Item_Requests"
	case UniqueRequests:
		return "Unique_Item_Requests"
	}
	return "unknown"
}

// UsageRepository is the Resource key of the counts of the whole
// repository.
const UsageRepository int64 = 0

// UsageCount is a count of one metric for one resource (a work, a
// collection, or UsageRepository) in one month.
type UsageCount struct {
	Resource int64
	// Month is the month as YYYYMM (UsageMonth), in UTC.
	Month  int
	Metric UsageMetric
	N      int64
}

// UsageMonth is t's month as YYYYMM, in UTC.
func UsageMonth(t time.Time) int {
	t = t.UTC()
	return t.Year()*100 + int(t.Month())
}

// UsageMonthStart is the first instant of month (YYYYMM), in UTC.
func UsageMonthStart(month int) time.Time {
	return time.Date(month/100, time.Month(month%100), 1, 0, 0, 0, 0, time.UTC)
}

// ParseUsageMonth reads the month a parameter name gives as YYYY-MM, or as
// a day of it (YYYY-MM-DD, as COUNTER's begin_date and end_date are
// written), and returns it as YYYYMM; EINVALID naming the parameter
// otherwise.
func ParseUsageMonth(name, v string) (int, error) {
	v = strings.TrimSpace(v)
	t, err := time.Parse("2006-01", v)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, v); err != nil {
			return 0, Errorf(EINVALID, "%s: %.20q is not a month (YYYY-MM or YYYY-MM-DD).", name, v)
		}
	}
	return UsageMonth(t), nil
}

// MaxUsageRead bounds the counts one read of a UsageStore returns.
const MaxUsageRead = 10000

// UsageStore keeps the usage counts. Both backends implement it outside
// the engine's write transactions (a count takes no change sequence
// number and a read never waits on one); find it by a type assertion on
// the Storage.
type UsageStore interface {
	// AddUsage adds counts to those stored (creating them), in one
	// statement; a resource, metric and month is given once at most.
	AddUsage(ctx context.Context, counts []UsageCount) error
	// Usage returns the counts of resources in the months from through
	// to (YYYYMM, both included), by resource, metric and month: one
	// statement over the primary key, at most MaxUsageRead counts.
	Usage(ctx context.Context, resources []int64, from, to int) ([]UsageCount, error)
	// TopUsage returns the limit (at most MaxUsageRead) counts of metric
	// in month with the highest numbers, highest first, leaving out
	// UsageRepository: one range of the index usage_top.
	TopUsage(ctx context.Context, month int, metric UsageMetric, limit int) ([]UsageCount, error)
}
