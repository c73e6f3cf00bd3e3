package bench

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"
)

// soakSplit is the readers' and writers' work outside the crawler storm
// or during it.
type soakSplit struct {
	reads      []time.Duration
	readErrors int64
	works      int64
}

// phase is 1 while the storm runs, else 0: the index of st.split.
func (st *soakState) phase() int {
	if st.storming.Load() {
		return 1
	}
	return 0
}

// SoakStorm is the crawler storm's part of a soak run: when it ran, what
// it got back, and the readers' and writers' figures during it and
// outside it (a request counts to the side on which it started; a work
// to the side on which it was created).
type SoakStorm struct {
	// From and To are when it ran, in seconds since the load started.
	From float64 `json:"from_s"`
	To   float64 `json:"to_s"`
	// Book is the work it searched inside ("" when no page image had
	// been stored when it started: those requests were searches then).
	Book   string      `json:"book"`
	Counts StormCounts `json:"counts"`
	// Outside and During are the readers' and writers' figures.
	Outside SoakSide `json:"outside"`
	During  SoakSide `json:"during"`
}

// SoakSide is what the readers and writers did on one side of the storm.
type SoakSide struct {
	Seconds    float64 `json:"seconds"`
	Reads      int     `json:"reads"`
	ReadMS     Latency `json:"read_ms"`
	ReadErrors int64   `json:"read_errors"`
	Works      int64   `json:"works"`
	// WritesPerS is works created per second.
	WritesPerS float64 `json:"writes_per_s"`
}

// soakStorm runs the crawler storm of c from start+c.StormStart for
// c.Storm (or until ctx ends), marking st while it runs, and sends its
// part of the run on the channel returned when it is over.
func soakStorm(ctx context.Context, c SoakConfig, coll string, st *soakState, start time.Time) chan *SoakStorm {
	done := make(chan *SoakStorm, 1)
	go func() {
		out := &SoakStorm{}
		defer func() { done <- out }()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(c.StormStart))):
		}
		st.mu.Lock()
		out.Book = st.paged
		st.mu.Unlock()
		words := append(append([]string{}, soakWords...), soakPageVocabulary...)
		s, err := StartStorm(ctx, StormConfig{Base: c.Base, Conns: c.StormConns, Addrs: c.StormAddrs, Seed: c.Seed,
			Targets: StormTargets{Words: words, Collection: coll, Book: out.Book}})
		if err != nil { // the config is checked in RunSoak: not reached
			return
		}
		st.storming.Store(true)
		out.From = time.Since(start).Seconds()
		select {
		case <-ctx.Done():
		case <-time.After(c.Storm):
		}
		st.storming.Store(false)
		out.To = time.Since(start).Seconds()
		out.Counts = s.Stop()
	}()
	return done
}

// finish fills in the sides from the run's state; seconds is the run's
// length.
func (s *SoakStorm) finish(st *soakState, seconds float64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	side := func(sp soakSplit, secs float64) SoakSide {
		out := SoakSide{Seconds: secs, Reads: len(sp.reads), ReadMS: *percentiles(sp.reads), ReadErrors: sp.readErrors, Works: sp.works}
		if secs > 0 {
			out.WritesPerS = float64(sp.works) / secs
		}
		return out
	}
	s.During = side(st.split[1], s.To-s.From)
	s.Outside = side(st.split[0], seconds-(s.To-s.From))
}

// soakPageVocabulary are the words of the soak's page images (and what
// the storm searches for beside soakWords).
var soakPageVocabulary = strings.Fields(`harbour ledger survey tide anchor beacon cargo
charter customs dock ferry granary jetty lantern pilot quay signal vessel wharf`)

// soakPageWords are the words of page image k: 60 of soakPageVocabulary.
func soakPageWords(seed uint64, k int) []string {
	r := rand.New(rand.NewPCG(seed, uint64(k)))
	out := make([]string, 60)
	for i := range out {
		out[i] = soakPageVocabulary[r.IntN(len(soakPageVocabulary))]
	}
	return out
}

// soakOverlap is how long [a, b) and [c, d) overlap.
func soakOverlap(a, b, c, d time.Duration) time.Duration {
	return max(0, min(b, d)-max(a, c))
}
