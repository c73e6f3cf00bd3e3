package bench

import (
	"context"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/siegfried"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/worker"
)

// soakServer serves a real repository as serve does (REST API, OAI-PMH,
// the projector, the search indexer, the job runner and the accounts) on
// a loopback port, with its data in the returned directory, and returns an
// admin-scoped token of its administrator.
func soakServer(t *testing.T) (base, data, token string) {
	base, data, token, _ = soakServerAccounts(t)
	return base, data, token
}

// soakServerAccounts is soakServer that also returns the server's accounts.
func soakServerAccounts(t *testing.T) (base, data, token string, acc *shelfmark.Accounts) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	data = t.TempDir()
	store, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	formats := oai.DefaultRegistry()
	prov, err := oai.NewProvider(store, formats, oai.Config{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := siegfried.New()
	if err != nil {
		t.Fatal(err)
	}
	p := &worker.Pipeline{Repo: repo, Blobs: blobs, Identify: id, Tools: worker.FindTools()}
	loops := []interface{ Run(context.Context) error }{
		oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{}),
		shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{}),
		worker.NewRunner(repo, p.Handlers(), worker.Options{Poll: 100 * time.Millisecond}),
	}
	done := make(chan struct{}, len(loops))
	for _, l := range loops {
		go func() { _ = l.Run(ctx); done <- struct{}{} }()
	}
	acc = shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		t.Fatal(err)
	}
	token, _, err = acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: store, OAI: prov, Jobs: repo, Accounts: acc})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln, srv) }()
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = srv.Shutdown(sctx)
		scancel()
		cancel()
		for range loops {
			<-done
		}
		repo.Close()
		blobs.Close()
		store.Close()
	})
	return "http://" + ln.Addr().String(), data, token, acc
}

// TestRunSoak: a few seconds of the mixed load fill every field of the
// report and of the samples, without an error.
func TestRunSoak(t *testing.T) {
	base, data, token := soakServer(t)
	var progress int
	res, err := RunSoak(context.Background(), SoakConfig{Base: base, Token: token, PID: os.Getpid(), DataDir: data,
		Duration: 4 * time.Second, Sample: time.Second, Writers: 2, Readers: 1, Harvesters: 1, UploadEvery: 2, Triples: 10, Pause: []string{shelfmark.QueueOCR},
		Progress: func(SoakSample) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Errors != 0 {
		t.Fatalf("%d errors: %+v", r.Errors, r.Steps)
	}
	if r.Scenario != "soak" || r.Items <= 0 || r.Seconds <= 0 || r.RatePerS <= 0 || r.LatencyMS.P50 <= 0 || r.PeakRSSBytes <= 0 {
		t.Errorf("report %+v", r)
	}
	if len(res.Samples) < 2 || len(r.Steps) != len(res.Samples) || progress != len(res.Samples) {
		t.Fatalf("%d samples, %d steps, %d progress calls", len(res.Samples), len(r.Steps), progress)
	}
	var works int64
	for _, s := range res.Samples {
		works += s.Works
		if s.RSS <= 0 || s.DBBytes <= 0 || s.Seconds <= 0 {
			t.Errorf("sample %+v", s)
		}
		if _, ok := s.Backlog[shelfmark.QueueDerive]; !ok {
			t.Errorf("sample without the derive backlog: %+v", s.Backlog)
		}
	}
	last := res.Samples[len(res.Samples)-1]
	if works != r.Items || res.Uploads <= 0 || last.BlobBytes <= 0 || res.Harvests <= 0 {
		t.Errorf("works %d of %d, uploads %d, blobs %d bytes, %d harvests", works, r.Items, res.Uploads, last.BlobBytes, res.Harvests)
	}
	if r.Flatness <= 0 || res.RSSGrowth <= 0 || res.BacklogSlope == nil {
		t.Errorf("drift %v, RSS growth %v, backlog slopes %v", r.Flatness, res.RSSGrowth, res.BacklogSlope)
	}
	for _, k := range []string{"drift", "rss_growth", "wal_max_bytes", "backlog_slope_per_min"} {
		if _, ok := r.Params[k]; !ok {
			t.Errorf("params lack %s", k)
		}
	}
	// the server runs in this process: its CPU and the load generator's
	// are the same, and more than nothing
	cpu := cpuSpan(res.Samples)
	if cpu.Server <= 0 || cpu.Bench <= 0 || cpu.Busy <= 0 || cpu.Busy > 1 || cpu.Steal < 0 || cpu.Tools < 0 {
		t.Errorf("cpu %+v", cpu)
	}
	if len(res.Series()) < 7 {
		t.Errorf("%d series", len(res.Series()))
	}
	if err := r.WriteHTML(t.TempDir(), res.Series()...); err != nil {
		t.Fatal(err)
	}
}

// TestSeedWorks: the seed stores the works it says, in batches, as public
// works with their statements.
func TestSeedWorks(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})
	defer repo.Close()
	var last, calls int
	if err := SeedWorks(ctx, repo, 1203, 5, 1, func(done int) { last, calls = done, calls+1 }); err != nil {
		t.Fatal(err)
	}
	if last != 1203 || calls != 3 {
		t.Fatalf("progress ended at %d after %d calls, want 1203 after 3", last, calls)
	}
	var rows []*shelfmark.ResourceRow
	err = store.View(ctx, func(tx shelfmark.ReadTx) error {
		rows, err = tx.Roots(ctx, shelfmark.KindWork, 0, 2000)
		return err
	})
	if err != nil || len(rows) != 1203 {
		t.Fatalf("%d works stored (%v), want 1203", len(rows), err)
	}
	if rows[0].Visibility != shelfmark.Public {
		t.Errorf("a seed work is %v, want public", rows[0].Visibility)
	}
}

// TestRunSoakOwnTokens: each client sends its own token: with the
// writers' and the harvester's of another user the soak runs clean, and a
// reader whose token is no token's errs (a soak that sent the one shared
// token would pass both).
func TestRunSoakOwnTokens(t *testing.T) {
	base, data, token, acc := soakServerAccounts(t)
	ctx := context.Background()
	if _, err := acc.AddUser(ctx, "other", "", true, nil); err != nil {
		t.Fatal(err)
	}
	var own []string
	for range 3 {
		secret, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "other", Scope: shelfmark.ScopeAdmin})
		if err != nil {
			t.Fatal(err)
		}
		own = append(own, secret)
	}
	cfg := SoakConfig{Base: base, Token: token, DataDir: data, Duration: 2 * time.Second, Sample: time.Second,
		Writers: 1, Readers: 1, Harvesters: 1, UploadEvery: 100, Triples: 5}
	cfg.Tokens = own
	res, err := RunSoak(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Errors != 0 || res.Report.Items <= 0 {
		t.Fatalf("own tokens: %d errors, %d works", res.Report.Errors, res.Report.Items)
	}
	cfg.Tokens = []string{own[0], "not-a-token", own[2]}
	if res, err = RunSoak(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if res.Report.Errors == 0 {
		t.Fatalf("a reader with no valid token read without an error")
	}
}

// TestRunSoakStorm: a soak with a crawler storm in its middle reports the
// storm's window and counts, the readers and writers during it and
// outside it, marks the samples it touched, leaves them out of both
// tenths of the drift, and charts the window.
func TestRunSoakStorm(t *testing.T) {
	base, data, token := soakServer(t)
	res, err := RunSoak(context.Background(), SoakConfig{Base: base, Token: token, PID: os.Getpid(), DataDir: data,
		Duration: 8 * time.Second, Sample: time.Second, Writers: 2, Readers: 1, Harvesters: 1, UploadEvery: 2, Triples: 10,
		Pause: []string{shelfmark.QueueOCR, shelfmark.QueueDerive}, Storm: 3 * time.Second, StormConns: 4, StormAddrs: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Storm
	if s == nil {
		t.Fatal("no storm in the result")
	}
	// centred: from 2.5 s to 5.5 s
	if s.From < 2.5 || s.To < s.From+3 || s.To > 8 {
		t.Errorf("storm from %.2f s to %.2f s", s.From, s.To)
	}
	c := s.Counts
	if c.Conns != 4 || c.Addrs != 2 || c.Requests <= 0 || c.Other != 0 || c.OK+c.Refused()+c.Timeouts+c.ConnErrors != c.Requests {
		t.Errorf("storm counts %+v", c)
	}
	if s.Book == "" {
		t.Error("the storm had no work with a page image to search inside")
	}
	if s.During.Reads <= 0 || s.Outside.Reads <= 0 || s.During.Seconds <= 0 || s.Outside.Seconds <= s.During.Seconds || s.Outside.Works <= 0 {
		t.Errorf("during %+v, outside %+v", s.During, s.Outside)
	}
	if s.During.Works+s.Outside.Works != res.Report.Items {
		t.Errorf("works during %d and outside %d, of %d", s.During.Works, s.Outside.Works, res.Report.Items)
	}
	if s.During.ReadErrors+s.Outside.ReadErrors > res.Report.Errors {
		t.Errorf("%d read errors during and %d outside, of %d errors", s.During.ReadErrors, s.Outside.ReadErrors, res.Report.Errors)
	}
	stormy := 0
	for _, smp := range res.Samples {
		if !smp.Storm {
			continue
		}
		stormy++
		from, to := smp.At-smp.Seconds, smp.At
		for _, span := range [][2]float64{res.DriftFirst, res.DriftLast} {
			if from < span[1] && to > span[0] {
				t.Errorf("the storm's sample %.1f–%.1f s is in a tenth of the drift (%.1f–%.1f s)", from, to, span[0], span[1])
			}
		}
	}
	if stormy < 3 || res.DriftFirst[1] <= 0 || res.DriftLast[1] <= res.DriftFirst[1] {
		t.Errorf("%d samples in the storm; drift tenths %v and %v", stormy, res.DriftFirst, res.DriftLast)
	}
	if _, ok := res.Report.Params["storm"]; !ok {
		t.Error("params lack the storm")
	}
	series := res.Series()
	last := series[len(series)-1]
	if !strings.HasPrefix(last.Name, "Crawler storm") || !strings.Contains(series[0].Name, "crawler storm") || slices.Max(last.Y) != 4 {
		t.Errorf("charts: first %q, last %q %v", series[0].Name, last.Name, last.Y)
	}
}

// TestSoakTrend: the trend of a rate that only jitters around a level is
// 1 however far its first and last tenths part, and a rate that falls
// steadily by a fifth over the run shows a trend of 0.8; the storm's
// samples count to neither measure.
func TestSoakTrend(t *testing.T) {
	samples := func(rate func(i int) float64) []SoakSample {
		var ss []SoakSample
		for i := range 200 {
			ss = append(ss, SoakSample{At: float64(5 * (i + 1)), Seconds: 5, Works: int64(math.Round(5 * rate(i)))})
		}
		return ss
	}
	// a level of 4 works/s, the first tenth high and the last low by
	// a step, the middle jittering about the level
	flat := &SoakResult{Samples: samples(func(i int) float64 {
		switch {
		case i < 20:
			return 4.4
		case i >= 180:
			return 3.6
		}
		return 4 + 0.8*float64(i%2) - 0.4
	})}
	// the heap swings between 500 and 560 MiB from sample to sample and
	// the last sample catches it at the top: no growth
	const mib = 1 << 20
	for i := range flat.Samples {
		flat.Samples[i].RSS = int64(500+60*(i%2)) * mib
	}
	flat.summarize(0)
	if math.Abs(flat.Drift-3.6/4.4) > 0.01 || math.Abs(flat.Trend-1) > 0.1 {
		t.Errorf("jitter: drift %.3f, trend %.3f", flat.Drift, flat.Trend)
	}
	// tenths of 4.4, eight of 4 and 3.6: sd 0.19 over a mean of 4
	if math.Abs(flat.TenthsSpread-0.0471) > 0.001 {
		t.Errorf("jitter: the tenths' spread %.4f, want 0.0471", flat.TenthsSpread)
	}
	if flat.RSSFirst != 530*mib || flat.RSSLast != 530*mib || flat.RSSGrowth != 1 {
		t.Errorf("a swinging heap: RSS %d → %d MiB (%.3f×), want 530 → 530", flat.RSSFirst/mib, flat.RSSLast/mib, flat.RSSGrowth)
	}
	// a steady fall from 5 to 4 works/s, a storm of zeros in the middle
	fall := &SoakResult{Samples: samples(func(i int) float64 { return 5 - float64(i)/199 })}
	for i := 90; i < 110; i++ {
		fall.Samples[i].Storm, fall.Samples[i].Works = true, 0
	}
	// and memory that grows steadily from 400 to 499 MiB
	for i := range fall.Samples {
		fall.Samples[i].RSS = int64(400+i/2) * mib
	}
	fall.summarize(0)
	if math.Abs(fall.Trend-0.8) > 0.01 {
		t.Errorf("a fall by a fifth: trend %.3f", fall.Trend)
	}
	// an even fall leaves no scatter about the line (bar the rounding of
	// works to whole ones); the jitter's tenths (4.4, eight of 4, 3.6)
	// have a line that falls 0.0436 a tenth, from 4.196; their scatter
	// about it (0.163 over 8 degrees of freedom) gives its slope an error
	// of 0.0157 a tenth: 0.141 over nine tenths, 0.034 of 4.196
	if fall.TrendSE > 0.01 {
		t.Errorf("an even fall: the trend's standard error %.4f, want about 0", fall.TrendSE)
	}
	if math.Abs(flat.TrendSE-0.0337) > 0.001 {
		t.Errorf("jitter: the trend's standard error %.4f, want 0.0337", flat.TrendSE)
	}
	// the calm samples' first tenth is 0–17, the last 182–199
	if fall.RSSGrowth < 1.2 || fall.RSSGrowth > 1.25 {
		t.Errorf("growing memory: RSS %d → %d MiB (%.3f×), want about 1.22", fall.RSSFirst/mib, fall.RSSLast/mib, fall.RSSGrowth)
	}
	if rateTrend(nil) != 0 || rateTrend(fall.Samples[:1]) != 0 {
		t.Error("a trend of fewer than two samples")
	}
	// the chart of the one-minute average: the jittering rate's level
	avg := flat.minuteRate("", nil)
	for i := 40; i < 160; i++ {
		if math.Abs(avg.Y[i]-4) > 0.05 {
			t.Fatalf("one-minute average at sample %d: %.3f, want 4", i, avg.Y[i])
		}
	}
	if len(avg.Y) != len(flat.Samples) || math.Abs(avg.Y[0]-4.4) > 0.01 {
		t.Errorf("one-minute average: %d points, first %.3f", len(avg.Y), avg.Y[0])
	}
}

// TestSoakCPUSpan: a span's cores are the samples' weighted by their
// seconds, and the tools' seconds a file are their CPU seconds over the
// uploads; without readings a span is zero, not a division by zero.
func TestSoakCPUSpan(t *testing.T) {
	ss := []SoakSample{
		{Seconds: 5, Uploads: 4, CPU: SoakCPU{Server: 1, Tools: 0.4, Bench: 0.2, Busy: 0.9, Steal: 0.02}},
		{Seconds: 15, Uploads: 6, CPU: SoakCPU{Server: 0.6, Tools: 0.8, Bench: 0.2, Busy: 1, Steal: 0}},
	}
	got := cpuSpan(ss)
	want := SoakCPUSpan{SoakCPU: SoakCPU{Server: 0.7, Tools: 0.7, Bench: 0.2, Busy: 0.975, Steal: 0.005}, ToolsPerUpload: 1.4}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(got.Server, want.Server) || !near(got.Tools, want.Tools) || !near(got.Bench, want.Bench) ||
		!near(got.Busy, want.Busy) || !near(got.Steal, want.Steal) || !near(got.ToolsPerUpload, want.ToolsPerUpload) {
		t.Errorf("span %+v, want %+v", got, want)
	}
	if z := cpuSpan(nil); z != (SoakCPUSpan{}) {
		t.Errorf("empty span %+v", z)
	}
	a := readCPU(os.Getpid())
	if !a.ok {
		t.Skip("no /proc")
	}
	for x := 0; ; x++ { // spend some CPU
		if b := readCPU(os.Getpid()); b.Bench > a.Bench && b.Total > a.Total {
			c := cpuBetween(a, b, 1)
			if c.Bench <= 0 || c.Server < 0 || c.Busy <= 0 || c.Busy > 1 {
				t.Errorf("between %+v", c)
			}
			break
		}
		_ = math.Sqrt(float64(x))
	}
	// ticks that, divided into seconds before the difference, made a
	// share of 1.0000000046
	var x, y cpuTimes
	x.Busy, x.Steal, x.Total, x.ok = machineTicks("cpu  748144854 479230859 286970256 775747711 861954509 246631564 635746160 110765575 0 0")
	y.Busy, y.Steal, y.Total, y.ok = machineTicks("cpu  748145017 479230859 286970256 775747711 861954509 246631564 635746160 110765575 0 0")
	if c := cpuBetween(x, y, 1); !x.ok || !y.ok || c.Busy != 1 || c.Steal != 0 {
		t.Errorf("all busy: %+v", c)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu 1 2 3 4 5 6 7 -8 0 0", "cpu 1 2 3 4 5 6 7 x"} {
		if _, _, _, ok := machineTicks(bad); ok {
			t.Errorf("%q read as a cpu line", bad)
		}
	}
	if c := cpuBetween(cpuTimes{}, a, 1); c != (SoakCPU{}) {
		t.Errorf("a reading missing: %+v", c)
	}
}

// TestPacer: a paced client never asks more often than its rate (over a
// span of 300 ms at 100 a second, at most 31 requests, on a machine of
// any speed), and stops when its context ends; an unpaced one does not
// wait.
func TestPacer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p := newPacer(100)
	n := 0
	for p.wait(ctx) {
		n++
	}
	if n < 1 || n > 31 {
		t.Errorf("%d requests in 300 ms at 100 a second", n)
	}
	var none *pacer
	if newPacer(0) != nil || !none.wait(context.Background()) || none.wait(ctx) {
		t.Error("an unpaced client waits, or goes on after its context ended")
	}
}
