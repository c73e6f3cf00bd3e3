package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// UsageSQL is the statements of the usage counts (shelfmark.UsageStore),
// the same in both dialects (written once, in usageShared). Their
// arguments are those named, in that order.
type UsageSQL struct {
	Usage    string // resources, from, to, limit
	TopUsage string // month, metric, limit
}

// usageShared is UsageSQL with PostgreSQL's placeholders (see Shared).
var usageShared = UsageSQL{
	// the primary key (resource, metric, month)
	Usage: `SELECT resource, month, metric, n FROM usage_counts WHERE resource = ANY($1) AND month >= $2 AND month <= $3
ORDER BY resource, metric, month LIMIT $4`,
	// the index usage_top, backwards
	TopUsage: `SELECT resource, month, metric, n FROM usage_counts WHERE month = $1 AND metric = $2 AND resource <> 0
ORDER BY n DESC, resource LIMIT $3`,
}

var _ shelfmark.UsageStore = (*Direct)(nil)

// AddUsage implements shelfmark.UsageStore: the counts inserted, each
// added to the stored one of its resource, metric and month, in one
// statement (the counts bound as one table; each key at most once, as
// the counter sums them).
func (x *Direct) AddUsage(ctx context.Context, counts []shelfmark.UsageCount) error {
	if len(counts) == 0 {
		return nil
	}
	rows := Rows{Cols: []Col{{"resource", Int64}, {"month", Int32}, {"metric", Int32}, {"n", Int64}}, N: len(counts),
		Row: func(i int, v []any) {
			c := counts[i]
			v[0], v[1], v[2], v[3] = c.Resource, int64(c.Month), int64(c.Metric), c.N
		}}
	from, args, err := x.d.From(rows, 1)
	if err != nil {
		return fmt.Errorf("%sadd %d usage counts: %w", x.d.Prefix, len(counts), err)
	}
	err = x.with(ctx, true, func(q Execer) error {
		_, err := q.Exec(ctx, `INSERT INTO usage_counts (resource, month, metric, n) SELECT resource, month, metric, n FROM `+from+
			` WHERE true ON CONFLICT (resource, metric, month) DO UPDATE SET n = usage_counts.n + excluded.n`, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%sadd %d usage counts: %w", x.d.Prefix, len(counts), err)
	}
	return nil
}

// Usage implements shelfmark.UsageStore in one statement.
func (x *Direct) Usage(ctx context.Context, resources []int64, from, to int) ([]shelfmark.UsageCount, error) {
	if len(resources) == 0 {
		return nil, nil
	}
	return x.usageRows(ctx, "usage of %d resources", len(resources), x.d.UsageSQL.Usage, x.d.Int64s(resources), from, to, shelfmark.MaxUsageRead)
}

// TopUsage implements shelfmark.UsageStore in one statement.
func (x *Direct) TopUsage(ctx context.Context, month int, metric shelfmark.UsageMetric, limit int) ([]shelfmark.UsageCount, error) {
	limit = min(max(limit, 1), shelfmark.MaxUsageRead)
	return x.usageRows(ctx, "the most used of month %d", month, x.d.TopUsage, month, int(metric), limit)
}

// usageRows runs a read of counts.
func (x *Direct) usageRows(ctx context.Context, what string, arg int, query string, args ...any) ([]shelfmark.UsageCount, error) {
	var out []shelfmark.UsageCount
	err := x.with(ctx, false, func(q Execer) (err error) {
		out, err = Collect(ctx, q, query, args, func(r Scanner) (shelfmark.UsageCount, error) {
			var c shelfmark.UsageCount
			var month, metric int64
			err := r.Scan(&c.Resource, &month, &metric, &c.N)
			c.Month, c.Metric = int(month), shelfmark.UsageMetric(metric)
			return c, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s"+what+": %w", x.d.Prefix, arg, err)
	}
	return out, nil
}
