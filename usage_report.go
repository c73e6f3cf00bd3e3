package shelfmark

import (
	"context"
	"fmt"
	"slices"
)

// UsageTotals are a resource's counts of the four metrics, summed over
// the months read.
type UsageTotals struct {
	Investigations, UniqueInvestigations, Requests, UniqueRequests int64
}

// add adds a count to its metric's total.
func (t *UsageTotals) add(c UsageCount) {
	switch c.Metric {
	case TotalInvestigations:
		t.Investigations += c.N
	case UniqueInvestigations:
		t.UniqueInvestigations += c.N
	case TotalRequests:
		t.Requests += c.N
	case UniqueRequests:
		t.UniqueRequests += c.N
	}
}

// UsageMonthTotals are the totals of one month (YYYYMM).
type UsageMonthTotals struct {
	Month int
	UsageTotals
}

// UsageReport is the use of one item (a work or a collection) or of the
// whole repository, month by month.
type UsageReport struct {
	// ID is the item's id ("" for the repository).
	ID ID
	// Months holds every month from the report's first to its last, in
	// order, those without use included.
	Months []UsageMonthTotals
	// Total sums the months.
	Total UsageTotals
}

// UsageItem is one of the most used works of a month.
type UsageItem struct {
	ID       ID
	Metadata []Statement
	N        int64
}

// MaxUsageMonths bounds the months of one report.
const MaxUsageMonths = 120

// store returns the usage store, or EUNAVAILABLE.
func (r *Repository) usageStore() (UsageStore, error) {
	s, ok := r.store.(UsageStore)
	if !ok {
		return nil, Errorf(EUNAVAILABLE, "This storage keeps no usage counts.")
	}
	return s, nil
}

// UsageTotalsOf returns the all-time totals of a work or collection the
// caller may read (ENOTFOUND otherwise): the policy's read of it, then
// one statement.
func (r *Repository) UsageTotalsOf(ctx context.Context, id ID) (*UsageTotals, error) {
	rep, err := r.UsageReport(ctx, id, 0, 0)
	if err != nil {
		return nil, err
	}
	return &rep.Total, nil
}

// UsageReport returns the use of the item id (a work or collection the
// caller may read; ENOTFOUND otherwise) or, with id "", of the whole
// repository (administrators only: EFORBIDDEN otherwise), in the months
// from through to (YYYYMM, both included, at most MaxUsageMonths; from 0
// and to 0 read every month and list none, giving the total only). One
// statement beside the policy's read of the item.
func (r *Repository) UsageReport(ctx context.Context, id ID, from, to int) (*UsageReport, error) {
	store, err := r.usageStore()
	if err != nil {
		return nil, err
	}
	all := from == 0 && to == 0
	if !all {
		if err := checkUsageMonths(from, to); err != nil {
			return nil, err
		}
	}
	key := UsageRepository
	if id != "" {
		if key, err = r.ids.Key(id); err != nil {
			return nil, err
		}
		err = r.store.View(ctx, func(tx ReadTx) error {
			a, err := r.guard(tx, CallerFrom(ctx)).readable(ctx, key)
			if err == nil && a.row.Kind != KindWork && a.row.Kind != KindCollection {
				err = Errorf(EINVALID, "%s is a %s: use is counted for works and collections.", id, a.row.Kind)
			}
			return err
		})
	} else {
		err = usageAdmin(ctx, "The repository's use is reported to administrators.")
	}
	if err != nil {
		return nil, err
	}
	lo, hi := from, to
	if all {
		lo, hi = 0, 999912
	}
	counts, err := store.Usage(ctx, []int64{key}, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("usage of %s: %w", id, err)
	}
	rep := &UsageReport{ID: id}
	byMonth := map[int]*UsageTotals{}
	if !all {
		for m := from; m <= to; m = nextMonth(m) {
			rep.Months = append(rep.Months, UsageMonthTotals{Month: m})
		}
		for i := range rep.Months {
			byMonth[rep.Months[i].Month] = &rep.Months[i].UsageTotals
		}
	}
	for _, c := range counts {
		rep.Total.add(c)
		if t := byMonth[c.Month]; t != nil {
			t.add(c)
		}
	}
	return rep, nil
}

// UsageTop returns the limit (at most MaxPageSize) works most used by
// metric in month, most first, with their metadata: administrators only.
// One statement over the index of the month's counts (reading twice the
// limit, since collections are counted there too), one for the rows and
// one for the metadata.
func (r *Repository) UsageTop(ctx context.Context, month int, metric UsageMetric, limit int) ([]UsageItem, error) {
	store, err := r.usageStore()
	if err != nil {
		return nil, err
	}
	if err := usageAdmin(ctx, "The most used works are reported to administrators."); err != nil {
		return nil, err
	}
	if err := checkUsageMonths(month, month); err != nil {
		return nil, err
	}
	if !slices.Contains(UsageMetrics, metric) {
		return nil, Errorf(EINVALID, "metric: %d is not a metric.", metric)
	}
	limit = clampLimit(limit)
	top, err := store.TopUsage(ctx, month, metric, 2*limit)
	if err != nil {
		return nil, err
	}
	keys := make([]int64, len(top))
	for i, c := range top {
		keys[i] = c.Resource
	}
	var out []UsageItem
	err = r.store.View(ctx, func(tx ReadTx) error {
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		work := map[int64]bool{}
		for _, row := range rows {
			work[row.Key] = row.Kind == KindWork && row.Deleted == nil
		}
		var shown []int64
		for _, c := range top {
			if work[c.Resource] && len(out) < limit {
				out = append(out, UsageItem{ID: r.ids.Encode(c.Resource), N: c.N})
				shown = append(shown, c.Resource)
			}
		}
		fields, err := tx.FieldsOf(ctx, shown)
		for i, k := range shown {
			out[i].Metadata = StatementsOf(fields[k])
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the most used of %d: %w", month, err)
	}
	return out, nil
}

// usageAdmin is nil for an administrator (or the system), EUNAUTHORIZED
// for an anonymous caller, and EFORBIDDEN saying msg for anyone else.
func usageAdmin(ctx context.Context, msg string) error {
	c := CallerFrom(ctx)
	switch {
	case c.Admin || c.System:
		return nil
	case !c.Authenticated():
		return Errorf(EUNAUTHORIZED, "%s Sign in.", msg)
	}
	return Errorf(EFORBIDDEN, "%s", msg)
}

// checkUsageMonths checks a range of months (YYYYMM).
func checkUsageMonths(from, to int) error {
	for _, m := range []int{from, to} {
		if m/100 < 1 || m/100 > 9999 || m%100 < 1 || m%100 > 12 {
			return Errorf(EINVALID, "%d is not a month (YYYYMM).", m)
		}
	}
	if to < from {
		return Errorf(EINVALID, "The months end (%d) before they begin (%d).", to, from)
	}
	n := (to/100-from/100)*12 + to%100 - from%100 + 1
	if n > MaxUsageMonths {
		return Errorf(EINVALID, "%d months; a report covers at most %d.", n, MaxUsageMonths)
	}
	return nil
}

// nextMonth is the month after m (YYYYMM).
func nextMonth(m int) int {
	if m%100 == 12 {
		return (m/100+1)*100 + 1
	}
	return m + 1
}
