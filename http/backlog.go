package http

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
)

// backlogCollector reports the uploads the backlog gate refused, by the
// queue that was over its limit, and each queue's limit.
type backlogCollector struct {
	g               *shelfmark.BacklogGate
	refusals, limit *prometheus.Desc
}

func newBacklogCollector(g *shelfmark.BacklogGate) *backlogCollector {
	return &backlogCollector{g: g,
		refusals: prometheus.NewDesc("shelfmark_backlog_refusals_total", "Uploads refused with 503 because a job queue held more jobs than its backlog limit, by that queue.", []string{"queue"}, nil),
		limit:    prometheus.NewDesc("shelfmark_backlog_limit", "The most jobs a queue may hold before uploads are refused (0: no limit).", []string{"queue"}, nil)}
}

func (b *backlogCollector) Describe(ch chan<- *prometheus.Desc) { ch <- b.refusals; ch <- b.limit }

func (b *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	refused := b.g.Refused()
	for _, q := range shelfmark.Queues {
		ch <- prometheus.MustNewConstMetric(b.refusals, prometheus.CounterValue, float64(refused[q]), q)
		ch <- prometheus.MustNewConstMetric(b.limit, prometheus.GaugeValue, float64(b.g.Limits[q]), q)
	}
}
