package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Processor time of the processes a run that compares several servers on
// one PostgreSQL depends on, read from /proc: the servers it started, the
// PostgreSQL processes serving them, and itself (the load generator).

// clockTicks is USER_HZ, the unit of the times in /proc/PID/stat (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// ProcCPU returns the processor time of a process in seconds: user and
// system time, its own and that of the children it waited for, from
// /proc/PID/stat. ok is false when the process cannot be read (gone, or
// not on this machine).
func ProcCPU(pid int) (secs float64, ok bool) {
	t, err := procTimes(pid)
	if err != nil {
		return 0, false
	}
	return t[0] + t[1] + t[2] + t[3], true
}

// LoadAvg returns the machine's one-minute load average (0 when unknown).
func LoadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// selfCPU is this process's user and system time in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// CPUMeter measures the processor time a span costs the server processes
// (Servers), the PostgreSQL processes serving them and this process.
// PostgreSQL's are found in pg_stat_activity through DB: the client
// backends whose application_name is AppName (the servers' connections
// carry it), and every process of the cluster that is not a client
// backend (WAL writer, checkpointer, background writer, autovacuum),
// which all writers share. They are read from /proc, so only when the
// cluster runs on this machine.
type CPUMeter struct {
	Servers []int
	// Store lists the processes of a content store the run started (a
	// local S3 server), counted apart.
	Store   []int
	DB      *sql.DB // nil: no database figures
	AppName string
}

// CPUSample is the processor time counted so far, for Since.
type CPUSample struct {
	servers float64
	store   float64
	client  float64
	db      map[int]float64 // PostgreSQL process → seconds
	backend map[int]bool    // which of them are the servers' backends
	dbOK    bool
}

// Sample reads the processor time of every process the meter follows.
func (m *CPUMeter) Sample(ctx context.Context) CPUSample {
	s := CPUSample{client: selfCPU(), db: map[int]float64{}, backend: map[int]bool{}}
	for _, pid := range m.Servers {
		v, _ := ProcCPU(pid)
		s.servers += v
	}
	for _, pid := range m.Store {
		v, _ := ProcCPU(pid)
		s.store += v
	}
	if m.DB == nil {
		return s
	}
	rows, err := m.DB.QueryContext(ctx, `SELECT pid, coalesce(backend_type, ''), coalesce(application_name, '') FROM pg_stat_activity`)
	if err != nil {
		return s
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		var typ, app string
		if rows.Scan(&pid, &typ, &app) != nil {
			return s
		}
		ours := typ == "client backend" && app == m.AppName
		if typ == "client backend" && !ours {
			continue // another user's session (this meter's among them)
		}
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || !strings.HasPrefix(string(comm), "postgres") {
			continue // not on this machine, or not PostgreSQL's
		}
		if v, ok := ProcCPU(pid); ok {
			s.db[pid], s.backend[pid], s.dbOK = v, ours, true
		}
	}
	if rows.Err() != nil {
		s.dbOK = false
	}
	return s
}

// Since returns the processor time spent between before and now, per
// item. A PostgreSQL process that started in the span counts whole; one
// that ended in it is lost (the servers' pools keep their connections).
func (m *CPUMeter) Since(ctx context.Context, before CPUSample, items int64) *CPU {
	now := m.Sample(ctx)
	c := &CPU{ServerSeconds: now.servers - before.servers, StoreSeconds: now.store - before.store, ClientSeconds: now.client - before.client, Database: now.dbOK}
	var backend float64
	for pid, v := range now.db {
		d := v - before.db[pid]
		if d < 0 { // a new process with a reused pid
			d = v
		}
		c.DatabaseSeconds += d
		if now.backend[pid] {
			backend += d
		}
	}
	if items > 0 {
		per := 1000 / float64(items)
		c.ServerMS, c.DatabaseMS, c.ClientMS, c.DatabaseBackendMS = c.ServerSeconds*per, c.DatabaseSeconds*per, c.ClientSeconds*per, backend*per
		c.StoreMS = c.StoreSeconds * per
	}
	return c
}

// Summarize fills in a configuration's totals from its steps: items,
// errors and time summed, the overall and best rate, the fraction of the
// raw limit the best step reached, and the CPU of all steps per item.
// Latency is left to the caller (percentiles do not add up).
func (c *Configuration) Summarize() {
	c.Items, c.Errors, c.Seconds, c.BestRatePerS = 0, 0, 0, 0
	var cpu CPU
	measured := false
	var backend float64
	for _, s := range c.Steps {
		c.Items += s.Items
		c.Errors += s.Errors
		c.Seconds += s.Seconds
		c.BestRatePerS = max(c.BestRatePerS, s.RatePerS)
		if s.CPU != nil {
			measured = true
			cpu.ServerSeconds += s.CPU.ServerSeconds
			cpu.DatabaseSeconds += s.CPU.DatabaseSeconds
			cpu.ClientSeconds += s.CPU.ClientSeconds
			cpu.StoreSeconds += s.CPU.StoreSeconds
			backend += s.CPU.DatabaseBackendMS * float64(s.Items) / 1000
			cpu.Database = s.CPU.Database
		}
	}
	if c.Seconds > 0 {
		c.RatePerS = float64(c.Items) / c.Seconds
	}
	if c.RawLimitPerS > 0 {
		c.FractionLimit = c.BestRatePerS / c.RawLimitPerS
	}
	if measured {
		if c.Items > 0 {
			per := 1000 / float64(c.Items)
			cpu.ServerMS, cpu.DatabaseMS, cpu.ClientMS, cpu.DatabaseBackendMS = cpu.ServerSeconds*per, cpu.DatabaseSeconds*per, cpu.ClientSeconds*per, backend*per
			cpu.StoreMS = cpu.StoreSeconds * per
		}
		c.CPU = &cpu
	}
}

// configurationCharts draws a run that compares configurations: the rate
// by number of servers (overall and best step) and the CPU time per item
// of the servers and of PostgreSQL, one line per content store (S3
// dashed).
func (r *Report) configurationCharts() []chart {
	if len(r.Configurations) == 0 {
		return nil
	}
	var stores []string
	var ticks []float64
	for _, c := range r.Configurations {
		if !slices.Contains(stores, c.Storage) {
			stores = append(stores, c.Storage)
		}
		if !slices.Contains(ticks, float64(c.Servers)) {
			ticks = append(ticks, float64(c.Servers))
		}
	}
	slices.Sort(ticks)
	rate := chart{title: "Rate by number of servers on one PostgreSQL", xlabel: "servers", ylabel: "rate (items/s)", xticks: ticks}
	cpu := chart{title: "CPU time per item by number of servers", xlabel: "servers", ylabel: "CPU (ms per item)", xticks: ticks}
	for _, s := range stores {
		overall, best := line{name: s + ": overall", dashed: s != "local"}, line{name: s + ": best step", dashed: s != "local"}
		srv, db := line{name: s + ": servers", dashed: s != "local"}, line{name: s + ": PostgreSQL", dashed: s != "local"}
		for _, c := range r.Configurations {
			if c.Storage != s {
				continue
			}
			x := float64(c.Servers)
			overall.xs, overall.ys = append(overall.xs, x), append(overall.ys, c.RatePerS)
			best.xs, best.ys = append(best.xs, x), append(best.ys, c.BestRatePerS)
			if c.CPU != nil {
				srv.xs, srv.ys = append(srv.xs, x), append(srv.ys, c.CPU.ServerMS)
				if c.CPU.Database {
					db.xs, db.ys = append(db.xs, x), append(db.ys, c.CPU.DatabaseMS)
				}
			}
		}
		rate.lines = append(rate.lines, overall)
		if len(r.Configurations[0].Steps) > 1 && r.Scenario == "rest" {
			rate.lines = append(rate.lines, best)
		}
		cpu.lines = append(cpu.lines, srv)
		if len(db.xs) > 0 {
			cpu.lines = append(cpu.lines, db)
		}
	}
	return []chart{rate, cpu}
}

// WriteConfigurationsSVG writes the charts of a run that compares
// configurations (rate, then CPU per item) as standalone SVG files:
// path with "-rate" and "-cpu" before its extension.
func (r *Report) WriteConfigurationsSVG(path string) error {
	charts := r.configurationCharts()
	if len(charts) == 0 {
		return fmt.Errorf("the report compares no configurations")
	}
	ext := filepath.Ext(path)
	for i, name := range []string{"-rate", "-cpu"} {
		if err := os.WriteFile(strings.TrimSuffix(path, ext)+name+ext, standalone(charts[i].svg()), 0o644); err != nil {
			return fmt.Errorf("write chart: %w", err)
		}
	}
	return nil
}
