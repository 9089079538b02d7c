// Command colline shows the column lineage of captured plan events (colline explain) or writes
// it to Neo4j (colline replay), without Kafka. The logic is in package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/colline/colline/cli"
)

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, version, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
