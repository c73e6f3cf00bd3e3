// Command shelfmark runs the Shelfmark digital repository: `shelfmark
// serve` starts the API with zero configuration (SQLite and a local content
// store in ./shelfmark-data). The benchmark lab is a binary of its own,
// cmd/shelfmark-bench.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shelfmark:", err)
		os.Exit(1)
	}
}
