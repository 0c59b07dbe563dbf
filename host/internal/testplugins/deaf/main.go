// Command deaf is a test plugin that stops reading its socket while it
// lives on. It serves through a proxy of its own, placed between the host
// and its gRPC server by rewriting the address in go-plugin's handshake
// line; after a call for the tool "deaf", the proxy no longer reads what
// the host sends, on every connection. Its name is the base name it was
// started as. It declines the host's lane, so that its hook calls go
// through the proxy too.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/sdk"
)

var deaf atomic.Bool

type plugin struct {
	sdk.Base
	name string
}

func (p *plugin) Info() sdk.Info { return sdk.Info{Name: p.name, Version: "1.0.0"} }

func (p *plugin) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if req.Name == "deaf" {
		deaf.Store(true)
		return &hooks.ToolResult{Content: "deaf from now on"}, nil
	}
	return &hooks.ToolResult{Content: "answered by " + p.name}, nil
}

func main() {
	if fd, ok := os.LookupEnv(wire.LaneFDEnv); ok {
		// Without the variable the SDK does not take the lane, and the
		// manifest says so; the descriptor itself is closed so that it
		// lingers nowhere.
		_ = os.Unsetenv(wire.LaneFDEnv)
		if n, err := strconv.Atoi(fd); err == nil {
			_ = syscall.Close(n)
		}
	}
	stdout := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// go-plugin prints its handshake line to os.Stdout.
	os.Stdout = w
	go relayHandshake(bufio.NewReader(r), stdout)
	sdk.Serve(&plugin{name: filepath.Base(os.Args[0])})
}

// relayHandshake passes the handshake line on with the proxy's address in
// place of the server's, and runs the proxy.
func relayHandshake(in *bufio.Reader, out *os.File) {
	line, err := in.ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "deaf: no handshake:", err)
		os.Exit(1)
	}
	go io.Copy(io.Discard, in)
	parts := strings.Split(strings.TrimSpace(line), "|")
	network, addr := parts[2], parts[3]
	proxyAddr := "127.0.0.1:0"
	if network == "unix" {
		proxyAddr = addr + ".proxy"
	}
	ln, err := net.Listen(network, proxyAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deaf: cannot listen:", err)
		os.Exit(1)
	}
	parts[3] = ln.Addr().String()
	fmt.Fprintln(out, strings.Join(parts, "|"))
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go proxy(c, network, addr)
	}
}

func proxy(host net.Conn, network, addr string) {
	server, err := net.Dial(network, addr)
	if err != nil {
		host.Close()
		return
	}
	go io.Copy(host, server)
	buf := make([]byte, 4096)
	for {
		if deaf.Load() {
			select {} // never read from the host again
		}
		n, err := host.Read(buf)
		if n > 0 {
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
