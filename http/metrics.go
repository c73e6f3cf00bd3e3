package http

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shelfmark/shelfmark"
)

// Metrics holds the server's Prometheus metrics in a registry of its own
// (no global state).
type Metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	commitOps   prometheus.Histogram
	commitTime  prometheus.Histogram
	commitFails prometheus.Counter
	jobSeconds  *prometheus.HistogramVec
}

var _ shelfmark.CommitObserver = (*Metrics)(nil)

// NewMetrics registers the metrics; storage, when not nil, is sampled for
// connection pool gauges and job counts at every scrape, with now (nil:
// time.Now) telling queued jobs from ready ones.
func NewMetrics(storage shelfmark.Storage, now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "shelfmark_http_requests_total", Help: "HTTP requests by method, route and status code.",
	}, []string{"method", "route", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "shelfmark_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	m.commitOps = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "shelfmark_commit_batch_operations", Help: "Write operations carried by one group commit.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
	})
	m.commitTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "shelfmark_commit_duration_seconds", Help: "Time of one group commit transaction, fsync included.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
	})
	m.commitFails = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "shelfmark_commit_failures_total", Help: "Group commits that failed or were retried without a failing operation.",
	})
	m.jobSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "shelfmark_job_duration_seconds", Help: "Time of one job attempt by queue and outcome (done, retry, failed, lost, released).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"queue", "outcome"})
	m.reg.MustRegister(m.requests, m.latency, m.commitOps, m.commitTime, m.commitFails, m.jobSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if storage != nil {
		backend := prometheus.Labels{"backend": storage.Backend()}
		gauge := func(name, help string, f func(shelfmark.PoolStats) float64) {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: backend},
				func() float64 { return f(storage.Stats()) }))
		}
		gauge("shelfmark_db_pool_max_connections", "Connections the database pool may open.", func(s shelfmark.PoolStats) float64 { return float64(s.MaxOpen) })
		gauge("shelfmark_db_pool_in_use", "Database connections in use.", func(s shelfmark.PoolStats) float64 { return float64(s.InUse) })
		gauge("shelfmark_db_pool_idle", "Idle database connections.", func(s shelfmark.PoolStats) float64 { return float64(s.Idle) })
		gauge("shelfmark_db_pool_wait_count", "Times a request waited for a database connection (cumulative).", func(s shelfmark.PoolStats) float64 { return float64(s.WaitCount) })
		m.reg.MustRegister(&jobCollector{storage: storage, now: now})
		registerReplicaMetrics(m.reg, storage) // see replica.go
		gauge("shelfmark_db_pool_wait_seconds", "Time spent waiting for database connections (cumulative).", func(s shelfmark.PoolStats) float64 { return s.WaitDuration.Seconds() })
		if wal, ok := storage.(shelfmark.WALReporter); ok {
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shelfmark_db_wal_bytes", Help: "Size of the write-ahead log file after the last commit.", ConstLabels: backend},
				func() float64 { return float64(wal.WALStats().Bytes) }))
			m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shelfmark_db_wal_checkpoint_seconds_total", Help: "Time writers waited for checkpoints run because the write-ahead log passed its limit (cumulative).", ConstLabels: backend},
				func() float64 { return wal.WALStats().Waited.Seconds() }))
			// counters of WALStats by result, under one name
			byResult := func(name, help string, results map[string]func(shelfmark.WALStats) int64) {
				for result, f := range results {
					m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help,
						ConstLabels: prometheus.Labels{"backend": storage.Backend(), "result": result}},
						func() float64 { return float64(f(wal.WALStats())) }))
				}
			}
			byResult("shelfmark_db_wal_checkpoints_total",
				"Checkpoints run because the write-ahead log passed its limit: restart (the log was rewound), busy (readers of old frames outlasted the wait), failed.",
				map[string]func(shelfmark.WALStats) int64{
					"restart": func(s shelfmark.WALStats) int64 { return s.Restarts },
					"busy":    func(s shelfmark.WALStats) int64 { return s.Busy },
					"failed":  func(s shelfmark.WALStats) int64 { return s.Failed },
				})
			byResult("shelfmark_db_wal_passive_checkpoints_total",
				"Checkpoints that copy the write-ahead log into the database while writers go on: copied (done), catch_up (of those, the ones that copied the last frames holding the writers back, so that the log could be rewound), failed.",
				map[string]func(shelfmark.WALStats) int64{
					"copied":   func(s shelfmark.WALStats) int64 { return s.Passive - s.PassiveFailed },
					"catch_up": func(s shelfmark.WALStats) int64 { return s.CatchUps },
					"failed":   func(s shelfmark.WALStats) int64 { return s.PassiveFailed },
				})
		}
	}
	return m
}

// Registry returns the registry, so other parts (workers, ingest) can add
// their metrics to the same /metrics page.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCommit implements shelfmark.CommitObserver.
func (m *Metrics) ObserveCommit(ops int, d time.Duration, err error) {
	m.commitOps.Observe(float64(ops))
	m.commitTime.Observe(d.Seconds())
	if err != nil {
		m.commitFails.Inc()
	}
}

// ObserveJob records one job attempt (it implements worker.Observer).
func (m *Metrics) ObserveJob(queue, outcome string, d time.Duration) {
	m.jobSeconds.WithLabelValues(queue, outcome).Observe(d.Seconds())
}

// jobCollector reports the jobs per queue and state, read from the
// database at each scrape (so every server of one database reports the
// same, whichever workers ran them).
type jobCollector struct {
	storage shelfmark.Storage
	now     func() time.Time
}

var (
	jobsDesc   = prometheus.NewDesc("shelfmark_jobs", "Jobs by queue and state (queued, ready, running, failed).", []string{"queue", "state"}, nil)
	pausedDesc = prometheus.NewDesc("shelfmark_job_queue_paused", "1 when the queue is paused.", []string{"queue"}, nil)
)

// Describe implements prometheus.Collector.
func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- pausedDesc
}

// Collect implements prometheus.Collector.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var counts []shelfmark.QueueCount
	err := c.storage.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		counts, err = tx.QueueCounts(ctx, c.now())
		return err
	})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	seen := map[string]shelfmark.QueueCount{}
	for _, qc := range counts {
		seen[qc.Queue] = qc
	}
	for _, q := range shelfmark.Queues {
		qc := seen[q]
		for _, s := range []struct {
			state string
			n     int64
		}{{"queued", qc.Queued}, {"ready", qc.Ready}, {"running", qc.Running}, {"failed", qc.Failed}} {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(s.n), q, s.state)
		}
		paused := 0.0
		if qc.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, paused, q)
	}
}

func (m *Metrics) observeRequest(method, pattern string, status int, d time.Duration) {
	route := pattern
	if route == "" || route == "/" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(method, route).Observe(d.Seconds())
}
