package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// DefaultMaxOutput is the cap on a child's captured standard output when
// Limits.MaxOutput is zero.
const DefaultMaxOutput = 64 << 20

// toolStderrTail is how much of the end of a child's standard error an
// error quotes.
const toolStderrTail = 1 << 10

// toolWaitDelay bounds how long RunTool waits for a child's output pipes
// to close after the child has exited and its process group has been
// killed (only a process that left the group can hold them open).
const toolWaitDelay = 10 * time.Second

// Limits bound one child process. A child is limited by the work it does
// (CPU) and by waiting on nothing (Stall), not by how long it waits for a
// CPU: at idle priority on a busy machine it may take hours of real time
// for seconds of work. Timeout is a last resort against what sampling
// cannot see.
type Limits struct {
	// Timeout is the wall-clock ceiling: the child is killed this long
	// after it started, whatever it did (0: only ctx).
	Timeout time.Duration
	// CPU bounds the CPU time (user + system) of the child and its
	// descendants, live and exited, sampled from /proc (0: no bound).
	CPU time.Duration
	// Stall kills the child after this long in which its process tree
	// used no CPU and none of its threads was runnable (waiting for a
	// CPU): hung on a lock, a pipe or the network (0: no bound). A child
	// starved at idle priority is runnable, so it does not stall.
	Stall     time.Duration
	Idle      bool  // run at idle CPU priority
	Nice      int   // without Idle: run at this nice value (1–19), normal scheduling
	MaxOutput int64 // cap on captured stdout bytes (0: 64 MiB)
}

// ErrTimeout is wrapped by errors of children killed at one of their
// limits of time: Limits.Timeout, CPU or Stall (a *LimitError), or the
// deadline of the context passed to RunTool.
var ErrTimeout = errors.New("child process time limit exceeded")

// ErrOutputLimit is wrapped by the error of a child killed because its
// standard output exceeded Limits.MaxOutput; RunTool then returns the
// first MaxOutput bytes along with the error.
var ErrOutputLimit = errors.New("child process output limit exceeded")

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks an error that retrying cannot fix (a corrupt or
// unsupported input); IsPermanent reports it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or any error it wraps, was marked by
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// ToolError is the error of a child process that exited with a non-zero
// status or was killed by a signal RunTool did not send. Its message
// quotes the tail of the child's standard error.
type ToolError struct {
	Name     string // program name (base name of the path)
	ExitCode int    // exit status; -1 if killed by a signal
	Stderr   string // the last ≤ 1 KiB of standard error, valid UTF-8
	Err      error  // the *exec.ExitError
}

// Error describes the failure and quotes the tail of standard error.
func (e *ToolError) Error() string {
	msg := fmt.Sprintf("%s: %v", e.Name, e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": stderr: " + strconv.Quote(s)
	}
	return msg
}

// Unwrap returns the underlying *exec.ExitError.
func (e *ToolError) Unwrap() error { return e.Err }

// RunTool runs name with args in its own process group with env added to
// the current environment (later entries win); returns stdout. On ctx end
// it SIGKILLs the whole group, waits, and returns an error wrapping
// ctx.Err() (and ErrTimeout for a deadline). At l.CPU, l.Stall or
// l.Timeout it does the same and returns a *LimitError that names the
// limit and the CPU time used (the tree is sampled from /proc every
// limitWatchEvery while either of the first two is set). A
// non-zero exit returns a *ToolError that quotes the tail (≤ 1 KiB) of
// stderr. When stdout exceeds l.MaxOutput the group is killed and the
// first MaxOutput bytes are returned with an error wrapping
// ErrOutputLimit.
//
// The process group is killed with SIGKILL in every case once the child
// has exited, so no background process it started is left behind. Stdin
// is /dev/null. With l.Idle the child runs at nice 19 under SCHED_IDLE
// (set right after start, on all its threads; EPERM is tolerated);
// processes it starts afterwards inherit both. Without it, l.Nice > 0
// sets only the nice value: the child keeps a small but certain share of
// a busy CPU, where SCHED_IDLE gets next to none. The child is also sent
// SIGKILL should the OS thread that started it exit (Pdeathsig), as all
// do when this process dies; the Go runtime ends a thread only when a
// goroutine locked to it exits without unlocking.
func RunTool(ctx context.Context, l Limits, env []string, name string, args ...string) ([]byte, error) {
	base := filepath.Base(name)
	if err := toolCtxErr(ctx); err != nil {
		return nil, fmt.Errorf("worker: %s not started: %w", base, err)
	}
	maxOut := l.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	stdout := &toolCapWriter{max: maxOut, over: make(chan struct{})}
	stderr := &toolTailWriter{}

	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = toolWaitDelay
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("worker: start %s: %w", base, err)
	}
	pid := cmd.Process.Pid
	kill := func() { _ = unix.Kill(-pid, unix.SIGKILL) }

	// The waiter learns of the child's exit without reaping it, so that
	// its pid, which is the group's id, cannot be reused while the group
	// is swept; then it reaps.
	done := make(chan error, 1)
	go func() {
		toolWaitExit(pid)
		kill()
		done <- cmd.Wait()
	}()

	if l.Idle || l.Nice > 0 {
		if err := toolLowerPriority(pid, l.Idle, l.Nice); err != nil {
			kill()
			<-done
			return nil, fmt.Errorf("worker: %s: %w", base, err)
		}
	}

	start := time.Now()
	var timeout <-chan time.Time
	if l.Timeout > 0 {
		t := time.NewTimer(l.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	watch := &limitWatch{pid: pid, cpuMax: l.CPU, stall: l.Stall, lastProgress: start}
	var sample <-chan time.Time
	if l.CPU > 0 || l.Stall > 0 {
		t := time.NewTicker(limitWatchEvery(l))
		defer t.Stop()
		sample = t.C
	}
	var cause error
	var werr error
	limitErr := func(limit error, bound time.Duration) error {
		if u := sampleGroup(pid, false); u.alive {
			watch.used = max(watch.used, u.cpu)
		}
		kill()
		werr = <-done
		return &LimitError{Name: base, Limit: limit, Max: bound, CPU: watch.used, Wall: time.Since(start)}
	}
wait:
	for {
		select {
		case werr = <-done:
		case <-ctx.Done():
			kill()
			werr = <-done
			cause = fmt.Errorf("worker: %s killed: %w", base, toolCtxErr(ctx))
		case <-timeout:
			cause = limitErr(ErrTimeout, l.Timeout)
		case now := <-sample:
			switch err := watch.check(now); err {
			case nil:
				continue wait
			case ErrCPULimit:
				cause = limitErr(err, l.CPU)
			default:
				cause = limitErr(err, l.Stall)
			}
		case <-stdout.over:
			kill()
			werr = <-done
			cause = fmt.Errorf("worker: %s killed: %w (%d bytes)", base, ErrOutputLimit, maxOut)
		}
		break
	}
	out := stdout.buf.Bytes()
	if cause == nil && stdout.exceeded() {
		// The child finished before the overflow was noticed.
		cause = fmt.Errorf("worker: %s: %w (%d bytes)", base, ErrOutputLimit, maxOut)
	}
	if cause != nil {
		return out, cause
	}
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			return out, &ToolError{Name: base, ExitCode: ee.ExitCode(), Stderr: stderr.String(), Err: ee}
		}
		return out, fmt.Errorf("worker: %s: %w", base, werr)
	}
	return out, nil
}

// toolCtxErr returns ctx.Err(), wrapped with ErrTimeout if the context's
// deadline passed, or nil while ctx is live.
func toolCtxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// toolWaitExit blocks until process pid has exited, without reaping it.
// It returns early only if waitid fails (then cmd.Wait still reaps).
func toolWaitExit(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// toolLowerPriority puts every thread of process pid at nice 19 and under
// SCHED_IDLE when idle is set, else at nice (normal scheduling). Threads
// and processes it creates later inherit both. EPERM (not allowed here),
// ESRCH (already gone) and ENOSYS are tolerated.
func toolLowerPriority(pid int, idle bool, nice int) error {
	if idle {
		nice = 19
	}
	nice = min(max(nice, 0), 19)
	tids := []int{pid}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
		tids = tids[:0]
		for _, e := range ents {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				tids = append(tids, tid)
			}
		}
	}
	tolerable := func(err error) bool {
		return err == nil || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOSYS)
	}
	for _, tid := range tids {
		// On Linux both calls act on one thread when given a thread id.
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); !tolerable(err) {
			return fmt.Errorf("set nice %d on thread %d: %w", nice, tid, err)
		}
		if !idle {
			continue
		}
		if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0); !tolerable(err) {
			return fmt.Errorf("set SCHED_IDLE on thread %d: %w", tid, err)
		}
	}
	return nil
}

// toolCapWriter keeps the first max bytes written to it, discards the
// rest and closes over on the first byte past max.
type toolCapWriter struct {
	buf  bytes.Buffer
	max  int64
	over chan struct{}
	once sync.Once
}

func (w *toolCapWriter) Write(p []byte) (int, error) {
	if room := w.max - int64(w.buf.Len()); int64(len(p)) > room {
		w.buf.Write(p[:max(room, 0)])
		w.once.Do(func() { close(w.over) })
		return len(p), nil
	}
	return w.buf.Write(p)
}

func (w *toolCapWriter) exceeded() bool {
	select {
	case <-w.over:
		return true
	default:
		return false
	}
}

// toolTailWriter keeps the last toolStderrTail bytes written to it.
type toolTailWriter struct {
	buf       []byte
	truncated bool
}

func (w *toolTailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*toolStderrTail {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-toolStderrTail:]...)
		w.truncated = true
	}
	return len(p), nil
}

// String returns the tail as valid UTF-8, starting at a rune boundary and
// marked with "…" if earlier output was dropped.
func (w *toolTailWriter) String() string {
	b := w.buf
	if !w.truncated && len(b) <= toolStderrTail {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	b = b[len(b)-(toolStderrTail-len("…")):]
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return "…" + strings.ToValidUTF8(string(b), "\uFFFD")
}
