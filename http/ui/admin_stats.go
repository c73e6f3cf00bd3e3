package ui

// This file holds what the administrators' dashboard measures beyond the
// job queue's counts: the rate at which jobs finish (sampled from the
// server's metrics as the dashboard is watched) and the storage in use.

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

const (
	// rateWindow is the span the rates of the dashboard cover.
	rateWindow = time.Minute
	// sampleEvery is the least time between two samples of the finished
	// jobs; sampleCap bounds how many are kept.
	sampleEvery = time.Second
	sampleCap   = 2 * int(rateWindow/sampleEvery)
	// defaultEventsFor is how long one stream of dashboard events lasts
	// before the server ends it (the browser then opens another), and
	// defaultEventsEvery the time between two of its updates.
	defaultEventsFor   = 3 * time.Minute
	defaultEventsEvery = 2 * time.Second
)

// adminState is what the dashboard keeps between requests: recent samples
// of the jobs finished, and the pace of its event streams.
type adminState struct {
	sampler          // the jobs finished
	requests sampler // the requests admitted and refused (admin_requests.go)
	once     sync.Once
	reg      *prometheus.Registry // gathers the job histogram alone
	// eventsFor and eventsEvery, when not 0, replace defaultEventsFor
	// and defaultEventsEvery (tests shorten them).
	eventsFor, eventsEvery atomic.Int64
	// stopped is closed when the server shuts down, which ends the event
	// streams (a stream would otherwise hold the shutdown up for
	// minutes).
	stopInit, stopOnce sync.Once
	stopped            chan struct{}
}

// done returns the channel closed when the server shuts down.
func (a *adminState) done() <-chan struct{} {
	a.stopInit.Do(func() { a.stopped = make(chan struct{}) })
	return a.stopped
}

// stop ends the event streams, now and to come.
func (a *adminState) stop() {
	a.done()
	a.stopOnce.Do(func() { close(a.stopped) })
}

// sampler keeps recent samples of counts that only grow (the jobs
// finished by queue, the requests admitted by class) to tell their rates.
type sampler struct {
	mu      sync.Mutex
	samples []doneSample // oldest first
}

// doneSample is the count of jobs finished by queue at a time.
type doneSample struct {
	at   time.Time
	done map[string]float64
	sum  float64
}

// streamFor is how long one event stream lasts.
func (a *adminState) streamFor() time.Duration {
	if d := a.eventsFor.Load(); d > 0 {
		return time.Duration(d)
	}
	return defaultEventsFor
}

// streamEvery is the time between two updates of an event stream.
func (a *adminState) streamEvery() time.Duration {
	if d := a.eventsEvery.Load(); d > 0 {
		return time.Duration(d)
	}
	return defaultEventsEvery
}

// doneCounts reads from the metrics how many jobs the workers of this
// process have finished, by queue (the count of the job histogram's "done"
// outcome). The histogram is gathered from a registry of its own, so no
// other collector (some read the database) runs.
func (a *adminState) doneCounts(jobSeconds prometheus.Collector) map[string]float64 {
	a.once.Do(func() {
		reg := prometheus.NewRegistry()
		if jobSeconds == nil {
			return
		}
		if err := reg.Register(jobSeconds); err == nil {
			a.reg = reg
		}
	})
	out := map[string]float64{}
	if a.reg == nil {
		return out
	}
	mfs, err := a.reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		for _, mm := range mf.GetMetric() {
			var queue, outcome string
			for _, l := range mm.GetLabel() {
				switch l.GetName() {
				case "queue":
					queue = l.GetValue()
				case "outcome":
					outcome = l.GetValue()
				}
			}
			if outcome == "done" {
				out[queue] += float64(mm.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// jobRates is what the samples tell.
type jobRates struct {
	// Known is set once two samples a second or more apart cover part of
	// the window.
	Known bool
	// PerQueue is jobs finished a second over the window, by queue.
	PerQueue map[string]float64
	// Series is the rate (all queues) between successive samples of the
	// window, oldest first, and Span the seconds it covers.
	Series []float64
	Span   float64
}

// observe records the finished counts at now (at most one sample a
// sampleEvery) and returns the rates over the last rateWindow.
func (a *sampler) observe(now time.Time, done map[string]float64) jobRates {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.samples); n == 0 || now.Sub(a.samples[n-1].at) >= sampleEvery {
		s := doneSample{at: now, done: done}
		for _, v := range done {
			s.sum += v
		}
		a.samples = append(a.samples, s)
	}
	// keep the window, and one sample before it to measure from
	cut := 0
	for cut+1 < len(a.samples) && now.Sub(a.samples[cut+1].at) >= rateWindow {
		cut++
	}
	if over := len(a.samples) - cut - sampleCap; over > 0 {
		cut += over
	}
	a.samples = append(a.samples[:0], a.samples[cut:]...)
	r := jobRates{PerQueue: map[string]float64{}}
	if len(a.samples) < 2 {
		return r
	}
	first, last := a.samples[0], a.samples[len(a.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt < sampleEvery.Seconds() {
		return r
	}
	r.Known, r.Span = true, dt
	for q, v := range last.done {
		r.PerQueue[q] = max(0, v-first.done[q]) / dt
	}
	for i := 1; i < len(a.samples); i++ {
		d := a.samples[i].at.Sub(a.samples[i-1].at).Seconds()
		r.Series = append(r.Series, max(0, a.samples[i].sum-a.samples[i-1].sum)/d)
	}
	return r
}

// storageUse is the storage the dashboard shows: the size of the database
// (its file and write-ahead log for SQLite, pg_database_size for a
// PostgreSQL backend that reports it) and the file systems that hold the
// database and the content store (what statfs says: cheap, whatever the
// number of files).
type storageUse struct {
	Backend string
	// DBBytes is the database's size; DBKnown says whether it could be
	// told.
	DBBytes int64
	DBKnown bool
	// Disks are the file systems of the content store and the database
	// (one when they share it).
	Disks []diskUse
}

// diskUse is one file system.
type diskUse struct {
	// What is "content", "database" or "both".
	What              string
	Total, Used, Free int64
	// Percent is Used of Total, rounded down.
	Percent int
}

// databaseFile is implemented by a database kept in one file (SQLite).
type databaseFile interface{ Path() string }

// databaseSizer is implemented by a database that can tell its size.
type databaseSizer interface {
	DatabaseBytes(ctx context.Context) (int64, error)
}

// storeDir is implemented by a content store kept in a directory.
type storeDir interface{ Dir() string }

// storage reads the storage in use; what cannot be told is left out.
func (s adminPages) storage(ctx context.Context) storageUse {
	var u storageUse
	dbDir := ""
	if st := s.deps.Storage; st != nil {
		u.Backend = st.Backend()
		switch db := st.(type) {
		case databaseFile:
			for _, suffix := range []string{"", "-wal"} {
				if fi, err := os.Stat(db.Path() + suffix); err == nil {
					u.DBBytes += fi.Size()
					u.DBKnown = true
				}
			}
			dbDir = db.Path()
		case databaseSizer:
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if n, err := db.DatabaseBytes(ctx); err == nil {
				u.DBBytes, u.DBKnown = n, true
			}
		}
	}
	var content *diskUse
	if d, ok := s.deps.Blobs.(storeDir); ok {
		if du, fsid, ok := statDisk(d.Dir()); ok {
			du.What = "content"
			content = &du
			u.Disks = append(u.Disks, du)
			if dbDir != "" {
				if db, dbID, ok := statDisk(dbDir); ok {
					if dbID == fsid {
						u.Disks[0].What = "both"
					} else {
						db.What = "database"
						u.Disks = append(u.Disks, db)
					}
				}
				dbDir = ""
			}
		}
	}
	if content == nil && dbDir != "" {
		if db, _, ok := statDisk(dbDir); ok {
			db.What = "database"
			u.Disks = append(u.Disks, db)
		}
	}
	return u
}

// statDisk reads the file system holding path, and its id.
func statDisk(path string) (diskUse, [2]int32, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return diskUse{}, [2]int32{}, false
	}
	bs := int64(st.Bsize)
	d := diskUse{Total: int64(st.Blocks) * bs, Free: int64(st.Bavail) * bs}
	d.Used = d.Total - int64(st.Bfree)*bs
	if d.Total > 0 {
		d.Percent = int(d.Used * 100 / d.Total)
	}
	return d, [2]int32{int32(st.Fsid.Val[0]), int32(st.Fsid.Val[1])}, true
}
