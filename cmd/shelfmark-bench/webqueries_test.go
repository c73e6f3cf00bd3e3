package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchWebIndexQueries: webindex-queries opens the store it is given,
// asks every kind of query in turn, writes a line for each (here the
// index is empty: a domain's top list is empty, a URL is not found), and stops
// when its input ends; without a target or a store it refuses to start.
func TestBenchWebIndexQueries(t *testing.T) {
	ctx := context.Background()
	e, err := openLab(ctx, "", "relaxed", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	data := filepath.Join(e.dir, "data")
	in, feed := io.Pipe()
	go func() {
		time.Sleep(400 * time.Millisecond)
		feed.Close()
	}()
	var out bytes.Buffer
	root := newRootCommand()
	root.SetArgs([]string{"webindex-queries", "--data", data, "--durability", "relaxed", "--rate", "50", "--start", "0",
		"--domain", "a.example", "--domain", "b.example", "--surt", "example,a)/"})
	root.SetIn(in)
	root.SetOut(&out)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("webindex-queries did not stop when its input ended")
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		want := map[string]string{"top": "ok", "links": "notfound", "read": "ok"}
		if len(f) != 4 || want[f[0]] == "" || f[3] != want[f[0]] {
			t.Errorf("line %q: want kind, at, took, and ok for top and read, notfound for links", sc.Text())
			continue
		}
		kinds[f[0]]++
	}
	if kinds["top"] == 0 || kinds["links"] == 0 || kinds["read"] == 0 {
		t.Errorf("queries asked: %v, want every kind", kinds)
	}
	for _, args := range [][]string{
		{"webindex-queries", "--data", data, "--surt", "x"},
		{"webindex-queries", "--domain", "a.example", "--surt", "x"},
	} {
		root := newRootCommand()
		root.SetArgs(args)
		root.SetIn(strings.NewReader(""))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		if err := root.ExecuteContext(ctx); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
