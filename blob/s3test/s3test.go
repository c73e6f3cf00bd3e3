// Package s3test starts a real S3 server (versitygw over a temporary
// directory) for tests, and a fault-injecting, request-counting proxy in
// front of it.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Credentials of the server's root user.
const (
	AccessKey = "shelfmark-test"
	SecretKey = "shelfmark-test-secret"
)

// Server is a running versitygw.
type Server struct {
	// Endpoint is the server's URL (http://127.0.0.1:PORT).
	Endpoint string
	// Dir is the directory its buckets live in.
	Dir string
}

// Start starts versitygw ($SHELFMARK_VERSITYGW) on a free loopback port
// over a temporary directory and stops it when the test ends. Without the
// binary the test is skipped, unless SHELFMARK_REQUIRE_TOOLS=1.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv("SHELFMARK_VERSITYGW")
	if bin == "" {
		if d := os.Getenv("SHELFMARK_BUILD_DIR"); d != "" {
			bin = filepath.Join(d, "bin", "versitygw")
		}
	}
	if bin == "" {
		missing(t, "SHELFMARK_VERSITYGW is not set (scripts/testdeps.sh builds versitygw)")
	}
	if _, err := os.Stat(bin); err != nil {
		missing(t, fmt.Sprintf("versitygw not found at %s (scripts/testdeps.sh builds it): %v", bin, err))
	}
	dir := t.TempDir()
	var srv *Server
	for attempt := 0; attempt < 5 && srv == nil; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "--access", AccessKey, "--secret", SecretKey, "--port", addr, "--quiet", "posix", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatalf("starting versitygw: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if up(addr, exited) {
			t.Cleanup(func() { cancel(); <-exited })
			srv = &Server{Endpoint: "http://" + addr, Dir: dir}
			break
		}
		cancel()
		<-exited
		t.Logf("versitygw on %s did not start (retrying): %s", addr, out.String())
	}
	if srv == nil {
		t.Fatal("versitygw did not start")
	}
	return srv
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// up waits until addr accepts connections, the process exits, or a
// generous deadline passes.
func up(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Client returns an SDK client of endpoint with the given credentials,
// path-style, without the SDK's default checksums (as the store runs).
func Client(endpoint, access, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(access, secret, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// CreateBucket makes a bucket.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Client(s.Endpoint, AccessKey, SecretKey).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
}

// Fault is what the proxy does to a PUT request's body.
type Fault int32

// Faults.
const (
	Pass  Fault = iota
	Fail        // fail after FaultAfter bytes of the body: answer 500
	Stall       // read FaultAfter bytes of the body, then hang until the client gives up
	Down        // answer every request, of any method, with 500
)

// Proxy is a reverse proxy in front of a server that counts requests and
// can break uploads.
type Proxy struct {
	// Endpoint is the proxy's URL.
	Endpoint string
	fault    atomic.Int32
	after    atomic.Int64
	mu       sync.Mutex
	counts   map[string]int
	release  chan struct{}
}

// NewProxy starts a proxy in front of target on a loopback port, closed
// when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{counts: map[string]int{}, release: make(chan struct{})}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r)
		if Fault(p.fault.Load()) == Down {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if r.Method == http.MethodPut {
			if f := Fault(p.fault.Load()); f != Pass {
				_, _ = io.CopyN(io.Discard, r.Body, p.after.Load())
				if f == Stall {
					select {
					case <-r.Context().Done():
					case <-p.release:
					}
					return
				}
				// read the rest, so that the client gets the answer rather
				// than a reset connection while it still writes
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected fault</Message></Error>`)
				return
			}
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		close(p.release)
		_ = srv.Close()
	})
	p.Endpoint = "http://" + ln.Addr().String()
	return p
}

// SetFault makes the proxy break PUT requests after n bytes of body.
func (p *Proxy) SetFault(f Fault, n int64) {
	p.after.Store(n)
	p.fault.Store(int32(f))
}

// op names an S3 request by its method and the query parameters that
// tell the operations apart.
func op(r *http.Request) string {
	q := r.URL.Query()
	name := r.Method
	for _, k := range []string{"uploads", "uploadId", "partNumber", "list-type"} {
		if q.Has(k) {
			name += " ?" + k
		}
	}
	return name
}

func (p *Proxy) count(r *http.Request) {
	p.mu.Lock()
	p.counts[op(r)]++
	p.counts[""]++
	p.mu.Unlock()
}

// Counts returns the requests seen so far by operation ("" is the total)
// and starts counting anew.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.counts
	p.counts = map[string]int{}
	return c
}

// Total returns how many requests the counts hold.
func Total(c map[string]int) int { return c[""] }

// String renders counts for a log line.
func String(c map[string]int) string {
	var b strings.Builder
	for k, v := range c {
		if k != "" {
			fmt.Fprintf(&b, "%s=%d ", k, v)
		}
	}
	return strings.TrimSpace(b.String())
}
