package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hookhost/hookhost/gateway"
)

// serve runs the HTTP gateway until SIGINT or SIGTERM, then drains it and
// stops the plugins.
func serve(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address to listen on, host:port (default server.listen, 127.0.0.1:8080)")
	verbose := fs.Bool("v", false, "log each plugin and server event to stderr")
	inv, err := parseWithConfig(fs, args)
	if err != nil {
		return err
	}
	if len(inv.words) > 0 {
		return usageErr("serve takes no arguments, got %q", strings.Join(inv.words, " "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, inv, *listen, *verbose, stderr)
}

// serveUntil is serve once the command line is read: it serves until ctx
// is done.
func serveUntil(ctx context.Context, inv *invocation, listen string, verbose bool, stderr io.Writer) error {
	log := logger(stderr, verbose)
	h, err := open(ctx, inv, log, stderr)
	if err != nil {
		return err
	}
	defer closeHost(h)
	srv, err := gateway.New(h, gateway.Options{Logger: log.Named("gateway"), Listen: listen})
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	return srv.ListenAndServe(ctx, func(addr string) {
		fmt.Fprintf(stderr, "hookhost: serving on http://%s\n", addr)
	})
}
