package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// newBenchRestServerCommand is "shelfmark-bench rest-server", hidden: the
// serve command with one more listener, on a loopback address, where the
// same server reads no credential and gives every request the caller of
// the token in --noauth-token. bench rest runs it to measure the same load
// with and without authentication against one process and one store. It
// grants nothing its runner does not hold already: the listener acts as
// the token's user, and only for clients of this machine.
func newBenchRestServerCommand() *cobra.Command {
	cmd, c := setup.ServeCommand()
	cmd.Use = "rest-server"
	cmd.Short = "serve, and the same server without authentication on a loopback address (for bench rest)"
	cmd.Hidden = true
	var noauthAddr, token string
	f := cmd.Flags()
	f.StringVar(&noauthAddr, "noauth-addr", "", "loopback address (127.0.0.1:PORT) of the listener that reads no credential [SHELFMARK_NOAUTH_ADDR]")
	f.StringVar(&token, "noauth-token", "", "the API token whose caller every request on --noauth-addr gets [SHELFMARK_NOAUTH_TOKEN]")
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := setup.ApplyEnv(cmd.Flags()); err != nil {
			return err
		}
		if err := checkLoopback(noauthAddr); err != nil {
			return fmt.Errorf("--noauth-addr: %w", err)
		}
		if token == "" {
			return fmt.Errorf("--noauth-token (or SHELFMARK_NOAUTH_TOKEN) is required")
		}
		c.Extra = noAuthListener(noauthAddr, token)
		return run(cmd, args)
	}
	return cmd
}

// checkLoopback refuses an address that is not a loopback IP and port.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (127.0.0.1:PORT or [::1]:PORT)", addr)
	}
	return nil
}

// noAuthListener serves the server's routes on addr with the caller of
// token on every request and no credential read (bench.FixedCaller as
// the server's shttp.Options.Authenticator);
// it stops when ctx ends.
func noAuthListener(addr, token string) func(ctx context.Context, opts shttp.Options, log *slog.Logger) error {
	return func(ctx context.Context, opts shttp.Options, log *slog.Logger) error {
		if opts.Accounts == nil {
			return fmt.Errorf("no account service to resolve --noauth-token")
		}
		// as the system: the token is checked once, here
		caller, err := opts.Accounts.Authenticate(ctx, token)
		if err != nil {
			return fmt.Errorf("--noauth-token: %w", err)
		}
		if !caller.MayWrite() {
			return fmt.Errorf("--noauth-token: the token of %s cannot write (scope %s)", caller.Name, caller.Scope)
		}
		opts.Authenticator = bench.FixedCaller{Caller: caller}
		srv := shttp.NewServer(opts)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("--noauth-addr: listen on %s: %w", addr, err)
		}
		go srv.Serve(ln, srv)
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv.Shutdown(sctx)
		}()
		log.Info("bench: a listener without authentication", "url", "http://"+ln.Addr().String(), "caller", caller.Name)
		return nil
	}
}
