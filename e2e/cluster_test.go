package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shelfmark/shelfmark/blob/s3test"
)

// TestCluster is the fault test of a cluster on loopback: HAProxy (with
// the documented docs/deploy/haproxy.cfg) in front of three `shelfmark
// serve` processes and two `shelfmark worker` processes, on a PostgreSQL
// primary with a streaming replica and an S3 store (versitygw). Sixteen
// clients create works with files through HAProxy, and a harvester pages
// through OAI-PMH ListRecords, while the test kills (SIGKILL) one server,
// then the one elected to run the OAI-PMH projector, then a worker, and
// restarts the S3 store and the replica. Afterwards:
//
//   - every acknowledged work is readable through HAProxy, its file's bytes
//     identical (SHA-256), whole (one file set holding the original file),
//     and was readable at once after its creation on whichever server
//     HAProxy chose (with the write position the creation answered with);
//   - no id was minted twice;
//   - the harvests list every public work exactly once, and nothing else:
//     the pass under way when the load stopped and a slow pass that read
//     one page after each fault (its resumption tokens cross them all),
//     both continued to their end, and a fresh one;
//   - every job ran to completion (each file characterized).
//
// Writes go through the bulk API, which makes a client's retry safe: bytes
// to POST /api/v1/blobs (keyed by their SHA-256), the work with its file
// set and file to POST /api/v1/groups under a source key the client chose.
// A request whose answer was lost (connection reset, 502, 503) is sent
// again; a group stored by the lost attempt answers 409 with its id, so the
// outcome becomes known and nothing is stored twice. The counts go to the
// log and to a JSON report (its path is logged).
//
// Each process is the shelfmark binary built for the suites; S3 storage,
// read replicas and the leader election are used when the serve command
// has their flags (and its metrics the election), and the log says which
// were.

const (
	clusterClients       = 16
	clusterServers       = 3
	clusterWorkers       = 2
	clusterProgress      = 60 // works acknowledged between faults
	clusterShortProgress = 8
	clusterPageSize      = 25 // OAI-PMH page size of the servers
	clusterDomain        = "cluster.example.org"
	clusterS3Access      = "clusteraccess"
	clusterS3Secret      = "clustersecret-clustersecret"
	clusterBucket        = "shelfmark"
	clusterReportEnv     = "SHELFMARK_CLUSTER_REPORT"    // path of the JSON report (default: in the temporary directory)
	clusterKeepLogsEnv   = "SHELFMARK_CLUSTER_KEEP_LOGS" // set: keep the processes' logs when the test passes too
)

// clusterWork is one work a client set out to create, under its source key.
type clusterWork struct {
	key    string
	public bool
	name   string
	media  string
	size   int
	sha    string // hex SHA-256 of the file's bytes
	acked  bool   // the server answered 201 or 409 (stored)
	known  bool   // acked, or found by the final lookup
	exists bool   // stored (when known)
	// ids minted for it: work, file set and file (the latter two when the
	// acknowledgement named them, or the final walk found them)
	id, fileSet, file string
	derived           int // files the jobs derived (extracted text)
}

// clusterStats counts what happened, for the log and the JSON report.
type clusterStats struct {
	WorksAcked        int            `json:"worksAcknowledged"`
	WorksAckedBy409   int            `json:"worksAcknowledgedOnRetryBy409"`
	WorksUnknown      int            `json:"worksUnknownAtStop"`
	WorksUnknownFound int            `json:"worksUnknownFoundStored"`
	PublicWorks       int            `json:"publicWorks"`
	Files             int            `json:"files"`
	DerivedFiles      int            `json:"filesDerivedByJobs"`
	LargeFiles        int            `json:"filesOver64KiB"`
	FileBytes         int64          `json:"fileBytes"`
	Retries           map[string]int `json:"retries"` // by cause
	ReadYourWrites    int64          `json:"worksReadRightAfterCreation"`
	Replays           int64          `json:"acknowledgedGroupsSentAgainAnswered409"`
	IDs               int            `json:"idsMinted"`
	HarvestPasses     int            `json:"harvestPassesDuringLoad"`
	HarvestPages      int64          `json:"harvestPages"`
	HarvestRetries    int64          `json:"harvestRetries"`
	HarvestInFlight   int            `json:"recordsInFlightHarvest"`
	HarvestSlow       int            `json:"recordsSlowHarvest"`
	SlowPasses        int            `json:"slowHarvestPasses"`
	SlowPages         int            `json:"slowHarvestPagesDuringFaults"`
	HarvestFinal      int            `json:"recordsFinalHarvest"`
	JobsDone          int            `json:"jobsDone"`
	JobsByQueue       map[string]int `json:"jobsDoneByQueue"`
	JobsRetried       int            `json:"jobsPutBackForRetry"`
	// transactions the replica ran after its restart (the reads of the
	// verification and the final harvest among them)
	ReplicaTransactions int64           `json:"replicaTransactionsAfterRestart"`
	Faults              []string        `json:"faults"`
	Features            map[string]bool `json:"features"`
	LeaderTakeover      string          `json:"leaderTakeover,omitempty"`
	Seconds             float64         `json:"seconds"`
}

type clusterServe struct {
	*proc
	addr, metrics string
}

type clusterTest struct {
	t      *testing.T
	start  time.Time
	dir    string
	logDir string
	short  bool

	pg      *pgPair
	s3      *proc
	s3Addr  string
	haproxy *proc
	lb      string // http://127.0.0.1:port of HAProxy
	servers []*clusterServe
	workers []*proc

	useS3, useReplica, useElection bool

	token string
	admin *http.Client // sends the token
	anon  *http.Client

	mu      sync.Mutex
	works   map[string]*clusterWork
	retries map[string]int
	acked   atomic.Int64
	// works read right after their creation (read-your-writes)
	readBacks atomic.Int64
	// acknowledged groups sent again (answered 409 with their id)
	replays atomic.Int64
	abort   atomic.Bool // the test failed: clients and harvester give up
	faults  []string
	nerrs   atomic.Int64
}

func TestCluster(t *testing.T) {
	c := &clusterTest{t: t, start: time.Now(), dir: t.TempDir(), short: testing.Short(),
		works: map[string]*clusterWork{}, retries: map[string]int{}}
	haproxy := requireTool(t, "HAProxy", "/usr/sbin/haproxy", "haproxy")
	var gw string
	if d := os.Getenv("SHELFMARK_BUILD_DIR"); d != "" {
		gw = filepath.Join(d, "bin", "versitygw")
	}
	versitygw := requireTool(t, "versitygw", os.Getenv("SHELFMARK_VERSITYGW"), gw, "versitygw")
	if pgBindir() == "" {
		requireTool(t, "PostgreSQL (initdb, pg_ctl, pg_basebackup)", "pg_basebackup")
	}
	logDir, err := os.MkdirTemp("", "shelfmark-cluster-logs-")
	if err != nil {
		t.Fatal(err)
	}
	c.logDir = logDir
	t.Cleanup(func() {
		if t.Failed() || os.Getenv(clusterKeepLogsEnv) != "" {
			t.Logf("the processes' logs are kept in %s", logDir)
			return
		}
		os.RemoveAll(logDir)
	})
	c.useS3 = hasFlag(t, "serve", "s3-endpoint") && hasFlag(t, "worker", "s3-endpoint")
	c.useReplica = hasFlag(t, "serve", "read-database")

	c.pg = startPGPair(t, logDir)
	t.Logf("PostgreSQL: primary on %d, streaming replica on %d", c.pg.primaryPort, c.pg.replicaPort)
	c.startS3(versitygw)
	c.createAccount()
	c.startServers()
	c.startWorkers()
	c.startHAProxy(haproxy)
	c.admin = withBearer(&http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, c.token)
	c.anon = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	c.useElection = c.electing()
	t.Logf("cluster up in %v: S3 store %v, read replica %v, leader election %v; logs in %s",
		time.Since(c.start).Round(time.Millisecond), c.useS3, c.useReplica, c.useElection, logDir)

	// the load
	ctx, stopLoad := context.WithCancel(context.Background())
	h := &clusterHarvester{c: c, pause: make(chan struct{}), paused: make(chan struct{})}
	var clients sync.WaitGroup
	t.Cleanup(func() {
		// after a failure: nothing may log once the test has ended
		c.abort.Store(true)
		stopLoad()
		clients.Wait()
		h.stop()
	})
	go h.run()
	for i := 0; i < clusterClients; i++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			c.client(ctx, i)
		}()
	}
	c.faultSequence(h)
	stopLoad()
	clients.Wait()
	h.stop()
	t.Logf("load stopped after %v: %d works acknowledged", time.Since(c.start).Round(time.Millisecond), c.acked.Load())

	// afterwards
	c.drainJobs()
	c.resolveUnknown()
	ids := c.verifyWorks()
	stats := c.stats()
	stats.IDs = ids
	stats.ReadYourWrites = c.readBacks.Load()
	stats.Replays = c.replays.Load()
	stats.HarvestPasses, stats.HarvestPages, stats.HarvestRetries = h.passes, h.pages.Load(), h.retries.Load()
	stats.HarvestInFlight, stats.HarvestSlow, stats.HarvestFinal = c.verifyHarvests(h)
	stats.SlowPasses, stats.SlowPages = h.slowPasses, h.slowPages
	stats.JobsDone, stats.JobsRetried, stats.JobsByQueue = c.countJobs()
	if c.useReplica {
		stats.ReplicaTransactions = c.replicaReads()
		if stats.ReplicaTransactions == 0 {
			t.Error("the servers read nothing from the replica")
		}
	}
	stats.Seconds = time.Since(c.start).Seconds()
	c.report(stats)
}

// errorf reports a failure, up to 30 of them.
func (c *clusterTest) errorf(format string, args ...any) {
	c.t.Helper()
	switch n := c.nerrs.Add(1); {
	case n <= 30:
		c.t.Errorf(format, args...)
	case n == 31:
		c.t.Errorf("more errors follow; not reported")
	}
}

func (c *clusterTest) fault(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.faults = append(c.faults, s)
	c.mu.Unlock()
	c.t.Logf("%7.1fs fault: %s (%d works acknowledged)", time.Since(c.start).Seconds(), s, c.acked.Load())
}

// ---- starting the cluster ----

func (c *clusterTest) startS3(versitygw string) {
	t := c.t
	port := freePorts(t, 1)[0]
	c.s3Addr = "127.0.0.1:" + strconv.Itoa(port)
	dir := filepath.Join(c.dir, "s3")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.s3 = &proc{name: "versitygw", path: versitygw,
		args: []string{"--access", clusterS3Access, "--secret", clusterS3Secret, "--port", c.s3Addr, "--quiet", "posix", dir},
		log:  filepath.Join(c.logDir, "versitygw.log")}
	t.Cleanup(c.s3.kill)
	if err := c.s3.start(); err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.s3Addr, time.Minute); err != nil {
		t.Fatalf("versitygw: %v\n%s", err, c.s3.tail(20))
	}
	if c.useS3 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s3test.Client("http://"+c.s3Addr, clusterS3Access, clusterS3Secret).CreateBucket(ctx,
			&s3.CreateBucketInput{Bucket: aws.String(clusterBucket)}); err != nil {
			t.Fatalf("creating the bucket: %v\n%s", err, c.s3.tail(20))
		}
	}
}

// createAccount makes the database's schema and an administrator with an
// API token, with the CLI as an operator would.
func (c *clusterTest) createAccount() {
	dsn := c.pg.url(c.pg.primaryPort)
	if _, ok := runShelfmark(c.t, "", "user", "add", "ops", "--admin", "--database", dsn); !ok {
		c.t.Fatal("user add failed")
	}
	out, ok := runShelfmark(c.t, "", "token", "create", "--user", "ops", "--note", "cluster test", "--database", dsn)
	if !ok {
		c.t.Fatal("token create failed")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	c.token = lines[len(lines)-1]
}

// storeArgs are the flags naming the content store of a serve or worker
// process with its own data directory.
func (c *clusterTest) storeArgs(data string) []string {
	args := []string{"--database", c.pg.url(c.pg.primaryPort), "--data", data}
	if c.useS3 {
		args = append(args, "--storage", "s3://"+clusterBucket+"/cluster", "--s3-endpoint", "http://"+c.s3Addr,
			"--s3-access-key", clusterS3Access, "--s3-secret-key", clusterS3Secret)
	}
	return args
}

// dataDir is the --data of process name: its own with S3, else the shared
// volume.
func (c *clusterTest) dataDir(name string) string {
	d := filepath.Join(c.dir, "shared")
	if c.useS3 {
		d = filepath.Join(c.dir, name)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		c.t.Fatal(err)
	}
	return d
}

func (c *clusterTest) child(name string, args []string) *proc {
	p := &proc{name: name, path: shelfmarkBinary(c.t), args: args, log: filepath.Join(c.logDir, name+".log")}
	c.t.Cleanup(p.kill)
	return p
}

func (c *clusterTest) startServers() {
	ports := freePorts(c.t, 2*clusterServers+1)
	for i := 0; i < clusterServers; i++ {
		name := fmt.Sprintf("serve%d", i+1)
		s := &clusterServe{addr: "127.0.0.1:" + strconv.Itoa(ports[2*i]), metrics: "127.0.0.1:" + strconv.Itoa(ports[2*i+1])}
		args := append([]string{"serve", "--addr", s.addr, "--metrics-addr", s.metrics, "--workers=false",
			"--base-url", "http://" + clusterDomain, "--oai-domain", clusterDomain, "--oai-page-size", strconv.Itoa(clusterPageSize),
			"--db-max-conns", "8", "--max-upload", "16MiB", "--blob-gc", "0", "--log-level", "info"},
			c.storeArgs(c.dataDir(name))...)
		if c.useReplica {
			args = append(args, "--read-database", c.pg.url(c.pg.replicaPort))
		}
		s.proc = c.child(name, args)
		if err := s.start(); err != nil {
			c.t.Fatal(err)
		}
		c.servers = append(c.servers, s)
	}
	c.lb = "http://127.0.0.1:" + strconv.Itoa(ports[len(ports)-1])
	for _, s := range c.servers {
		c.waitReady(s)
	}
}

func (c *clusterTest) waitReady(s *clusterServe) {
	if err := waitHTTP("http://"+s.addr+"/readyz", 2*time.Minute); err != nil {
		c.t.Fatalf("%s did not become ready: %v\n%s", s.name, err, s.tail(30))
	}
}

func (c *clusterTest) startWorkers() {
	for i := 0; i < clusterWorkers; i++ {
		name := fmt.Sprintf("worker%d", i+1)
		// short job time limits and lease grace: a killed worker's jobs
		// come back within seconds
		args := append([]string{"worker", "--log-level", "debug", "--job-timeout", "characterize=15s,derive=30s,text=30s,ocr=60s",
			"--lease-grace", "2s"}, c.storeArgs(c.dataDir(name))...)
		w := c.child(name, args)
		if err := w.start(); err != nil {
			c.t.Fatal(err)
		}
		c.workers = append(c.workers, w)
	}
	for _, w := range c.workers {
		if err := waitFor(2*time.Minute, func() error {
			b, _ := os.ReadFile(w.log)
			if !bytes.Contains(b, []byte("shelfmark worker running")) {
				if !w.running() {
					return errors.New("it exited")
				}
				return errors.New("not running yet")
			}
			return nil
		}); err != nil {
			c.t.Fatalf("%s: %v\n%s", w.name, err, w.tail(30))
		}
	}
}

func (c *clusterTest) startHAProxy(haproxy string) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "deploy", "haproxy.cfg"))
	if err != nil {
		c.t.Fatal(err)
	}
	var addrs []string
	for _, s := range c.servers {
		addrs = append(addrs, s.addr)
	}
	cfg, err := haproxyConfig(string(doc), strings.TrimPrefix(c.lb, "http://"), addrs)
	if err != nil {
		c.t.Fatal(err)
	}
	path := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.haproxy = &proc{name: "haproxy", path: haproxy, args: []string{"-db", "-f", path}, log: filepath.Join(c.logDir, "haproxy.log")}
	c.t.Cleanup(c.haproxy.kill)
	if err := c.haproxy.start(); err != nil {
		c.t.Fatal(err)
	}
	if err := waitHTTP(c.lb+"/readyz", time.Minute); err != nil {
		c.t.Fatalf("HAProxy: %v\n%s", err, c.haproxy.tail(30))
	}
}

// ---- the leader ----

// leader returns the index of the running server whose metrics say it
// holds the OAI-PMH projector's leadership.
func (c *clusterTest) leader() (int, bool) {
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	for i, s := range c.servers {
		if !s.running() {
			continue
		}
		resp, err := hc.Get("http://" + s.metrics + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if v, ok := metricValue(string(b), "shelfmark_leader", `task="oai"`); ok && v == 1 {
			return i, true
		}
	}
	return -1, false
}

// electing reports whether the servers elect leaders: it waits until
// one says in its metrics (shelfmark_leader{task="oai"} 1) that it leads
// the OAI-PMH projector. Servers without the election never say so.
func (c *clusterTest) electing() bool {
	if err := waitFor(time.Minute, func() error {
		if _, ok := c.leader(); !ok {
			return errors.New("no server leads the OAI-PMH projector")
		}
		return nil
	}); err == nil {
		return true
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	for _, s := range c.servers {
		resp, err := hc.Get("http://" + s.metrics + "/metrics")
		if err != nil {
			c.t.Fatalf("metrics of %s: %v", s.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(b, []byte("shelfmark_leader")) {
			c.t.Fatalf("the servers elect leaders, but none leads the OAI-PMH projector after a minute")
		}
	}
	return false
}

// ---- the faults ----

// progress waits until n more works are acknowledged and the harvester
// read another page (the load goes on); it fails the test when that takes
// more than three minutes.
func (c *clusterTest) progress(h *clusterHarvester, what string) {
	n := int64(clusterProgress)
	if c.short {
		n = clusterShortProgress
	}
	from, pages := c.acked.Load(), h.pages.Load()
	if err := waitFor(3*time.Minute, func() error {
		if a, p := c.acked.Load()-from, h.pages.Load()-pages; a < n || p < 1 {
			return fmt.Errorf("%d works acknowledged and %d harvest pages read", a, p)
		}
		return nil
	}); err != nil {
		c.t.Fatalf("the load stalled %s: %v\n%s", what, err, c.tails())
	}
}

// tails returns the end of every process's log.
func (c *clusterTest) tails() string {
	var b strings.Builder
	procs := []*proc{c.haproxy, c.s3, c.pg.primary, c.pg.replica}
	for _, s := range c.servers {
		procs = append(procs, s.proc)
	}
	procs = append(procs, c.workers...)
	for _, p := range procs {
		fmt.Fprintf(&b, "--- %s (%s):\n%s\n", p.name, p.log, p.tail(15))
	}
	return b.String()
}

func (c *clusterTest) restartServer(i int) {
	s := c.servers[i]
	if err := s.start(); err != nil {
		c.t.Fatal(err)
	}
	c.waitReady(s)
}

func (c *clusterTest) faultSequence(h *clusterHarvester) {
	c.progress(h, "at the start")
	h.step()

	// 1. a server that does not lead
	victim := 0
	if l, ok := c.leader(); ok {
		victim = (l + 1) % len(c.servers)
	}
	c.servers[victim].kill()
	c.fault("kill -9 %s (not the leader)", c.servers[victim].name)
	h.step()
	c.progress(h, "after the first server was killed")
	c.restartServer(victim)

	// 2. the elected one
	if l, ok := c.leader(); ok {
		c.servers[l].kill()
		c.fault("kill -9 %s (the OAI-PMH leader)", c.servers[l].name)
		h.step()
		at := time.Now()
		if err := waitFor(2*time.Minute, func() error {
			if _, ok := c.leader(); !ok {
				return errors.New("no server leads the OAI-PMH projector")
			}
			return nil
		}); err != nil {
			c.errorf("no server took over the leadership: %v", err)
		} else {
			n, _ := c.leader()
			c.fault("%s took over the leadership after %v", c.servers[n].name, time.Since(at).Round(time.Millisecond))
			h.step()
		}
		c.progress(h, "after the leader was killed")
		c.restartServer(l)
	} else {
		l := (victim + 1) % len(c.servers)
		c.servers[l].kill()
		c.fault("kill -9 %s (no leader election: every server runs the projector)", c.servers[l].name)
		h.step()
		c.progress(h, "after the second server was killed")
		c.restartServer(l)
	}

	// 3. a worker
	c.workers[0].kill()
	c.fault("kill -9 %s", c.workers[0].name)
	h.step()
	c.progress(h, "after a worker was killed")
	if err := c.workers[0].start(); err != nil {
		c.t.Fatal(err)
	}

	// 4. the S3 store: stopped until a client saw a failure (or ten
	// seconds passed), then started again on its port and directory
	if c.useS3 {
		c.s3.stop(30 * time.Second)
		c.fault("versitygw stopped")
		c.outage()
		if err := c.s3.start(); err != nil {
			c.t.Fatal(err)
		}
		if err := waitTCP(c.s3Addr, time.Minute); err != nil {
			c.t.Fatalf("versitygw did not start again: %v\n%s", err, c.s3.tail(20))
		}
		c.fault("versitygw started again")
		h.step()
		c.progress(h, "after the S3 store was restarted")
	} else {
		c.fault("S3 store not restarted: serve has no S3 storage (files on a shared directory)")
	}

	// 5. the replica: killed, and started again
	c.pg.replica.kill()
	c.fault("kill -9 the replica")
	h.step() // reads fall back to the primary
	c.outage()
	if err := c.pg.startReplica(); err != nil {
		c.t.Fatal(err)
	}
	c.fault("the replica streams again")
	h.step()
	c.progress(h, "after the replica was restarted")
}

// outage waits, during an outage, until a client retried a request or ten
// seconds passed.
func (c *clusterTest) outage() {
	before := c.totalRetries()
	_ = waitFor(10*time.Second, func() error {
		if c.totalRetries() == before {
			return errors.New("no retry yet")
		}
		return nil
	})
}

func (c *clusterTest) totalRetries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.retries {
		n += k
	}
	return n
}

func (c *clusterTest) retried(cause string) {
	c.mu.Lock()
	c.retries[cause]++
	c.mu.Unlock()
}

// ---- the clients ----

// retryable says why an answer is no acknowledgement and the request is
// to be sent again ("" when it is an answer to act on).
func retryable(status int, err error) string {
	switch {
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "timeout"
		}
		return "connection"
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return strconv.Itoa(status)
	case status == http.StatusInternalServerError:
		return "500"
	}
	return ""
}

// client creates works until ctx ends; each work it began is finished
// (acknowledged) or left unknown after its retries ran out.
func (c *clusterTest) client(ctx context.Context, n int) {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(c.start.UnixNano())))
	for i := 0; ctx.Err() == nil; i++ {
		w := &clusterWork{key: fmt.Sprintf("cluster-%02d-%05d", n, i), public: rng.IntN(6) != 0}
		var body []byte
		if rng.IntN(4) == 0 {
			body = make([]byte, 64<<10+rng.IntN(192<<10))
			for k := range body {
				body[k] = byte(rng.Uint32())
			}
			w.name, w.media = w.key+".bin", "application/octet-stream"
		} else {
			var b strings.Builder
			for b.Len() < 200+rng.IntN(4000) {
				fmt.Fprintf(&b, "line %d of %s: %x\n", b.Len(), w.key, rng.Uint64())
			}
			body = []byte(b.String())
			w.name, w.media = w.key+".txt", "text/plain"
		}
		sum := sha256.Sum256(body)
		w.sha, w.size = hex.EncodeToString(sum[:]), len(body)
		c.mu.Lock()
		c.works[w.key] = w
		c.mu.Unlock()
		c.create(w, body)
	}
}

// create stores w: its bytes, then its group; it retries what was not
// acknowledged for up to two minutes.
func (c *clusterTest) create(w *clusterWork, body []byte) {
	deadline := time.Now().Add(2 * time.Minute)
	sum, _ := hex.DecodeString(w.sha)
	hdr := http.Header{"Content-Digest": {"sha-256=:" + base64.StdEncoding.EncodeToString(sum) + ":"}}
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		status, resp, err := do(c.admin, http.MethodPost, c.lb+"/api/v1/blobs", "application/octet-stream", body, hdr)
		if why := retryable(status, err); why != "" {
			if time.Now().After(deadline) || c.abort.Load() {
				return // not begun: the group was never sent
			}
			c.retried("blob " + why)
			time.Sleep(wait)
			continue
		}
		var b struct{ SHA256 string }
		if status != http.StatusCreated || json.Unmarshal(resp, &b) != nil || b.SHA256 != w.sha {
			c.errorf("%s: POST /api/v1/blobs: %d %s", w.key, status, resp)
			return
		}
		break
	}
	meta, _ := json.Marshal(map[string]any{
		"dcterms:title":      map[string]string{"@value": "Cluster work " + w.key, "@language": "en"},
		"dcterms:identifier": w.key,
	})
	vis := "private"
	if w.public {
		vis = "public"
	}
	group, _ := json.Marshal(map[string]any{"groups": []any{map[string]any{
		"sourceKey": w.key,
		"resources": []any{
			map[string]any{"ref": "w", "kind": "work", "visibility": vis, "metadata": json.RawMessage(meta)},
			map[string]any{"ref": "fs", "kind": "fileset", "parent": "w", "visibility": vis},
			map[string]any{"ref": "f", "kind": "file", "parent": "fs", "visibility": vis,
				"file": map[string]any{"name": w.name, "mediaType": w.media, "sha256": w.sha, "size": w.size}},
		},
	}}})
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		status, resp, hdr, err := doHeader(c.admin, http.MethodPost, c.lb+"/api/v1/groups", "application/json", group)
		why := retryable(status, err)
		var out struct {
			Results []struct {
				Status int
				ID     string
				IDs    map[string]string
				Error  json.RawMessage
			}
		}
		if why == "" {
			if status != http.StatusOK || json.Unmarshal(resp, &out) != nil || len(out.Results) != 1 {
				c.errorf("%s: POST /api/v1/groups: %d %s", w.key, status, resp)
				return
			}
			r := out.Results[0]
			switch {
			case r.Status == http.StatusCreated && r.ID != "" && r.IDs["w"] == r.ID:
				c.mu.Lock()
				w.acked, w.known, w.exists = true, true, true
				w.id, w.fileSet, w.file = r.ID, r.IDs["fs"], r.IDs["f"]
				c.mu.Unlock()
				c.acked.Add(1)
				c.readYourWrite(w, hdr.Get("Shelfmark-Position"))
				if c.acked.Load()%10 == 0 {
					c.replay(w, group)
				}
				return
			case r.Status == http.StatusConflict && r.ID != "":
				// an earlier attempt, whose answer was lost, stored it
				c.mu.Lock()
				w.acked, w.known, w.exists, w.id = true, true, true, r.ID
				c.retries["group stored by a lost attempt (409)"]++
				c.mu.Unlock()
				c.acked.Add(1)
				return
			default:
				why = retryable(r.Status, nil)
				if why == "" {
					c.errorf("%s: POST /api/v1/groups: result %d %s", w.key, r.Status, r.Error)
					return
				}
				why = "group result " + why
			}
		} else {
			why = "group " + why
		}
		if time.Now().After(deadline) || c.abort.Load() {
			return // unknown: the final lookup tells
		}
		c.retried(why)
		time.Sleep(wait)
	}
}

// replay sends an acknowledged group again, as a client that lost the
// answer would: it must answer 409 with the id stored the first time, and
// store nothing.
func (c *clusterTest) replay(w *clusterWork, group []byte) {
	for i := 0; ; i++ {
		status, resp, err := do(c.admin, http.MethodPost, c.lb+"/api/v1/groups", "application/json", group, nil)
		if why := retryable(status, err); why != "" && i < 20 && !c.abort.Load() {
			c.retried("replay " + why)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var out struct {
			Results []struct {
				Status int
				ID     string
			}
		}
		if err != nil || status != http.StatusOK || json.Unmarshal(resp, &out) != nil || len(out.Results) != 1 ||
			out.Results[0].Status != http.StatusConflict || out.Results[0].ID != w.id {
			c.errorf("%s: its group sent again: %d %s %v (want 409 naming %s)", w.key, status, resp, err, w.id)
			return
		}
		c.replays.Add(1)
		return
	}
}

// doHeader is do that also returns the answer's header.
func doHeader(hc *http.Client, method, url, ctype string, body []byte) (int, []byte, http.Header, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

// readYourWrite reads a work just created through HAProxy (so most often
// from another server, whose reads may go to the replica), sending the
// write position its creation answered with: it must be there at once.
func (c *clusterTest) readYourWrite(w *clusterWork, pos string) {
	if c.useReplica && pos == "" {
		c.errorf("%s: the answer to its creation carries no Shelfmark-Position", w.key)
	}
	hdr := http.Header{}
	if pos != "" {
		hdr.Set("Shelfmark-Position", pos)
	}
	for i := 0; ; i++ {
		status, resp, err := do(c.admin, http.MethodGet, c.lb+"/api/v1/resources/"+w.id, "", nil, hdr)
		if why := retryable(status, err); why != "" && i < 20 && !c.abort.Load() {
			c.retried("read " + why)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if status != http.StatusOK {
			c.errorf("%s: reading the work %s right after its creation: %d %s %v", w.key, w.id, status, resp, err)
			return
		}
		c.readBacks.Add(1)
		return
	}
}

// ---- afterwards ----

// drainJobs waits until no job is queued or running, and none failed.
func (c *clusterTest) drainJobs() {
	var last string
	if err := waitFor(4*time.Minute, func() error {
		status, resp, err := do(c.admin, http.MethodGet, c.lb+"/api/v1/jobs", "", nil, nil)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("GET /api/v1/jobs: %d %s %v", status, resp, err)
		}
		last = string(resp)
		var out struct {
			Queues []struct {
				Queue                          string
				Queued, Ready, Running, Failed int
			}
		}
		if err := json.Unmarshal(resp, &out); err != nil {
			return err
		}
		for _, q := range out.Queues {
			if q.Queued+q.Running > 0 {
				return fmt.Errorf("queue %s: %d queued, %d running", q.Queue, q.Queued, q.Running)
			}
			if q.Failed > 0 {
				return fmt.Errorf("queue %s: %d failed", q.Queue, q.Failed)
			}
		}
		return nil
	}); err != nil {
		c.errorf("the job queues did not drain: %v (last %s)\n%s", err, last, c.tails())
	}
}

// resolveUnknown asks the servers which works whose creation was never
// acknowledged were stored after all.
func (c *clusterTest) resolveUnknown() {
	var keys []string
	for k, w := range c.works {
		if !w.known {
			keys = append(keys, k)
		}
	}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 100)]
		keys = keys[len(batch):]
		body, _ := json.Marshal(map[string]any{"keys": batch})
		status, resp, err := do(c.admin, http.MethodPost, c.lb+"/api/v1/sources/lookup", "application/json", body, nil)
		var out struct{ Found map[string]string }
		if err != nil || status != http.StatusOK || json.Unmarshal(resp, &out) != nil {
			c.errorf("POST /api/v1/sources/lookup: %d %s %v", status, resp, err)
			return
		}
		for _, k := range batch {
			w := c.works[k]
			w.known = true
			if id, ok := out.Found[k]; ok {
				w.exists, w.id = true, id
			}
		}
	}
}

// getJSON reads url through HAProxy into v, retrying what is not an answer.
func (c *clusterTest) getJSON(url string, v any) (int, error) {
	for i := 0; ; i++ {
		status, resp, err := do(c.admin, http.MethodGet, url, "", nil, nil)
		if why := retryable(status, err); why != "" && i < 20 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if err != nil {
			return 0, err
		}
		if status != http.StatusOK {
			return status, fmt.Errorf("GET %s: %d %s", url, status, resp)
		}
		return status, json.Unmarshal(resp, v)
	}
}

// verifyWorks reads every stored work through HAProxy: the work (its
// source key and visibility), its one file set, its one file (characterized)
// and the file's bytes. It returns how many distinct ids it saw, and fails
// the test when an id names two resources.
func (c *clusterTest) verifyWorks() int {
	var todo []*clusterWork
	for _, w := range c.works {
		if w.exists {
			todo = append(todo, w)
		}
	}
	ids := map[string]string{} // id -> key/role
	var idMu sync.Mutex
	claim := func(id, who string) {
		idMu.Lock()
		defer idMu.Unlock()
		if prev, ok := ids[id]; ok && prev != who {
			c.errorf("id %s minted twice: for %s and for %s", id, prev, who)
		}
		ids[id] = who
	}
	next := make(chan *clusterWork)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range next {
				c.verifyWork(w, claim)
			}
		}()
	}
	for _, w := range todo {
		next <- w
	}
	close(next)
	wg.Wait()
	return len(ids)
}

type clusterResource struct {
	ID         string
	Kind       string
	Visibility string
	Metadata   map[string]json.RawMessage
	File       *struct {
		Name   string
		Size   int64
		Use    string
		Format json.RawMessage
	}
}

func (c *clusterTest) verifyWork(w *clusterWork, claim func(id, who string)) {
	var r clusterResource
	if _, err := c.getJSON(c.lb+"/api/v1/resources/"+w.id, &r); err != nil {
		c.errorf("%s (acknowledged %v): the work %s: %v", w.key, w.acked, w.id, err)
		return
	}
	wantVis := "private"
	if w.public {
		wantVis = "public"
	}
	if r.Kind != "work" || r.Visibility != wantVis || !bytes.Contains(r.Metadata["dcterms:identifier"], []byte(w.key)) {
		c.errorf("%s: %s is a %s (%s) with identifier %s", w.key, w.id, r.Kind, r.Visibility, r.Metadata["dcterms:identifier"])
		return
	}
	claim(w.id, w.key+" work")
	var page struct{ Items []struct{ ID, Kind string } }
	if _, err := c.getJSON(c.lb+"/api/v1/resources/"+w.id+"/children", &page); err != nil || len(page.Items) != 1 || page.Items[0].Kind != "fileset" {
		c.errorf("%s: the children of %s: %+v %v (want one file set)", w.key, w.id, page.Items, err)
		return
	}
	fs := page.Items[0].ID
	if w.fileSet != "" && fs != w.fileSet {
		c.errorf("%s: file set %s, acknowledged as %s", w.key, fs, w.fileSet)
	}
	claim(fs, w.key+" file set")
	// the file set holds the original and what the jobs derived from it
	// (the text of a text file)
	page.Items = nil
	if _, err := c.getJSON(c.lb+"/api/v1/resources/"+fs+"/children", &page); err != nil || len(page.Items) == 0 {
		c.errorf("%s: the children of %s: %+v %v (want the file)", w.key, fs, page.Items, err)
		return
	}
	f, derived := "", 0
	var fr clusterResource
	for _, it := range page.Items {
		var r clusterResource
		if _, err := c.getJSON(c.lb+"/api/v1/resources/"+it.ID, &r); err != nil || r.Kind != "file" || r.File == nil {
			c.errorf("%s: the child %s of %s: %+v %v", w.key, it.ID, fs, r, err)
			return
		}
		if r.File.Use != "original" {
			claim(it.ID, w.key+" derived "+r.File.Use)
			derived++
			continue
		}
		if f != "" {
			c.errorf("%s: the file set %s holds two originals, %s and %s", w.key, fs, f, it.ID)
		}
		f, fr = it.ID, r
	}
	if f == "" {
		c.errorf("%s: the file set %s holds no original: %+v", w.key, fs, page.Items)
		return
	}
	if w.file != "" && f != w.file {
		c.errorf("%s: file %s, acknowledged as %s", w.key, f, w.file)
	}
	claim(f, w.key+" file")
	c.mu.Lock()
	w.fileSet, w.file, w.derived = fs, f, derived
	c.mu.Unlock()
	if fr.File.Name != w.name || fr.File.Size != int64(w.size) {
		c.errorf("%s: the file %s is %q of %d bytes, want %q of %d", w.key, f, fr.File.Name, fr.File.Size, w.name, w.size)
	}
	if len(fr.File.Format) == 0 || string(fr.File.Format) == "null" {
		c.errorf("%s: the file %s was never characterized (its job did not run)", w.key, f)
	}
	for i := 0; ; i++ {
		status, body, err := do(c.admin, http.MethodGet, c.lb+"/api/v1/resources/"+f+"/content", "", nil, nil)
		if why := retryable(status, err); why != "" && i < 20 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		sum := sha256.Sum256(body)
		if err != nil || status != http.StatusOK || hex.EncodeToString(sum[:]) != w.sha || len(body) != w.size {
			c.errorf("%s: the content of %s: %d, %d bytes, SHA-256 %x (want %d bytes, %s) %v", w.key, f, status, len(body), sum, w.size, w.sha, err)
		}
		return
	}
}

// stats counts the works.
func (c *clusterTest) stats() *clusterStats {
	s := &clusterStats{Retries: map[string]int{}}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.retries {
		s.Retries[k] = v
	}
	s.Faults = slices.Clone(c.faults)
	s.Features = map[string]bool{"s3": c.useS3, "readReplica": c.useReplica, "leaderElection": c.useElection}
	for _, w := range c.works {
		switch {
		case w.acked:
			s.WorksAcked++
		case w.exists:
			s.WorksUnknownFound++
			s.WorksUnknown++
		default:
			s.WorksUnknown++
		}
		if w.exists {
			s.Files++
			s.DerivedFiles += w.derived
			s.FileBytes += int64(w.size)
			if w.size > 64<<10 {
				s.LargeFiles++
			}
			if w.public {
				s.PublicWorks++
			}
		}
	}
	s.WorksAckedBy409 = s.Retries["group stored by a lost attempt (409)"]
	return s
}

// countJobs counts the jobs the workers settled as done, from their logs,
// and fails the test when one ran to its end twice, failed, or was put
// back for a retry (a transient fault: the S3 store away) and never done.
func (c *clusterTest) countJobs() (int, int, map[string]int) {
	settled := regexp.MustCompile(`msg="job settled" queue=(\w+) job=(\d+) .* outcome=(\w+)`)
	done, retried := map[string]int{}, map[string]bool{}
	byQueue := map[string]int{}
	for _, w := range c.workers {
		b, err := os.ReadFile(w.log)
		if err != nil {
			c.errorf("%v", err)
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			m := settled.FindStringSubmatch(line)
			switch {
			case m == nil:
			case m[3] == "done":
				done[m[2]]++
				if done[m[2]] == 1 {
					byQueue[m[1]]++
				}
			case m[3] == "retry":
				retried[m[2]] = true
			default:
				c.errorf("%s: job %s of %s ended %s", w.name, m[2], m[1], m[3])
			}
		}
	}
	for id, n := range done {
		if n > 1 {
			c.errorf("job %s ran to its end %d times", id, n)
		}
	}
	for id := range retried {
		if done[id] == 0 {
			c.errorf("job %s was put back for a retry and never done", id)
		}
	}
	return len(done), len(retried), byQueue
}

// replicaReads returns how many transactions the replica has run on the
// repository's database since it was restarted.
func (c *clusterTest) replicaReads() int64 {
	var n int64
	if err := c.pg.query(c.pg.replicaPort, "SELECT xact_commit FROM pg_stat_database WHERE datname = 'shelfmark'", &n); err != nil {
		c.errorf("the replica's statistics: %v", err)
	}
	return n
}

func (c *clusterTest) report(s *clusterStats) {
	path := os.Getenv(clusterReportEnv)
	if path == "" {
		path = filepath.Join(os.TempDir(), "shelfmark-cluster-report.json")
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		c.t.Errorf("writing the report: %v", err)
	}
	retries := 0
	for _, n := range s.Retries {
		retries += n
	}
	c.t.Logf("cluster test in %.0f s: %d works acknowledged (%d on a retry that found them stored), %d unknown at the stop (%d stored), "+
		"%d read back at once through HAProxy with their write position, %d sent again (409 with the same id); %d files (%d over 64 KiB, %d bytes; %d more derived by jobs), %d ids, %d retries %v; harvest: %d passes and %d pages under load (%d retries), "+
		"%d records in the pass under way at the stop, %d in the slow pass (pass %d, %d pages across the faults), %d in the final one; %d jobs done %v (%d put back for a retry first); "+
		"%d transactions on the replica after its restart; faults: %s; report %s",
		s.Seconds, s.WorksAcked, s.WorksAckedBy409, s.WorksUnknown, s.WorksUnknownFound, s.ReadYourWrites, s.Replays, s.Files, s.LargeFiles, s.FileBytes, s.DerivedFiles, s.IDs,
		retries, s.Retries, s.HarvestPasses, s.HarvestPages, s.HarvestRetries, s.HarvestInFlight, s.HarvestSlow, s.SlowPasses, s.SlowPages, s.HarvestFinal,
		s.JobsDone, s.JobsByQueue, s.JobsRetried, s.ReplicaTransactions, strings.Join(s.Faults, "; "), path)
	if s.WorksAcked == 0 || s.Files == 0 || s.JobsDone == 0 || s.HarvestFinal == 0 {
		c.t.Errorf("the test exercised nothing: %+v", s)
	}
}

// ---- the harvester ----

// clusterHarvester pages through ListRecords through HAProxy, pass after
// pass, until paused; the pass it was in then is continued to its end by
// verifyHarvests.
type clusterHarvester struct {
	c              *clusterTest
	pause, paused  chan struct{}
	once           sync.Once
	pages, retries atomic.Int64
	passes         int
	// the pass under way when paused
	token string
	seen  map[string]bool
	// every identifier harvested under load
	all map[string]bool
	// the slow pass: one page after each fault (step), so that its
	// resumption tokens cross every fault, continued to its end at last
	slowToken  string
	slowSeen   map[string]bool
	slowPasses int // passes begun (a pass that reached its end under load is begun again)
	slowPages  int
}

// step reads the next page of the slow pass.
func (h *clusterHarvester) step() {
	if h.slowSeen == nil || h.slowToken == "" {
		h.slowSeen, h.slowToken = map[string]bool{}, ""
		h.slowPasses++
	}
	ids, next, err := h.fetch(h.slowToken)
	if err != nil {
		h.c.errorf("the slow harvest: %v", err)
		return
	}
	h.slowPages++
	for _, id := range ids {
		if h.slowSeen[id] {
			h.c.errorf("the slow harvest lists %s twice", id)
		}
		h.slowSeen[id] = true
	}
	h.slowToken = next
	if next == "" {
		h.slowSeen = nil // at its end already: the next step begins again
	}
}

type oaiListPage struct {
	Errors []struct {
		Code string `xml:"code,attr"`
		Text string `xml:",chardata"`
	} `xml:"error"`
	Records []struct {
		Header struct {
			Status     string `xml:"status,attr"`
			Identifier string `xml:"identifier"`
		} `xml:"header"`
	} `xml:"ListRecords>record"`
	Token *struct {
		Text string `xml:",chardata"`
		Size string `xml:"completeListSize,attr"`
	} `xml:"ListRecords>resumptionToken"`
}

// fetch reads one page (the first of a list when token is ""), retrying
// what is no answer; it returns the ids of its records and the next token.
func (h *clusterHarvester) fetch(token string) ([]string, string, error) {
	u := h.c.lb + "/oai?verb=ListRecords&metadataPrefix=oai_dc"
	if token != "" {
		u = h.c.lb + "/oai?verb=ListRecords&resumptionToken=" + url.QueryEscape(token)
	}
	for i := 0; ; i++ {
		status, body, err := do(h.c.anon, http.MethodGet, u, "", nil, nil)
		if why := retryable(status, err); why != "" {
			if i >= 300 || h.c.abort.Load() {
				return nil, "", fmt.Errorf("%s: %s after %d tries", u, why, i)
			}
			h.retries.Add(1)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if status != http.StatusOK {
			return nil, "", fmt.Errorf("%s: %d %s", u, status, body)
		}
		var p oaiListPage
		if err := xml.Unmarshal(body, &p); err != nil {
			return nil, "", fmt.Errorf("%s: %v", u, err)
		}
		h.pages.Add(1)
		if len(p.Errors) > 0 {
			if p.Errors[0].Code == "noRecordsMatch" && token == "" {
				return nil, "", nil
			}
			return nil, "", fmt.Errorf("%s: %s %s", u, p.Errors[0].Code, p.Errors[0].Text)
		}
		var ids []string
		prefix := "oai:" + clusterDomain + ":"
		for _, r := range p.Records {
			id, ok := strings.CutPrefix(r.Header.Identifier, prefix)
			if !ok || r.Header.Status == "deleted" {
				return nil, "", fmt.Errorf("%s: record %q (%s)", u, r.Header.Identifier, r.Header.Status)
			}
			ids = append(ids, id)
		}
		next := ""
		if p.Token != nil {
			next = strings.TrimSpace(p.Token.Text)
		}
		return ids, next, nil
	}
}

// stop pauses the harvester and waits until it has.
func (h *clusterHarvester) stop() {
	h.once.Do(func() { close(h.pause) })
	<-h.paused
}

// run harvests pass after pass until paused.
func (h *clusterHarvester) run() {
	defer close(h.paused)
	h.all = map[string]bool{}
	for {
		h.seen, h.token = map[string]bool{}, ""
		for first := true; first || h.token != ""; first = false {
			select {
			case <-h.pause:
				return
			default:
			}
			ids, next, err := h.fetch(h.token)
			if err != nil {
				h.c.errorf("harvest under load: %v", err)
				return
			}
			for _, id := range ids {
				if h.seen[id] {
					h.c.errorf("harvest pass %d lists %s twice", h.passes+1, id)
				}
				h.seen[id], h.all[id] = true, true
			}
			h.token = next
		}
		h.passes++
	}
}

// finish continues a pass from token to its end, adding to seen; it
// reports records listed twice.
func (h *clusterHarvester) finish(what, token string, first bool, seen map[string]bool) error {
	for ; first || token != ""; first = false {
		ids, next, err := h.fetch(token)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if seen[id] {
				h.c.errorf("%s lists %s twice", what, id)
			}
			seen[id] = true
		}
		token = next
	}
	return nil
}

// verifyHarvests waits until the OAI-PMH view holds every public work (the
// projector catches up), then continues the pass the harvester was in to
// its end and makes a fresh one: each must list every public work once and
// nothing else. It returns the sizes of both.
func (c *clusterTest) verifyHarvests(h *clusterHarvester) (int, int, int) {
	want := map[string]bool{}
	private := map[string]bool{}
	for _, w := range c.works {
		if w.exists && w.public {
			want[w.id] = true
		} else if w.exists {
			private[w.id] = true
		}
	}
	for id := range h.all {
		if !want[id] {
			c.errorf("the harvest under load listed %s, which is not a stored public work (private: %v)", id, private[id])
		}
	}
	// the projector has caught up when a fresh harvest lists them all
	var final map[string]bool
	if err := waitFor(3*time.Minute, func() error {
		final = map[string]bool{}
		if err := h.finish("a fresh harvest", "", true, final); err != nil {
			return err
		}
		if len(final) < len(want) {
			return fmt.Errorf("a fresh harvest lists %d of the %d public works", len(final), len(want))
		}
		return nil
	}); err != nil {
		c.errorf("the OAI-PMH view did not catch up: %v", err)
	}
	inFlight := h.seen
	if err := h.finish("the harvest under way at the stop", h.token, h.token == "" && len(inFlight) == 0, inFlight); err != nil {
		c.errorf("continuing the harvest under way at the stop: %v", err)
	}
	slow := h.slowSeen
	if slow == nil {
		slow = map[string]bool{}
	}
	if err := h.finish("the slow harvest", h.slowToken, h.slowToken == "", slow); err != nil {
		c.errorf("continuing the slow harvest: %v", err)
	}
	for name, got := range map[string]map[string]bool{"the harvest under way at the stop": inFlight, "the slow harvest": slow, "the final harvest": final} {
		var missing, extra []string
		for id := range want {
			if !got[id] {
				missing = append(missing, id)
			}
		}
		for id := range got {
			if !want[id] {
				extra = append(extra, id)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 || len(extra) > 0 {
			c.errorf("%s: %d records, %d public works; missing %d %v, not public works %d %v", name, len(got), len(want),
				len(missing), missing[:min(len(missing), 10)], len(extra), extra[:min(len(extra), 10)])
		}
	}
	return len(inFlight), len(slow), len(final)
}
