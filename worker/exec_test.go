package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// toolTestScript writes an executable shell script into a test temporary
// directory and returns its path.
func toolTestScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// toolTestReadPID waits up to 10 s for a script to write a pid into path.
func toolTestReadPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid written to %s", path)
	return 0
}

// toolTestStat returns the fields of /proc/<pid>/stat after the command
// name (index 0 is the state, field 3 of proc(5)), or nil if the process
// does not exist.
func toolTestStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// toolTestGone fails unless process pid stops running within 5 s. The
// rule: the process is gone when /proc/<pid> is absent or the process is
// a zombie (state Z or X: dead, only waiting to be reaped; an orphan is
// reaped by PID 1, which in some containers never does it).
func toolTestGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := toolTestStat(pid)
		if st == nil || st[0] == "Z" || st[0] == "X" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %d) still exists in state %s", what, pid, st[0])
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunToolOutputAndEnv(t *testing.T) {
	sh := toolTestScript(t, `printf '%s|%s|%s' "$1" "$SHELFMARK_TEST_A" "$SHELFMARK_TEST_B"`)
	out, err := RunTool(context.Background(), Limits{Timeout: time.Minute}, []string{"SHELFMARK_TEST_A=a", "SHELFMARK_TEST_B=x", "SHELFMARK_TEST_B=b"}, sh, "arg one")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "arg one|a|b"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

func TestRunToolNonZeroExit(t *testing.T) {
	sh := toolTestScript(t, `echo "partial output"; echo "tool.sh: cannot read input: bad magic" >&2; exit 3`)
	out, err := RunTool(context.Background(), Limits{}, nil, sh)
	if err == nil {
		t.Fatal("no error")
	}
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *ToolError", err, err)
	}
	if te.ExitCode != 3 || te.Name != "tool.sh" {
		t.Errorf("ToolError %+v", te)
	}
	if !strings.Contains(err.Error(), "cannot read input: bad magic") {
		t.Errorf("error %q does not quote stderr", err)
	}
	if string(out) != "partial output\n" {
		t.Errorf("stdout %q", out)
	}
	if errors.Is(err, ErrTimeout) || IsPermanent(err) {
		t.Errorf("error %v: timeout or permanent", err)
	}
}

func TestRunToolStderrTail(t *testing.T) {
	sh := toolTestScript(t, `echo FIRST-LINE >&2; i=0; while [ $i -lt 200 ]; do echo "filler line number $i of the stderr noise" >&2; i=$((i+1)); done; echo LAST-LINE >&2; exit 1`)
	_, err := RunTool(context.Background(), Limits{}, nil, sh)
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *ToolError", err)
	}
	if len(te.Stderr) > 1024 {
		t.Errorf("stderr tail is %d bytes, want ≤ 1024", len(te.Stderr))
	}
	if !strings.Contains(err.Error(), "LAST-LINE") || strings.Contains(err.Error(), "FIRST-LINE") {
		t.Errorf("error does not quote just the tail: %q", err)
	}
}

func TestRunToolNotFound(t *testing.T) {
	_, err := RunTool(context.Background(), Limits{}, nil, filepath.Join(t.TempDir(), "no-such-tool"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v, want one wrapping os.ErrNotExist", err)
	}
}

// hangScript starts a background child, writes the child's pid and its
// own into files and then sleeps itself (exec keeps its pid).
const hangScript = `sleep 300 &
echo $! > "$1.tmp" && mv "$1.tmp" "$1"
echo $$ > "$2.tmp" && mv "$2.tmp" "$2"
exec sleep 300
`

func TestRunToolTimeoutKillsGroup(t *testing.T) {
	sh := toolTestScript(t, hangScript)
	dir := t.TempDir()
	childFile, selfFile := filepath.Join(dir, "child"), filepath.Join(dir, "self")
	start := time.Now()
	_, err := RunTool(context.Background(), Limits{Timeout: 500 * time.Millisecond}, nil, sh, childFile, selfFile)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want one wrapping ErrTimeout", err)
	}
	if IsPermanent(err) {
		t.Errorf("timeout %v marked permanent", err)
	}
	t.Logf("killed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	toolTestGone(t, "script", toolTestReadPID(t, selfFile))
	toolTestGone(t, "background child", toolTestReadPID(t, childFile))
}

func TestRunToolCancelKillsGroup(t *testing.T) {
	sh := toolTestScript(t, hangScript)
	dir := t.TempDir()
	childFile, selfFile := filepath.Join(dir, "child"), filepath.Join(dir, "self")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := RunTool(ctx, Limits{Timeout: time.Minute}, nil, sh, childFile, selfFile)
		errc <- err
	}()
	self, child := toolTestReadPID(t, selfFile), toolTestReadPID(t, childFile)
	cancel()
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("RunTool did not return after cancellation")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	toolTestGone(t, "script", self)
	toolTestGone(t, "background child", child)
}

func TestRunToolContextDeadline(t *testing.T) {
	sh := toolTestScript(t, hangScript)
	dir := t.TempDir()
	childFile, selfFile := filepath.Join(dir, "child"), filepath.Join(dir, "self")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := RunTool(ctx, Limits{Timeout: time.Minute}, nil, sh, childFile, selfFile)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want one wrapping ErrTimeout and context.DeadlineExceeded", err)
	}
	toolTestGone(t, "script", toolTestReadPID(t, selfFile))
	toolTestGone(t, "background child", toolTestReadPID(t, childFile))
}

func TestRunToolSweepsStragglers(t *testing.T) {
	// The script exits at once, leaving a background child behind.
	sh := toolTestScript(t, `sleep 300 &
echo $! > "$1.tmp" && mv "$1.tmp" "$1"
echo done`)
	childFile := filepath.Join(t.TempDir(), "child")
	out, err := RunTool(context.Background(), Limits{Timeout: time.Minute}, nil, sh, childFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "done\n" {
		t.Errorf("stdout %q", out)
	}
	toolTestGone(t, "background child", toolTestReadPID(t, childFile))
}

func TestRunToolMaxOutput(t *testing.T) {
	sh := toolTestScript(t, `exec cat /dev/zero`)
	out, err := RunTool(context.Background(), Limits{Timeout: time.Minute, MaxOutput: 1000}, nil, sh)
	if !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("error %v, want one wrapping ErrOutputLimit", err)
	}
	if len(out) != 1000 {
		t.Errorf("got %d bytes, want the first 1000", len(out))
	}
}

func TestRunToolIdle(t *testing.T) {
	if nice, policy := toolTestPriority(t, Limits{Timeout: time.Minute, Idle: true}, "19", "5"); nice != "19" || policy != "5" {
		t.Errorf("child ran at nice %s, policy %s; want 19 and 5 (SCHED_IDLE)", nice, policy)
	}
}

// TestRunToolNice: Limits.Nice lowers the nice value only; the child stays
// under the normal scheduler, so it keeps a share of a busy CPU.
func TestRunToolNice(t *testing.T) {
	if nice, policy := toolTestPriority(t, Limits{Timeout: time.Minute, Nice: 10}, "10", "0"); nice != "10" || policy != "0" {
		t.Errorf("child ran at nice %s, policy %s; want 10 and 0 (SCHED_OTHER)", nice, policy)
	}
}

// TestDeriveLimits: derivative tools run at DeriveNice instead of idle
// when it is set; the other tools keep idle priority.
func TestDeriveLimits(t *testing.T) {
	tools := Tools{Limits: Limits{Idle: true}, DeriveNice: DefaultDeriveNice}
	if l := tools.deriveLimits(); l.Idle || l.Nice != DefaultDeriveNice {
		t.Errorf("derive limits %+v, want nice %d without idle", l, DefaultDeriveNice)
	}
	if l := tools.toolLimits(); !l.Idle {
		t.Errorf("tool limits %+v, want idle", l)
	}
	tools.DeriveNice = 0
	if l := tools.deriveLimits(); !l.Idle {
		t.Errorf("derive limits without DeriveNice %+v, want idle", l)
	}
}

// toolTestPriority runs a child under l and returns its nice value and
// scheduling policy once they are wantNice and wantPolicy, or after 10 s.
func toolTestPriority(t *testing.T, l Limits, wantNice, wantPolicy string) (nice, policy string) {
	t.Helper()
	sh := toolTestScript(t, `echo $$ > "$1.tmp" && mv "$1.tmp" "$1"
while [ ! -e "$2" ]; do sleep 0.02; done`)
	dir := t.TempDir()
	pidFile, stopFile := filepath.Join(dir, "pid"), filepath.Join(dir, "stop")
	errc := make(chan error, 1)
	go func() {
		_, err := RunTool(context.Background(), l, nil, sh, pidFile, stopFile)
		errc <- err
	}()
	pid := toolTestReadPID(t, pidFile)
	// RunTool lowers the priority right after the start: allow it 10 s.
	// proc(5): field 19 is nice, field 41 the scheduling policy.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st := toolTestStat(pid)
		if len(st) < 39 {
			t.Fatalf("short /proc/%d/stat: %v", pid, st)
		}
		if nice, policy = st[19-3], st[41-3]; nice == wantNice && policy == wantPolicy {
			break
		}
	}
	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return nice, policy
}

func TestPermanent(t *testing.T) {
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	base := errors.New("bad input")
	err := fmt.Errorf("context: %w", Permanent(base))
	if !IsPermanent(err) || !errors.Is(err, base) || err.Error() != "context: bad input" {
		t.Errorf("wrapped permanent error %v", err)
	}
	if IsPermanent(base) || IsPermanent(nil) {
		t.Error("plain error reported permanent")
	}
}

// TestOCRIdleByDefault: OCR runs at idle priority unless OCRNice is set
// (serve and worker never set it; the tests do, see testOCRNice).
func TestOCRIdleByDefault(t *testing.T) {
	if l := (Tools{}).ocrLimits(); !l.Idle || l.Nice != 0 {
		t.Fatalf("default OCR limits %+v, want idle priority", l)
	}
	if l := (Tools{Limits: Limits{Nice: 5}}).ocrLimits(); !l.Idle || l.Nice != 0 {
		t.Fatalf("OCR limits with a tool nice value %+v, want idle priority", l)
	}
	if l := (Tools{OCRNice: 19}).ocrLimits(); l.Idle || l.Nice != 19 {
		t.Fatalf("OCR limits with OCRNice 19: %+v, want nice 19 under the normal scheduler", l)
	}
}
