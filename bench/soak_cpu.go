package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpuTimes is a reading of the CPU time the machine and the run's
// processes have used so far, in seconds; the difference of two readings
// is what a sample used.
type cpuTimes struct {
	ok bool
	// Server is the server process's own threads; Tools its children
	// that have ended and been waited for (OCR, derivative and
	// identification tools, each counted when it ends); Bench this
	// process (the clients, the storm and the walk of the data
	// directory).
	Server, Tools, Bench float64
	// Busy, Steal and Total are the whole machine's, summed over its
	// cores, in clock ticks rather than seconds: whole numbers, which
	// float64 adds and subtracts exactly, so that a share of busy ticks
	// is never above 1 by a rounding. Busy is every state but idle, I/O
	// wait and steal; Steal the time the hypervisor gave the cores to
	// someone else.
	Busy, Steal, Total float64
}

// readCPU reads the CPU times now of server process pid, its ended
// children, this process and the machine (ok false when /proc cannot be
// read, as on a system without it).
func readCPU(pid int) cpuTimes {
	var c cpuTimes
	srv, err := procTimes(pid)
	if err != nil {
		return c
	}
	self, err := procTimes(os.Getpid())
	if err != nil {
		return c
	}
	c.Server, c.Tools, c.Bench = srv[0]+srv[1], srv[2]+srv[3], self[0]+self[1]
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return c
	}
	line, _, _ := strings.Cut(string(b), "\n")
	c.Busy, c.Steal, c.Total, c.ok = machineTicks(line)
	return c
}

// machineTicks reads the busy, stolen and total clock ticks of all cores
// from the first line of /proc/stat (ok false when it is not one).
func machineTicks(line string) (busy, steal, total float64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, false
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice,
	// already counted in user and nice]
	var v [8]float64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return 0, 0, 0, false
		}
		v[i] = float64(n)
	}
	total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]
	busy = v[0] + v[1] + v[2] + v[5] + v[6]
	return busy, v[7], total, true
}

// procTimes returns utime, stime, cutime and cstime of process pid in
// seconds (fields 14–17 of /proc/PID/stat, after the command name, which
// may hold spaces and parentheses: the fields are counted from its last
// closing parenthesis).
func procTimes(pid int) ([4]float64, error) {
	var out [4]float64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return out, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return out, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11]
	if len(f) < 15 {
		return out, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	for k := range out {
		n, err := strconv.ParseFloat(f[11+k], 64)
		if err != nil {
			return out, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		out[k] = n / clockTicks
	}
	return out, nil
}

// SoakCPU is where a sample's CPU time went, in cores (CPU seconds per
// second of the sample): the server's threads, its tools (OCR and
// derivatives, counted as each ends), the load generator, and the
// machine's busy and stolen share of all its cores.
type SoakCPU struct {
	Server float64 `json:"server_cores"`
	Tools  float64 `json:"tools_cores"`
	Bench  float64 `json:"bench_cores"`
	// Busy and Steal are fractions of the machine's cores (0–1).
	Busy  float64 `json:"machine_busy"`
	Steal float64 `json:"machine_steal"`
}

// cpuBetween is the CPU a sample of secs seconds used, from two readings
// (zero unless both were read).
func cpuBetween(a, b cpuTimes, secs float64) SoakCPU {
	if !a.ok || !b.ok || secs <= 0 {
		return SoakCPU{}
	}
	c := SoakCPU{Server: (b.Server - a.Server) / secs, Tools: (b.Tools - a.Tools) / secs, Bench: (b.Bench - a.Bench) / secs}
	if d := b.Total - a.Total; d > 0 {
		c.Busy, c.Steal = (b.Busy-a.Busy)/d, (b.Steal-a.Steal)/d
	}
	return c
}

// SoakCPUSpan sums the CPU of consecutive samples: the average cores of
// each kind over their time, and the tools' CPU seconds per file uploaded
// (what the OCR and derivatives of one upload cost, a measure of the
// machine's speed when the uploads are of one kind).
type SoakCPUSpan struct {
	SoakCPU
	ToolsPerUpload float64 `json:"tools_s_per_upload"`
}

// cpuSpan averages the samples' CPU over their time.
func cpuSpan(ss []SoakSample) SoakCPUSpan {
	var out SoakCPUSpan
	var secs float64
	var uploads int64
	for _, s := range ss {
		out.Server += s.CPU.Server * s.Seconds
		out.Tools += s.CPU.Tools * s.Seconds
		out.Bench += s.CPU.Bench * s.Seconds
		out.Busy += s.CPU.Busy * s.Seconds
		out.Steal += s.CPU.Steal * s.Seconds
		secs += s.Seconds
		uploads += s.Uploads
	}
	if secs == 0 {
		return SoakCPUSpan{}
	}
	if uploads > 0 {
		out.ToolsPerUpload = out.Tools / float64(uploads)
	}
	out.Server, out.Tools, out.Bench, out.Busy, out.Steal = out.Server/secs, out.Tools/secs, out.Bench/secs, out.Busy/secs, out.Steal/secs
	return out
}
