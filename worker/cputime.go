package worker

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ErrCPULimit is wrapped by the error of a child killed because its
// process group used Limits.CPU of CPU time.
var ErrCPULimit = errors.New("child process CPU-time limit exceeded")

// ErrStalled is wrapped by the error of a child killed because its
// process group used no CPU and had no process waiting for one for
// Limits.Stall: it waited on something that did not come.
var ErrStalled = errors.New("child process stalled")

// LimitError is the error of a child killed at one of its limits. It
// wraps ErrCPULimit, ErrStalled or, for the wall-clock ceiling, ErrTimeout
// (the first two also wrap ErrTimeout, so callers that retry a timed-out
// tool retry these too).
type LimitError struct {
	Name  string        // program name (base name of the path)
	Limit error         // ErrCPULimit, ErrStalled or ErrTimeout
	Max   time.Duration // the limit reached
	CPU   time.Duration // CPU time the process group had used, as last sampled
	Wall  time.Duration // how long the child ran
}

// Error says which limit stopped the child and what it had used.
func (e *LimitError) Error() string {
	used := fmt.Sprintf("%.2f CPU-s in %s", e.CPU.Seconds(), e.Wall.Round(time.Millisecond))
	switch e.Limit {
	case ErrCPULimit:
		return fmt.Sprintf("worker: %s killed at its CPU-time limit of %s (used %s): %v", e.Name, e.Max, used, ErrCPULimit)
	case ErrStalled:
		return fmt.Sprintf("worker: %s killed: no CPU used and none waited for in %s (used %s): %v", e.Name, e.Max, used, ErrStalled)
	}
	return fmt.Sprintf("worker: %s killed at its wall-clock limit of %s (used %s): %v", e.Name, e.Max, used, ErrTimeout)
}

// Unwrap returns the limit's sentinel and ErrTimeout.
func (e *LimitError) Unwrap() []error {
	if e.Limit == ErrTimeout {
		return []error{ErrTimeout}
	}
	return []error{e.Limit, ErrTimeout}
}

// userHZ is the unit of the times in /proc/<pid>/stat: USER_HZ, 100 on
// every Linux architecture Go supports.
const userHZ = 100

// groupUsage is one sample of a child's process group.
type groupUsage struct {
	cpu      time.Duration // user + system time of the leader and its descendants, live and reaped
	runnable bool          // a thread of the group is running or waiting for a CPU
	alive    bool          // the leader was there to read
}

// sampleGroup reads the CPU time and the thread states of process pid
// and its descendants from /proc: each process's own and its reaped
// children's user and system time (/proc/<pid>/stat), found by walking
// /proc/<pid>/task/<tid>/children. A process that left the tree by being
// reparented (a daemon) is not counted. Threads' states are read only
// when withStates is set. Costs a few small reads per process. On a
// kernel that does not list children (built without
// CONFIG_PROC_CHILDREN) the members of process group pid are found by
// reading the stat of every process instead.
func sampleGroup(pid int, withStates bool) groupUsage {
	var u groupUsage
	seen := map[int]bool{}
	stack := []int{pid}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); errors.Is(err, os.ErrNotExist) {
		stack = groupMembers(pid)
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[p] || len(seen) > 4096 {
			continue
		}
		seen[p] = true
		st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue // exited meanwhile
		}
		if p == pid {
			u.alive = true
		}
		u.cpu += st.cpu
		if st.state == 'R' {
			u.runnable = true
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, t := range tasks {
			if withStates && !u.runnable && t.Name() != strconv.Itoa(p) {
				if ts, err := readProcStat(fmt.Sprintf("/proc/%d/task/%s/stat", p, t.Name())); err == nil && ts.state == 'R' {
					u.runnable = true
				}
			}
			kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p, t.Name()))
			if err != nil {
				continue
			}
			for _, f := range bytes.Fields(kids) {
				if k, err := strconv.Atoi(string(f)); err == nil {
					stack = append(stack, k)
				}
			}
		}
	}
	return u
}

// groupMembers lists the processes of process group pgid, leader first,
// from the stat of every process.
func groupMembers(pgid int) []int {
	out := []int{pgid}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pgid {
			continue
		}
		if st, err := readProcStat(fmt.Sprintf("/proc/%d/stat", p)); err == nil && st.pgrp == pgid {
			out = append(out, p)
		}
	}
	return out
}

// procStat is what sampleGroup reads of one /proc/<pid>/stat line.
type procStat struct {
	state byte
	pgrp  int
	cpu   time.Duration // utime + stime + cutime + cstime
}

// readProcStat parses a /proc stat file: the state (field 3), the
// process group (field 5) and fields 14–17 (utime, stime, cutime, cstime) after the parenthesised command
// name, which may hold spaces and parentheses.
func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("%s: no command name", path)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); field n is f[n-3]
	if len(f) < 15 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("%s: %d fields", path, len(f)+2)
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, fmt.Errorf("%s: %w", path, err)
	}
	var ticks int64
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("%s: %w", path, err)
		}
		ticks += n
	}
	return procStat{state: f[0][0], pgrp: pgrp, cpu: time.Duration(ticks) * (time.Second / userHZ)}, nil
}

// limitWatch enforces Limits.CPU and Limits.Stall on a running child by
// sampling its process group.
type limitWatch struct {
	pid           int
	cpuMax, stall time.Duration
	used          time.Duration // CPU time at the last sample
	lastProgress  time.Time     // when CPU was last used or waited for
}

// limitWatchEvery is how often a child is sampled: a twentieth of its
// tightest limit, between 10 ms and 1 s (at most a twentieth of a
// limit's worth of overshoot; a second of a few small reads per process
// of a child whose limits are minutes).
func limitWatchEvery(l Limits) time.Duration {
	d := time.Second
	for _, x := range []time.Duration{l.CPU, l.Stall} {
		if x > 0 {
			d = min(d, x/20)
		}
	}
	return max(d, 10*time.Millisecond)
}

// check samples the group at now and returns the limit it passed
// (ErrCPULimit or ErrStalled), or nil.
func (w *limitWatch) check(now time.Time) error {
	// thread states are read only when the CPU time stood still
	u := sampleGroup(w.pid, false)
	if !u.alive {
		return nil // exited; the waiter reports it
	}
	progress := u.cpu > w.used || u.runnable
	if !progress && w.stall > 0 {
		progress = sampleGroup(w.pid, true).runnable
	}
	w.used = max(w.used, u.cpu)
	if w.cpuMax > 0 && w.used >= w.cpuMax {
		return ErrCPULimit
	}
	if progress {
		w.lastProgress = now
	} else if w.stall > 0 && now.Sub(w.lastProgress) >= w.stall {
		return ErrStalled
	}
	return nil
}
