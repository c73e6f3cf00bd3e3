package shelfmark

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// UsageEvent is one use of a resource that a face saw: a work's page
// looked at, or a file's bytes, a work's PDF or ZIP taken.
type UsageEvent struct {
	// ID is the work, or the file whose bytes were taken (counted for
	// its work, when it is an original or access copy).
	ID ID
	// Request marks a retrieval of content; otherwise the event is an
	// investigation only.
	Request bool
	// Session names the user-session: the face's digest of the session
	// cookie, or of the client's address and user agent. The counter
	// adds the hour, as COUNTER does for sessions without an id.
	Session string
	At      time.Time
}

// COUNTER's rules as the counter applies them.
const (
	// UsageDoubleClick is COUNTER's double-click window: the same
	// session using the same item the same way again within it counts
	// once.
	UsageDoubleClick = 30 * time.Second
	// maxUsageClicks and maxUsageSessions bound the clicks and the
	// session-item pairs the counter remembers (when full it forgets
	// them, counting a repeat as new: a bounded over-count, never a
	// growing memory).
	maxUsageClicks   = 200_000
	maxUsageSessions = 500_000
	// maxUsagePending bounds the counts held between flushes; past it
	// the counter asks for a flush at once.
	maxUsagePending = 50_000
)

// UsageCounter counts uses of works by COUNTER Release 5.1's rules,
// off the request path: Record takes an event in memory (a map update
// under a lock; it never touches storage), and Flush writes what was
// counted since the last flush as additions to the stored counts, for
// each work, each collection it is a direct member of, and the whole
// repository, in a fixed number of statements. Robots are left out by
// the face, which knows the user agent (the COUNTER robots list). Each
// server counts its own requests; the additions from several servers
// sum in storage (a session that uses two servers in one hour may count
// as unique on both). Run flushes on a timer.
type UsageCounter struct {
	repo  *Repository
	store UsageStore
	log   *slog.Logger
	mu    sync.Mutex
	// clicks holds the last time each (session, id, kind) was counted;
	// pending the totals by id since the last flush, and cands the
	// (session-hour, id, metric) that may be unique, by month; seen the
	// (session-hour, work, metric) counted as unique (a file's id
	// becomes its work's only at the flush, so uniqueness is decided
	// there).
	clicks  map[usageClick]time.Time
	pending map[usagePending]int64
	cands   map[usageUnique]int
	seen    map[usageUnique]struct{}
	// full is signalled when pending passes maxUsagePending.
	full chan struct{}
}

type usageClick struct {
	session string
	id      ID
	request bool
}

type usageUnique struct {
	session string
	hour    int64
	id      ID    // the id recorded (in cands) or the work's key (in seen)
	work    int64 // in seen
	metric  UsageMetric
}

type usagePending struct {
	id     ID
	month  int
	metric UsageMetric
}

// NewUsageCounter returns the counter of r, or an EUNAVAILABLE error when
// r's storage keeps no usage counts.
func (r *Repository) NewUsageCounter() (*UsageCounter, error) {
	store, ok := r.store.(UsageStore)
	if !ok {
		return nil, Errorf(EUNAVAILABLE, "This storage keeps no usage counts.")
	}
	return &UsageCounter{repo: r, store: store, log: r.log, clicks: map[usageClick]time.Time{}, seen: map[usageUnique]struct{}{},
		pending: map[usagePending]int64{}, cands: map[usageUnique]int{}, full: make(chan struct{}, 1)}, nil
}

// Record counts ev: a total unless the same session used the same item
// the same way within UsageDoubleClick, and a unique the first time in
// the session's hour; a request counts as an investigation too. It holds
// a lock for a few map updates and never waits on storage.
func (u *UsageCounter) Record(ev UsageEvent) {
	if ev.ID == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	click := usageClick{ev.Session, ev.ID, ev.Request}
	if last, ok := u.clicks[click]; ok && ev.At.Sub(last) >= 0 && ev.At.Sub(last) < UsageDoubleClick {
		u.clicks[click] = ev.At
		return
	}
	if len(u.clicks) >= maxUsageClicks {
		u.pruneClicks(ev.At)
	}
	u.clicks[click] = ev.At
	month := UsageMonth(ev.At)
	hour := ev.At.Unix() / 3600
	count := func(total, unique UsageMetric) {
		u.pending[usagePending{ev.ID, month, total}]++
		u.cands[usageUnique{session: ev.Session, hour: hour, id: ev.ID, metric: unique}] = month
	}
	count(TotalInvestigations, UniqueInvestigations)
	if ev.Request {
		count(TotalRequests, UniqueRequests)
	}
	if len(u.pending)+len(u.cands) >= maxUsagePending {
		select {
		case u.full <- struct{}{}:
		default:
		}
	}
}

// pruneClicks forgets the clicks older than the double-click window (all
// of them when none is).
func (u *UsageCounter) pruneClicks(now time.Time) {
	for k, t := range u.clicks {
		if now.Sub(t) >= UsageDoubleClick {
			delete(u.clicks, k)
		}
	}
	if len(u.clicks) >= maxUsageClicks {
		clear(u.clicks)
	}
}

// Flush writes the counts recorded since the last flush: each event's
// work (a file's event goes to its work when the file is an original or
// an access copy, and is dropped otherwise: a thumbnail or a tile is no
// request of the work), each collection the work is a direct member of,
// and the repository. It reads, whatever the number of events, the rows
// of the ids named (and of their file sets), the files' uses and the
// works' collections (at most five statements), then adds the counts in
// one transaction. Ids that name nothing live are dropped. Counts that
// could not be written are kept for the next flush.
func (u *UsageCounter) Flush(ctx context.Context) error {
	u.mu.Lock()
	pending, cands := u.pending, u.cands
	u.pending, u.cands = map[usagePending]int64{}, map[usageUnique]int{}
	u.mu.Unlock()
	if len(pending) == 0 && len(cands) == 0 {
		return nil
	}
	counts, seen, err := u.resolve(ctx, pending, cands)
	if err == nil {
		err = u.store.AddUsage(ctx, counts)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		for k, n := range pending {
			u.pending[k] += n
		}
		for k, m := range cands {
			u.cands[k] = m
		}
		return fmt.Errorf("usage: flush %d counts: %w", len(pending), err)
	}
	for _, k := range seen {
		if len(u.seen) >= maxUsageSessions {
			clear(u.seen)
		}
		u.seen[k] = struct{}{}
	}
	return nil
}

// isSeen reports whether k was counted as unique already.
func (u *UsageCounter) isSeen(k usageUnique) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.seen[k]
	return ok
}

// resolve turns the pending counts by id into counts by work, collection
// and repository, and the unique candidates into uniques of works not
// counted before (seen: those to remember once written).
func (u *UsageCounter) resolve(ctx context.Context, pending map[usagePending]int64, cands map[usageUnique]int) ([]UsageCount, []usageUnique, error) {
	keyOf := map[ID]int64{}
	var keys []int64
	name := func(id ID) {
		if _, ok := keyOf[id]; ok {
			return
		}
		key, err := u.repo.ids.Key(id)
		if err != nil {
			keyOf[id] = 0
			return
		}
		keyOf[id] = key
		keys = append(keys, key)
	}
	for k := range pending {
		name(k.id)
	}
	for k := range cands {
		name(k.id)
	}
	work := map[int64]int64{} // a key named -> the work counted
	var colls map[int64][]int64
	err := u.repo.store.View(ctx, func(tx ReadTx) error {
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		var filesets []int64
		files := map[int64]*ResourceRow{}
		for _, row := range rows {
			switch {
			case row.Deleted != nil:
			case row.Kind == KindWork:
				work[row.Key] = row.Key
			case row.Kind == KindFile && row.Parent != 0:
				files[row.Key] = row
				filesets = append(filesets, row.Parent)
			}
		}
		if len(filesets) > 0 {
			sets, err := tx.Resources(ctx, filesets)
			if err != nil {
				return err
			}
			parent := map[int64]int64{}
			for _, fs := range sets {
				if fs.Deleted == nil && fs.Kind == KindFileSet {
					parent[fs.Key] = fs.Parent
				}
			}
			frs, err := tx.ChildFiles(ctx, filesets, MaxChildFiles)
			if err != nil {
				return err
			}
			for _, fr := range frs {
				f := files[fr.Row.Key]
				if f == nil || fr.File == nil {
					continue
				}
				switch fr.File.Use {
				case UseOriginal, "", UseAccess:
					if w := parent[f.Parent]; w != 0 {
						work[f.Key] = w
					}
				}
			}
		}
		works := make([]int64, 0, len(work))
		for _, w := range work {
			works = append(works, w)
		}
		colls, err = tx.MemberOfMany(ctx, works)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	type target struct {
		resource int64
		month    int
		metric   UsageMetric
	}
	sum := map[target]int64{}
	for k, n := range pending {
		w, ok := work[keyOf[k.id]]
		if !ok {
			continue
		}
		sum[target{w, k.month, k.metric}] += n
		sum[target{UsageRepository, k.month, k.metric}] += n
		for _, c := range colls[w] {
			sum[target{c, k.month, k.metric}] += n
		}
	}
	var seen []usageUnique
	once := map[usageUnique]bool{}
	for k, month := range cands {
		w, ok := work[keyOf[k.id]]
		if !ok {
			continue
		}
		s := usageUnique{session: k.session, hour: k.hour, work: w, metric: k.metric}
		if once[s] || u.isSeen(s) {
			continue
		}
		once[s] = true
		seen = append(seen, s)
		sum[target{w, month, k.metric}]++
		sum[target{UsageRepository, month, k.metric}]++
		for _, c := range colls[w] {
			sum[target{c, month, k.metric}]++
		}
	}
	out := make([]UsageCount, 0, len(sum))
	for t, n := range sum {
		out = append(out, UsageCount{Resource: t.resource, Month: t.month, Metric: t.metric, N: n})
	}
	return out, seen, nil
}

// Run flushes every interval, and at once when many counts wait, until
// ctx ends; then it flushes a last time (with a context of its own,
// bounded by a few seconds). A failed flush is logged and tried again.
func (u *UsageCounter) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := u.Flush(fctx); err != nil {
				u.log.Warn("usage: the last flush failed", "err", err)
			}
			cancel()
			return
		case <-t.C:
		case <-u.full:
		}
		if err := u.Flush(ctx); err != nil && ctx.Err() == nil {
			u.log.Warn("usage: flush failed; the counts are kept for the next", "err", err)
		}
	}
}
