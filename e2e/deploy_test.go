package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The deployment example in docs/deploy is checked here as far as it can be
// without Docker or systemd: HAProxy accepts its configuration. The flags
// and environment variables it gives are checked against the commands in
// cmd/shelfmark (deploy_flags_test.go).

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeployHAProxyConfig: `haproxy -c` accepts docs/deploy/haproxy.cfg
// with its addresses filled in as TestCluster fills them (loopback ones).
func TestDeployHAProxyConfig(t *testing.T) {
	doc := readDeploy(t, "haproxy.cfg")
	cfg, err := haproxyConfig(doc, "127.0.0.1:18080", []string{"127.0.0.1:18081", "127.0.0.1:18082"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server s1 127.0.0.1:18081 check", "server s2 127.0.0.1:18082 check", "bind 127.0.0.1:18080",
		"uri /readyz", "balance roundrobin", "retry-on conn-failure", "option redispatch"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("the rendered configuration lacks %q:\n%s", want, cfg)
		}
	}
	haproxy := requireTool(t, "HAProxy", "/usr/sbin/haproxy", "haproxy")
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(haproxy, "-c", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}
