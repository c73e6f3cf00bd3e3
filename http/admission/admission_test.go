package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// hour is a wait no test reaches: a request that waits is let in by a
// release, never by its timer.
const hour = time.Hour

// TestPoolShareAndBudget: a client runs at most its share; the budget
// holds for all clients together; a released slot goes to the waiter
// whose client runs the fewest, before a client that already runs more,
// whatever their order of arrival.
func TestPoolShareAndBudget(t *testing.T) {
	p := newPool(3, 2, 100, 0)
	ctx := context.Background()
	for range 2 {
		if _, why, _ := p.acquire(ctx, "storm", 1, hour, hour); why != reasonNone {
			t.Fatalf("within share: %v", why)
		}
	}
	// the storm's third waits for its share; the reader takes the last slot at once
	stormWaits := make(chan int, 1)
	go func() {
		pos, why, _ := p.acquire(ctx, "storm", 1, hour, hour)
		if why != reasonNone {
			t.Errorf("storm's third: %v", why)
		}
		stormWaits <- pos
	}()
	waitFor(t, func() bool { return p.stats().waiting == 1 })
	if pos, why, _ := p.acquire(ctx, "reader", 1, hour, hour); why != reasonNone || pos != 0 {
		t.Fatalf("reader with a slot free: %v after %d positions", why, pos)
	}
	// full: a second reader waits behind nobody it should
	readerWaits := make(chan int, 1)
	go func() {
		pos, why, _ := p.acquire(ctx, "reader2", 1, hour, hour)
		if why != reasonNone {
			t.Errorf("reader2: %v", why)
		}
		readerWaits <- pos
	}()
	waitFor(t, func() bool { return p.stats().waiting == 2 })
	// the storm gives one back: its own waiter would fit its share again,
	// but reader2 runs nothing and goes first
	p.release("storm")
	if pos := <-readerWaits; pos != 0 {
		t.Errorf("reader2 waited %d positions behind the storm", pos)
	}
	p.release("reader")
	if pos := <-stormWaits; pos != 2 {
		t.Errorf("storm's third: %d positions, want 2 (the readers')", pos)
	}
	if st := p.stats(); st.running != 3 || st.waiting != 0 || st.admitted != 3 || st.queued != 2 {
		t.Errorf("stats %+v", st)
	}
	p.release("storm")
	p.release("storm")
	p.release("reader2")
	p.release("nobody") // not held: nothing happens
	if st := p.stats(); st.running != 0 || len(p.clients) != 0 {
		t.Errorf("after release: %+v, %d clients kept", st, len(p.clients))
	}
}

// TestPoolRefusals: a client past its share is refused with reasonShare
// at the end of its wait, one within its share of a full pool with
// reasonSaturated, and a full queue refuses at once.
func TestPoolRefusals(t *testing.T) {
	p := newPool(2, 1, 1, 0)
	ctx := context.Background()
	if _, why, _ := p.acquire(ctx, "a", 1, hour, hour); why != reasonNone {
		t.Fatal(why)
	}
	if _, why, _ := p.acquire(ctx, "a", 1, time.Millisecond, hour); why != reasonShare {
		t.Errorf("past share: %v, want share", why)
	}
	if _, why, _ := p.acquire(ctx, "b", 1, hour, hour); why != reasonNone {
		t.Fatal(why)
	}
	if _, why, _ := p.acquire(ctx, "c", 1, hour, time.Millisecond); why != reasonSaturated {
		t.Errorf("full: %v, want saturated", why)
	}
	// one waits; the queue (of 1) is full for the next
	done := make(chan reason)
	cctx, cancel := context.WithCancel(ctx)
	go func() { _, why, _ := p.acquire(cctx, "d", 1, hour, hour); done <- why }()
	waitFor(t, func() bool { return p.stats().waiting == 1 })
	if _, why, _ := p.acquire(ctx, "e", 1, hour, hour); why != reasonSaturated {
		t.Errorf("queue full: %v, want saturated at once", why)
	}
	cancel()
	if why := <-done; why != reasonSaturated {
		t.Errorf("cancelled: %v", why)
	}
	if st := p.stats(); st.waiting != 0 || st.running != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestPoolLightFirst: among waiters whose clients run as many, the
// lightest (the fullest rate share) goes first, whatever the order of
// arrival.
func TestPoolLightFirst(t *testing.T) {
	p := newPool(1, 1, 100, 0)
	ctx := context.Background()
	if _, why, _ := p.acquire(ctx, "x", 1, hour, hour); why != reasonNone {
		t.Fatal(why)
	}
	order := make(chan string, 3)
	for i, c := range []struct {
		key   string
		light float64
	}{{"heavy", 0}, {"middling", 0.4}, {"reader", 0.9}} {
		go func() {
			if _, why, _ := p.acquire(ctx, c.key, c.light, hour, hour); why == reasonNone {
				order <- c.key
				p.release(c.key)
			}
		}()
		waitFor(t, func() bool { return p.stats().waiting == i+1 })
	}
	p.release("x")
	for _, want := range []string{"reader", "middling", "heavy"} {
		if got := <-order; got != want {
			t.Errorf("%s went before %s", got, want)
		}
	}
}

// TestRates: a client starts burst requests at once, then rate a second;
// a wait within the bound is reserved, a longer one refused without
// taking; another client has its own bucket.
func TestRates(t *testing.T) {
	r := newRates(2, 3, 16)
	now := time.Unix(1000, 0)
	for i := range 3 {
		if w, _, ok := r.take("a", now, 0); !ok || w != 0 {
			t.Fatalf("burst %d: %v %v", i, w, ok)
		}
	}
	if w, _, ok := r.take("a", now, 0); ok || w != 500*time.Millisecond {
		t.Errorf("past burst without waiting: %v %v", w, ok)
	}
	if w, _, ok := r.take("a", now, time.Second); !ok || w != 500*time.Millisecond {
		t.Errorf("past burst, waiting: %v %v", w, ok)
	}
	if w, _, ok := r.take("a", now, time.Second); !ok || w != time.Second {
		t.Errorf("next reserved: %v %v", w, ok)
	}
	if _, _, ok := r.take("a", now, time.Second); ok {
		t.Error("a third reservation fit within a second")
	}
	if _, _, ok := r.take("b", now, 0); !ok {
		t.Error("another client shares a's bucket")
	}
	if _, _, ok := r.take("a", now.Add(2*time.Second), 0); !ok {
		t.Error("no token after two seconds")
	}
	// a new client is light enough for a reserved slot, but lighter still
	// is one the server knows, whose bucket filled up while it paused
	if _, light, _ := r.take("c", now, 0); light != lightAt {
		t.Errorf("a new client's light %v, want %v", light, lightAt)
	}
	if _, light, _ := r.take("c", now.Add(time.Minute), 0); light != 1 {
		t.Errorf("a known client after a pause: light %v, want 1", light)
	}
}

// TestRatesBounded: the clients tracked never pass maxClients; clients
// that paused are swept, and while none has, new ones share a bucket.
func TestRatesBounded(t *testing.T) {
	r := newRates(1, 1, 16)
	now := time.Unix(1000, 0)
	for i := range 100 {
		r.take(fmt.Sprint("c", i), now, 0)
		if n := r.size(); n > 16 {
			t.Fatalf("%d clients tracked", n)
		}
	}
	// all 16 (15 and the overflow) spent their token: the overflow is
	// empty, so the 101st new client is refused as they are
	if _, _, ok := r.take("new", now, 0); ok {
		t.Error("a client past the bound got a bucket of its own")
	}
	// two seconds on, every bucket is full again and is swept
	if _, _, ok := r.take("later", now.Add(2*time.Second), 0); !ok {
		t.Error("no room after the sweep")
	}
	if n := r.size(); n != 1 {
		t.Errorf("%d clients after the sweep, want 1", n)
	}
}

// TestControllerGroups counts in queue positions that a saturating
// anonymous client cannot delay a signed-in one, nor another anonymous
// client, nor a cheap request: the signed-in caller's budget is its own
// (0 positions), the light anonymous client goes ahead of every waiting
// request of the storm (0 positions), cheap requests hold nothing.
func TestControllerGroups(t *testing.T) {
	s := Settings{Budgets: map[Class]int{Search: 2}, Shares: map[Class]int{Search: 2},
		Rates: map[Class]float64{Search: 0}, Expensive: 100, QueueWait: hour, ShareWait: hour}
	c := New(s, 2, nil)
	ctx := context.Background()
	var storm []Ticket
	for _, a := range []string{"ip:10.0.0.1", "ip:10.0.0.2"} { // each alone in the pool as it arrives
		tk, err := c.Admit(ctx, Search, Anonymous, a)
		if err != nil {
			t.Fatal(err)
		}
		storm = append(storm, tk)
	}
	// 20 more from the storm wait
	var wg sync.WaitGroup
	var mu sync.Mutex
	var held []Ticket
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, err := c.Admit(ctx, Search, Anonymous, "ip:10.0.0.1")
			if err == nil {
				mu.Lock()
				held = append(held, tk)
				mu.Unlock()
			}
		}()
	}
	waitFor(t, func() bool { return snap(c, Search, Anonymous).Waiting == 20 })
	tk, err := c.Admit(ctx, Search, SignedIn, "u:7")
	if err != nil || tk.Positions != 0 || tk.Waited > 0 && snap(c, Search, SignedIn).Queued != 0 {
		t.Fatalf("signed-in beside a storm: %v, %d positions", err, tk.Positions)
	}
	tk.Done()
	if tk, err := c.Admit(ctx, Cheap, Anonymous, "ip:10.0.0.1"); err != nil || tk.pool != nil {
		t.Fatalf("cheap: %v", err)
	}
	reader := make(chan Ticket)
	go func() {
		tk, err := c.Admit(ctx, Search, Anonymous, "ip:192.0.2.9")
		if err != nil {
			t.Error(err)
		}
		reader <- tk
	}()
	waitFor(t, func() bool { return snap(c, Search, Anonymous).Waiting == 21 })
	storm[0].Done()
	rt := <-reader
	if rt.Positions != 0 {
		t.Errorf("the reader waited %d positions behind the storm", rt.Positions)
	}
	rt.Done()
	storm[1].Done()
	for {
		mu.Lock()
		n := len(held)
		var next Ticket
		if n > 0 {
			next, held = held[0], held[1:]
		}
		mu.Unlock()
		if n == 0 {
			if snap(c, Search, Anonymous).Waiting == 0 && snap(c, Search, Anonymous).Running == 0 {
				break
			}
			time.Sleep(time.Millisecond)
			continue
		}
		next.Done()
	}
	wg.Wait()
}

// TestControllerRefusals: past the rate share a request is refused with
// 429 and a Retry-After of the time its next token needs; a saturated
// class is 503; refusals are counted; robots get half the budget.
func TestControllerRefusals(t *testing.T) {
	now := time.Unix(1000, 0)
	s := Settings{Budgets: map[Class]int{PDF: 2}, Shares: map[Class]int{PDF: 2}, Rates: map[Class]float64{PDF: 0.1},
		Bursts: map[Class]float64{PDF: 1}, QueueWait: time.Millisecond, ShareWait: time.Millisecond}
	c := New(s, 2, func() time.Time { return now })
	ctx := context.Background()
	tk, err := c.Admit(ctx, PDF, Anonymous, "a")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Admit(ctx, PDF, Anonymous, "a")
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Status != 429 || ref.Reason != ReasonRate || ref.RetryAfterSeconds() != 10 {
		t.Fatalf("past rate: %v (%+v)", err, ref)
	}
	tk.Done()
	if st := snap(c, PDF, Robot); st.Limit != 1 {
		t.Errorf("robots' PDF budget %d, want 1", st.Limit)
	}
	r1, err := c.Admit(ctx, PDF, Robot, "r1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Admit(ctx, PDF, Robot, "r2")
	if !errors.As(err, &ref) || ref.Status != 503 || ref.Reason != ReasonSaturated || ref.RetryAfterSeconds() < 1 {
		t.Fatalf("saturated: %v", err)
	}
	r1.Done()
	if st := snap(c, PDF, Anonymous); st.Refused[ReasonRate] != 1 || st.Admitted != 1 {
		t.Errorf("anonymous PDF stats %+v", st)
	}
	if st := snap(c, PDF, Robot); st.Refused[ReasonSaturated] != 1 {
		t.Errorf("robot PDF stats %+v", st)
	}
	// off: everything passes
	off := New(Settings{Off: true}, 2, nil)
	for range 100 {
		if _, err := off.Admit(ctx, PDF, Anonymous, "a"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRobots: user agents on the COUNTER list (and extra patterns) are
// robots, browsers are not.
func TestRobots(t *testing.T) {
	r, err := NewRobots("^MyHarvester/")
	if err != nil {
		t.Fatal(err)
	}
	for ua, want := range map[string]bool{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)": true,
		"python-requests/2.31": true,
		"curl/8.5.0":           true,
		"":                     true,
		"myharvester/1.0":      true,
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0":                                             false,
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15": false,
	} {
		if got := r.Is(ua); got != want {
			t.Errorf("%q: robot %v, want %v", ua, got, want)
		}
		if got := r.Is(ua); got != want {
			t.Errorf("%q cached: robot %v", ua, got)
		}
	}
	if _, err := NewRobots("(unclosed"); err == nil {
		t.Error("a bad pattern was taken")
	}
}

// TestParseAssignments reads CLASS=VALUE settings and refuses the rest.
func TestParseAssignments(t *testing.T) {
	m := map[Class]int{}
	if err := ParseAssignments([]string{"search=4, pdf=1", "book_search=3"}, m, PositiveInt); err != nil {
		t.Fatal(err)
	}
	if m[Search] != 4 || m[PDF] != 1 || m[BookSearch] != 3 {
		t.Errorf("%v", m)
	}
	for _, bad := range []string{"search", "nosuch=1", "search=0", "cheap=3", "search=x"} {
		if err := ParseAssignments([]string{bad}, map[Class]int{}, PositiveInt); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
	f := map[Class]float64{}
	if err := ParseAssignments([]string{"pdf=0.5,search=0"}, f, NonNegativeFloat); err != nil || f[PDF] != 0.5 {
		t.Errorf("%v %v", f, err)
	}
}

func snap(c *Controller, cl Class, g Group) Stats {
	for _, s := range c.Snapshot() {
		if s.Class == cl && s.Group == g {
			return s
		}
	}
	return Stats{}
}

// waitFor waits for cond, which other goroutines make true (bounded: a
// test that never gets there fails after a minute).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestControllerExpensive: anonymous searches, listings and book searches
// together run at most Settings.Expensive at once, whatever each class's
// own budget; a request that finds it full waits and is refused 503
// (its class's slot given back); the signed-in have no such cap.
func TestControllerExpensive(t *testing.T) {
	s := Settings{Expensive: 2, Rates: map[Class]float64{Search: 0, Facet: 0, BookSearch: 0},
		QueueWait: 10 * time.Millisecond, ShareWait: 10 * time.Millisecond}
	c := New(s, 8, nil)
	ctx := context.Background()
	a, err := c.Admit(ctx, Search, Anonymous, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Admit(ctx, BookSearch, Anonymous, "b")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Admit(ctx, Facet, Anonymous, "c")
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Status != 503 {
		t.Fatalf("a third expensive request: %v", err)
	}
	if st := snap(c, Facet, Anonymous); st.Running != 0 {
		t.Errorf("the refused request kept its class's slot: %+v", st)
	}
	if _, err := c.Admit(ctx, Page, Anonymous, "c"); err != nil {
		t.Errorf("a page beside them: %v", err)
	}
	for i := range 4 {
		if _, err := c.Admit(ctx, Search, SignedIn, fmt.Sprint("u", i)); err != nil {
			t.Errorf("signed-in search %d: %v", i, err)
		}
	}
	if st := c.SharedStats(Anonymous); st.Running != 2 || st.Limit != 2 {
		t.Errorf("shared budget %+v", st)
	}
	a.Done()
	b.Done()
	if st := c.SharedStats(Anonymous); st.Running != 0 {
		t.Errorf("after Done: %+v", st)
	}
	if st := c.SharedStats(Robot); st.Limit != 1 {
		t.Errorf("robots' shared budget %d, want 1", st.Limit)
	}
}

// TestPoolReserve: heavy clients (their rate share less than nine tenths full)
// share all but the reserved slot; a light one arriving takes it at once
// while a heavy one waits, which it keeps waiting until a heavy slot
// frees.
func TestPoolReserve(t *testing.T) {
	p := newPool(2, 2, 100, 1)
	ctx := context.Background()
	if _, why, _ := p.acquire(ctx, "storm1", 0.1, hour, hour); why != reasonNone {
		t.Fatal(why)
	}
	heavy := make(chan int, 1)
	go func() {
		pos, why, _ := p.acquire(ctx, "storm2", 0.1, hour, hour)
		if why != reasonNone {
			t.Error(why)
		}
		heavy <- pos
	}()
	waitFor(t, func() bool { return p.stats().waiting == 1 })
	if pos, why, _ := p.acquire(ctx, "reader", 0.9, hour, hour); why != reasonNone || pos != 0 {
		t.Fatalf("reader: %v, %d positions", why, pos)
	}
	p.release("reader") // the reserved slot frees (dispatched within release): still not the heavy one's
	if st := p.stats(); st.waiting != 1 || st.running != 1 {
		t.Fatalf("a heavy client took the reserved slot: %+v", st)
	}
	p.release("storm1")
	<-heavy
	p.release("storm2")
}

// TestPoolLightAlone: a client is light only while it has nothing else in
// the pool. A fresh client's second request, sent while its first still
// runs, neither takes the reserved slot nor goes ahead of a reader,
// however full its rate share.
func TestPoolLightAlone(t *testing.T) {
	p := newPool(3, 3, 100, 1)
	ctx := context.Background()
	for _, k := range []string{"storm1", "fresh"} {
		if _, why, _ := p.acquire(ctx, k, 1, hour, hour); why != reasonNone {
			t.Fatal(k, why)
		}
	}
	// two running, the reserved slot free: the fresh client's second
	// request, sent while its first runs, may not take it
	second := make(chan struct{})
	go func() {
		if _, why, _ := p.acquire(ctx, "fresh", 1, hour, hour); why == reasonNone {
			close(second)
		}
	}()
	waitFor(t, func() bool { return p.stats().waiting == 1 })
	// a reader, alone in the pool, takes the reserved slot at once
	if pos, why, _ := p.acquire(ctx, "reader", 1, hour, hour); why != reasonNone || pos != 0 {
		t.Fatalf("reader: %v, %d positions", why, pos)
	}
	// the reserved slot frees: still not the fresh client's second's
	p.release("reader")
	if st := p.stats(); st.running != 2 || st.waiting != 1 {
		t.Fatalf("a client with a request running took the reserved slot: %+v", st)
	}
	// a slot of the others frees: it takes that one
	p.release("storm1")
	select {
	case <-second:
	case <-time.After(time.Minute):
		t.Fatal("the second request was not admitted when a slot of the others freed")
	}
	if st := p.stats(); st.running != 2 || st.waiting != 0 {
		t.Errorf("stats %+v", st)
	}
}
