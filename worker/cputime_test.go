package worker

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunToolCPULimit: a child whose process tree spins is killed once
// the tree has used its CPU-time limit, summed over the processes it
// forked (the shell itself only waits), and the error names the limit
// and the CPU seconds used.
func TestRunToolCPULimit(t *testing.T) {
	sh := toolTestScript(t, "(while :; do :; done) &\n(while :; do :; done) &\nwait\n")
	const limit = 300 * time.Millisecond
	_, err := RunTool(context.Background(), Limits{CPU: limit, Stall: time.Minute, Timeout: 5 * time.Minute}, nil, sh)
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrCPULimit) || !errors.Is(err, ErrTimeout) || errors.Is(err, ErrStalled) {
		t.Fatalf("error %v, want a *LimitError wrapping ErrCPULimit and ErrTimeout", err)
	}
	if IsPermanent(err) {
		t.Errorf("CPU limit %v marked permanent", err)
	}
	if le.CPU < limit || le.Max != limit {
		t.Errorf("killed having used %v of a limit of %v (%v), want at least the limit", le.CPU, le.Max, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "CPU-time limit of 300ms") || !strings.Contains(msg, "CPU-s") {
		t.Errorf("error %q does not name the limit and the CPU seconds used", msg)
	}
	t.Log(err)
}

// TestRunToolStall: a child that waits on something that never comes
// (a sleep, in a child of the tool) uses no CPU and is not runnable; it
// is killed at its stall limit, long before its CPU limit, with an error
// that says so.
func TestRunToolStall(t *testing.T) {
	sh := toolTestScript(t, "sleep 300 &\nwait\n")
	const stall = 300 * time.Millisecond
	_, err := RunTool(context.Background(), Limits{CPU: time.Minute, Stall: stall, Timeout: 5 * time.Minute}, nil, sh)
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrStalled) || !errors.Is(err, ErrTimeout) || errors.Is(err, ErrCPULimit) {
		t.Fatalf("error %v, want a *LimitError wrapping ErrStalled and ErrTimeout", err)
	}
	if le.Max != stall || le.CPU >= time.Minute {
		t.Errorf("stall error %+v", le)
	}
	if msg := err.Error(); !strings.Contains(msg, "no CPU used") || !strings.Contains(msg, "CPU-s") {
		t.Errorf("error %q does not name the stall and the CPU seconds used", msg)
	}
	t.Log(err)
}

// TestRunToolWallCeiling: the wall-clock ceiling still stops a child,
// with an error naming it.
func TestRunToolWallCeiling(t *testing.T) {
	sh := toolTestScript(t, "exec sleep 300\n")
	_, err := RunTool(context.Background(), Limits{CPU: time.Minute, Timeout: 200 * time.Millisecond}, nil, sh)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != ErrTimeout || !errors.Is(err, ErrTimeout) || errors.Is(err, ErrStalled) {
		t.Fatalf("error %v, want a *LimitError of the wall-clock limit", err)
	}
	if !strings.Contains(err.Error(), "wall-clock limit of 200ms") {
		t.Errorf("error %q does not name the wall-clock limit", err)
	}
}

// cpuWorkScript spins, reading its own CPU time from /proc (a builtin
// read; no fork), until it has used $1 clock ticks (1/100 s), then
// prints the ticks it used.
const cpuWorkScript = `while :; do
  read -r l < /proc/$$/stat
  set -- $1 $l
  t=$(( ${15} + ${16} ))
  [ "$t" -ge "$1" ] && break
done
echo "$t"
`

// TestRunToolIdleStarved: a child at idle priority that needs 0.3 CPU-s,
// run while every core is held busy by spinning goroutines at normal
// priority, waits for the CPU (runnable, so not stalled, though its
// stall limit is far shorter than the time it is held back) and then
// finishes, within its CPU limit, once the cores are let go.
func TestRunToolIdleStarved(t *testing.T) {
	sh := toolTestScript(t, cpuWorkScript)
	var stop atomic.Bool
	var spinning sync.WaitGroup
	for range runtime.NumCPU() {
		spinning.Add(1)
		go func() {
			defer spinning.Done()
			for n := 0; !stop.Load(); n++ {
			}
		}()
	}
	// the cores are let go after a while (at idle priority the child
	// would otherwise get about 1/300 of a CPU: a minute and a half for
	// its work), or as soon as it is done
	release := time.AfterFunc(2*time.Second, func() { stop.Store(true) })
	defer release.Stop()
	defer func() { stop.Store(true); spinning.Wait() }()

	const cpuLimit = 5 * time.Second
	start := time.Now()
	out, err := RunTool(context.Background(), Limits{Idle: true, CPU: cpuLimit, Stall: 200 * time.Millisecond, Timeout: 5 * time.Minute}, nil, sh, "30")
	held := stop.Load()
	if err != nil {
		t.Fatalf("starved idle child killed: %v", err)
	}
	ticks, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if perr != nil {
		t.Fatalf("output %q: %v", out, perr)
	}
	used := time.Duration(ticks) * (time.Second / userHZ)
	if used < 300*time.Millisecond || used >= cpuLimit {
		t.Errorf("child used %v of CPU, want its 0.3 s and below its limit of %v", used, cpuLimit)
	}
	t.Logf("finished after %v (cores released before it finished: %v), using %v of CPU", time.Since(start).Round(time.Millisecond), held, used)
}

// TestLimitWatchEvery: sampling follows the tightest limit, within
// 10 ms and 1 s.
func TestLimitWatchEvery(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want time.Duration
	}{
		{Limits{}, time.Second},
		{Limits{CPU: 5 * time.Minute, Stall: 2 * time.Minute}, time.Second},
		{Limits{CPU: 2 * time.Second}, 100 * time.Millisecond},
		{Limits{CPU: time.Minute, Stall: 100 * time.Millisecond}, 10 * time.Millisecond},
	} {
		if got := limitWatchEvery(c.l); got != c.want {
			t.Errorf("limitWatchEvery(%+v) = %v, want %v", c.l, got, c.want)
		}
	}
}

// TestReadProcStat reads the stat line of the thread reading it (which is
// running), and refuses a malformed one.
func TestReadProcStat(t *testing.T) {
	st, err := readProcStat("/proc/thread-self/stat")
	if err != nil || st.state != 'R' {
		t.Fatalf("own stat %+v, %v; want state R", st, err)
	}
	if _, err := readProcStat("/proc/self/status"); err == nil {
		t.Error("status file read as a stat line")
	}
}

// TestSampleGroupMembers: the two ways of finding a tool's processes
// (its tree, listed by the kernel, and its process group, read from every
// process's stat) find the same processes: the tool and its children.
func TestSampleGroupMembers(t *testing.T) {
	sh := toolTestScript(t, "sleep 300 &\nsleep 300 &\necho $$ > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"\nwait\n")
	pidFile := t.TempDir() + "/pid"
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := RunTool(ctx, Limits{Timeout: time.Minute}, nil, sh, pidFile); errc <- err }()
	defer func() { cancel(); <-errc }()
	pid := toolTestReadPID(t, pidFile)
	var members []int
	deadline := time.Now().Add(10 * time.Second)
	for len(members) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		members = groupMembers(pid)
	}
	if len(members) != 3 || members[0] != pid {
		t.Fatalf("group members %v of %d, want the shell and its two sleeps", members, pid)
	}
	// sleeping, once the sleeps have started: alive, nothing runnable
	u := sampleGroup(pid, true)
	for u.runnable && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		u = sampleGroup(pid, true)
	}
	if !u.alive || u.runnable {
		t.Errorf("sample %+v: want alive, nothing runnable", u)
	}
}
