package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
	"github.com/shelfmark/shelfmark/sqlite"
)

// readmeWalkHeading is the README section whose first sh block is the walk.
const readmeWalkHeading = "## Five minutes with the API"

// readmeWalkAddr is the address the walk is printed with (serve's default).
const readmeWalkAddr = "127.0.0.1:8080"

// TestReadmeWalk runs the README's five-minute walk exactly as printed
// (only its address is changed, to a free port) with bash, curl, jq and
// openssl, from the state a newcomer is in after `make serve` alone: a
// directory holding the binary where the Makefile builds it, `serve`
// started the way the Makefile starts it with an empty ./shelfmark-data,
// and a PATH without any shelfmark on it (no `make install`). It checks
// that the walk prints what the paragraph after it says, and that it stops
// at the first request that fails.
func TestReadmeWalk(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "openssl", "base64", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
				t.Fatalf("the README's walk needs %s: %v", tool, err)
			}
			t.Skipf("the README's walk needs %s (not installed)", tool)
		}
	}
	script := readmeWalk(t)
	mk := readMakefile(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, mk.bin)
	build := exec.Command("go", "build", "-tags", mk.tags, "-o", bin, "./cmd/shelfmark")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", mk.tags, err, out)
	}
	env := newcomerEnv()
	addr := startReadmeServe(t, "./"+mk.bin, dir, env)
	if !strings.Contains(script, readmeWalkAddr) {
		t.Fatalf("the walk does not name %s:\n%s", readmeWalkAddr, script)
	}
	script = strings.ReplaceAll(script, readmeWalkAddr, addr)

	run := func(name, script string) (string, string, error) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		walk := exec.CommandContext(ctx, "bash", name)
		walk.Dir, walk.Env, walk.WaitDelay = dir, env, 10*time.Second
		var stdout, stderr bytes.Buffer
		walk.Stdout, walk.Stderr = &stdout, &stderr
		err := walk.Run()
		t.Logf("bash %s (%v)\n--- stdout\n%s--- stderr\n%s", name, err, stdout.String(), stderr.String())
		return stdout.String(), stderr.String(), err
	}

	// a request that fails stops the walk: here the first one, to an API
	// that is not there
	const api = "/api/v1\n"
	if !strings.Contains(script, api) {
		t.Fatalf("the walk does not set API to .../api/v1:\n%s", script)
	}
	out, _, err := run("broken.sh", strings.Replace(script, api, "/api/v0\n", 1))
	if err == nil || strings.Contains(out, "collection") {
		t.Errorf("the walk against a missing API: exit %v, printed %q; want it stopped at its first request", err, out)
	}

	out, stderr, err := run("walk.sh", script)
	if err != nil {
		t.Fatalf("the walk failed: %v", err)
	}
	if stderr != "" {
		t.Errorf("the walk wrote to standard error:\n%s", stderr)
	}
	checkReadmeWalk(t, out, dir, addr)
}

// makefile is what the Makefile says of building and serving.
type makefile struct {
	bin  string // where make builds the binary, relative to the clone
	tags string // the build tags
}

// readMakefile reads BIN and TAGS from the Makefile, and fails unless
// `make serve` runs ./$(BIN) serve $(SERVE), as TestReadmeWalk does.
func readMakefile(t *testing.T) makefile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var mk makefile
	var serve []string
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if f := strings.Fields(line); len(f) >= 3 && f[1] == ":=" {
			switch f[0] {
			case "BIN":
				mk.bin = strings.Join(f[2:], " ")
			case "TAGS":
				mk.tags = makeValue(t, strings.Join(f[2:], " "))
			}
		}
		if strings.HasPrefix(line, "serve:") {
			for _, r := range lines[i+1:] {
				if !strings.HasPrefix(r, "\t") {
					break
				}
				serve = append(serve, strings.TrimSpace(r))
			}
		}
	}
	if mk.bin == "" || mk.tags == "" || !slices.Equal(serve, []string{"./$(BIN) serve $(SERVE)"}) {
		t.Fatalf("the Makefile: BIN %q, TAGS %q, serve runs %q; TestReadmeWalk starts ./$(BIN) serve", mk.bin, mk.tags, serve)
	}
	return mk
}

// makeValue is what make makes of a variable's value: the output of the
// command of a $(shell …), run in the clone, or the value itself.
func makeValue(t *testing.T, v string) string {
	t.Helper()
	cmd, ok := strings.CutPrefix(v, "$(shell ")
	if !ok {
		return v
	}
	cmd, ok = strings.CutSuffix(cmd, ")")
	if !ok {
		t.Fatalf("the Makefile: %q is not a whole $(shell …)", v)
	}
	c := exec.Command("sh", "-c", cmd)
	c.Dir = ".."
	out, err := c.Output()
	if err != nil {
		t.Fatalf("the Makefile's %s: %v", cmd, err)
	}
	return strings.TrimSpace(string(out))
}

// newcomerEnv is the environment of a newcomer's shell: this process's
// environment without its SHELFMARK_ variables, and without any directory
// on PATH that holds a shelfmark command (nobody ran make install).
func newcomerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHELFMARK_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "shelfmark")); err != nil {
			path = append(path, d)
		}
	}
	return append(env, "PATH="+strings.Join(path, string(os.PathListSeparator)))
}

// readmeWalk returns the sh block that follows readmeWalkHeading in the
// README.
func readmeWalk(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n"+readmeWalkHeading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", readmeWalkHeading)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		t.Fatalf("the section %q has no sh block", readmeWalkHeading)
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatalf("the sh block of %q does not end", readmeWalkHeading)
	}
	return block + "\n"
}

// startReadmeServe runs `shelfmark serve --addr ADDR` in dir (so its data
// is ./shelfmark-data there) until the test ends, and returns ADDR once it
// is ready. It tries a few free ports, as another process may take the one
// it picked first.
func startReadmeServe(t *testing.T, bin, dir string, env []string) string {
	t.Helper()
	var output lockedBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of serve:\n%s", output.String())
		}
	})
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		serve := exec.Command(bin, "serve", "--addr", addr)
		serve.Dir, serve.Env, serve.Stdout, serve.Stderr = dir, env, &output, &output
		if err := serve.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = serve.Wait(); close(exited) }()
		stop := func() {
			_ = serve.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = serve.Process.Kill()
				<-exited
			}
		}
		if serving(exited, "http://"+addr) {
			t.Cleanup(stop)
			return addr
		}
		stop()
		if !strings.Contains(output.String(), "address already in use") {
			break
		}
	}
	t.Fatal("shelfmark serve did not become ready")
	return ""
}

// serving polls base/readyz until it answers 200 (true), or the server
// exits or a minute passes (false).
func serving(exited <-chan struct{}, base string) bool {
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return false
		default:
		}
		if status, _, err := do(hc, http.MethodGet, base+"/readyz", "", nil, nil); err == nil && status == http.StatusOK {
			return true
		}
	}
	return false
}

// checkReadmeWalk checks the walk's output against the paragraph after it:
// the collection and work ids, the work as Turtle, the stored file with
// its SHA-256 and identified format, "409 digest_mismatch", the order's
// answer, the two pages in their new order, the edited metadata, "412
// precondition", the collection's member, 204 and 410.
// The order and the file's page are checked against the data directory.
func checkReadmeWalk(t *testing.T, out, dir, addr string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	id := `([0-9bcdfghjkmnpqrstvwxz]{9})`
	want := func(what string, re *regexp.Regexp) []string {
		t.Helper()
		for len(lines) > 0 {
			line := lines[0]
			lines = lines[1:]
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		}
		t.Fatalf("the walk did not print %s (%s) where the README says", what, re)
		return nil
	}
	coll := want("the collection's id", regexp.MustCompile(`^collection `+id+`$`))[1]
	work := want("the work's id", regexp.MustCompile(`^work `+id+`$`))[1]
	if coll == work {
		t.Fatalf("the collection and the work have the same id %s", coll)
	}
	// the work as Turtle: every line up to the stored file's JSON
	var turtle []string
	for len(lines) > 0 && lines[0] != "{" {
		turtle, lines = append(turtle, lines[0]), lines[1:]
	}
	triples, err := rdf.Parse(strings.NewReader(strings.Join(turtle, "\n")), "text/turtle", "")
	if err != nil {
		t.Fatalf("the work as Turtle: %v", err)
	}
	var got []string
	for _, tr := range triples {
		if tr.Subject.Value != "http://"+addr+"/api/v1/resources/"+work {
			t.Errorf("the Turtle is about %s, not the work", tr.Subject.Value)
		}
		got = append(got, strings.TrimPrefix(tr.Predicate, shelfmark.NSDC)+" "+tr.Object.Value+"@"+tr.Object.Lang)
	}
	slices.Sort(got)
	if want := []string{"date 1899@", "title Atlas of the Rhine@en", "title Rheinatlas@de"}; !slices.Equal(got, want) {
		t.Errorf("the work as Turtle says %q, want %q", got, want)
	}

	png, err := os.ReadFile(filepath.Join(dir, "page1.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("page1.png is not a PNG image (%v)", err)
	}
	sum := sha256.Sum256(png)
	fileID := want("the stored file's id", regexp.MustCompile(`^  "id": "`+id+`",$`))[1]
	want("the stored file's SHA-256", regexp.MustCompile(`^\s+"sha-256": "`+hex.EncodeToString(sum[:])+`"$`))
	want("the identified format", regexp.MustCompile(`^\s+"pronom": "fmt/11",$`))
	want("the format's version", regexp.MustCompile(`^\s+"version": "1.0",$`))
	want("409 digest_mismatch", regexp.MustCompile(`^409 digest_mismatch$`))
	want("the order's answer", regexp.MustCompile(`^\{"children":2,"id":"`+work+`",`))
	page := regexp.MustCompile(`^\{"id":"` + id + `","position":([12])\}$`)
	first, second := want("the first page", page), want("the second page", page)
	if first[2] != "1" || second[2] != "2" || first[1] == second[1] {
		t.Fatalf("the pages: %s and %s", first[0], second[0])
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(want("the edited metadata", regexp.MustCompile(`^\{"dc:date":.*\}$`))[0]), &meta); err != nil || meta["dc:date"] != "1900" {
		t.Errorf("the edited metadata: %v %v", meta, err)
	}
	want("412 precondition", regexp.MustCompile(`^412 precondition$`))
	want("the collection's member", regexp.MustCompile(`^"`+work+`"$`))
	want("204", regexp.MustCompile(`^204$`))
	want("410", regexp.MustCompile(`^410$`))
	if len(lines) != 0 {
		t.Errorf("the walk printed more after 410: %q", lines)
	}

	// "two pages (file sets)": the one created second comes first now, and
	// the file went into the one created first
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "shelfmark-data", "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	var rows [3]*shelfmark.ResourceRow
	err = store.View(ctx, func(tx shelfmark.ReadTx) error {
		for i, s := range []string{first[1], second[1], fileID} {
			k, err := ids.Key(shelfmark.ID(s))
			if err != nil {
				return err
			}
			if rows[i], err = tx.Resource(ctx, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p2, p1, file := rows[0], rows[1], rows[2]
	if p1 == nil || p2 == nil || file == nil || p1.Kind != shelfmark.KindFileSet || p2.Kind != shelfmark.KindFileSet || file.Kind != shelfmark.KindFile {
		t.Fatalf("the pages and the file: %+v %+v %+v", p2, p1, file)
	}
	if p2.Key < p1.Key || file.Parent != p1.Key {
		t.Errorf("the pages are not in their new order (the second made listed first), or the file is not in the first: "+
			"listed first %d, second %d, the file's parent %d", p2.Key, p1.Key, file.Parent)
	}
	if p1.Deleted == nil || p2.Deleted == nil || file.Deleted == nil {
		t.Errorf("deleting the work left its file sets or file alive")
	}
}
