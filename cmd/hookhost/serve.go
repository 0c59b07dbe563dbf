package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hookhost/hookhost/gateway"
)

// serve runs the HTTP gateway until SIGINT or SIGTERM, then drains it and
// stops the plugins.
func serve(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve")
	listen := fs.String("listen", "", "`host:port` to listen on (default server.listen, 127.0.0.1:8080 unless the config sets it)")
	verbose := fs.Bool("v", false, "log each plugin and server event to stderr")
	inv, err := parseWithConfig(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(inv.words) > 0 {
		return usageErr("serve takes no arguments, got %q (see hookhost serve --help)", strings.Join(inv.words, " "))
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
	log := logger(stderr, verbose, true)
	if verbose {
		inv.decisions = decisionLog(log)
	}
	stopTelemetry, err := startTelemetry(inv)
	if err != nil {
		return err
	}
	defer stopTelemetry()
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
	defer srv.Close()
	go func() {
		select {
		case <-now:
			srv.CloseNow()
		case <-done:
		}
	}()
	err = srv.ListenAndServe(ctx, func(addr string) {
		fmt.Fprintf(stderr, "hookhost: serving on http://%s\n", addr)
		if len(inv.cfg.MCP.Servers) > 0 {
			fmt.Fprintf(stderr, "hookhost: serving MCP on http://%s/mcp\n", addr)
		}
	})
	if errors.Is(err, syscall.EADDRINUSE) {
		return addressInUse(inv, listen)
	}
	return err
}

// addressInUse explains a listen address another process holds: where the
// address was set, and a port free on the same host right now.
func addressInUse(inv *invocation, listen string) error {
	addr, from := listen, "from -listen"
	if listen == "" {
		addr = inv.cfg.Server.Listen
		if at := inv.cfg.Where("server.listen"); at != "" {
			from = "from server.listen at " + at
		} else {
			from = "the default; server.listen is not set"
		}
	}
	msg := fmt.Sprintf("serve: cannot listen on %s (%s): the address is already in use by another process", addr, from)
	if free := freeAddr(addr); free != "" {
		msg += fmt.Sprintf("; stop that process, or try -listen %s", free)
	}
	return errors.New(msg)
}

// freeAddr is addr with a port that is free now on the same host, "" if
// none can be found. The port is released at once, so another process may
// take it before it is used: this is a suggestion, not a reservation.
func freeAddr(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return ""
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	if err != nil {
		return ""
	}
	return net.JoinHostPort(host, port)
}
