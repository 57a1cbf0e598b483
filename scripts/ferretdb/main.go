// Command ferretdb runs the embeddable FerretDB (MongoDB wire protocol) on SQLite.
// The upstream cmd/ferretdb needs generated build metadata, so the service builds this
// small wrapper around the embeddable package instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "host:port to listen on")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite directory URL (file:/path/)")
	logLevel := flag.String("log-level", "warn", "log level")
	flag.Parse()
	_ = logLevel

	f, err := ferretdb.New(&ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: *listen},
		Handler:  "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Println("ferretdb listening on", *listen)
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}
