package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// CommittersRun is one ingest of a run that compares committer counts: the
// repository's RepositoryOptions.Committers, its rate, the raw insert
// limit measured just before it on the same database, and the share of
// the machine's CPU left idle while it ran.
type CommittersRun struct {
	Committers int `json:"committers"`
	// Creators is the ingest's engine calls in flight (ingest.Options.
	// Creators as the run set it; 0: the ingest's default).
	Creators int     `json:"creators"`
	Repeat   int     `json:"repeat"`
	RatePerS float64 `json:"rate_per_s"`
	RawLimit float64 `json:"raw_limit_per_s"`
	Idle     float64 `json:"idle_fraction"`
	Flatness float64 `json:"flatness"`
}

// WriteCommittersSVG draws the rate of each repetition against the number
// of committers, and the raw insert limit measured beside each run, as a
// standalone SVG at path.
func WriteCommittersSVG(path, backend string, runs []CommittersRun) error {
	if len(runs) == 0 {
		return fmt.Errorf("no runs to draw")
	}
	type key struct{ creators, repeat int }
	var ticks []float64
	rates := map[key]map[float64]float64{} // committers → rate
	rawSum, rawN := map[float64]float64{}, map[float64]float64{}
	var keys []key
	for _, r := range runs {
		x := float64(r.Committers)
		if !slices.Contains(ticks, x) {
			ticks = append(ticks, x)
		}
		k := key{r.Creators, r.Repeat}
		if rates[k] == nil {
			rates[k] = map[float64]float64{}
			keys = append(keys, k)
		}
		rates[k][x] = r.RatePerS
		rawSum[x] += r.RawLimit
		rawN[x]++
	}
	slices.Sort(ticks)
	slices.SortFunc(keys, func(a, b key) int {
		if a.creators != b.creators {
			return b.creators - a.creators
		}
		return a.repeat - b.repeat
	})
	c := chart{title: "Patents ingested on " + backend + " by number of committers", xlabel: "committers (group commits open at once)",
		ylabel: "works/s", xticks: ticks}
	for _, k := range keys {
		what := "ingest"
		switch {
		case k.creators == 1:
			what = "1 batch in the engine at a time"
		case k.creators > 1:
			what = fmt.Sprintf("%d batches in the engine at once", k.creators)
		}
		l := line{name: fmt.Sprintf("%s, round %d", what, k.repeat), dashed: k.creators == 1}
		for _, x := range ticks {
			if v, ok := rates[k][x]; ok {
				l.xs, l.ys = append(l.xs, x), append(l.ys, v)
			}
		}
		c.lines = append(c.lines, l)
	}
	raw := line{name: "raw insert limit (mean of the same runs)", dashed: true}
	for _, x := range ticks {
		raw.xs, raw.ys = append(raw.xs, x), append(raw.ys, rawSum[x]/rawN[x])
	}
	c.lines = append(c.lines, raw)
	if err := os.WriteFile(path, standalone(c.svg()), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// MachineTicks reads the machine's busy and total clock ticks so far,
// summed over its cores (ok false without /proc/stat): the idle share of
// an interval is 1 - Δbusy/Δtotal.
func MachineTicks() (busy, total float64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	busy, _, total, ok = machineTicks(first)
	return busy, total, ok
}
