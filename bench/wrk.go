package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// wrkScript posts the body from a file and prints the figures the report
// needs in one parseable line when wrk is done (latencies in µs).
const wrkScript = `wrk.method = "POST"
wrk.headers["Content-Type"] = "%s"
%s
local f = assert(io.open("%s", "rb"))
wrk.body = f:read("*a")
f:close()
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("SHELFMARK %%d %%d %%d %%d %%d %%d %%d %%d\n", summary.requests,
    e.connect + e.read + e.write + e.timeout, e.status, summary.duration,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
`

// runWrk runs one step with wrk (https://github.com/wg/wrk, Debian package
// "wrk"), the load generator Fedora's published figures were taken with;
// with a token, every request carries it, and credentials in the target's
// user information (a Fedora container's) go as Basic authentication, as
// Go's client sends them (wrk itself ignores them).
func runWrk(ctx context.Context, target, token string, body []byte, ctype string, clients int, d time.Duration) (Step, error) {
	auth := ""
	if token != "" {
		if strings.Trim(token, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
			return Step{}, fmt.Errorf("wrk: the token has characters a token does not have")
		}
		auth = `wrk.headers["Authorization"] = "Bearer ` + token + `"`
	}
	if u, err := url.Parse(target); err == nil && u.User != nil {
		pass, _ := u.User.Password()
		basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
		if auth == "" {
			auth = `wrk.headers["Authorization"] = "Basic ` + basic + `"`
		}
		u.User = nil
		target = u.String()
	}
	dir, err := os.MkdirTemp("", "shelfmark-wrk-")
	if err != nil {
		return Step{}, err
	}
	defer os.RemoveAll(dir)
	bodyPath, scriptPath := filepath.Join(dir, "body"), filepath.Join(dir, "post.lua")
	if err := os.WriteFile(bodyPath, body, 0o644); err != nil {
		return Step{}, err
	}
	if err := os.WriteFile(scriptPath, fmt.Appendf(nil, wrkScript, ctype, auth, bodyPath), 0o600); err != nil { // it holds the token
		return Step{}, err
	}
	threads := min(clients, 2)
	secs := max(1, int(d.Round(time.Second)/time.Second))
	cmd := exec.CommandContext(ctx, "wrk", "-t", fmt.Sprint(threads), "-c", fmt.Sprint(clients), "-d", fmt.Sprintf("%ds", secs),
		"--timeout", "30s", "-s", scriptPath, target)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Step{}, fmt.Errorf("wrk: %w: %s", err, out.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "SHELFMARK ") {
			continue
		}
		var reqs, ioErrs, statusErrs, durUS, p50, p95, p99, maxUS int64
		if _, err := fmt.Sscanf(line, "SHELFMARK %d %d %d %d %d %d %d %d", &reqs, &ioErrs, &statusErrs, &durUS, &p50, &p95, &p99, &maxUS); err != nil {
			return Step{}, fmt.Errorf("wrk output %q: %w", line, err)
		}
		ok := reqs - statusErrs
		secs := float64(durUS) / 1e6
		st := Step{Clients: clients, Items: ok, Seconds: secs, RatePerS: float64(ok) / secs, Errors: ioErrs + statusErrs,
			LatencyMS: &Latency{P50: float64(p50) / 1000, P95: float64(p95) / 1000, P99: float64(p99) / 1000, Max: float64(maxUS) / 1000}}
		if statusErrs > 0 {
			st.ErrorCodes = map[string]int64{"non-2xx": statusErrs}
		}
		if ioErrs > 0 {
			st.ErrorCodes = map[string]int64{"transport": ioErrs}
		}
		return st, nil
	}
	return Step{}, fmt.Errorf("wrk printed no summary: %s", out.String())
}
