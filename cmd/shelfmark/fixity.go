package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/fixity"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newFixityCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fixity",
		Short: "Check the stored copies of the originals, and report",
	}
	var db jobsDB
	var content setup.BlobFlags
	var preservation string
	var all bool
	var rate int64
	run := &cobra.Command{
		Use:   "run [--all | ID...]",
		Short: "Check every original now (or the resources named), repairing what can be",
		Long: `Check the originals now: with --all (or no id) a whole fixity pass, or the
rest of one a server left unfinished, over every original in the content
store and every content file of the preservation copy; with ids, the
originals of those works, collections or files and their objects. A
damaged copy is rewritten from the other; a file with no whole copy is
reported damaged (its download then fails). Prints a summary, and the
progress on stderr. Safe while servers run: a server's pass and this one
record their checks alike.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if all && len(args) > 0 {
				return errors.New("give --all or ids, not both")
			}
			ctx := cmd.Context()
			store, blobs, err := openFixityStores(ctx, db, content)
			if err != nil {
				return err
			}
			defer store.Close()
			defer blobs.Close()
			errw := cmd.ErrOrStderr()
			last := time.Now()
			c, err := setup.OpenFixity(ctx, store, blobs, db.data, preservation, fixity.Options{Rate: rate, Progress: func(s fixity.Summary) {
				if time.Since(last) >= time.Second {
					last = time.Now()
					fmt.Fprintf(errw, "checked %d copies, %d bytes; %d repaired, %d damaged\n", s.Checked, s.Bytes, s.Repaired, s.Damaged)
				}
			}})
			if err != nil {
				return err
			}
			var sum fixity.Summary
			if len(args) == 0 {
				sum, err = c.Pass(ctx)
			} else {
				ids := make([]shelfmark.ID, len(args))
				for i, a := range args {
					ids[i] = shelfmark.ID(a)
				}
				sum, err = c.CheckIDs(ctx, ids)
			}
			if err != nil {
				return err
			}
			resumed := ""
			if sum.Resumed {
				resumed = " (the rest of an unfinished pass)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "checked %d copies (%d bytes)%s: %d whole, %d repaired, %d damaged\n",
				sum.Checked, sum.Bytes, resumed, sum.OK, sum.Repaired, sum.Damaged)
			if sum.Damaged > 0 {
				return fmt.Errorf("%d copies are damaged and could not be repaired: see shelfmark fixity report --failed", sum.Damaged)
			}
			return nil
		},
	}
	var failed, asCSV bool
	report := &cobra.Command{
		Use:   "report [--failed] [--csv]",
		Short: "Print the last fixity check of every stored copy",
		Long: `Print the progress of the last fixity pass, then the last check of every
stored copy (the content store's, by SHA-256, and each content file of the
preservation copy): the file's id, the copy, when it was checked, the
outcome (ok, repaired, damaged) and what was found. --failed prints only
the copies not found whole; --csv prints CSV without the pass's progress.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			store, err := openFixityDB(ctx, db)
			if err != nil {
				return err
			}
			defer store.Close()
			return fixityReport(ctx, cmd.OutOrStdout(), store, failed, asCSV)
		},
	}
	for _, c := range []*cobra.Command{run, report} {
		f := c.Flags()
		f.StringVar(&db.data, "data", "shelfmark-data", "directory of the content store and the preservation copy (and of the SQLite database without --database)")
		f.StringVar(&db.database, "database", "", "PostgreSQL URL (postgres://user@host/db)")
		setup.AnnotateEnv(f)
	}
	rf := run.Flags()
	rf.BoolVar(&all, "all", false, "check everything: a whole pass (the default without ids)")
	rf.Int64Var(&rate, "rate", -1, "bytes a second to read at most; negative: as fast as the disks go")
	rf.StringVar(&preservation, "preservation", "", `the preservation copy's storage root (default DATA/ocfl); "off": the content store alone`)
	content.Register(rf)
	report.Flags().BoolVar(&failed, "failed", false, "only the copies not found whole")
	report.Flags().BoolVar(&asCSV, "csv", false, "print CSV")
	cmd.AddCommand(run, report)
	return cmd
}

// openFixityDB opens the database the flags name.
func openFixityDB(ctx context.Context, db jobsDB) (shelfmark.Storage, error) {
	if db.database == "" {
		if err := requireDir(db.data); err != nil {
			return nil, err
		}
	}
	store, err := setup.OpenStorage(ctx, db.database, db.data, "safe", 2)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return store, nil
}

// openFixityStores opens the database and the content store.
func openFixityStores(ctx context.Context, db jobsDB, content setup.BlobFlags) (shelfmark.Storage, setup.ContentStore, error) {
	store, err := openFixityDB(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	blobs, err := setup.OpenBlobs(ctx, content, db.data, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, blobs, nil
}

// fixityReport prints the pass's progress and the states, a page of a
// thousand at a time.
func fixityReport(ctx context.Context, out io.Writer, store shelfmark.Storage, failed, asCSV bool) error {
	pe, ok := store.(shelfmark.PreservationEvents)
	if !ok {
		return fmt.Errorf("the %s database keeps no fixity checks", store.Backend())
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return err
	}
	var cw *csv.Writer
	var tw *tabwriter.Writer
	if asCSV {
		cw = csv.NewWriter(out)
		if err := cw.Write([]string{"id", "copy", "item", "checked", "outcome", "damaged", "detail"}); err != nil {
			return err
		}
	} else {
		p, err := pe.FixityPass(ctx)
		if err != nil {
			return err
		}
		switch {
		case p.Started.IsZero():
			fmt.Fprintln(out, "no fixity pass has run yet")
		case p.Finished.IsZero():
			fmt.Fprintf(out, "pass started %s, not finished (at %s): %d copies, %d bytes checked; %d repaired, %d damaged\n",
				p.Started.UTC().Format(time.RFC3339), p.Cursor, p.Files, p.Bytes, p.Repaired, p.Damaged)
		default:
			fmt.Fprintf(out, "last pass %s to %s: %d copies, %d bytes checked; %d repaired, %d damaged\n",
				p.Started.UTC().Format(time.RFC3339), p.Finished.UTC().Format(time.RFC3339), p.Files, p.Bytes, p.Repaired, p.Damaged)
		}
		n, err := pe.CountDamaged(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "files damaged now: %d\n\n", n)
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCOPY\tCHECKED\tOUTCOME\tITEM\tDETAIL")
	}
	var after shelfmark.FixityState
	for {
		page, err := pe.FixityStates(ctx, after, failed, shelfmark.MaxEventPage)
		if err != nil {
			return err
		}
		for _, s := range page {
			id := ""
			if s.Resource != 0 {
				id = string(ids.Encode(s.Resource))
			}
			checked := s.Checked.UTC().Format(time.RFC3339)
			if cw != nil {
				if err := cw.Write([]string{id, s.Copy, s.Item, checked, s.Outcome, strconv.FormatBool(s.Damaged), s.Detail}); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", id, s.Copy, checked, s.Outcome, s.Item, s.Detail)
		}
		if len(page) < shelfmark.MaxEventPage {
			break
		}
		after = page[len(page)-1]
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return tw.Flush()
}
