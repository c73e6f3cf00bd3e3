package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIngestRemote: `shelfmark ingest --server URL` against a served
// process stores a tree of books over the REST API, reports a bad item and
// exits non-zero; once the item is mended, a re-run (with SHELFMARK_SERVER
// and SHELFMARK_TOKEN) stores it, skips the rest and exits zero; --server
// with --data is refused, and so is a run without a token (the server
// takes no anonymous writes).
func TestIngestRemote(t *testing.T) {
	dir := t.TempDir()
	srv := &crashTest{t: t, dir: filepath.Join(dir, "data"), works: map[string]*crashWork{}}
	t.Cleanup(func() {
		srv.stopChild()
		if t.Failed() {
			t.Logf("output of the server:\n%s", srv.output.String())
		}
	})
	srv.startChild(0) // `serve` on a free 127.0.0.1 port (see crash_test.go)
	token := adminToken(t, srv.dir)

	hc := withBearer(&http.Client{Timeout: 20 * time.Second}, token)
	resp, err := hc.Post(srv.base+"/api/v1/collections", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var coll struct{ ID string }
	err = json.NewDecoder(resp.Body).Decode(&coll)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("collection: %d %v", resp.StatusCode, err)
	}

	tree := filepath.Join(dir, "tree")
	books, pages := 5, 3
	write := func(p string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for b := range books {
		for p := 1; p <= pages; p++ {
			write(filepath.Join(tree, fmt.Sprintf("book%d", b), fmt.Sprintf("page_%d.txt", p)), []byte(fmt.Sprintf("book %d page %d", b, p)))
		}
	}
	broken := filepath.Join(tree, "broken", "metadata.json")
	write(filepath.Join(tree, "broken", "page_1.txt"), []byte("a page of a book with bad metadata"))
	write(broken, []byte(`{"dc:title": 5}`))

	run := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := childCommand(t, env, append([]string{"ingest", tree}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	wantExit := func(err error, code int, out string) {
		t.Helper()
		var ee *exec.ExitError
		switch {
		case code == 0 && err != nil, code != 0 && !errors.As(err, &ee):
			t.Fatalf("ingest: %v, want exit code %d\n%s", err, code, out)
		case code != 0 && ee.ExitCode() != code:
			t.Fatalf("ingest exited %d, want %d\n%s", ee.ExitCode(), code, out)
		}
	}

	out, err := run(nil, "--server", srv.base, "--collection", coll.ID)
	wantExit(err, 1, out)
	if !strings.Contains(out, "unauthorized") {
		t.Errorf("a run without a token: the output lacks %q:\n%s", "unauthorized", out)
	}

	out, err = run(nil, "--server", srv.base, "--token", token, "--collection", coll.ID, "--workers", "2", "--batch", "2")
	wantExit(err, 1, out)
	realTree, err := filepath.EvalSymlinks(tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 stored, 0 skipped (stored before), 1 failed; 15 files", "failed dir:" + filepath.ToSlash(realTree) + "/broken: metadata.json:", "1 items failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("first run: the output lacks %q:\n%s", want, out)
		}
	}

	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	out, err = run([]string{"SHELFMARK_SERVER=" + srv.base, "SHELFMARK_TOKEN=" + token}, "--collection", coll.ID)
	wantExit(err, 0, out)
	if want := "1 stored, 5 skipped (stored before), 0 failed; 1 files"; !strings.Contains(out, want) {
		t.Errorf("second run: the output lacks %q:\n%s", want, out)
	}

	out, err = run(nil, "--server", srv.base, "--data", filepath.Join(dir, "local"))
	wantExit(err, 1, out)
	if !strings.Contains(out, "--data and --server exclude each other") {
		t.Errorf("--server with --data: %s", out)
	}

	// the server holds the six books, each whole
	resp, err = hc.Get(srv.base + "/api/v1/resources/" + coll.ID + "/members?limit=100")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var members struct{ Items []struct{ ID string } }
	if err := json.Unmarshal(body, &members); err != nil || len(members.Items) != books+1 {
		t.Fatalf("the collection holds %d works, want %d: %v %s", len(members.Items), books+1, err, body)
	}
	for _, m := range members.Items {
		resp, err := hc.Get(srv.base + "/api/v1/resources/" + m.ID + "/children")
		if err != nil {
			t.Fatal(err)
		}
		var kids struct{ Items []struct{ Position int } }
		err = json.NewDecoder(resp.Body).Decode(&kids)
		resp.Body.Close()
		if err != nil || (len(kids.Items) != pages && len(kids.Items) != 1) || kids.Items[0].Position != 1 {
			t.Errorf("work %s: children %+v, %v", m.ID, kids.Items, err)
		}
	}
}
