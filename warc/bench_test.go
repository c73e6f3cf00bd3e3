package warc

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPage is an HTML page of about 7 KB with 13 links, a few to a
// popular site.
func benchPage(i int) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page</title><link rel="stylesheet" href="/s.css"><script>var x = 1; if (x < 2) { x++; }</script></head><body><nav>`)
	for j := range 13 {
		switch j % 4 {
		case 0:
			fmt.Fprintf(&b, `<a href="https://popular.example/p/%d">popular</a>`, (i*7+j)%50)
		case 1:
			fmt.Fprintf(&b, `<a class="l" href="/section/%d/page-%d.html">Section</a>`, j, (i+j)%5000)
		case 2:
			fmt.Fprintf(&b, `<a href="http://site%d.example/x?id=%d&amp;ref=y">other</a>`, (i+j)%997, i)
		default:
			fmt.Fprintf(&b, `<a href="../rel/%d">rel</a>`, j)
		}
		if j%3 == 0 {
			b.WriteString(`<p>` + strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod. ", 14) + `<img src="/i.png" alt="i"></p>`)
		}
	}
	b.WriteString(`</nav></body></html>`)
	return []byte(b.String())
}

// BenchmarkReader reads a generated .warc.gz of WARC_BENCH_RECORDS
// (default 20000) records: HTML pages with 13 links each, and one image
// response and one request record for every eight pages.
func BenchmarkReader(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("WARC_BENCH_RECORDS")); err == nil {
		n = v
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, true, "1.1")
	var raw int64
	for i := 0; i < n; i++ {
		target := fmt.Sprintf("http://site%d.example/section/%d/page-%d.html", i%997, i%13, i)
		at := t0.Add(time.Duration(i) * time.Second)
		var err error
		switch i % 10 {
		case 8:
			_, _, err = w.WriteResponse(target+".png", at, 200, "image/png", bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 1000))
		case 9:
			_, _, err = w.WriteRecord("request", [][2]string{{"WARC-Target-URI", target}, {"WARC-Date", at.Format(time.RFC3339)}, {"Content-Type", "application/http;msgtype=request"}},
				[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		default:
			p := benchPage(i)
			raw += int64(len(p))
			_, _, err = w.WriteResponse(target, at, 200, "text/html; charset=utf-8", p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var links int
	cpu0 := cpuTime()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data), int64(len(data)), 0, Options{})
		links = 0
		for {
			rec, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			links += len(rec.Links)
		}
	}
	cpu := (cpuTime() - cpu0).Seconds() / float64(b.N)
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(n)/s, "records/s")
	b.ReportMetric(float64(n)/cpu, "records/cpu-s")
	b.ReportMetric(float64(len(data))/cpu/1e6, "MB/cpu-s")
	b.ReportMetric(float64(links)/s, "links/s")
	b.ReportMetric(float64(raw)/s/1e6, "html-MB/s")
}

// BenchmarkWriter writes small HTML responses (gzip and plain).
func BenchmarkWriter(b *testing.B) {
	body := []byte(`<html><body><a href="/a">a</a><a href="http://b.example/">b</a></body></html>`)
	for _, c := range []struct {
		gz    bool
		level int
	}{{false, 0}, {true, gzip.BestSpeed}, {true, gzip.NoCompression}} {
		b.Run(fmt.Sprintf("gzip=%v/level=%d", c.gz, c.level), func(b *testing.B) {
			w := NewWriter(io.Discard, c.gz, "1.1")
			if err := w.SetLevel(c.level); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if _, _, err := w.WriteResponse("http://a.example/p/"+strconv.Itoa(i), t0, 200, "text/html", body); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// cpuTime is the CPU time the process used: on a shared machine a
// steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
