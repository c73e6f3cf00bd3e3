package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/storagetest"
)

// preservedRepository makes a SQLite repository in dir (a collection and
// works works, every fifth private, each with a page and its original),
// preserves it into dir/ocfl, and returns the canonical dump of its
// resources and some of its ids. The repository is closed when it
// returns, so a server can open dir.
func preservedRepository(t *testing.T, dir string, works int) (string, []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	store, err := setup.OpenStorage(ctx, "", dir, "relaxed", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	defer repo.Close()
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test"))
	title := func(s string) []shelfmark.Statement {
		return []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(s)}}
	}
	coll, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Kept")})
	if err != nil {
		t.Fatal(err)
	}
	sample := []shelfmark.ID{coll.ID}
	for i := range works {
		vis := shelfmark.Public
		if i%5 == 0 {
			vis = shelfmark.Private
		}
		w, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{coll.ID},
			Metadata: title(fmt.Sprintf("work %d", i))})
		if err != nil {
			t.Fatal(err)
		}
		set, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID, Metadata: title("page")})
		if err != nil {
			t.Fatal(err)
		}
		b, err := blobs.Put(ctx, strings.NewReader(fmt.Sprintf("the page of work %d", i)), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
			Name: "page.txt", MediaType: "text/plain", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
		if err != nil {
			t.Fatal(err)
		}
		if i < 6 {
			sample = append(sample, w.ID, set.ID, f.ID)
		}
	}
	fsys, err := ocfl.NewDirFS(filepath.Join(dir, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	p := preserve.New(store, blobs, root, ids, preserve.Options{Window: time.Nanosecond})
	if _, versions, err := p.CatchUp(ctx); err != nil || versions != works+1 {
		t.Fatalf("preserve: %d versions, %v; want %d", versions, err, works+1)
	}
	dump, err := storagetest.Dump(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	return dump, sample
}

// TestRebuildKilled: `shelfmark rebuild` killed with SIGKILL at points
// further and further into its work, and run again each time, ends with
// the repository the copy was made of (the canonical dumps have no
// difference), writing no object twice; a server on the rebuilt data
// answers the sample of resources as the original does, and takes the
// copy as its own.
func TestRebuildKilled(t *testing.T) {
	const works = 400
	orig, dst := t.TempDir(), t.TempDir()
	want, sample := preservedRepository(t, orig, works)
	bin := shelfmarkBinary(t)
	args := []string{"rebuild", "--from", filepath.Join(orig, "ocfl"), "--data", dst, "--batch", "10", "--parallel", "1"}
	var output bytes.Buffer
	partial := 0 // kills that left some objects written, and not all
	var final string
	for delay := 20 * time.Millisecond; ; delay = delay * 3 / 2 {
		if delay > time.Minute {
			t.Fatalf("the rebuild never finished:\n%s", output.String())
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = cleanEnv(filepath.Dir(bin))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &output
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			output.Write(out.Bytes())
			if err != nil {
				t.Fatalf("the rebuild failed: %v\n%s", err, output.String())
			}
			final = out.String()
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err := <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				// it finished as the signal was sent
				final = out.String()
				break
			}
			if n := countResources(t, dst); n > 0 && n < 3*works+1 {
				partial++
			}
			if rebuildDone(t, dst) {
				// the kill landed after the rebuild had finished, before
				// it printed its report: nothing is left to run
				final = ""
				break
			}
			continue
		}
		break
	}
	t.Logf("%d kills with part of the objects written; the last run: %s", partial, final)
	if partial == 0 {
		t.Fatalf("no kill landed while the rebuild was writing:\n%s", output.String())
	}
	if final != "" {
		m := regexp.MustCompile(`(\d+) objects: (\d+) written, (\d+) written by an earlier run, 0 damaged`).FindStringSubmatch(final)
		if m == nil {
			t.Fatalf("the last run's report: %q", final)
		}
		written, earlier := atoi(m[2]), atoi(m[3])
		if atoi(m[1]) != works+1 || written+earlier != works+1 || earlier == 0 {
			t.Fatalf("the last run wrote %d objects and found %d written of %s: want %d in all, some found", written, earlier, m[1], works+1)
		}
	}
	store, err := setup.OpenStorage(context.Background(), "", dst, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := storagetest.Dump(context.Background(), store)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	if d := storagetest.DiffLines(want, got); d != "" {
		t.Fatalf("the rebuilt repository differs (- original, + rebuilt):\n%s", d)
	}
	// run once more: refused, it is finished
	if _, ok := runShelfmark(t, "", args...); ok {
		t.Error("a rebuild into a finished rebuild succeeded")
	}

	// the servers of both answer the same
	a := serveData(t, orig, "off")
	b := serveData(t, dst, filepath.Join(orig, "ocfl"))
	for _, id := range sample {
		for _, path := range []string{"/api/v1/resources/" + string(id), "/api/v1/resources/" + string(id) + "/children"} {
			if ga, gb := getText(t, a, path), getText(t, b, path); ga != gb {
				t.Errorf("GET %s:\n original %s\n rebuilt  %s", path, ga, gb)
			}
		}
	}
	path := "/api/v1/resources/" + string(sample[0]) + "/members?limit=50"
	if ga, gb := getText(t, a, path), getText(t, b, path); ga != gb {
		t.Errorf("GET %s:\n original %s\n rebuilt  %s", path, ga, gb)
	}
	// the search index and the OAI-PMH records build themselves: once
	// both servers have indexed, they answer the same (an OAI-PMH
	// record's datestamp is when the server projected it, and the
	// resumption token is the server's own)
	stamps := regexp.MustCompile(`<datestamp>[^<]*</datestamp>|<responseDate>[^<]*</responseDate>|(<resumptionToken[^>]*>)[^<]*<`)
	for path, full := range map[string]string{
		"/api/v1/search?q=work&limit=20":                  `"id":"`,                 // some hits
		"/oai?verb=ListIdentifiers&metadataPrefix=oai_dc": `completeListSize="320"`, // the public works
		"/oai?verb=ListSets":                              "<setSpec>",
	} {
		var ga, gb string
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			ga, gb = stamps.ReplaceAllString(getText(t, a, path), "$1"), stamps.ReplaceAllString(getText(t, b, path), "$1")
			if ga == gb && strings.HasPrefix(ga, "200 ") && strings.Contains(ga, full) {
				break
			}
		}
		if !strings.Contains(ga, full) {
			t.Errorf("GET %s on the original never held %s: %s", path, full, ga)
		}
		if ga != gb {
			t.Errorf("GET %s differs (- original, + rebuilt):\n%s", path, storagetest.DiffLines(ga, gb))
		}
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// countResources is how many resources the SQLite repository in dir
// holds (0 when it has no database yet).
func countResources(t *testing.T, dir string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "shelfmark.db")); err != nil {
		return 0
	}
	store, err := setup.OpenStorage(context.Background(), "", dir, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := 0
	err = store.View(context.Background(), func(tx shelfmark.ReadTx) error {
		rows, err := tx.Changes(context.Background(), 0, 1<<20)
		n = len(rows)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// serveData starts `shelfmark serve` on data with the preservation root
// given, waits until it is ready and returns its base URL; the server is
// stopped when the test ends.
func serveData(t *testing.T, data, preservation string) string {
	t.Helper()
	bin := shelfmarkBinary(t)
	var out lockedBuffer
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", data, "--preservation", preservation,
			"--log-level", "warn", "--workers=false", "--blob-gc", "0"}, noBacklogLimit()...)...)
		cmd.Env = cleanEnv(filepath.Dir(bin))
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
		base := "http://" + addr
		hc := &http.Client{Timeout: time.Second}
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			select {
			case <-exited:
				end = time.Now()
				continue
			default:
			}
			if resp, err := hc.Get(base + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return base
				}
			}
		}
		if !strings.Contains(out.String(), "address already in use") {
			break
		}
	}
	t.Fatalf("shelfmark serve --data %s did not become ready:\n%s", data, out.String())
	return ""
}

// getText is the status and body of an anonymous GET, with the server's
// own address taken out.
func getText(t *testing.T, base, path string) string {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.ReplaceAll(string(body), base, "BASE"))
}

// rebuildDone reports whether the rebuild into the data directory dir
// finished (its database says so).
func rebuildDone(t *testing.T, dir string) bool {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), "", dir, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var done int64
	if err := store.View(context.Background(), func(tx shelfmark.ReadTx) (err error) {
		done, err = tx.Counter(context.Background(), preserve.CounterRebuildDone)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return done > 0
}
