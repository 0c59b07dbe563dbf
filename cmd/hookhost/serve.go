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
	// Buffered for both signals that matter: the first drains, the second
	// stops at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return serveUntil(sigs, inv, *listen, *verbose, stderr)
}

// serveUntil is serve once the command line is read: it serves until the
// first signal on sigs, then drains for up to server.drain_timeout; a
// second signal cuts the requests still running and returns at once.
func serveUntil(sigs <-chan os.Signal, inv *invocation, listen string, verbose bool, stderr io.Writer) error {
	log := logger(stderr, verbose)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintf(stderr, "hookhost: draining up to %v; signal again to stop now\n", inv.cfg.Server.DrainTimeout)
		cancel()
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "hookhost: stopping now, cutting the requests still running")
		close(now)
	}()
	h, err := open(ctx, inv, log, stderr)
	if err != nil {
		return err
	}
	defer closeHost(h)
	srv, err := gateway.New(h, gateway.Options{Logger: log.Named("gateway"), Listen: listen})
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	go func() {
		select {
		case <-now:
			srv.CloseNow()
		case <-done:
		}
	}()
	return srv.ListenAndServe(ctx, func(addr string) {
		fmt.Fprintf(stderr, "hookhost: serving on http://%s\n", addr)
	})
}
