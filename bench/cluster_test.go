package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// TestRunPatentsOnShares: three shares over one repository store every
// work once, each share its own range of EP numbers (the same works as
// one share), and a second run skips them all.
func TestRunPatentsOnShares(t *testing.T) {
	ctx := context.Background()
	repo, blobs := labRepo(t)
	targets := []PatentsTarget{{repo, blobs}, {repo, blobs}, {repo, blobs}}
	rep, err := RunPatentsOn(ctx, targets, PatentsConfig{Works: 100, Workers: 2, Batch: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range rep.Steps {
		sum += s.Items
	}
	if rep.Items != 100 || sum != 100 || rep.Errors != 0 || rep.Params["shares"] != 3 {
		t.Fatalf("%d items, %d in steps, %d errors, params %v", rep.Items, sum, rep.Errors, rep.Params)
	}
	var keys []string
	for i := 0; i <= 100; i++ {
		keys = append(keys, fmt.Sprintf("patent:EP%07d", i))
	}
	found, err := repo.FindSources(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 100 || found["patent:EP0000100"] != "" {
		t.Fatalf("%d of patents 0–100 stored, EP0000100 %q", len(found), found["patent:EP0000100"])
	}
	again, err := RunPatentsOn(ctx, targets, PatentsConfig{Works: 100, Workers: 2, Batch: 16, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if again.Items != 0 || again.Params["skipped"].(int64) != 100 {
		t.Fatalf("re-run: %d items, %v skipped", again.Items, again.Params["skipped"])
	}
}

// TestProcCPU: this process's time is read and does not fall; a process
// that does not exist is not.
func TestProcCPU(t *testing.T) {
	a, ok := ProcCPU(os.Getpid())
	if !ok {
		t.Skip("no /proc on this system")
	}
	x := 0
	for i := 0; i < 50_000_000; i++ {
		x += i % 7
	}
	b, _ := ProcCPU(os.Getpid())
	if b < a || x == 0 {
		t.Fatalf("CPU %v then %v", a, b)
	}
	if _, ok := ProcCPU(-1); ok {
		t.Fatal("pid -1 read")
	}
	m := &CPUMeter{Servers: []int{os.Getpid()}}
	before := m.Sample(context.Background())
	c := m.Since(context.Background(), before, 10)
	if c.ServerSeconds < 0 || c.Database || c.ServerMS != c.ServerSeconds*100 {
		t.Fatalf("%+v", c)
	}
}

// TestConfigurationSummarize: totals and per-item CPU over the steps.
func TestConfigurationSummarize(t *testing.T) {
	c := Configuration{RawLimitPerS: 1000, Steps: []Step{
		{Items: 100, Seconds: 1, RatePerS: 100, CPU: &CPU{ServerSeconds: 0.2, DatabaseSeconds: 0.1, DatabaseBackendMS: 0.5, Database: true}},
		{Items: 300, Seconds: 1, RatePerS: 300, Errors: 2, CPU: &CPU{ServerSeconds: 0.2, DatabaseSeconds: 0.3, DatabaseBackendMS: 1, Database: true}},
	}}
	c.Summarize()
	if c.Items != 400 || c.Errors != 2 || c.RatePerS != 200 || c.BestRatePerS != 300 || c.FractionLimit != 0.3 {
		t.Fatalf("%+v", c)
	}
	if c.CPU == nil || c.CPU.ServerMS != 1 || c.CPU.DatabaseMS != 1 || c.CPU.DatabaseBackendMS != 0.875 || !c.CPU.Database {
		t.Fatalf("%+v", c.CPU)
	}
}
