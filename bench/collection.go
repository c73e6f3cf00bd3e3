package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// CollectionConfig configures the collection scenario (docs/design.md): Works
// works added to one collection, then its member list read at the start
// and deep in.
type CollectionConfig struct {
	Works   int // default 1,000,000
	Batch   int // works per CreateResources call (default 500)
	Triples int // statements per work (default 54)
	Buckets int // time buckets for flatness (default 20)
	Seed    uint64
	// Progress, when set, is told how many works are stored.
	Progress func(done int)
}

// CollectionResult holds the collection scenario's own figures.
type CollectionResult struct {
	Report      *Report
	FirstPageMS Latency // listing page 1 (100 members)
	DeepPageMS  Latency // listing a page at 90% depth
	DeepOverTop float64 // deep p50 over first-page p50 (target ≤ 1.2)
}

// RunCollection fills one collection through the engine (membership is
// stored on each member, rule R1) and measures how the cost per work and
// the cost of a page of members change with the collection's size.
func RunCollection(ctx context.Context, repo *shelfmark.Repository, c CollectionConfig) (*CollectionResult, error) {
	if c.Works <= 0 {
		c.Works = 1000000
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Triples <= 0 {
		c.Triples = 54
	}
	if c.Buckets <= 0 {
		c.Buckets = 20
	}
	rep := &Report{Scenario: "collection", Backend: repo.Storage().Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"works": c.Works, "batch": c.Batch, "triples": c.Triples}}
	coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
		Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("One large collection")}}})
	if err != nil {
		return nil, err
	}
	per := max(1, c.Works/c.Buckets)
	start := time.Now()
	bucketStart, inBucket := start, 0
	var deepCursor shelfmark.Cursor
	var prevLast shelfmark.ID
	deepAt := c.Works * 9 / 10
	nrs := make([]*shelfmark.NewResource, 0, c.Batch)
	for done := 0; done < c.Works; {
		n := min(c.Batch, c.Works-done)
		nrs = nrs[:0]
		for i := 0; i < n; i++ {
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID},
				Metadata: patentStatements(c.Seed, done+i, c.Triples)})
		}
		out, errs := repo.CreateResources(ctx, nrs)
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("works %d–%d: %w", done+1, done+n, err)
		}
		// the cursor of a page starting at 90% depth is the id of the member
		// just before it (members list by key, and keys rise with creation)
		if deepCursor == "" && done+n > deepAt {
			if i := deepAt - done - 1; i >= 0 {
				deepCursor = shelfmark.Cursor(out[i].ID)
			} else {
				deepCursor = shelfmark.Cursor(prevLast)
			}
		}
		prevLast = out[n-1].ID
		done += n
		inBucket += n
		if inBucket >= per || done == c.Works {
			secs := time.Since(bucketStart).Seconds()
			rep.Steps = append(rep.Steps, Step{Items: int64(inBucket), Seconds: secs, RatePerS: float64(inBucket) / secs})
			bucketStart, inBucket = time.Now(), 0
		}
		if c.Progress != nil {
			c.Progress(done)
		}
	}
	rep.Items, rep.Seconds = int64(c.Works), time.Since(start).Seconds()
	rep.RatePerS = float64(c.Works) / rep.Seconds
	if len(rep.Steps) >= 2 && rep.Steps[0].RatePerS > 0 {
		k := max(1, len(rep.Steps)/10)
		var first, last float64
		for i := 0; i < k; i++ {
			first += rep.Steps[i].RatePerS
			last += rep.Steps[len(rep.Steps)-1-i].RatePerS
		}
		rep.Flatness = last / first
	}
	res := &CollectionResult{Report: rep}
	timeList := func(after shelfmark.Cursor) (Latency, error) {
		var ds []time.Duration
		for i := 0; i < 50; i++ {
			t0 := time.Now()
			p, err := repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: after, Limit: 100})
			if err != nil {
				return Latency{}, err
			}
			if len(p.Items) == 0 {
				return Latency{}, fmt.Errorf("empty page after %q", after)
			}
			ds = append(ds, time.Since(t0))
		}
		return *percentiles(ds), nil
	}
	if res.FirstPageMS, err = timeList(""); err != nil {
		return nil, err
	}
	if res.DeepPageMS, err = timeList(deepCursor); err != nil {
		return nil, err
	}
	if res.FirstPageMS.P50 > 0 {
		res.DeepOverTop = res.DeepPageMS.P50 / res.FirstPageMS.P50
	}
	rep.LatencyMS = res.DeepPageMS
	rep.Params["first_page_p50_ms"], rep.Params["deep_page_p50_ms"], rep.Params["deep_over_first"] = res.FirstPageMS.P50, res.DeepPageMS.P50, res.DeepOverTop
	return res, nil
}
