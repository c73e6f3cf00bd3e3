package storagetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// ElectionBackend opens electors on one database for RunElection.
type ElectionBackend struct {
	// Open returns a new elector on the database, as another process
	// would open it, and kill, which ends that elector as the death of
	// its process would (its connections or files closed without a
	// word). The suite calls kill at the end of each test too, so kill
	// must be safe to call twice.
	Open func(t *testing.T) (e shelfmark.Elector, kill func())
	// Sever, when set, makes the database drop every hold e has while
	// e's process lives on (PostgreSQL ends its sessions); nil where a
	// living process cannot lose a leadership.
	Sever func(t *testing.T, e shelfmark.Elector)
}

// electionDeadline bounds every wait of the suite: generous, for a busy
// machine; a working backend passes in about a second per wait.
const electionDeadline = 60 * time.Second

// RunElection runs the leader election suite against the backend that
// open sets up (on a fresh database for each test).
func RunElection(t *testing.T, open func(t *testing.T) ElectionBackend) {
	tests := []struct {
		name string
		fn   func(*testing.T, ElectionBackend)
	}{
		{"OneLeader", testOneLeader},
		{"NamesApart", testNamesApart},
		{"Resign", testResign},
		{"TakeoverAfterDeath", testTakeoverAfterDeath},
		{"LossCancels", testLossCancels},
		{"LeadOnce", testLeadOnce},
		{"LeadReturns", testLeadReturns},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// openElector opens an elector that is killed when the test ends.
func openElector(t *testing.T, b ElectionBackend) (shelfmark.Elector, func()) {
	e, kill := b.Open(t)
	t.Cleanup(kill)
	return e, kill
}

// campaign campaigns for name and fails the test unless it leads within
// the deadline.
func campaign(t *testing.T, e shelfmark.Elector, name string) shelfmark.Leadership {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), electionDeadline)
	defer cancel()
	l, err := e.Campaign(ctx, name)
	if err != nil {
		t.Fatalf("campaign for %s: %v", name, err)
	}
	return l
}

// background campaigns for name in a goroutine; the channel yields the
// leadership (or nil when the campaign failed or its context ended).
func background(t *testing.T, e shelfmark.Elector, name string) (<-chan shelfmark.Leadership, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := make(chan shelfmark.Leadership, 1)
	go func() {
		l, err := e.Campaign(ctx, name)
		if err != nil {
			l = nil
		}
		ch <- l
	}()
	return ch, cancel
}

// mustNotLead checks that a campaign for name does not win within a few
// of the backend's polls (2.5 s): a check of exclusion, not of speed.
func mustNotLead(t *testing.T, e shelfmark.Elector, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	l, err := e.Campaign(ctx, name)
	if err == nil {
		l.Resign()
		t.Fatalf("a second elector leads %s while the first holds it", name)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("campaign for %s: %v, want the context's deadline", name, err)
	}
}

// waitClosed fails the test unless ch closes within the deadline.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(electionDeadline):
		t.Fatalf("%s: not within %s", what, electionDeadline)
	}
}

func testOneLeader(t *testing.T, b ElectionBackend) {
	e1, _ := openElector(t, b)
	e2, _ := openElector(t, b)
	l := campaign(t, e1, "oai")
	mustNotLead(t, e2, "oai")
	select {
	case <-l.Lost():
		t.Fatal("the leader lost its leadership while nobody took it")
	default:
	}
	l.Resign()
}

func testNamesApart(t *testing.T, b ElectionBackend) {
	e1, _ := openElector(t, b)
	e2, _ := openElector(t, b)
	a := campaign(t, e1, "oai")
	c := campaign(t, e2, "search") // another name: at once, though e1 leads one
	mustNotLead(t, e2, "oai")
	mustNotLead(t, e1, "search")
	a.Resign()
	c.Resign()
}

func testResign(t *testing.T, b ElectionBackend) {
	e1, _ := openElector(t, b)
	e2, _ := openElector(t, b)
	l := campaign(t, e1, "access")
	ch, _ := background(t, e2, "access")
	l.Resign()
	waitClosed(t, l.Lost(), "Lost after Resign")
	l.Resign() // twice is harmless
	select {
	case l2 := <-ch:
		if l2 == nil {
			t.Fatal("the second campaign failed")
		}
		l2.Resign()
	case <-time.After(electionDeadline):
		t.Fatal("no takeover after the leader resigned")
	}
}

func testTakeoverAfterDeath(t *testing.T, b ElectionBackend) {
	e1, kill1 := openElector(t, b)
	e2, _ := openElector(t, b)
	l := campaign(t, e1, "oai")
	ch, _ := background(t, e2, "oai")
	kill1()
	select {
	case l2 := <-ch:
		if l2 == nil {
			t.Fatal("the second campaign failed")
		}
		defer l2.Resign()
	case <-time.After(electionDeadline):
		t.Fatal("no takeover after the leader died")
	}
	waitClosed(t, l.Lost(), "the dead leader's Lost")
	// the dead elector campaigns no more
	ctx, cancel := context.WithTimeout(context.Background(), electionDeadline)
	defer cancel()
	if l3, err := e1.Campaign(ctx, "search"); err == nil {
		l3.Resign()
		t.Fatal("a killed elector won a campaign")
	}
}

func testLossCancels(t *testing.T, b ElectionBackend) {
	e1, kill1 := openElector(t, b)
	e2, _ := openElector(t, b)
	var changes []bool
	var mu sync.Mutex
	started := make(chan struct{}, 10)
	cancelled := make(chan struct{}, 10)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- shelfmark.Lead(ctx, e1, "oai", func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return ctx.Err()
		}, shelfmark.LeadOptions{Retry: 100 * time.Millisecond, OnChange: func(name string, leading bool) {
			mu.Lock()
			changes = append(changes, leading)
			mu.Unlock()
		}})
	}()
	waitFor(t, started, "fn to start under leadership")
	if b.Sever != nil {
		// the process lives on: fn is cancelled, and Lead campaigns
		// again and wins (nobody else campaigns)
		b.Sever(t, e1)
		waitFor(t, cancelled, "fn's context to end after the loss")
		waitFor(t, started, "fn to start again after the leadership came back")
	}
	// the other elector waits; the death of the first hands it over
	ch, _ := background(t, e2, "oai")
	kill1()
	waitFor(t, cancelled, "fn's context to end after the elector died")
	select {
	case l2 := <-ch:
		if l2 == nil {
			t.Fatal("the second campaign failed")
		}
		l2.Resign()
	case <-time.After(electionDeadline):
		t.Fatal("no takeover")
	}
	stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Lead returned %v, want context.Canceled", err)
		}
	case <-time.After(electionDeadline):
		t.Fatal("Lead did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) < 2 || !changes[0] || changes[1] {
		t.Fatalf("OnChange saw %v, want true, false, …", changes)
	}
	for i := range changes {
		if changes[i] != (i%2 == 0) {
			t.Fatalf("OnChange saw %v: gains and losses must alternate", changes)
		}
	}
}

// waitFor fails the test unless ch yields within the deadline.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(electionDeadline):
		t.Fatalf("waiting for %s: not within %s", what, electionDeadline)
	}
}

func testLeadOnce(t *testing.T, b ElectionBackend) {
	// three electors run Lead for one name: fn never runs in two at once
	// (the backends' overlap needs a loss; here nobody loses), and when
	// the leader dies another runs it
	var running, most, runs atomic.Int64
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	kills := make([]func(), 3)
	var leader atomic.Int64
	leader.Store(-1)
	gained := make(chan struct{}, 10)
	for i := range kills {
		var e shelfmark.Elector
		e, kills[i] = openElector(t, b)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = shelfmark.Lead(ctx, e, "search", func(ctx context.Context) error {
				n := running.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				runs.Add(1)
				leader.Store(int64(i))
				gained <- struct{}{}
				<-ctx.Done()
				running.Add(-1)
				return ctx.Err()
			}, shelfmark.LeadOptions{Retry: 100 * time.Millisecond})
		}()
	}
	waitFor(t, gained, "a leader")
	mustNotLead(t, noElector{}, "") // give the others a few polls to try
	if m := most.Load(); m != 1 {
		t.Fatalf("fn ran in %d electors at once", m)
	}
	// (after a kill that leaves the process alive, the killed one's fn
	// may overlap its successor's for the backend's overlap bound)
	first := leader.Load()
	kills[first]()
	waitFor(t, gained, "a new leader after the first died")
	if second := leader.Load(); second == first {
		t.Fatalf("elector %d leads again after its death", first)
	}
	stop()
	wg.Wait()
	if r := runs.Load(); r != 2 {
		t.Fatalf("fn started %d times, want 2", r)
	}
}

// noElector never wins a campaign: mustNotLead on it just waits.
type noElector struct{}

func (noElector) Campaign(ctx context.Context, _ string) (shelfmark.Leadership, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func testLeadReturns(t *testing.T, b ElectionBackend) {
	// fn that fails while it leads: Lead resigns and returns its error;
	// fn that ends by itself: Lead resigns and returns nil. Either way
	// another elector may lead at once.
	e1, _ := openElector(t, b)
	e2, _ := openElector(t, b)
	boom := errors.New("boom")
	var reported error
	err := shelfmark.Lead(context.Background(), e1, "access", func(context.Context) error { return boom },
		shelfmark.LeadOptions{OnError: func(_ string, err error) { reported = err }})
	if !errors.Is(err, boom) || !errors.Is(reported, boom) {
		t.Fatalf("Lead returned %v (reported %v), want fn's error", err, reported)
	}
	campaign(t, e2, "access").Resign()
	if err := shelfmark.Lead(context.Background(), e1, "access", func(context.Context) error { return nil }, shelfmark.LeadOptions{}); err != nil {
		t.Fatalf("Lead returned %v after fn ended", err)
	}
	campaign(t, e2, "access").Resign()
	// a context that ends while Lead campaigns: Lead returns its error
	l := campaign(t, e2, "access")
	defer l.Resign()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	ran := false
	if err := shelfmark.Lead(ctx, e1, "access", func(context.Context) error { ran = true; return nil }, shelfmark.LeadOptions{}); !errors.Is(err, context.DeadlineExceeded) || ran {
		t.Fatalf("Lead returned %v (fn ran: %v) while another led", err, ran)
	}
}
