package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark/internal/setup"
)

// The deployment example in docs/deploy is checked here as far as it can be
// without Docker or systemd: HAProxy accepts its configuration, and every
// flag and environment variable the compose file, the systemd units and
// their environment file give exists on the command it is given to.

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy", name))
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

// TestDeployFlags: the flags and SHELFMARK_* variables of the compose file,
// the systemd units and shelfmark.env are flags of serve or worker.
func TestDeployFlags(t *testing.T) {
	commands := map[string]*pflag.FlagSet{"serve": newServeCommand().Flags(), "worker": newWorkerCommand().Flags()}
	envs := map[string]bool{}
	for _, fs := range commands {
		fs.VisitAll(func(f *pflag.Flag) { envs[setup.EnvName(f.Name)] = true })
	}
	checkFlags := func(where, command, args string) {
		fs := commands[command]
		n := 0
		for _, m := range regexp.MustCompile(`--([a-z0-9-]+)`).FindAllStringSubmatch(args, -1) {
			n++
			if fs.Lookup(m[1]) == nil {
				t.Errorf("%s: shelfmark %s has no flag --%s", where, command, m[1])
			}
		}
		if n == 0 && command == "serve" {
			t.Errorf("%s: no flags found in %q", where, args)
		}
	}
	checkEnv := func(where, name string) {
		if !envs[name] {
			t.Errorf("%s: %s is the variable of no flag of serve or worker", where, name)
		}
	}

	compose := readDeploy(t, "compose.yaml")
	cmds := regexp.MustCompile(`(?s)command: \[(serve|worker),([^\]]*)\]`).FindAllStringSubmatch(compose, -1)
	if len(cmds) != 4 {
		t.Errorf("compose.yaml: %d shelfmark commands, want 2 servers and 2 workers", len(cmds))
	}
	for _, m := range cmds {
		checkFlags("compose.yaml", m[1], m[2])
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+(SHELFMARK_[A-Z0-9_]+):`).FindAllStringSubmatch(compose, -1) {
		checkEnv("compose.yaml", m[1])
	}

	for _, unit := range []string{"shelfmark-serve@.service", "shelfmark-worker@.service"} {
		text := readDeploy(t, filepath.Join("systemd", unit))
		m := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/shelfmark (serve|worker)(.*)$`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s: no ExecStart running shelfmark serve or worker", unit)
			continue
		}
		checkFlags(unit, m[1], m[2])
		if !strings.Contains(text, "EnvironmentFile=/etc/shelfmark/shelfmark.env") {
			t.Errorf("%s: does not read /etc/shelfmark/shelfmark.env", unit)
		}
	}
	env := readDeploy(t, filepath.Join("systemd", "shelfmark.env"))
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^(SHELFMARK_[A-Z0-9_]+)=`).FindAllStringSubmatch(env, -1) {
		n++
		checkEnv("shelfmark.env", m[1])
	}
	if n == 0 {
		t.Error("shelfmark.env sets no SHELFMARK_ variable")
	}
}
