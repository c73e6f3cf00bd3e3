package bench

import (
	"fmt"
	"time"
)

// Goals of the storm scenario.
const (
	// StormGoalRatio is the most a storm may multiply the reader's p99
	// of any page over the quiet phase's.
	StormGoalRatio = 2.0
	// StormGoalP99MS is the most the reader's p99 of any page may be
	// under a storm, in milliseconds.
	StormGoalP99MS = 50.0
	// StormGoalRSSGrowth is the most the server's largest RSS under the
	// storms may be over its largest in the first quiet phase.
	StormGoalRSSGrowth = 2.0
)

// stormGoals judges the phases: for each storm, the reader's p99 against
// the quiet phase's and in absolute terms, its errors, and whether the
// abusers were refused with Retry-After rather than left to time out;
// then the server's memory over the run.
func stormGoals(phases []StormPhase) []StormGoal {
	if len(phases) == 0 {
		return nil
	}
	quiet := phases[0]
	var goals []StormGoal
	var stormRSS int64
	for _, ph := range phases {
		if ph.Storm == nil {
			if ph.ReaderErrors > 0 {
				goals = append(goals, StormGoal{Name: ph.Name + ": reader errors", Goal: "0", Value: fmt.Sprint(ph.ReaderErrors)})
			}
			continue
		}
		stormRSS = max(stormRSS, ph.RSSMax)
		worst, worstName, worstRatio, ratioName := 0.0, "", 0.0, ""
		for k, pg := range ph.Reader {
			if pg.Latency.P99 > worst {
				worst, worstName = pg.Latency.P99, pg.Name
			}
			if q := quiet.Reader[k].Latency.P99; q > 0 && pg.Latency.P99/q > worstRatio {
				worstRatio, ratioName = pg.Latency.P99/q, pg.Name
			}
		}
		goals = append(goals,
			StormGoal{Name: ph.Name + ": reader p99 / quiet p99", Goal: fmt.Sprintf("≤ %.0f×", StormGoalRatio),
				Value: fmt.Sprintf("%.1f× (%s)", worstRatio, ratioName), Met: worstRatio <= StormGoalRatio},
			StormGoal{Name: ph.Name + ": reader p99", Goal: fmt.Sprintf("≤ %.0f ms", StormGoalP99MS),
				Value: fmt.Sprintf("%.1f ms (%s)", worst, worstName), Met: worst <= StormGoalP99MS},
			StormGoal{Name: ph.Name + ": reader errors", Goal: "0", Value: fmt.Sprint(ph.ReaderErrors + ph.onsetErrors()), Met: ph.ReaderErrors+ph.onsetErrors() == 0})
		s := ph.Storm
		failed := s.Timeouts + s.ConnErrors
		goals = append(goals, StormGoal{Name: ph.Name + ": abusers refused with Retry-After, not timed out",
			Goal:  "429/503 > 0, all with Retry-After; 0 timeouts or connection errors",
			Value: fmt.Sprintf("%d of %d refused (429 %d, 503 %d), %d without Retry-After; %d timeouts, %d connection errors", s.Refused(), s.Requests, s.TooMany, s.Unavailable, s.NoRetryAfter, s.Timeouts, s.ConnErrors),
			Met:   s.Refused() > 0 && s.NoRetryAfter == 0 && failed == 0})
	}
	if quiet.RSSMax > 0 && stormRSS > 0 {
		g := float64(stormRSS) / float64(quiet.RSSMax)
		goals = append(goals, StormGoal{Name: "memory: largest RSS under the storms / largest quiet", Goal: fmt.Sprintf("≤ %.0f×", StormGoalRSSGrowth),
			Value: fmt.Sprintf("%.2f× (%.0f MiB / %.0f MiB)", g, float64(stormRSS)/(1<<20), float64(quiet.RSSMax)/(1<<20)), Met: g <= StormGoalRSSGrowth})
	}
	return goals
}

// stormReport is the common report of a run: one step per phase, whose
// items and rate are the storm's answered requests, latency and errors
// the reader's, error codes the storm's answers by status.
func stormReport(c StormRunConfig, res *StormResult) *Report {
	rep := &Report{Scenario: "storm", Target: c.Base, Started: time.Now().UTC(),
		Params: map[string]any{"phase_seconds": c.Phase.Seconds(), "settle_seconds": c.Settle.Seconds(), "storm_conns": c.Conns, "storm_addrs": c.Addrs,
			"honour_retry_after": c.HonourRetryAfter, "reader_addr": c.ReaderAddr, "reader_pause_seconds": c.ReaderPause.Seconds(), "storm_agent": c.StormAgent, "archive_works": len(c.Archive.Works), "book_pages": c.Archive.BookPages,
			"steps": "one per phase: items and rate are the storm's answered requests, latency and errors the reader's (client time, all its pages), error codes the storm's answers by status",
			"goals": fmt.Sprintf("under every storm the reader's p99 of each page ≤ %.0f× the quiet phase's and ≤ %.0f ms, 0 reader errors; abusers refused with 429/503 and Retry-After, not timed out; largest RSS under storms ≤ %.0f× the quiet one",
				StormGoalRatio, StormGoalP99MS, StormGoalRSSGrowth)}}
	for _, ph := range res.Phases {
		lat := ph.ReaderAll
		st := Step{Seconds: ph.Seconds, LatencyMS: &lat, Errors: ph.ReaderErrors, PeakRSS: ph.RSSMax}
		rep.Errors += ph.ReaderErrors + ph.onsetErrors()
		for _, pg := range ph.Reader {
			rep.Items += int64(pg.Requests)
		}
		if s := ph.Storm; s != nil {
			st.Clients = s.Conns
			st.Items = s.Requests - s.Timeouts - s.ConnErrors
			st.RatePerS = s.RatePerS
			st.ErrorCodes = map[string]int64{"200": s.OK, "429": s.TooMany, "503": s.Unavailable, "other": s.Other, "timeout": s.Timeouts, "connection": s.ConnErrors}
		}
		rep.Steps = append(rep.Steps, st)
		rep.Seconds += ph.Seconds
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, ph.RSSMax)
	}
	if rep.Seconds > 0 {
		rep.RatePerS = float64(rep.Items) / rep.Seconds
	}
	if n := len(res.Phases); n > 1 {
		first, last := res.Phases[0].ReaderAll.P50, res.Phases[n-1].ReaderAll.P50
		if last > 0 {
			rep.Flatness = first / last
		}
	}
	rep.RawLimitWhat = "the reader alone (the quiet phase) is the baseline each storm is weighed against"
	rep.LatencyMS = res.Phases[0].ReaderAll
	rep.Params["phases"] = res.Phases
	rep.Params["goal_lines"] = res.Goals
	rep.Params["archive"] = c.Archive
	met := 0
	for _, g := range res.Goals {
		if g.Met {
			met++
		}
	}
	rep.Params["goals_met"] = fmt.Sprintf("%d of %d", met, len(res.Goals))
	return rep
}

// Series are the charts of a run, by phase (numbered from 1 as in the
// table): the reader's p99 of each page, the storm's answers per second
// and the server's largest RSS.
func (r *StormResult) Series() []Series {
	var xs []float64
	for i := range r.Phases {
		xs = append(xs, float64(i+1))
	}
	of := func(name, unit string, f func(ph StormPhase) float64) Series {
		s := Series{Name: name, Unit: unit, XLabel: "phase", X: xs}
		for _, ph := range r.Phases {
			s.Y = append(s.Y, f(ph))
		}
		return s
	}
	var out []Series
	for k := range stormReaderKinds {
		out = append(out, of("Reader's "+StormReaderNames[k]+" p99 by phase", "ms", func(ph StormPhase) float64 { return ph.Reader[k].Latency.P99 }))
	}
	out = append(out,
		of("Storm: answers refused (429 and 503) per second by phase", "requests/s", func(ph StormPhase) float64 {
			if ph.Storm == nil || ph.Storm.Seconds == 0 {
				return 0
			}
			return float64(ph.Storm.Refused()) / ph.Storm.Seconds
		}),
		of("Server's largest RSS by phase", "bytes", func(ph StormPhase) float64 { return float64(ph.RSSMax) }))
	return out
}

// onsetErrors is the readers' errors in the phase's onset (an error is
// one, whenever it happens).
func (ph StormPhase) onsetErrors() int64 {
	if ph.Onset == nil {
		return 0
	}
	return ph.Onset.Errors
}
