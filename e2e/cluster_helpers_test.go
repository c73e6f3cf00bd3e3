package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The processes of the cluster test (cluster_test.go): a PostgreSQL
// primary and its streaming replica, an S3 store (versitygw), HAProxy, and
// shelfmark serve and worker processes. Each runs as a process of its own
// on loopback ports, with its output in a file of the test's directory, and
// is killed (SIGKILL) when the test ends.

// requireTool returns the path of a tool the cluster test needs, or skips
// the test when it is missing (fails under SHELFMARK_REQUIRE_TOOLS=1).
func requireTool(t *testing.T, what string, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if strings.ContainsRune(c, '/') {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return c
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s is missing (looked for %s); scripts/testdeps.sh installs it", what, strings.Join(candidates, ", "))
	}
	t.Skipf("%s is missing (looked for %s); scripts/testdeps.sh installs it", what, strings.Join(candidates, ", "))
	return ""
}

// proc is a process of the cluster, restartable with the same command.
type proc struct {
	name string
	path string
	args []string
	env  []string
	log  string // file receiving its standard output and error
	// asUser, when set, runs the command as that user (the test runs as
	// root).
	asUser string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

// start starts the process (again); its output is appended to p.log.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	p.starts++
	fmt.Fprintf(f, "\n=== %s: start %d at %s\n", p.name, p.starts, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	attr, err := procAttr(p.asUser)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = attr
	if p.asUser != "" {
		cmd.Dir = "/" // a directory the user can read
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	return nil
}

// procAttr returns the attributes of a process of the cluster: a process
// group of its own (a kill reaches its children too), killed when the test
// process dies (so that a test that times out leaves nothing running), and
// run as user when given.
func procAttr(user string) (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if user != "" {
		uid, gid, err := lookupIDs(user)
		if err != nil {
			return nil, err
		}
		attr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	}
	return attr, nil
}

// lookupIDs returns the user and group id of a user.
func lookupIDs(name string) (uint32, uint32, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, err
	}
	return uint32(uid), uint32(gid), nil
}

// kill sends SIGKILL (kill -9) to the process group and waits for the
// process to end.
func (p *proc) kill() {
	p.signal(syscall.SIGKILL, 0)
}

// stop sends SIGTERM and waits up to limit, then SIGKILL.
func (p *proc) stop(limit time.Duration) {
	p.signal(syscall.SIGTERM, limit)
}

func (p *proc) signal(sig syscall.Signal, limit time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	if sig != syscall.SIGKILL {
		select {
		case <-exited:
			return
		case <-time.After(limit):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	<-exited
}

// running reports whether the process has been started and not ended.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// tail returns the last n lines of the process's log.
func (p *proc) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls cond until it holds or limit passes; it returns the last
// error of cond.
func waitFor(limit time.Duration, cond func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s: %w", limit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitHTTP waits until url answers 200.
func waitHTTP(url string, limit time.Duration) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	return waitFor(limit, func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
		}
		return nil
	})
}

// waitTCP waits until addr accepts connections.
func waitTCP(addr string, limit time.Duration) error {
	return waitFor(limit, func() error {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// freePorts returns n distinct free loopback ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	seen := map[int]bool{}
	var out []int
	for len(out) < n {
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// ---- PostgreSQL: a primary and a streaming replica of its own ----

// pgPair is a PostgreSQL primary and one streaming replica, on loopback
// ports, in a directory of their own (removed at the end).
type pgPair struct {
	bindir                   string
	dir                      string
	owner                    string // OS user running the servers ("" for the test's own user)
	superuser                string // the database superuser (the owner's name)
	primaryPort, replicaPort int
	primary, replica         *proc
}

// pgBindir returns the directory of initdb, pg_ctl and pg_basebackup, or
// "".
func pgBindir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, k int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[k])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_basebackup")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("pg_basebackup"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}

// startPGPair initialises and starts a primary and a replica made from
// it with pg_basebackup. As root the servers run as the system user
// shelfmark-pg (PostgreSQL refuses to run as root), as scripts/postgres.sh
// does.
func startPGPair(t *testing.T, logDir string) *pgPair {
	t.Helper()
	bindir := pgBindir()
	if bindir == "" {
		requireTool(t, "PostgreSQL (initdb, pg_ctl, pg_basebackup)", "pg_basebackup")
	}
	pg := &pgPair{bindir: bindir}
	if os.Getuid() == 0 {
		pg.owner = "shelfmark-pg"
		if _, err := user.Lookup(pg.owner); err != nil {
			// scripts/postgres.sh makes the user
			if out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
				"--shell", "/usr/sbin/nologin", pg.owner).CombinedOutput(); err != nil {
				t.Fatalf("useradd %s: %v %s", pg.owner, err, out)
			}
		}
		pg.superuser = pg.owner
	} else {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		pg.superuser = u.Username
	}
	// the data directories must be reachable by the servers' user: not
	// under the test's private temporary directory
	dir, err := os.MkdirTemp("", "shelfmark-cluster-pg-")
	if err != nil {
		t.Fatal(err)
	}
	pg.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if pg.owner != "" {
		if out, err := exec.Command("chown", pg.owner+":", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	ports := freePorts(t, 2)
	pg.primaryPort, pg.replicaPort = ports[0], ports[1]
	primary, replica := filepath.Join(dir, "primary"), filepath.Join(dir, "replica")
	if out, err := pg.run("initdb", "-D", primary, "-U", pg.superuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf(`
# --- the cluster test's primary ---
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 120
shared_buffers = 32MB
wal_level = replica
max_wal_senders = 4
hot_standby = on
fsync = on
synchronous_commit = on
logging_collector = off
`, pg.primaryPort)
	if err := appendFile(filepath.Join(primary, "postgresql.conf"), conf); err != nil {
		t.Fatal(err)
	}
	pg.primary = &proc{name: "postgres-primary", path: filepath.Join(bindir, "postgres"), args: []string{"-D", primary},
		log: filepath.Join(logDir, "postgres-primary.log"), asUser: pg.owner}
	t.Cleanup(pg.primary.kill)
	if err := pg.primary.start(); err != nil {
		t.Fatal(err)
	}
	if err := pg.waitReady(pg.primaryPort, 2*time.Minute); err != nil {
		t.Fatalf("the primary did not start: %v\n%s", err, pg.primary.tail(30))
	}
	if err := pg.exec(pg.primaryPort, "CREATE DATABASE shelfmark"); err != nil {
		t.Fatal(err)
	}
	if out, err := pg.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(pg.primaryPort), "-U", pg.superuser,
		"-D", replica, "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	if err := appendFile(filepath.Join(replica, "postgresql.conf"), fmt.Sprintf("\n# --- the replica ---\nport = %d\n", pg.replicaPort)); err != nil {
		t.Fatal(err)
	}
	pg.replica = &proc{name: "postgres-replica", path: filepath.Join(bindir, "postgres"), args: []string{"-D", replica},
		log: filepath.Join(logDir, "postgres-replica.log"), asUser: pg.owner}
	t.Cleanup(pg.replica.kill)
	if err := pg.startReplica(); err != nil {
		t.Fatal(err)
	}
	return pg
}

// startReplica starts the replica and waits until it streams from the
// primary.
func (pg *pgPair) startReplica() error {
	if err := pg.replica.start(); err != nil {
		return err
	}
	if err := pg.waitReady(pg.replicaPort, 2*time.Minute); err != nil {
		return fmt.Errorf("the replica did not start: %w\n%s", err, pg.replica.tail(30))
	}
	return waitFor(time.Minute, func() error {
		var n int
		if err := pg.query(pg.primaryPort, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'", &n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%d replicas stream from the primary", n)
		}
		return nil
	})
}

// run runs a PostgreSQL program as the servers' user.
func (pg *pgPair) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(pg.bindir, prog), args...)
	attr, err := procAttr(pg.owner)
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr, cmd.Dir = attr, "/"
	return cmd.CombinedOutput()
}

// url is the DSN of database shelfmark on port.
func (pg *pgPair) url(port int) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/shelfmark?sslmode=disable", pg.superuser, port)
}

func (pg *pgPair) connect(ctx context.Context, port int) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", pg.superuser, port))
}

func (pg *pgPair) exec(port int, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pg.connect(ctx, port)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func (pg *pgPair) query(port int, sql string, dest ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pg.connect(ctx, port)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	return c.QueryRow(ctx, sql).Scan(dest...)
}

func (pg *pgPair) waitReady(port int, limit time.Duration) error {
	return waitFor(limit, func() error { return pg.exec(port, "SELECT 1") })
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---- HAProxy ----

// haproxyConfig renders the documented configuration, docs/deploy/haproxy.cfg,
// for loopback: its frontend binds to bind and its backend's server lines
// are replaced by one per address of servers (named s1, s2, …), with the
// server options of the documented lines. Everything else (timeouts,
// health checks, retries) is the documented file's.
func haproxyConfig(doc, bind string, servers []string) (string, error) {
	var out strings.Builder
	serverLine := regexp.MustCompile(`^(\s*)server\s+\S+\s+\S+(.*)$`)
	bindLine := regexp.MustCompile(`^(\s*)bind\s+\S+(.*)$`)
	sc := bufio.NewScanner(strings.NewReader(doc))
	section := ""
	var binds, wrote int
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if line != "" && line[0] != ' ' && line[0] != '\t' && !strings.HasPrefix(trimmed, "#") {
			section = strings.Fields(trimmed)[0]
		}
		if m := bindLine.FindStringSubmatch(line); m != nil && section == "frontend" {
			fmt.Fprintf(&out, "%sbind %s%s\n", m[1], bind, m[2])
			binds++
			continue
		}
		if m := serverLine.FindStringSubmatch(line); m != nil && section == "backend" {
			if wrote == 0 {
				for i, s := range servers {
					fmt.Fprintf(&out, "%sserver s%d %s%s\n", m[1], i+1, s, m[2])
				}
			}
			wrote++
			continue
		}
		out.WriteString(line + "\n")
	}
	if binds != 1 || wrote == 0 {
		return "", errors.New("docs/deploy/haproxy.cfg: want one frontend bind line and server lines in a backend")
	}
	return out.String(), nil
}

// ---- metrics ----

// metricValue returns the value of the sample of name whose labels include
// every label of want (`task="oai"`), from Prometheus text.
func metricValue(text, name string, want ...string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
outer:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels, rest = rest[1:end], rest[end+1:]
		} else if !strings.HasPrefix(rest, " ") {
			continue // a longer name
		}
		for _, w := range want {
			if !strings.Contains(labels, w) {
				continue outer
			}
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		return v, true
	}
	return 0, false
}
