package setup

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// GCPercent is the GOGC at which a bulk ingest (shelfmark ingest, local
// or to a server) runs Go's garbage collector unless GOGC sets another: a
// collection starts when the heap has grown by four times what the last
// one left live, where Go's default (100) starts one when it has doubled.
// An ingest makes many short-lived values (parsed records, the rows of
// each batch, their encodings) and keeps little, so at Go's default it
// collects every few batches; at this setting the bulk ingest of patents
// ran 23–37% faster in alternating runs, for a peak RSS of about 290 MiB
// instead of 220. The server keeps Go's default: its caches (composed IIIF
// images, manifests) are live heap that this setting would let the heap
// grow to five times, and the same comparison gave it no shorter manifest
// builds, at most a tenth more creates a second at 32 clients, and twice
// the peak RSS with images. TuneGC's soft memory limit keeps a large live
// heap from growing five times over.
const GCPercent = 400

// GCSettings is how TuneGC left the collector.
type GCSettings struct {
	// Percent is the collector's pace (GOGC); negative: collections off.
	Percent int
	// Limit is the soft memory limit in bytes (GOMEMLIMIT), math.MaxInt64
	// for none.
	Limit int64
	// PercentFromEnv and LimitFromEnv report that GOGC and GOMEMLIMIT
	// were set, and so left as the runtime read them.
	PercentFromEnv, LimitFromEnv bool
}

// String gives the settings as a log line reads them.
func (s GCSettings) String() string {
	limit := "none"
	if s.Limit != math.MaxInt64 {
		limit = strconv.FormatInt(s.Limit>>20, 10) + " MiB"
	}
	pct := "off"
	if s.Percent >= 0 {
		pct = strconv.Itoa(s.Percent)
	}
	return fmt.Sprintf("GOGC %s%s, GOMEMLIMIT %s%s", pct, fromEnv(s.PercentFromEnv), limit, fromEnv(s.LimitFromEnv))
}

func fromEnv(set bool) string {
	if set {
		return " (from the environment)"
	}
	return ""
}

// TuneGC sets the process's collector for a bulk ingest: its pace to
// GCPercent unless GOGC is set, and a soft memory limit of half of memory
// (the memory the process's control group may use, else the machine's;
// none when neither is known) unless GOMEMLIMIT is set. The limit only
// matters for a live heap of more than a tenth of memory: below it, the
// pace decides. getenv reads the environment and memory the memory
// available (false: unknown). It changes the Go runtime's two settings for
// the whole process, so a command calls it once, before it starts.
func TuneGC(getenv func(string) string, memory func() (uint64, bool)) GCSettings {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		if total, ok := memory(); ok {
			debug.SetMemoryLimit(int64(total / 2)) // at most MaxInt64
		}
	}
	return CurrentGC(getenv)
}

// CurrentGC returns the collector's settings as they are (for a log line),
// read from runtime/metrics, with whether GOGC and GOMEMLIMIT set them
// (getenv reads the environment).
func CurrentGC(getenv func(string) string) GCSettings {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(m)
	return GCSettings{
		Percent:        int(m[0].Value.Uint64()), // -1 when GOGC=off
		Limit:          int64(m[1].Value.Uint64()),
		PercentFromEnv: getenv("GOGC") != "",
		LimitFromEnv:   getenv("GOMEMLIMIT") != "",
	}
}

// MachineMemory returns the memory this process may use: its control
// group's memory.max (cgroup v2) when that sets a limit, else MemTotal of
// /proc/meminfo; false when neither can be read (not Linux).
func MachineMemory() (uint64, bool) {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, ok := parseCgroupMax(b); ok {
			return n, true
		}
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return parseMemTotal(b)
}

// parseCgroupMax reads a cgroup v2 memory.max: a number of bytes, or
// "max" (no limit: false).
func parseCgroupMax(b []byte) (uint64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// parseMemTotal reads the MemTotal line of /proc/meminfo ("MemTotal:
// 24576000 kB") in bytes.
func parseMemTotal(b []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || kb == 0 || kb > math.MaxUint64/1024 {
			return 0, false
		}
		return kb * 1024, true
	}
	return 0, false
}
