package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// leaderDeadline bounds each wait of the takeover test (a busy machine
// takes a few seconds; a working takeover about one).
const leaderDeadline = 90 * time.Second

// leaderServer is a running serve child.
type leaderServer struct {
	cmd           *exec.Cmd
	out           *lockedBuffer
	base, metrics string
	exited        chan struct{}
}

// startLeaderServer starts serve on the database with free ports.
func startLeaderServer(t *testing.T, dsn string) *leaderServer {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	mport, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--database", dsn, "--data", t.TempDir(), "--addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", mport), "--workers=false", "--log-level", "info", "--db-max-conns", "4"}
	s := &leaderServer{out: &lockedBuffer{}, exited: make(chan struct{}),
		base: fmt.Sprintf("http://127.0.0.1:%d", port), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)}
	s.cmd = childCommand(t, nil, append([]string{"serve"}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("server %s output:\n%s", s.base, s.out.String())
		}
	})
	testkit.WaitServing(t, s.base)
	return s
}

// leads reports whether the server's /metrics says it leads task (false
// when it does not answer).
func (s *leaderServer) leads(task string) bool {
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(s.metrics)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(b), `shelfmark_leader{task="`+task+`"} 1`)
}

// TestServeLeaderTakeover: two serve processes on one PostgreSQL database
// elect one OAI-PMH projector; when it is killed (SIGKILL), the other
// takes over, and works created afterwards become harvestable.
func TestServeLeaderTakeover(t *testing.T) {
	dsn := testkit.PostgresSchema(t)
	token := postgresAdminToken(t, dsn)
	a, b := startLeaderServer(t, dsn), startLeaderServer(t, dsn)
	servers := []*leaderServer{a, b}

	// exactly one leads oai
	var leader, other *leaderServer
	for start := time.Now(); leader == nil; time.Sleep(100 * time.Millisecond) {
		la, lb := a.leads("oai"), b.leads("oai")
		if la && lb {
			t.Fatal("both servers lead oai")
		}
		if la {
			leader, other = a, b
		} else if lb {
			leader, other = b, a
		}
		if leader == nil && time.Since(start) > leaderDeadline {
			t.Fatal("no server leads oai")
		}
	}
	if !strings.Contains(leader.out.String(), "leadership gained") || !strings.Contains(leader.out.String(), "task=oai") {
		t.Errorf("the leader did not log its gain:\n%s", leader.out.String())
	}

	// works created through either server are harvested (the leader's
	// projector runs)
	hcs := map[*leaderServer]*http.Client{}
	for _, s := range servers {
		hcs[s] = withBearer(&http.Client{Timeout: 20 * time.Second}, token)
	}
	var before []string
	for i, s := range servers {
		before = append(before, testkit.CreateWork(t, hcs[s], s.base, fmt.Sprintf("before%d", i)).ID)
	}
	waitHarvested(t, hcs[other], other.base, before)

	// kill -9 the leader: the other takes over and projects new works
	if err := leader.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-leader.exited
	killed := time.Now()
	var after []string
	for i := range 3 {
		after = append(after, testkit.CreateWork(t, hcs[other], other.base, fmt.Sprintf("after%d", i)).ID)
	}
	waitHarvested(t, hcs[other], other.base, append(before, after...))
	t.Logf("the survivor's projector published the works created after the kill %v after it", time.Since(killed).Round(time.Millisecond))
	if !other.leads("oai") {
		t.Error("the survivor does not report that it leads oai")
	}
	for _, task := range []string{"search", "access"} {
		deadline := time.Now().Add(leaderDeadline)
		for !other.leads(task) {
			if time.Now().After(deadline) {
				t.Fatalf("the survivor never led %s", task)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// waitHarvested polls the server's OAI-PMH ListIdentifiers until every id
// is among its records.
func waitHarvested(t *testing.T, hc *http.Client, base string, ids []string) {
	t.Helper()
	var resp []byte
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		var status int
		var err error
		status, resp, err = do(hc, http.MethodGet, base+"/oai?verb=ListIdentifiers&metadataPrefix=oai_dc", "", nil, nil)
		if err == nil && status == http.StatusOK {
			missing := 0
			for _, id := range ids {
				if !strings.Contains(string(resp), ":"+id+"</identifier>") {
					missing++
				}
			}
			if missing == 0 {
				return
			}
		}
		if time.Since(start) > leaderDeadline {
			t.Fatalf("not every work of %v was harvestable within %s: %s", ids, leaderDeadline, resp)
		}
	}
}

// postgresAdminToken returns an admin-scoped token of the administrator
// of the repository in the PostgreSQL database dsn.
func postgresAdminToken(t *testing.T, dsn string) string {
	t.Helper()
	return storeAdminToken(t, dsn, t.TempDir())
}

// TestServeSharedLimiter: two serve processes on one PostgreSQL database
// share the brute-force limit: after a client's failures reach the limit
// on one server, the other refuses it after at most a couple of its own
// failures (without sharing it would allow the full limit again).
func TestServeSharedLimiter(t *testing.T) {
	dsn := testkit.PostgresSchema(t)
	a, b := startLeaderServer(t, dsn), startLeaderServer(t, dsn)
	hc := withBearer(&http.Client{Timeout: 20 * time.Second}, shelfmark.TokenPrefix+"guess")
	try := func(s *leaderServer) int {
		t.Helper()
		status, body, err := do(hc, http.MethodGet, s.base+"/api/v1/search?q=x", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusUnauthorized && status != http.StatusTooManyRequests {
			t.Fatalf("a bad token: %d %s", status, body)
		}
		return status
	}
	// the default limit is 10 failures: the 11th makes the address wait
	for i := 1; i <= 11; i++ {
		if got := try(a); got != http.StatusUnauthorized {
			t.Fatalf("failure %d on the first server: %d", i, got)
		}
	}
	for i := 1; ; i++ {
		if try(b) == http.StatusTooManyRequests {
			break
		}
		if i == 3 {
			t.Fatal("the second server let the client fail 3 more times")
		}
	}
}
