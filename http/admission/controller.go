// Package admission admits requests by what they cost and who asks, so
// that readers come first when crawlers storm.
//
// Every request has a class (what it costs: a page, a search, search
// inside a book, a PDF, a harvest page, a write…) and a group (who asks:
// the signed-in, anonymous callers, robots by their user agent), and
// within its group a client (a user, an address). Each class has, for
// each group, a budget of requests served at once, of which one client
// may run its share, and for anonymous callers and robots a rate share:
// the requests one client may start a second. A request within its
// shares waits for a slot of a full budget at most Settings.QueueWait,
// then is refused with 503; a request past its client's share waits at
// most Settings.ShareWait for its share, then is refused with 429; both
// refusals say when to retry. The groups have budgets of their own, so a
// signed-in user never waits behind an anonymous storm, and cheap
// requests are never held at all.
//
// Budgets are per server process (several servers each admit their
// own); waiting holds a goroutine and its connection, not a processor.
package admission

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Controller admits requests against the budgets of its Settings. It is
// safe for concurrent use.
type Controller struct {
	s     Settings
	now   func() time.Time
	pools [numGroups][numClasses]*pool
	rates [numGroups][numClasses]*rates
	// expensive is the budget the expensive classes (Expensive) share,
	// for anonymous callers and for robots; nil for the signed-in
	expensive [numGroups]*pool
	held      atomic.Int64 // requests waiting (in a queue, for a share, or before a refusal)
	// refusals by group, class and reason
	refused [numGroups][numClasses][numReasons]atomic.Uint64
}

// Reason names why a request was refused, in Refusal and metrics.
type Reason int

// The reasons.
const (
	ReasonRate      Reason = iota // the client asked faster than its rate share (429)
	ReasonShare                   // the client ran its share of the budget throughout its wait (429)
	ReasonSaturated               // the budget was all in use throughout the wait, or the queue was full (503)
	numReasons
)

var reasonNames = [numReasons]string{"rate", "share", "saturated"}

// String is the reason's name.
func (r Reason) String() string { return reasonNames[r] }

// New returns a Controller of s (defaults for cores processors where s
// is unset), reading time from now (nil: time.Now).
func New(s Settings, cores int, now func() time.Time) *Controller {
	if now == nil {
		now = time.Now
	}
	d := Defaults(cores)
	s = s.merge(d)
	c := &Controller{s: s, now: now}
	for _, g := range Groups() {
		for _, cl := range Classes() {
			limit, share := s.Budgets[cl], s.Shares[cl]
			rate, burst := s.Rates[cl], s.Bursts[cl]
			if g == Robot {
				limit, share, rate, burst = max(1, limit/2), max(1, share/2), rate/2, max(1, burst/2)
			}
			maxWaiting := s.MaxWaiting
			if maxWaiting <= 0 {
				maxWaiting = max(1024, 256*limit)
			}
			reserve := 0
			if g != SignedIn && limit >= 2 {
				reserve = 1 // a slot for light clients (pool.go)
			}
			c.pools[g][cl] = newPool(limit, share, maxWaiting, reserve)
			if g != SignedIn && rate > 0 {
				c.rates[g][cl] = newRates(rate, burst, s.MaxClients)
			}
		}
		if g != SignedIn {
			limit := s.Expensive
			if g == Robot {
				limit = max(1, limit/2)
			}
			reserve := 0
			if limit >= 2 {
				reserve = 1
			}
			c.expensive[g] = newPool(limit, limit, max(1024, 256*limit), reserve)
		}
	}
	return c
}

// Expensive reports the classes whose anonymous requests also share the
// budget Settings.Expensive: those that keep a processor busy for their
// whole time (searches, listings, search inside books, PDFs).
func Expensive(cl Class) bool {
	switch cl {
	case Search, Facet, BookSearch, PDF:
		return true
	}
	return false
}

// Settings returns the settings in force (defaults filled in).
func (c *Controller) Settings() Settings { return c.s }

// Ticket is an admitted request's slot, given back by Done.
type Ticket struct {
	pool, shared *pool
	key          string
	// Waited is how long the request waited to be admitted; Positions
	// how many requests of its class and group were admitted ahead of
	// it while it waited.
	Waited    time.Duration
	Positions int
}

// Done gives the slot back; call it once, when the response is written.
func (t Ticket) Done() {
	if t.shared != nil {
		t.shared.release(t.key)
	}
	if t.pool != nil {
		t.pool.release(t.key)
	}
}

// Refusal is the error of a request not admitted: Status is 429 (past
// the client's share) or 503 (the class is saturated), RetryAfter when
// to ask again.
type Refusal struct {
	Class      Class
	Group      Group
	Reason     Reason
	Status     int
	RetryAfter time.Duration
	// Err is the context's error when the request ended while it waited.
	Err error
}

// Error says what was refused and why.
func (r *Refusal) Error() string {
	switch r.Reason {
	case ReasonRate:
		return fmt.Sprintf("too many %s requests from this client: retry in %s", r.Class, r.RetryAfter)
	case ReasonShare:
		return fmt.Sprintf("this client already has its share of %s requests running: retry in %s", r.Class, r.RetryAfter)
	}
	return fmt.Sprintf("the server is serving as many %s requests as it can: retry in %s", r.Class, r.RetryAfter)
}

// Unwrap returns the context's error, if the request ended waiting.
func (r *Refusal) Unwrap() error { return r.Err }

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1.
func (r *Refusal) RetryAfterSeconds() int64 {
	return max(1, int64(math.Ceil(r.RetryAfter.Seconds())))
}

// Admit admits a request of class cl from client key of group g,
// waiting as the settings say; it returns the request's Ticket, or a
// *Refusal. Cheap requests, and every request when Settings.Off, are
// admitted at once with a Ticket that holds nothing.
func (c *Controller) Admit(ctx context.Context, cl Class, g Group, key string) (Ticket, error) {
	if c == nil || c.s.Off || cl <= Cheap || cl >= numClasses || g < 0 || g >= numGroups {
		return Ticket{}, nil
	}
	start := c.now()
	wait, light, ok := c.rates[g][cl].take(key, start, c.s.ShareWait)
	if !ok {
		return Ticket{}, c.refuse(ctx, cl, g, ReasonRate, wait, c.s.ShareWait)
	} else if wait > 0 {
		if err := c.hold(ctx, wait); err != nil {
			return Ticket{}, c.refuse(ctx, cl, g, ReasonSaturated, 0, 0)
		}
	}
	p := c.pools[g][cl]
	if c.held.Add(1) > int64(c.s.MaxHeld) {
		c.held.Add(-1)
		return Ticket{}, c.refuse(ctx, cl, g, ReasonSaturated, c.s.QueueWait, 0)
	}
	pos, why, err := p.acquire(ctx, key, light, c.s.ShareWait, c.s.QueueWait)
	t := Ticket{pool: p, key: key}
	if why == reasonNone && Expensive(cl) && c.expensive[g] != nil {
		// then the budget the expensive classes share, within what is
		// left of the wait (the class's slot is held meanwhile)
		left := max(c.s.QueueWait-c.now().Sub(start), time.Millisecond)
		var more int
		more, why, err = c.expensive[g].acquire(ctx, key, light, left, left)
		pos += more
		if why != reasonNone {
			why = reasonSaturated // the shared budget has no share of its own
			p.release(key)
		} else {
			t.shared = c.expensive[g]
		}
	}
	c.held.Add(-1)
	switch why {
	case reasonShare:
		return Ticket{}, c.count(&Refusal{Class: cl, Group: g, Reason: ReasonShare, Status: 429, RetryAfter: c.s.ShareWait})
	case reasonSaturated:
		return Ticket{}, c.count(&Refusal{Class: cl, Group: g, Reason: ReasonSaturated, Status: 503, RetryAfter: c.s.QueueWait, Err: err})
	}
	t.Waited, t.Positions = c.now().Sub(start), pos
	return t, nil
}

// refuse refuses a request for reason, after holding it for delay (so a
// client that asks again at once is paced), unless too many are held.
func (c *Controller) refuse(ctx context.Context, cl Class, g Group, reason Reason, retry, delay time.Duration) error {
	status := 429
	if reason == ReasonSaturated {
		status = 503
	}
	r := &Refusal{Class: cl, Group: g, Reason: reason, Status: status, RetryAfter: retry}
	if delay > 0 {
		r.Err = c.hold(ctx, delay)
	}
	return c.count(r)
}

// hold waits d, counted among the held requests; when MaxHeld are held
// already it returns at once.
func (c *Controller) hold(ctx context.Context, d time.Duration) error {
	if c.held.Add(1) > int64(c.s.MaxHeld) {
		c.held.Add(-1)
		return nil
	}
	defer c.held.Add(-1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Controller) count(r *Refusal) *Refusal {
	c.refused[r.Group][r.Class][r.Reason].Add(1)
	return r
}

// Stats is the state of one class's budget for one group.
type Stats struct {
	Class Class
	Group Group
	// Limit and Share are the budget and one client's share of it;
	// Running and Waiting the requests running and queued now.
	Limit, Share, Running, Waiting int
	// Admitted counts requests admitted at once, Queued those admitted
	// after waiting for a slot, Refused those refused by reason (since
	// the start).
	Admitted, Queued uint64
	Refused          [numReasons]uint64
	// Clients is the number of clients whose rate is tracked.
	Clients int
}

// Snapshot returns the state of every class's budget for every group.
func (c *Controller) Snapshot() []Stats {
	if c == nil {
		return nil
	}
	var out []Stats
	for _, g := range Groups() {
		for _, cl := range Classes() {
			ps := c.pools[g][cl].stats()
			st := Stats{Class: cl, Group: g, Limit: ps.limit, Share: ps.share, Running: ps.running, Waiting: ps.waiting,
				Admitted: ps.admitted, Queued: ps.queued, Clients: c.rates[g][cl].size()}
			for r := range numReasons {
				st.Refused[r] = c.refused[g][cl][r].Load()
			}
			out = append(out, st)
		}
	}
	return out
}

// SharedStats is the state of the budget the expensive classes share for
// group g (the zero Stats for the signed-in, who have none).
func (c *Controller) SharedStats(g Group) Stats {
	if c == nil || g < 0 || g >= numGroups || c.expensive[g] == nil {
		return Stats{Group: g}
	}
	ps := c.expensive[g].stats()
	return Stats{Group: g, Limit: ps.limit, Share: ps.share, Running: ps.running, Waiting: ps.waiting, Admitted: ps.admitted, Queued: ps.queued}
}

// Reasons lists the refusal reasons.
func Reasons() []Reason { return []Reason{ReasonRate, ReasonShare, ReasonSaturated} }
