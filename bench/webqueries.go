package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The query clients of the webindex scenario: one asking for the top 10
// pages of a popular domain, one for the links of a popular URL, and one
// reading a row by primary key (the floor the other two are judged
// against), each a fixed number of times a second while the crawl is
// indexed. They run in the ingesting process, or in a process of their
// own (WebIndexConfig.QueryCommand), as a server answers them beside
// "shelfmark ingest-warc".

// WebQueryTargets are what the query clients ask about, in turn: the top
// pages of Domains and the links of SURTs.
type WebQueryTargets struct {
	Domains []string
	SURTs   []string
}

// WebQueryResult is one query a client asked.
type WebQueryResult struct {
	Kind string // "top", "links" or "read" (see RunWebQueries)
	// At is when it was asked, from the scenario's start; Took how long
	// it took to answer.
	At, Took time.Duration
	// Err is the error it ended with (nil: answered); NotFound when that
	// error is ENOTFOUND, as for a URL not indexed yet.
	Err      error
	NotFound bool
}

// RunWebQueries runs the query clients against repo until stop is closed:
// the top pages of a domain ("top"), the links of a URL ("links"), and a
// read of one resource row by its primary key ("read"): one statement in
// a read transaction, the least a query costs on the store and machine,
// against which the others are judged. Each asks once at first (so that a
// short run has one of each at least), then once a tick, rate times a
// second, reporting every query to record (called by one client at a
// time). The queries run in ctx; At is measured from start.
func RunWebQueries(ctx context.Context, stop <-chan struct{}, repo *shelfmark.Repository, t WebQueryTargets, rate float64, start time.Time, record func(WebQueryResult)) {
	if len(t.Domains) == 0 || len(t.SURTs) == 0 || rate <= 0 {
		return
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	client := func(kind string, n int, do func(k int) error) {
		defer wg.Done()
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for k := 0; ; k++ {
			if k > 0 {
				select {
				case <-tick.C:
				case <-stop:
					return
				case <-ctx.Done():
					return
				}
			}
			t0 := time.Now()
			err := do(k % n)
			r := WebQueryResult{Kind: kind, At: t0.Sub(start), Took: time.Since(t0), Err: err, NotFound: shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND}
			mu.Lock()
			record(r)
			mu.Unlock()
		}
	}
	wg.Add(3)
	go client("read", 1, func(int) error {
		return repo.Storage().View(ctx, func(tx shelfmark.ReadTx) error {
			_, err := tx.Resource(ctx, 1)
			return err
		})
	})
	go client("top", len(t.Domains), func(k int) error {
		_, err := repo.WebTop(ctx, t.Domains[k], 10)
		return err
	})
	go client("links", len(t.SURTs), func(k int) error {
		_, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: t.SURTs[k], Limit: 100})
		return err
	})
	wg.Wait()
}

// WriteWebQuery writes r as the line the query process sends its parent:
// kind, at and took in nanoseconds, and "ok", "notfound" or the error.
func WriteWebQuery(w io.Writer, r WebQueryResult) error {
	status := "ok"
	switch {
	case r.NotFound:
		status = "notfound"
	case r.Err != nil:
		status = "error " + strings.ReplaceAll(r.Err.Error(), "\n", " ")
	}
	_, err := fmt.Fprintf(w, "%s %d %d %s\n", r.Kind, r.At.Nanoseconds(), r.Took.Nanoseconds(), status)
	return err
}

// parseWebQuery reads a line WriteWebQuery wrote.
func parseWebQuery(line string) (WebQueryResult, error) {
	f := strings.SplitN(line, " ", 4)
	if len(f) != 4 || (f[0] != "top" && f[0] != "links" && f[0] != "read") {
		return WebQueryResult{}, fmt.Errorf("query process: %q is not a query's line", line)
	}
	at, err1 := strconv.ParseInt(f[1], 10, 64)
	took, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return WebQueryResult{}, fmt.Errorf("query process: %q: %w", line, err)
	}
	r := WebQueryResult{Kind: f[0], At: time.Duration(at), Took: time.Duration(took)}
	switch {
	case f[3] == "notfound":
		r.NotFound = true
		r.Err = shelfmark.Errorf(shelfmark.ENOTFOUND, "not indexed yet")
	case f[3] != "ok":
		r.Err = errors.New(strings.TrimPrefix(f[3], "error "))
	}
	return r, nil
}

// webQueryArgs are the arguments the scenario adds to its QueryCommand:
// the rate, the start (Unix nanoseconds, for At) and the targets.
func webQueryArgs(t WebQueryTargets, rate float64, start time.Time) []string {
	args := []string{"--rate", strconv.FormatFloat(rate, 'g', -1, 64), "--start", strconv.FormatInt(start.UnixNano(), 10)}
	for _, d := range t.Domains {
		args = append(args, "--domain", d)
	}
	for _, s := range t.SURTs {
		args = append(args, "--surt", s)
	}
	return args
}

// webQueryProcess runs command with the targets' arguments until stop is
// closed, reporting each line it writes to record; then it closes the
// process's standard input, which ends it, and waits for it. Its
// standard error goes to stderr.
func webQueryProcess(stop <-chan struct{}, command []string, t WebQueryTargets, rate float64, start time.Time, stderr io.Writer, record func(WebQueryResult)) error {
	if len(command) == 0 {
		return errors.New("query process: no command")
	}
	cmd := exec.Command(command[0], append(append([]string(nil), command[1:]...), webQueryArgs(t, rate, start)...)...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("query process: %w", err)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-stopped:
		}
		in.Close() // the process ends at the end of its input
	}()
	var parseErr error
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		r, err := parseWebQuery(sc.Text())
		if err != nil {
			parseErr = err
			break
		}
		record(r)
	}
	close(stopped)
	io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	if parseErr != nil {
		return parseErr
	}
	if waitErr != nil {
		return fmt.Errorf("query process: %w", waitErr)
	}
	return sc.Err()
}
