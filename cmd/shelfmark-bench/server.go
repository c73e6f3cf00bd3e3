package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// startServer runs "shelfmark serve" (the binary serverBinary finds) on a free
// loopback port and waits until it is ready.
func startServer(ctx context.Context, data, database, durability string) (*exec.Cmd, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	return runServer(ctx, []string{"serve"}, addr, data, database, durability, nil)
}

// startRestServer runs "shelfmark-bench rest-server" (serve, and a second
// loopback listener where every request is token's user and no credential
// is read) and returns the URLs of both.
func startRestServer(ctx context.Context, data, database, durability, token string) (*exec.Cmd, string, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", "", err
	}
	noauth, err := freeAddr()
	if err != nil {
		return nil, "", "", err
	}
	// the token goes in the environment, not the process list
	cmd, url, err := runServer(ctx, []string{"rest-server", "--noauth-addr", noauth}, addr, data, database, durability, []string{"SHELFMARK_NOAUTH_TOKEN=" + token})
	if err != nil {
		return nil, "", "", err
	}
	return cmd, url, "http://" + noauth, nil
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// runServer runs args (a serve command: "serve" of the shelfmark binary,
// or this lab's own "rest-server") on addr, and waits until it is ready.
// Admission is off (SHELFMARK_ADMISSION_OFF=true) unless env says
// otherwise: a bench that measures the server's own speed drives it from
// one loopback address as fast as it answers, which is just what
// admission holds to one client's share; the storm and the soak turn it
// on, since they measure it.
func runServer(ctx context.Context, args []string, addr, data, database, durability string, env []string) (*exec.Cmd, string, error) {
	var exe string
	var err error
	if args[0] == "serve" {
		exe, err = serverBinary()
	} else {
		exe, err = os.Executable()
	}
	if err != nil {
		return nil, "", err
	}
	args = append(args, "--addr", addr, "--data", data, "--durability", durability, "--log-level", "warn")
	if database != "" {
		args = append(args, "--database", database)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	cmd.Env = append(append(os.Environ(), "SHELFMARK_DATABASE_URL=", "SHELFMARK_ADMISSION_OFF=true"), env...)
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start server: %w", err)
	}
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, url, nil
			}
		}
		select {
		case <-ctx.Done():
			stopServer(cmd)
			return nil, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	stopServer(cmd)
	return nil, "", fmt.Errorf("server on %s not ready after 30 s", addr)
}

func stopServer(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// benchToken makes an admin-scoped API token, for a day, of the user
// "admin" (created on an empty store, as serve would) in the store a
// bench server is about to open, as the system (a context without a
// caller), and returns its secret.
func benchToken(ctx context.Context, database, data, durability string) (string, error) {
	tokens, err := benchTokens(ctx, database, data, durability, 1)
	if err != nil {
		return "", err
	}
	return tokens[0], nil
}

// benchTokens makes n admin-scoped API tokens, for a day, each of a user of
// its own: the first of "admin" (created on an empty store, as serve
// would), the others of administrators bench-1, bench-2 … that it adds, so
// that a server's admission control sees n signed-in clients, each with
// its own share, as it would n people. Like benchToken it works in the
// store before the server opens it, as the system.
func benchTokens(ctx context.Context, database, data, durability string, n int) ([]string, error) {
	repo, closeRepo, err := openBenchRepo(ctx, database, data, durability)
	if err != nil {
		return nil, err
	}
	defer closeRepo()
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		return nil, err
	}
	expires := time.Now().Add(24 * time.Hour)
	tokens := make([]string, 0, max(n, 1))
	for i := range max(n, 1) {
		user := "admin"
		if i > 0 {
			user = fmt.Sprintf("bench-%d", i)
			if _, err := acc.AddUser(ctx, user, "", true, nil); err != nil {
				return nil, fmt.Errorf("bench user %s: %w", user, err)
			}
		}
		secret, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: user, Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeAdmin, Note: "bench", Expires: &expires})
		if err != nil {
			return nil, fmt.Errorf("bench token for the user %s: %w", user, err)
		}
		tokens = append(tokens, secret)
	}
	return tokens, nil
}

// openBenchRepo opens the repository of the store a bench server is about
// to open, to prepare it as the system (accounts, seed works); close
// closes the repository and the store.
func openBenchRepo(ctx context.Context, database, data, durability string) (repo *shelfmark.Repository, close func(), err error) {
	store, err := setup.OpenStorage(ctx, database, data, durability, 0)
	if err != nil {
		return nil, nil, err
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	repo = shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	return repo, func() { repo.Close(); store.Close() }, nil
}

// serverBinary finds the shelfmark binary whose serve the scenarios
// measure: the one SHELFMARK_BINARY names, else the one beside this
// executable (make bench builds both into bin/), else shelfmark on the
// PATH. It costs a stat or a PATH search.
func serverBinary() (string, error) {
	if p := os.Getenv("SHELFMARK_BINARY"); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "shelfmark")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("shelfmark"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("the shelfmark binary is neither beside this one nor on the PATH: build it (make builds bin/shelfmark) or set SHELFMARK_BINARY")
}

// admissionEnv is the environment of a server whose admission is off or
// on (runServer's default is off).
func admissionEnv(off bool) []string {
	return []string{"SHELFMARK_ADMISSION_OFF=" + strconv.FormatBool(off)}
}
