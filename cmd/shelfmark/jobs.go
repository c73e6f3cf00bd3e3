package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// jobsDB holds the database flags of the jobs verbs.
type jobsDB struct {
	data, database string
}

// open opens the repository the flags name (the job queue lives in the
// database, so these verbs act on every worker and server of it).
func (d *jobsDB) open(ctx context.Context) (*shelfmark.Repository, func(), error) {
	if d.database == "" {
		if err := requireDir(d.data); err != nil {
			return nil, nil, err
		}
	}
	store, err := setup.OpenStorage(ctx, d.database, d.data, "safe", 2)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	return repo, func() { repo.Close(); store.Close() }, nil
}

// requireDir refuses to create a new empty repository by mistake.
func requireDir(data string) error {
	if _, err := os.Stat(filepath.Join(data, "shelfmark.db")); err != nil {
		return fmt.Errorf("no repository in %s (give --data or --database)", data)
	}
	return nil
}

func newJobsCommand() *cobra.Command {
	var db jobsDB
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "See and steer the background job queues",
		Long: `See and steer the background job queues: characterize, derive, text, ocr
(in priority order). The queues live in the database, so these commands act
for every server and worker of it.

  shelfmark jobs status            counts per queue and state
  shelfmark jobs pause ocr         defer OCR (for example during a big ingest)
  shelfmark jobs resume ocr
  shelfmark jobs drain ocr         wait, with a progress bar, until the queue is empty
  shelfmark jobs failed ocr        list failed jobs with their errors
  shelfmark jobs retry ocr         put failed jobs back in the queue`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&db.data, "data", "shelfmark-data", "directory of the SQLite database (without --database)")
	pf.StringVar(&db.database, "database", "", "PostgreSQL URL (postgres://user@host/db)")
	setup.AnnotateEnv(pf)
	with := func(fn func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			repo, closeRepo, err := db.open(cmd.Context())
			if err != nil {
				return err
			}
			defer closeRepo()
			return fn(cmd.Context(), repo, cmd, args)
		}
	}
	var watch time.Duration
	status := &cobra.Command{Use: "status", Short: "Counts per queue and state", Args: cobra.NoArgs,
		RunE: with(func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, _ []string) error {
			for {
				if err := printStatus(ctx, repo, cmd.OutOrStdout()); err != nil {
					return err
				}
				if watch <= 0 {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(watch):
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
		})}
	status.Flags().DurationVar(&watch, "watch", 0, "print again at this interval (for example 2s) until interrupted")
	pause := func(paused bool) func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error {
		return func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error {
			for _, q := range args {
				if err := repo.PauseQueue(ctx, q, paused); err != nil {
					return err
				}
				word := "resumed"
				if paused {
					word = "paused (running jobs finish; nothing new starts)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", q, word)
			}
			return nil
		}
	}
	var ids []int64
	retry := &cobra.Command{Use: "retry [QUEUE]", Short: "Put failed jobs back in their queue (all queues without QUEUE)", Args: cobra.MaximumNArgs(1),
		RunE: with(func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error {
			q := ""
			if len(args) == 1 {
				q = args[0]
			}
			n, err := repo.RetryFailedJobs(ctx, q, ids)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d failed jobs queued again\n", n)
			return nil
		})}
	retry.Flags().Int64SliceVar(&ids, "id", nil, "retry only these job ids")
	cmd.AddCommand(status,
		&cobra.Command{Use: "pause QUEUE...", Short: "Pause queues: workers claim nothing from them", Args: cobra.MinimumNArgs(1), RunE: with(pause(true))},
		&cobra.Command{Use: "resume QUEUE...", Short: "Resume paused queues", Args: cobra.MinimumNArgs(1), RunE: with(pause(false))},
		&cobra.Command{Use: "drain QUEUE...", Short: "Wait until the queues have no queued or running jobs, showing progress", Args: cobra.MinimumNArgs(1),
			RunE: with(func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error {
				return drain(ctx, repo, args, cmd.OutOrStdout())
			})},
		&cobra.Command{Use: "failed [QUEUE]", Short: "List failed jobs with their errors", Args: cobra.MaximumNArgs(1),
			RunE: with(func(ctx context.Context, repo *shelfmark.Repository, cmd *cobra.Command, args []string) error {
				q := ""
				if len(args) == 1 {
					q = args[0]
					if !shelfmark.ValidQueue(q) {
						return fmt.Errorf("there is no queue %q", q)
					}
				}
				return printFailed(ctx, repo, q, cmd.OutOrStdout())
			})},
		retry)
	return cmd
}

func printStatus(ctx context.Context, repo *shelfmark.Repository, w io.Writer) error {
	counts, err := repo.QueueCounts(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "queue\tstate\tqueued\tready\trunning\tfailed\t")
	for _, c := range counts {
		state := "running"
		if c.Paused {
			state = "PAUSED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t\n", c.Queue, state, c.Queued, c.Ready, c.Running, c.Failed)
	}
	return tw.Flush()
}

func printFailed(ctx context.Context, repo *shelfmark.Repository, queue string, w io.Writer) error {
	var after int64
	n := 0
	for {
		jobs, err := repo.ListJobs(ctx, shelfmark.JobFilter{Queue: queue, State: shelfmark.JobFailed, After: after, Limit: 500})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			fmt.Fprintf(w, "%d\t%s\t%s\tattempt %d\t%s\n", j.ID, j.Queue, repo.IDs().Encode(j.Resource), j.Attempt, j.Error)
			after = j.ID
			n++
		}
		if len(jobs) < 500 {
			break
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "no failed jobs")
	}
	return nil
}

// drain waits until the queues have no queued or running jobs, drawing a
// bar of the jobs done since it started. Failed jobs do not hold it up;
// it says how many there are.
func drain(ctx context.Context, repo *shelfmark.Repository, queues []string, w io.Writer) error {
	for _, q := range queues {
		if !shelfmark.ValidQueue(q) {
			return fmt.Errorf("there is no queue %q", q)
		}
	}
	want := map[string]bool{}
	for _, q := range queues {
		want[q] = true
	}
	outstanding := func() (left, failed int64, paused []string, err error) {
		counts, err := repo.QueueCounts(ctx)
		for _, c := range counts {
			if want[c.Queue] {
				left += c.Queued + c.Running
				failed += c.Failed
				if c.Paused {
					paused = append(paused, c.Queue)
				}
			}
		}
		return left, failed, paused, err
	}
	left, _, paused, err := outstanding()
	if err != nil {
		return err
	}
	if len(paused) > 0 {
		fmt.Fprintf(w, "note: %v paused; resume them or the drain waits forever\n", paused)
	}
	start := left
	bar := setup.NewProgressBar(int(start), "jobs")
	for left > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if left, _, _, err = outstanding(); err != nil {
			return err
		}
		if left > start { // more were enqueued meanwhile
			start = left
			bar.ChangeMax64(start)
		}
		_ = bar.Set64(start - left)
	}
	_ = bar.Finish()
	_, failed, _, err := outstanding()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndrained %v; %d failed jobs (shelfmark jobs failed)\n", queues, failed)
	return nil
}
