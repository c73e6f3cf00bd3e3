package bench

import (
	"context"
	"fmt"
	"net/url"
)

// Versus compares a rest run with the same ramp against another
// repository (Fedora), made after it in the same run with the same body,
// load generator and client counts, so that the machine, its disk and its
// noise are the same for both.
type Versus struct {
	// System names the other repository ("fedora").
	System string `json:"system"`
	// Target is where its works were created.
	Target string `json:"target"`
	// Steps are its steps, one per client count, each with the ratio of
	// Shelfmark's throughput at that count to its own.
	Steps []VersusStep `json:"steps"`
}

// VersusStep is one client count of a Versus.
type VersusStep struct {
	Step
	// Ratio is Shelfmark's works/s over the other's at this client count
	// (0 when the other made none).
	Ratio float64 `json:"ratio"`
	// P99Ratio is Shelfmark's p99 latency over the other's.
	P99Ratio float64 `json:"p99_ratio"`
}

// RunVersusFedora runs c's ramp against the Fedora container at target
// (LDP POSTs of the same Turtle, credentials in the URL's user
// information), and compares each step with ours, the steps of c's run
// (rep.Steps, one per client count). progress, when set, sees each of
// Fedora's steps.
func RunVersusFedora(ctx context.Context, c RestConfig, rep *Report, target string, progress func(Step)) (*Versus, error) {
	c.Target, c.Targets, c.Fedora, c.Token, c.NoAuthTarget = target, nil, true, "", ""
	c.Progress = progress
	theirs, err := RunRest(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("fedora at %s: %w", redactURL(target), err)
	}
	v := &Versus{System: "fedora", Target: redactURL(target)}
	ours := map[int]Step{}
	for _, s := range rep.Steps {
		ours[s.Clients] = s
	}
	for _, s := range theirs.Steps {
		vs := VersusStep{Step: s}
		if o, ok := ours[s.Clients]; ok {
			if s.RatePerS > 0 {
				vs.Ratio = o.RatePerS / s.RatePerS
			}
			if o.LatencyMS != nil && s.LatencyMS != nil && s.LatencyMS.P99 > 0 {
				vs.P99Ratio = o.LatencyMS.P99 / s.LatencyMS.P99
			}
		}
		v.Steps = append(v.Steps, vs)
	}
	return v, nil
}

// redactURL is u without the password of its user information, for
// reports and errors.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	return p.Redacted()
}
