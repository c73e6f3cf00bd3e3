package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/shelfmark/shelfmark/bench"
)

// benchPatentsCommitters ingests the patents of pc once per committer
// count per round, each into a new schema of database with the raw insert
// limit measured in it just before, the counts in rising order in odd
// rounds and falling in even ones (so that a machine growing busier or
// quieter during the run favours none), and reports each run's rate and
// the machine's idle CPU while it ran.
func benchPatentsCommitters(ctx context.Context, out io.Writer, database, durability string, counts []int, rounds int, pc bench.PatentsConfig) ([]bench.CommittersRun, error) {
	if !strings.HasPrefix(database, "postgres://") && !strings.HasPrefix(database, "postgresql://") {
		return nil, fmt.Errorf("--compare-committers needs --database postgres://…: SQLite has one writer")
	}
	for _, n := range counts {
		if n < 1 {
			return nil, fmt.Errorf("--compare-committers: %d is not a count of committers", n)
		}
	}
	env, err := openBenchClusterEnv(ctx, &benchClusterFlags{}, database)
	if err != nil {
		return nil, err
	}
	defer env.close()
	var runs []bench.CommittersRun
	for round := 1; round <= rounds; round++ {
		order := slices.Clone(counts)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, n := range order {
			run, err := patentsWithCommitters(ctx, env, durability, n, pc)
			if err != nil {
				return runs, fmt.Errorf("%d committers: %w", n, err)
			}
			run.Repeat = round
			runs = append(runs, run)
			fmt.Fprintf(out, "round %d, %d committers: %.0f works/s, raw insert limit %.0f works/s (%.0f%%), flatness %.2f, CPU idle %.0f%%\n",
				round, n, run.RatePerS, run.RawLimit, 100*run.RatePerS/max(run.RawLimit, 1), run.Flatness, 100*run.Idle)
		}
	}
	return runs, nil
}

// patentsWithCommitters runs one configuration in a new schema.
func patentsWithCommitters(ctx context.Context, env *benchClusterEnv, durability string, n int, pc bench.PatentsConfig) (bench.CommittersRun, error) {
	run := bench.CommittersRun{Committers: n, Creators: pc.Creators}
	dsn, _, drop, err := env.schema(ctx, "committers")
	if err != nil {
		return run, err
	}
	defer drop()
	if run.RawLimit, err = rawLimit(ctx, dsn, durability, pc.Batch); err != nil {
		return run, fmt.Errorf("raw insert limit: %w", err)
	}
	e, err := openLab(ctx, dsn, durability, n)
	if err != nil {
		return run, err
	}
	defer e.close()
	busy0, total0, ok := bench.MachineTicks()
	r, err := bench.RunPatents(ctx, e.repo, e.blobs, pc)
	if err != nil {
		return run, err
	}
	if busy1, total1, ok1 := bench.MachineTicks(); ok && ok1 && total1 > total0 {
		run.Idle = 1 - (busy1-busy0)/(total1-total0)
	}
	run.RatePerS, run.Flatness = r.RatePerS, r.Flatness
	return run, nil
}

// readCommittersJSON reads the runs of one or more reports written by
// writeCommittersJSON (files separated by commas), the rounds of each
// after those of the ones before.
func readCommittersJSON(paths string) ([]bench.CommittersRun, error) {
	var all []bench.CommittersRun
	for _, path := range strings.Split(paths, ",") {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var runs []bench.CommittersRun
		if err := json.Unmarshal(b, &runs); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, runs...)
	}
	return all, nil
}

// writeCommittersJSON writes the runs as JSON to path.
func writeCommittersJSON(path string, runs []bench.CommittersRun) error {
	b, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
