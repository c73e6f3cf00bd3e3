package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestWebQueryLine: a query's line reads back as it was written: its
// kind, times, and an answer, a URL not indexed yet or an error (on one
// line); a line that is not a query's is an error.
func TestWebQueryLine(t *testing.T) {
	for _, r := range []WebQueryResult{
		{Kind: "top", At: 1500 * time.Millisecond, Took: 2300 * time.Microsecond},
		{Kind: "read", At: 7, Took: 8},
		{Kind: "links", At: time.Second, Took: time.Millisecond, Err: shelfmark.Errorf(shelfmark.ENOTFOUND, "no such URL"), NotFound: true},
		{Kind: "links", At: 3, Took: 4, Err: errors.New("links of x: the database\nwent away")},
	} {
		var b bytes.Buffer
		if err := WriteWebQuery(&b, r); err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSuffix(b.String(), "\n")
		if strings.Contains(line, "\n") {
			t.Fatalf("%q: more than one line", b.String())
		}
		got, err := parseWebQuery(line)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != r.Kind || got.At != r.At || got.Took != r.Took || got.NotFound != r.NotFound || (got.Err == nil) != (r.Err == nil) {
			t.Errorf("%q read back as %+v, want %+v", line, got, r)
		}
		if r.NotFound && shelfmark.ErrorCode(got.Err) != shelfmark.ENOTFOUND {
			t.Errorf("%q: not found reads back as %v", line, got.Err)
		}
		if r.Err != nil && !r.NotFound && got.Err.Error() != "links of x: the database went away" {
			t.Errorf("%q: the error reads back as %q", line, got.Err)
		}
	}
	for _, bad := range []string{"", "top 1 2", "fetch 1 2 ok", "top x 2 ok", "links 1 2.5 ok"} {
		if _, err := parseWebQuery(bad); err == nil {
			t.Errorf("%q read as a query's line", bad)
		}
	}
}

// queryChildEnv makes this test binary the query process of
// TestWebQueryProcess (TestWebQueryChild).
const queryChildEnv = "SHELFMARK_BENCH_QUERY_CHILD"

// TestWebQueryProcess: the scenario's query process gets the rate, the
// start and the targets as arguments, each line it writes is reported,
// it is ended by closing its input (and the lines it wrote to the end are
// all read), and a process that fails or writes what is not a query's
// line is an error.
func TestWebQueryProcess(t *testing.T) {
	targets := WebQueryTargets{Domains: []string{"a.example", "b.example"}, SURTs: []string{"example,a)/"}}
	start := time.Unix(0, 1234567)
	run := func(mode string) ([]WebQueryResult, error) {
		t.Setenv(queryChildEnv, mode)
		stop := make(chan struct{})
		var got []WebQueryResult
		go func() {
			time.Sleep(300 * time.Millisecond)
			close(stop)
		}()
		err := webQueryProcess(stop, []string{os.Args[0], "-test.run=^TestWebQueryChild$", "--"}, targets, 25, start, io.Discard, func(r WebQueryResult) { got = append(got, r) })
		return got, err
	}
	got, err := run("answer")
	if err != nil {
		t.Fatal(err)
	}
	// the child's first line echoes its arguments; its last is written
	// once its input ends
	if len(got) < 3 || got[0].Err == nil || got[0].Err.Error() != "--rate 25 --start 1234567 --domain a.example --domain b.example --surt example,a)/" {
		t.Fatalf("the process's lines: %+v", got)
	}
	if last := got[len(got)-1]; last.Kind != "links" || last.Took != 99 {
		t.Errorf("the last line, written after the input ended, was not read: %+v", last)
	}
	if _, err := run("fail"); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a failing process: %v", err)
	}
	if _, err := run("garble"); err == nil || !strings.Contains(err.Error(), "not a query's line") {
		t.Errorf("a process writing other lines: %v", err)
	}
}

// TestWebQueryChild is the query process of TestWebQueryProcess, run
// only as its child.
func TestWebQueryChild(t *testing.T) {
	mode := os.Getenv(queryChildEnv)
	if mode == "" {
		t.Skip("run by TestWebQueryProcess")
	}
	args := strings.Join(flag.Args(), " ")
	switch mode {
	case "fail":
		os.Exit(3)
	case "garble":
		fmt.Println("hello")
		os.Exit(0)
	}
	WriteWebQuery(os.Stdout, WebQueryResult{Kind: "top", At: 1, Took: 2, Err: errors.New(args)})
	WriteWebQuery(os.Stdout, WebQueryResult{Kind: "links", At: 3, Took: 4})
	io.Copy(io.Discard, os.Stdin)
	WriteWebQuery(os.Stdout, WebQueryResult{Kind: "links", At: 5, Took: 99})
	os.Exit(0)
}

// TestWebIndexQueryProcessFails: a run whose query process fails stops
// its ingest and ends with the process's error, not with a report of no
// queries.
func TestWebIndexQueryProcessFails(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "store.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo, blobs, done := webIndexRepo(t, db, dir)
	defer done()
	t.Setenv(queryChildEnv, "fail")
	_, err = RunWebIndex(ctx, repo, blobs, WebIndexConfig{Pages: 2000, PagesPerFile: 500, Batch: 100, RawSeconds: -1, Seed: 3,
		Dir: filepath.Join(dir, "crawl"), StorePath: filepath.Join(dir, "store.db"), Relaxed: true,
		QueryCommand: []string{os.Args[0], "-test.run=^TestWebQueryChild$", "--"}})
	if err == nil || !strings.Contains(err.Error(), "query process") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a run whose query process failed: %v", err)
	}
}
