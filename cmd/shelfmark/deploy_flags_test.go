package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark/internal/setup"
)

// The deployment example in docs/deploy is checked here as far as it can be
// without Docker or systemd: every flag and environment variable the
// compose file, the systemd units and their environment file give exists
// on the command it is given to. e2e/deploy_test.go runs HAProxy on its
// configuration.

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
