package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/rdf"
)

// The crash test (rule R10): a child process serving the API is killed with
// SIGKILL at random moments while clients ingest through it; after every
// restart on the same data directory, every object acknowledged before the
// kill must be present and whole, and no partial object may be visible.
//
// The child is the shelfmark binary running serve, with none of this
// process's SHELFMARK_ variables. SHELFMARK_CRASH_SEED=n
// replays the kill delays of a logged run (the interleaving of requests
// still varies).

const (
	crashSeedEnv = "SHELFMARK_CRASH_SEED"

	crashRounds      = 20 // kills in a full run (at least 20)
	crashShortRounds = 3  // kills under -short
	crashClients     = 8
	crashBudget      = 75 * time.Second // the rounds stop (and fail) past this
	crashMinDelay    = 50 * time.Millisecond
	crashMaxDelay    = 400 * time.Millisecond
	crashStatements  = 54
	crashMaxErrors   = 25 // verification messages reported before giving up
)

// crashWork is one attempt to create a work. id is set once the server
// acknowledged it; an attempt without id was in flight at a kill (or
// failed), so the work may or may not exist.
type crashWork struct {
	token string
	round int
	id    string
	acked bool
	fs    *crashFileSet // attempted file set, if any
}

// crashFileSet is one attempt to create a file set under an acknowledged
// work, and to upload one file into it.
type crashFileSet struct {
	work     *crashWork
	id       string
	acked    bool
	file     *crashFile // attempted upload, if any
	checkFor int        // the round whose restart verifies it
}

type crashFile struct {
	id    string
	acked bool
}

// crashStats counts, for the summary, what the final listing found.
type crashStats struct {
	unknownWorksPresent, unknownWorksAbsent       int
	unknownFileSetsPresent, unknownFileSetsAbsent int
	unknownFilesPresent, unknownFilesAbsent       int
}

type crashTest struct {
	t       *testing.T
	dir     string
	base    string       // http://127.0.0.1:port of the running child
	verify  *http.Client // sends token
	token   string       // an administrator's API token, created once the first child is ready
	coll    string
	childMu sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has been waited for
	output  lockedBuffer  // output of every child, for failure reports

	mu       sync.Mutex
	works    map[string]*crashWork // by token
	order    []*crashWork          // in the order of their attempts
	fileSets []*crashFileSet
	nerrs    atomic.Int64
}

func TestCrash(t *testing.T) {
	start := time.Now()
	rounds := crashRounds
	if testing.Short() {
		rounds = crashShortRounds
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay the kill delays with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5e1f))

	c := &crashTest{t: t, dir: t.TempDir(), works: map[string]*crashWork{},
		verify: &http.Client{Timeout: 20 * time.Second}}
	t.Cleanup(func() {
		c.stopChild()
		if t.Failed() {
			t.Logf("output of the child processes:\n%s", c.output.String())
		}
	})

	deadline := start.Add(crashBudget)
	if d, ok := t.Deadline(); ok && d.Add(-15*time.Second).Before(deadline) {
		deadline = d.Add(-15 * time.Second)
	}

	c.startChild(0)
	c.authorize()
	c.coll = c.createCollection()
	done := 0
	for round := 1; round <= rounds; round++ {
		if time.Now().After(deadline) {
			t.Errorf("only %d of %d kill rounds ran in %v; the machine is too slow or the server too slow to restart",
				done, rounds, time.Since(start).Round(time.Millisecond))
			break
		}
		delay := crashMinDelay + time.Duration(rng.Int64N(int64(crashMaxDelay-crashMinDelay)))
		c.ingestAndKill(round, delay)
		done++
		c.startChild(round)
		c.verifyRound(round)
		if t.Failed() {
			t.Fatalf("round %d: acknowledged objects are missing or damaged after the restart", round)
		}
	}

	// The last child still runs: verify everything acknowledged in every
	// round, then list the collection for partial or unexpected works.
	c.verifyAll()
	stats := c.verifyListing()
	objects := c.verifyPreservation()

	var ackedWorks, unknownWorks, ackedFileSets, ackedFiles int
	for _, w := range c.order {
		if w.acked {
			ackedWorks++
		} else {
			unknownWorks++
		}
	}
	for _, fs := range c.fileSets {
		if fs.acked {
			ackedFileSets++
		}
		if fs.file != nil && fs.file.acked {
			ackedFiles++
		}
	}
	temps, _ := os.ReadDir(filepath.Join(c.dir, "blobs", "tmp"))
	t.Logf("crash test: %d kill rounds in %v; acknowledged %d works, %d file sets, %d files; "+
		"in flight at a kill: works %d present / %d absent (of %d), file sets %d present / %d absent, files %d present / %d absent; "+
		"%d temporary blob files left by kills; %d objects in the preservation copy, valid",
		done, time.Since(start).Round(time.Millisecond), ackedWorks, ackedFileSets, ackedFiles,
		stats.unknownWorksPresent, stats.unknownWorksAbsent, unknownWorks,
		stats.unknownFileSetsPresent, stats.unknownFileSetsAbsent,
		stats.unknownFilesPresent, stats.unknownFilesAbsent, len(temps), objects)
	if ackedWorks == 0 || ackedFiles == 0 {
		t.Errorf("nothing was acknowledged (%d works, %d files): the test exercised nothing", ackedWorks, ackedFiles)
	}
}

// errorf reports a verification failure, up to crashMaxErrors of them.
func (c *crashTest) errorf(format string, args ...any) {
	c.t.Helper()
	switch n := c.nerrs.Add(1); {
	case n <= crashMaxErrors:
		c.t.Errorf(format, args...)
	case n == crashMaxErrors+1:
		c.t.Errorf("more verification errors follow; not reported")
	}
}

// ---- the child process ----

// startChild starts the server on the data directory and waits until it is
// ready. It tries a few free ports, as another process may take the one it
// picked before the child listens.
func (c *crashTest) startChild(round int) {
	c.t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			c.t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		fmt.Fprintf(&c.output, "--- round %d, attempt %d: child on %s\n", round, attempt, addr)
		// serve with what the test needs of the settings: no
		// background jobs, no blob collection
		bin := shelfmarkBinary(c.t)
		args := append([]string{"serve", "--addr", addr, "--data", c.dir, "--durability", "safe",
			"--max-upload", "1MiB", "--log-level", "warn", "--workers=false", "--blob-gc", "0",
			// the preservation copy writes versions while the kills land
			"--preservation-window", "100ms"}, noBacklogLimit()...)
		cmd := exec.Command(bin, args...)
		cmd.Env = cleanEnv(filepath.Dir(bin))
		cmd.Stdout, cmd.Stderr = &c.output, &c.output
		if err := cmd.Start(); err != nil {
			c.t.Fatalf("starting the child: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		c.childMu.Lock()
		c.cmd, c.exited = cmd, exited
		c.childMu.Unlock()

		c.base = "http://" + addr
		if lastErr = c.waitReady(exited, 20*time.Second); lastErr == nil {
			return
		}
		c.stopChild()
		if !strings.Contains(c.output.String(), "address already in use") {
			break
		}
	}
	c.t.Fatalf("round %d: the server did not become ready: %v", round, lastErr)
}

func (c *crashTest) waitReady(exited <-chan struct{}, limit time.Duration) error {
	hc := &http.Client{Timeout: time.Second}
	defer hc.CloseIdleConnections()
	end := time.Now().Add(limit)
	for time.Now().Before(end) {
		select {
		case <-exited:
			return errors.New("the child exited before it was ready")
		default:
		}
		resp, err := hc.Get(c.base + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no 200 from /readyz within %v", limit)
}

// authorize creates an administrator's token against the data directory
// while the child serves (as `shelfmark token create --user admin --data
// DIR` would) and makes the verifying client send it; the clients of every
// round send it too.
func (c *crashTest) authorize() {
	c.t.Helper()
	c.token = adminToken(c.t, c.dir)
	if c.verify == nil {
		c.verify = &http.Client{Timeout: 20 * time.Second}
	}
	c.verify = withBearer(c.verify, c.token)
}

// stopChild kills the child, if one runs, and waits for it.
func (c *crashTest) stopChild() {
	c.childMu.Lock()
	cmd, exited := c.cmd, c.exited
	c.cmd, c.exited = nil, nil
	c.childMu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// ---- ingesting ----

// ingestAndKill runs the clients against the child and kills it with
// SIGKILL after delay.
func (c *crashTest) ingestAndKill(round int, delay time.Duration) {
	c.t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: crashClients, DisableCompression: true}
	hc := withBearer(&http.Client{Transport: tr, Timeout: 20 * time.Second}, c.token)
	defer tr.CloseIdleConnections()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range crashClients {
		wg.Go(func() { c.client(hc, round, i, &stop) })
	}
	time.Sleep(delay)

	c.childMu.Lock()
	cmd, exited := c.cmd, c.exited
	c.cmd, c.exited = nil, nil
	c.childMu.Unlock()
	select {
	case <-exited:
		stop.Store(true)
		wg.Wait()
		c.t.Fatalf("round %d: the server exited by itself before the kill", round)
	default:
	}
	stop.Store(true) // no new requests; those in flight meet the kill
	if err := cmd.Process.Kill(); err != nil {
		c.t.Fatalf("round %d: kill: %v", round, err)
	}
	<-exited
	wg.Wait()
	if ps := cmd.ProcessState; ps == nil || ps.Success() {
		c.t.Fatalf("round %d: the child was not killed (state %v)", round, ps)
	}
}

// client creates works (each in the collection, with 54 statements derived
// from its token) until stop; after every third acknowledged work it also
// creates a file set under it and uploads a file into that.
func (c *crashTest) client(hc *http.Client, round, client int, stop *atomic.Bool) {
	for seq := 0; !stop.Load(); seq++ {
		w := &crashWork{token: fmt.Sprintf("r%02d-c%d-n%d", round, client, seq), round: round}
		c.mu.Lock()
		c.works[w.token] = w
		c.order = append(c.order, w)
		c.mu.Unlock()

		body, _ := json.Marshal(map[string]any{"memberOf": []string{c.coll}, "metadata": json.RawMessage(workMetadata(w.token))})
		var res crashResource
		if !c.post(hc, stop, "/api/v1/works", "application/json", body, nil, &res) {
			return
		}
		c.mu.Lock()
		w.id, w.acked = res.ID, true
		c.mu.Unlock()
		if res.ID == "" || res.Kind != "work" {
			c.errorf("POST /api/v1/works answered %+v", res)
			return
		}
		if seq%3 != 0 || stop.Load() {
			continue
		}

		fs := &crashFileSet{work: w, checkFor: round}
		c.mu.Lock()
		w.fs = fs
		c.fileSets = append(c.fileSets, fs)
		c.mu.Unlock()
		body, _ = json.Marshal(map[string]any{"parent": w.id, "metadata": json.RawMessage(fileSetMetadata(w.token))})
		if !c.post(hc, stop, "/api/v1/filesets", "application/json", body, nil, &res) {
			return
		}
		c.mu.Lock()
		fs.id, fs.acked = res.ID, true
		c.mu.Unlock()
		if stop.Load() {
			return
		}

		data := fileContent(w.token)
		sum := sha256.Sum256(data)
		f := &crashFile{}
		c.mu.Lock()
		fs.file = f
		c.mu.Unlock()
		hdr := http.Header{"Content-Digest": {"sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"}}
		if !c.post(hc, stop, "/api/v1/resources/"+fs.id+"/files?name="+w.token+".bin", "application/octet-stream", data, hdr, &res) {
			return
		}
		c.mu.Lock()
		f.id, f.acked = res.ID, true
		c.mu.Unlock()
		if res.File == nil || res.File.Size != int64(len(data)) || res.File.Digests["sha-256"] != hex.EncodeToString(sum[:]) {
			c.errorf("upload of %s answered %+v, want size %d", w.token, res.File, len(data))
		}
	}
}

// post sends one request and decodes a 2xx answer into out. It returns
// false when the answer is not a 2xx received in full: after the kill that
// is expected (the object is unknown); before it, an error.
func (c *crashTest) post(hc *http.Client, stop *atomic.Bool, path, ctype string, body []byte, hdr http.Header, out *crashResource) bool {
	*out = crashResource{}
	status, resp, err := do(hc, http.MethodPost, c.base+path, ctype, body, hdr)
	switch {
	case err != nil && stop.Load():
		return false // in flight at the kill
	case err != nil:
		c.errorf("POST %s failed before the kill: %v", path, err)
		return false
	case status/100 != 2:
		c.errorf("POST %s: status %d: %s", path, status, resp)
		return false
	}
	if err := json.Unmarshal(resp, out); err != nil {
		c.errorf("POST %s: undecodable answer %q: %v", path, resp, err)
		return false
	}
	return true
}

func (c *crashTest) createCollection() string {
	c.t.Helper()
	body := []byte(`{"metadata": {"dcterms:title": "crash test"}}`)
	status, resp, err := do(c.verify, http.MethodPost, c.base+"/api/v1/collections", "application/json", body, nil)
	if err != nil || status != http.StatusCreated {
		c.t.Fatalf("creating the collection: %d %s %v", status, resp, err)
	}
	var res crashResource
	if err := json.Unmarshal(resp, &res); err != nil || res.ID == "" {
		c.t.Fatalf("creating the collection: %s %v", resp, err)
	}
	return res.ID
}

// ---- content ----

func fileSetMetadata(token string) []byte {
	b, _ := json.Marshal(map[string]string{"dcterms:title": "file set of " + token})
	return b
}

// fileContent is the file uploaded for a token: 1 to 16 KiB derived from it.
func fileContent(token string) []byte {
	seed := sha256.Sum256([]byte(token))
	size := 1024 + int(binary.LittleEndian.Uint16(seed[:])%(15*1024))
	out := make([]byte, 0, size+sha256.Size)
	for block := seed; len(out) < size; block = sha256.Sum256(block[:]) {
		out = append(out, block[:]...)
	}
	return out[:size]
}

// statementKeys returns the sorted statements of JSON metadata, as strings.
func statementKeys(raw []byte) ([]string, error) {
	stmts, err := rdf.ParseJSONMetadata(raw)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(stmts))
	for i, s := range stmts {
		keys[i] = fmt.Sprintf("%s %d %q @%s ^^%s", s.Predicate, s.Object.Kind, s.Object.Value, s.Object.Lang, s.Object.Datatype)
	}
	slices.Sort(keys)
	return keys, nil
}

// sameMetadata compares stored metadata with what was sent.
func sameMetadata(got, sent []byte, want int) error {
	g, err := statementKeys(got)
	if err != nil {
		return fmt.Errorf("stored metadata unreadable: %v", err)
	}
	s, err := statementKeys(sent)
	if err != nil {
		return fmt.Errorf("sent metadata unreadable: %v", err)
	}
	if len(s) != want {
		return fmt.Errorf("test bug: %d statements sent, want %d", len(s), want)
	}
	if !slices.Equal(g, s) {
		return fmt.Errorf("%d statements stored, %d sent; missing %q; not sent %q", len(g), len(s), without(s, g), without(g, s))
	}
	return nil
}

// without returns the sorted keys of a that b lacks (as multisets).
func without(a, b []string) []string {
	var out []string
	for i, j := 0, 0; i < len(a); i++ {
		for j < len(b) && b[j] < a[i] {
			j++
		}
		if j < len(b) && b[j] == a[i] {
			j++
			continue
		}
		out = append(out, a[i])
	}
	return out
}

// tokenOf returns the dcterms:identifier of stored metadata.
func tokenOf(raw []byte) string {
	stmts, err := rdf.ParseJSONMetadata(raw)
	if err != nil {
		return ""
	}
	for _, s := range stmts {
		if s.Predicate == "http://purl.org/dc/terms/identifier" && s.Object.Kind == shelfmark.Literal {
			return s.Object.Value
		}
	}
	return ""
}

// ---- verifying ----

type crashResource struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Parent   string          `json:"parent"`
	MemberOf []string        `json:"memberOf"`
	Metadata json.RawMessage `json:"metadata"`
	File     *struct {
		Size    int64             `json:"size"`
		Digests map[string]string `json:"digests"`
	} `json:"file"`
}

type crashPage struct {
	Items []struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	} `json:"items"`
	Next string `json:"next"`
}

// get reads a resource; found is false on 404.
func (c *crashTest) get(id string) (res *crashResource, found bool, err error) {
	status, b, err := do(c.verify, http.MethodGet, c.base+"/api/v1/resources/"+id, "", nil, nil)
	if err != nil {
		return nil, false, err
	}
	if status == http.StatusNotFound {
		return nil, false, nil
	}
	if status != http.StatusOK {
		return nil, false, fmt.Errorf("GET %s: status %d: %s", id, status, b)
	}
	res = &crashResource{}
	if err := json.Unmarshal(b, res); err != nil {
		return nil, false, fmt.Errorf("GET %s: %v", id, err)
	}
	return res, true, nil
}

// list pages through a listing (members or children) and returns its items.
func (c *crashTest) list(path string) ([]string, []string, error) {
	var ids, kinds []string
	next := path + "?limit=1000"
	for next != "" {
		status, b, err := do(c.verify, http.MethodGet, c.base+next, "", nil, nil)
		if err != nil {
			return nil, nil, err
		}
		if status != http.StatusOK {
			return nil, nil, fmt.Errorf("GET %s: status %d: %s", next, status, b)
		}
		var p crashPage
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, nil, fmt.Errorf("GET %s: %v", next, err)
		}
		for _, it := range p.Items {
			ids, kinds = append(ids, it.ID), append(kinds, it.Kind)
		}
		if p.Next == next {
			return nil, nil, fmt.Errorf("GET %s: the next page is the same page", next)
		}
		next = p.Next
	}
	return ids, kinds, nil
}

// checkWork verifies a stored work against the token it was sent with.
func (c *crashTest) checkWork(res *crashResource, token string) error {
	if res.Kind != "work" {
		return fmt.Errorf("work %s (%s) is a %q", res.ID, token, res.Kind)
	}
	if !slices.Contains(res.MemberOf, c.coll) {
		return fmt.Errorf("work %s (%s) is not in the collection %s: memberOf %v", res.ID, token, c.coll, res.MemberOf)
	}
	if err := sameMetadata(res.Metadata, workMetadata(token), crashStatements); err != nil {
		return fmt.Errorf("work %s (%s): %v", res.ID, token, err)
	}
	return nil
}

func (c *crashTest) checkFileSet(res *crashResource, w *crashWork) error {
	if res.Kind != "fileset" || res.Parent != w.id {
		return fmt.Errorf("file set %s of %s: kind %q parent %q, want fileset under %s", res.ID, w.token, res.Kind, res.Parent, w.id)
	}
	return sameMetadata(res.Metadata, fileSetMetadata(w.token), 1)
}

// checkFile verifies a stored file's record and its bytes.
func (c *crashTest) checkFile(res *crashResource, fs *crashFileSet) error {
	data := fileContent(fs.work.token)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	if res.Kind != "file" || res.Parent != fs.id || res.File == nil {
		return fmt.Errorf("file %s of %s: kind %q parent %q file %v", res.ID, fs.work.token, res.Kind, res.Parent, res.File)
	}
	if res.File.Size != int64(len(data)) || res.File.Digests["sha-256"] != want {
		return fmt.Errorf("file %s of %s: size %d sha-256 %s, want %d %s", res.ID, fs.work.token, res.File.Size, res.File.Digests["sha-256"], len(data), want)
	}
	status, b, err := do(c.verify, http.MethodGet, c.base+"/api/v1/resources/"+res.ID+"/content", "", nil, nil)
	if err != nil {
		return fmt.Errorf("content of file %s: %v", res.ID, err)
	}
	got := sha256.Sum256(b)
	if status != http.StatusOK || len(b) != len(data) || got != sum {
		return fmt.Errorf("content of file %s (%s): status %d, %d bytes with sha-256 %x; want %d bytes with %s",
			res.ID, fs.work.token, status, len(b), got, len(data), want)
	}
	return nil
}

// verifyAcked checks that acknowledged works, file sets and files are
// present and whole.
func (c *crashTest) verifyAcked(works []*crashWork, fileSets []*crashFileSet) {
	parallel(4, len(works), func(i int) {
		w := works[i]
		res, found, err := c.get(w.id)
		switch {
		case err != nil:
			c.errorf("acknowledged work %s (%s, round %d): %v", w.id, w.token, w.round, err)
		case !found:
			c.errorf("acknowledged work %s (%s, round %d) is gone after the kill", w.id, w.token, w.round)
		default:
			if err := c.checkWork(res, w.token); err != nil {
				c.errorf("acknowledged, round %d: %v", w.round, err)
			}
		}
	})
	parallel(4, len(fileSets), func(i int) {
		fs := fileSets[i]
		if !fs.acked {
			return
		}
		res, found, err := c.get(fs.id)
		switch {
		case err != nil:
			c.errorf("acknowledged file set %s (%s): %v", fs.id, fs.work.token, err)
		case !found:
			c.errorf("acknowledged file set %s (%s, round %d) is gone after the kill", fs.id, fs.work.token, fs.checkFor)
		default:
			if err := c.checkFileSet(res, fs.work); err != nil {
				c.errorf("acknowledged: %v", err)
			}
		}
		if fs.file == nil || !fs.file.acked {
			return
		}
		res, found, err = c.get(fs.file.id)
		switch {
		case err != nil:
			c.errorf("acknowledged file %s (%s): %v", fs.file.id, fs.work.token, err)
		case !found:
			c.errorf("acknowledged file %s (%s, round %d) is gone after the kill", fs.file.id, fs.work.token, fs.checkFor)
		default:
			if err := c.checkFile(res, fs); err != nil {
				c.errorf("acknowledged: %v", err)
			}
		}
	})
}

// verifyRound checks what was acknowledged in the round just killed.
func (c *crashTest) verifyRound(round int) {
	var works []*crashWork
	var fileSets []*crashFileSet
	c.mu.Lock()
	for _, w := range c.order {
		if w.round == round && w.acked {
			works = append(works, w)
		}
	}
	for _, fs := range c.fileSets {
		if fs.checkFor == round {
			fileSets = append(fileSets, fs)
		}
	}
	c.mu.Unlock()
	c.verifyAcked(works, fileSets)
}

// verifyAll checks everything acknowledged in every round, so that a
// later kill damaged nothing older either.
func (c *crashTest) verifyAll() {
	var works []*crashWork
	for _, w := range c.order {
		if w.acked {
			works = append(works, w)
		}
	}
	c.verifyAcked(works, c.fileSets)
}

// verifyListing pages through the collection: every work listed must be
// whole and be one that a client sent (acknowledged or in flight at a
// kill), listed once; every acknowledged work must be listed. Under works
// that got a file set (or were sent one), every child is checked the same
// way.
func (c *crashTest) verifyListing() crashStats {
	var st crashStats
	ids, kinds, err := c.list("/api/v1/resources/" + c.coll + "/members")
	if err != nil {
		c.errorf("listing the collection: %v", err)
		return st
	}
	seen := make(map[string]string, len(ids)) // token -> id
	var mu sync.Mutex
	parallel(4, len(ids), func(i int) {
		if kinds[i] != "work" {
			c.errorf("collection member %s is a %q", ids[i], kinds[i])
			return
		}
		res, found, err := c.get(ids[i])
		if err != nil || !found {
			c.errorf("listed member %s cannot be read: found %v, %v", ids[i], found, err)
			return
		}
		token := tokenOf(res.Metadata)
		w := c.works[token]
		if w == nil {
			c.errorf("listed work %s has metadata no client sent (identifier %q): %s", res.ID, token, res.Metadata)
			return
		}
		if err := c.checkWork(res, token); err != nil {
			c.errorf("partial work visible: %v", err)
		}
		if w.acked && w.id != res.ID {
			c.errorf("work %s was acknowledged as %s but is listed as %s", token, w.id, res.ID)
		}
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := seen[token]; dup {
			c.errorf("work %s is stored twice: %s and %s", token, prev, res.ID)
		}
		seen[token] = res.ID
	})
	for _, w := range c.order {
		_, listed := seen[w.token]
		switch {
		case w.acked && !listed:
			c.errorf("acknowledged work %s (%s) is not listed in the collection", w.id, w.token)
		case !w.acked && listed:
			st.unknownWorksPresent++
		case !w.acked:
			st.unknownWorksAbsent++
		}
	}

	var smu sync.Mutex
	parallel(4, len(c.fileSets), func(i int) {
		fs := c.fileSets[i]
		w := fs.work
		kids, kinds, err := c.list("/api/v1/resources/" + w.id + "/children")
		if err != nil {
			c.errorf("children of %s (%s): %v", w.id, w.token, err)
			return
		}
		if len(kids) > 1 {
			c.errorf("work %s (%s) has %d children %v; one file set was sent", w.id, w.token, len(kids), kids)
			return
		}
		smu.Lock()
		switch {
		case !fs.acked && len(kids) == 1:
			st.unknownFileSetsPresent++
		case !fs.acked:
			st.unknownFileSetsAbsent++
		}
		smu.Unlock()
		if len(kids) == 0 {
			if fs.acked {
				c.errorf("acknowledged file set %s is not a child of %s (%s)", fs.id, w.id, w.token)
			}
			return
		}
		if kinds[0] != "fileset" || (fs.acked && kids[0] != fs.id) {
			c.errorf("work %s (%s) has child %s, a %q; want file set %q", w.id, w.token, kids[0], kinds[0], fs.id)
			return
		}
		res, found, err := c.get(kids[0])
		if err != nil || !found {
			c.errorf("listed file set %s cannot be read: found %v, %v", kids[0], found, err)
			return
		}
		if err := c.checkFileSet(res, w); err != nil {
			c.errorf("partial file set visible: %v", err)
			return
		}
		stored := &crashFileSet{work: w, id: res.ID}
		files, kinds, err := c.list("/api/v1/resources/" + res.ID + "/children")
		if err != nil {
			c.errorf("children of file set %s (%s): %v", res.ID, w.token, err)
			return
		}
		ackedFile := fs.file != nil && fs.file.acked
		switch {
		case len(files) > 1 || (len(files) == 1 && fs.file == nil):
			c.errorf("file set %s (%s) has files %v; %d was sent", res.ID, w.token, files, btoi(fs.file != nil))
			return
		case len(files) == 0 && ackedFile:
			c.errorf("acknowledged file %s is not a child of %s (%s)", fs.file.id, res.ID, w.token)
			return
		case len(files) == 0:
			if fs.file != nil {
				smu.Lock()
				st.unknownFilesAbsent++
				smu.Unlock()
			}
			return
		}
		if !ackedFile {
			smu.Lock()
			st.unknownFilesPresent++
			smu.Unlock()
		}
		if kinds[0] != "file" || (ackedFile && files[0] != fs.file.id) {
			c.errorf("file set %s (%s) has child %s, a %q; want file %v", res.ID, w.token, files[0], kinds[0], fs.file)
			return
		}
		fres, found, err := c.get(files[0])
		if err != nil || !found {
			c.errorf("listed file %s cannot be read: found %v, %v", files[0], found, err)
			return
		}
		if err := c.checkFile(fres, stored); err != nil {
			c.errorf("partial file visible: %v", err)
		}
	})
	return st
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parallel runs f(0..n-1) on workers goroutines.
func parallel(workers, n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// verifyPreservation waits until the preservation copy has caught up with
// every change, stops the child, and checks the storage root that the
// kills interrupted: it validates, and the newest version of every
// acknowledged work's object lists the work and its acknowledged file
// sets. It returns how many objects the root holds.
func (c *crashTest) verifyPreservation() int {
	c.t.Helper()
	end := time.Now().Add(60 * time.Second)
	for {
		status, b, err := do(c.verify, http.MethodGet, c.base+"/metrics", "", nil, nil)
		if err == nil && status == http.StatusOK && strings.Contains(string(b), "\nshelfmark_preservation_lag_seconds 0\n") {
			break
		}
		if time.Now().After(end) {
			c.t.Fatalf("the preservation copy did not catch up within a minute: %d %v", status, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.stopChild()
	ctx := context.Background()
	fsys, err := ocfl.NewDirFS(filepath.Join(c.dir, "ocfl"))
	if err != nil {
		c.t.Fatal(err)
	}
	if rep := ocfl.ValidateRoot(ctx, fsys); !rep.Valid() || len(rep.Warnings) > 0 {
		c.t.Fatalf("the preservation copy after the kills: %s", rep)
	}
	root, err := ocfl.OpenRoot(ctx, fsys)
	if err != nil {
		c.t.Fatal(err)
	}
	sets := map[string][]string{}
	for _, fs := range c.fileSets {
		if fs.acked {
			sets[fs.work.id] = append(sets[fs.work.id], fs.id)
		}
	}
	for _, w := range c.order {
		if !w.acked {
			continue
		}
		obj, err := root.Open(ctx, preserve.ObjectID(shelfmark.ID(w.id)))
		if err != nil {
			c.errorf("work %s (round %d): no object in the preservation copy: %v", w.id, w.round, err)
			continue
		}
		rc, err := obj.Open(ctx, obj.Head(), preserve.RecordPath)
		if err != nil {
			c.errorf("work %s: %v", w.id, err)
			continue
		}
		var rec preserve.Record
		err = json.NewDecoder(rc).Decode(&rec)
		rc.Close()
		if err != nil {
			c.errorf("work %s: %s: %v", w.id, preserve.RecordPath, err)
			continue
		}
		held := map[string]bool{}
		for _, r := range rec.Resources {
			held[r.ID] = true
		}
		if !held[w.id] {
			c.errorf("work %s: its object's record does not list it", w.id)
		}
		for _, id := range sets[w.id] {
			if !held[id] {
				c.errorf("work %s: its object's newest version lacks the acknowledged file set %s", w.id, id)
			}
		}
	}
	n := 0
	if err := root.Objects(ctx, func(string, error) error { n++; return nil }); err != nil {
		c.t.Fatal(err)
	}
	return n
}
