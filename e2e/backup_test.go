package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/internal/testkit/datadump"
	"github.com/shelfmark/shelfmark/storagetest"
)

// backupKills bounds the kills of TestBackupKilled.
const backupKills = 12

// runBackup starts `shelfmark backup dest --data data` and returns it
// with the channel its exit is sent on.
func runBackup(t *testing.T, out *bytes.Buffer, dest, data string) (*exec.Cmd, chan error) {
	t.Helper()
	bin := shelfmarkBinary(t)
	cmd := exec.Command(bin, "backup", dest, "--data", data)
	cmd.Env = cleanEnv(filepath.Dir(bin))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd, exited
}

// restoreCLI runs `shelfmark restore from --data <new dir> args…` and
// returns the new directory, what it printed and whether it succeeded.
func restoreCLI(t *testing.T, from string, args ...string) (string, string, bool) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "restored")
	out, err := runCLI(t, append([]string{"restore", from, "--data", data}, args...)...)
	return data, out, err == nil
}

// backupDirs lists the backups of dest, and which of them are whole.
func backupDirs(t *testing.T, dest string) (all, whole []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dest, "backups"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		all = append(all, "backups/"+e.Name())
		if _, err := os.Stat(filepath.Join(dest, "backups", e.Name(), "backup.json")); err == nil {
			whole = append(whole, "backups/"+e.Name())
		}
	}
	return all, whole
}

// TestBackupKilled: `shelfmark backup`, run beside a server and killed
// with SIGKILL at points further and further into its work, never leaves
// a backup that looks whole and is not: after each kill, restore either
// brings back a whole backup (the canonical dump has no difference from
// the original) or refuses with a clear error, and a backup the kill
// interrupted is refused by name. The run that is not killed ends whole,
// copying only what the killed runs had not, and a server on the
// restored data answers as the original does.
func TestBackupKilled(t *testing.T) {
	const works = 300
	orig, dest := t.TempDir(), t.TempDir()
	want, sample := preservedRepository(t, orig, works)
	a := serveData(t, orig, filepath.Join(orig, "ocfl"))
	var log bytes.Buffer
	interrupted, restored := 0, 0
	var final string
	for delay, kills := 30*time.Millisecond, 0; ; delay = delay * 8 / 5 {
		if kills == backupKills {
			delay = time.Hour // the last run is not killed
		}
		var out bytes.Buffer
		cmd, exited := runBackup(t, &out, dest, orig)
		select {
		case err := <-exited:
			log.Write(out.Bytes())
			if err != nil {
				t.Fatalf("the backup failed: %v\n%s", err, log.String())
			}
			final = out.String()
		case <-time.After(delay):
			kills++
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err := <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				final = out.String() // it finished as the signal was sent
				break
			}
			all, whole := backupDirs(t, dest)
			if len(all) > 0 && !slices.Contains(whole, all[len(all)-1]) {
				interrupted++
				_, msg, ok := restoreCLI(t, dest, "--backup", all[len(all)-1])
				if ok || !strings.Contains(msg, "not a whole backup") {
					t.Fatalf("restore of the interrupted %s: ok=%v\n%s", all[len(all)-1], ok, msg)
				}
			}
			data, msg, ok := restoreCLI(t, dest)
			switch {
			case len(whole) == 0 && (ok || !strings.Contains(msg, "not a whole backup")):
				t.Fatalf("restore with no whole backup: ok=%v\n%s", ok, msg)
			case len(whole) > 0 && !ok:
				t.Fatalf("restore of the whole %s failed:\n%s", whole[len(whole)-1], msg)
			case ok:
				restored++
				if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
					t.Fatalf("the restored repository differs (- original, + restored):\n%s", d)
				}
			}
			continue
		}
		break
	}
	t.Logf("%d kills interrupted a backup, %d restores of an earlier whole one after a kill; the last run: %s", interrupted, restored, final)
	if interrupted == 0 {
		t.Fatalf("no kill interrupted a backup:\n%s", log.String())
	}
	// runs killed after a whole backup exists: restore takes that one
	_, whole := backupDirs(t, dest)
	for _, delay := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond} {
		var out bytes.Buffer
		cmd, exited := runBackup(t, &out, dest, orig)
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		data, msg, ok := restoreCLI(t, dest)
		if !ok {
			t.Fatalf("restore after a kill of a later backup: %s", msg)
		}
		if !strings.Contains(msg, whole[len(whole)-1]) {
			all, now := backupDirs(t, dest)
			if len(now) == len(whole) || !strings.Contains(msg, now[len(now)-1]) {
				t.Fatalf("restore took another backup than the newest whole one (%v of %v): %s", now, all, msg)
			}
			whole = now // the kill came after it finished
		}
		if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
			t.Fatalf("the restored repository differs (- original, + restored):\n%s", d)
		}
	}
	data, msg, ok := restoreCLI(t, dest)
	if !ok {
		t.Fatalf("restore: %s", msg)
	}
	if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
		t.Fatalf("the restored repository differs (- original, + restored):\n%s", d)
	}
	b := serveData(t, data, filepath.Join(data, "ocfl"))
	for _, id := range sample {
		path := "/api/v1/resources/" + string(id)
		if ga, gb := getText(t, a, path), getText(t, b, path); ga != gb {
			t.Errorf("GET %s:\n original %s\n restored %s", path, ga, gb)
		}
	}
}

// TestBackupServeKilled: the server killed with SIGKILL while a backup
// runs (and started again) does not spoil the backup: it ends whole, and
// restores to the original.
func TestBackupServeKilled(t *testing.T) {
	const works = 200
	orig, dest := t.TempDir(), t.TempDir()
	want, _ := preservedRepository(t, orig, works)
	bin := shelfmarkBinary(t)
	for round, delay := range []time.Duration{20 * time.Millisecond, 150 * time.Millisecond, 600 * time.Millisecond} {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		srv := exec.Command(bin, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--data", orig, "--log-level", "warn", "--blob-gc", "0")
		srv.Env = cleanEnv(filepath.Dir(bin))
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		_, exited := runBackup(t, &out, dest, orig)
		time.Sleep(delay)
		_ = srv.Process.Signal(syscall.SIGKILL)
		_ = srv.Wait()
		if err := <-exited; err != nil {
			t.Fatalf("round %d: the backup failed when the server was killed: %v\n%s", round, err, out.String())
		}
		data, msg, ok := restoreCLI(t, dest)
		if !ok {
			t.Fatalf("round %d: restore: %s", round, msg)
		}
		if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
			t.Fatalf("round %d: the restored repository differs (- original, + restored):\n%s", round, d)
		}
	}
}

// TestBackupOnline: a backup taken while clients create collections
// through the server is the repository as of one moment: every resource
// it restores is in the original, as it is there, and the server on the
// restored data serves them.
func TestBackupOnline(t *testing.T) {
	orig, dest := t.TempDir(), t.TempDir()
	preservedRepository(t, orig, 150)
	token := adminToken(t, orig)
	a := serveData(t, orig, filepath.Join(orig, "ocfl"))
	hc := withBearer(&http.Client{Timeout: 30 * time.Second}, token)
	var stop atomic.Bool
	var acked atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() && i < 5000; i++ {
				body := fmt.Sprintf(`{"metadata": {"dcterms:title": "online %d-%d"}}`, c, i)
				status, resp, err := do(hc, http.MethodPost, a+"/api/v1/collections", "application/json", []byte(body), nil)
				if err != nil || status != http.StatusCreated {
					errs <- fmt.Errorf("create a collection: %d %s %v", status, resp, err)
					return
				}
				acked.Add(1)
			}
		}()
	}
	for acked.Load() < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	before := acked.Load()
	var out bytes.Buffer
	_, exited := runBackup(t, &out, dest, orig)
	err := <-exited
	during := acked.Load() - before
	for acked.Load() < before+during+20 && len(errs) == 0 { // writes go on after the snapshot too
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if err != nil {
		t.Fatalf("the backup failed: %v\n%s", err, out.String())
	}
	t.Logf("%d collections created while the backup ran; %s", during, out.String())
	data, msg, ok := restoreCLI(t, dest)
	if !ok {
		t.Fatalf("restore: %s", msg)
	}
	got, now := datadump.SQLite(t, data), datadump.SQLite(t, orig)
	have := map[string]bool{}
	for _, l := range strings.Split(now, "\n") {
		have[l] = true
	}
	n := 0
	var ids []string
	for _, l := range strings.Split(got, "\n") {
		if !have[l] {
			t.Errorf("the restored repository holds a line the original does not:\n%s", l)
		}
		if strings.Contains(l, "online ") {
			n++
			if len(ids) < 5 {
				ids = append(ids, strings.Fields(l)[0])
			}
		}
	}
	if int64(n) < before || n >= strings.Count(now, "online ") {
		t.Fatalf("the backup holds %d of the collections: want at least the %d made before it began, fewer than the %d made in all", n, before, strings.Count(now, "online "))
	}
	b := serveData(t, data, filepath.Join(data, "ocfl"))
	for _, id := range ids {
		var res struct {
			ID string `json:"id"`
		}
		status, body, err := do(hc, http.MethodGet, b+"/api/v1/resources/"+id, "", nil, nil)
		if err != nil || status != http.StatusOK || json.Unmarshal(body, &res) != nil || res.ID != id {
			t.Errorf("GET %s on the restored server: %d %.300s %v", id, status, body, err)
		}
	}
}
