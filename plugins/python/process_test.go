package python

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
)

// TestHandshakeAndHostDeath starts conform.py as a host would, by hand:
// the handshake line has the six fields go-plugin reads, the version the
// offer allows, an unpadded certificate for localhost; nothing else is ever
// written to stdout; and the plugin exits once the process named by
// HOOKHOST_HOST_PID is gone, with status 0 and its socket directory removed,
// though it leads its process group (which it kills) as under the host.
func TestHandshakeAndHostDeath(t *testing.T) {
	needPython(t)
	for _, offer := range []string{"1,2", "1"} {
		t.Run(offer, func(t *testing.T) {
			fakeHost := exec.Command("sleep", "60")
			if err := fakeHost.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = fakeHost.Process.Kill(); _ = fakeHost.Wait() })

			sockDir := t.TempDir()
			cmd := exec.Command(abs(t, "conform/conform.py"))
			// As the host starts it: leading its process group.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Env = []string{
				"HOOKHOST_PLUGIN=d3c1b0a2-hookhost-plugin-v1",
				"PLUGIN_PROTOCOL_VERSIONS=" + offer,
				"PLUGIN_CLIENT_CERT=" + selfSignedPEM(t),
				"PLUGIN_UNIX_SOCKET_DIR=" + sockDir,
				fmt.Sprintf("HOOKHOST_HOST_PID=%d", fakeHost.Process.Pid),
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			r := bufio.NewReader(stdout)
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("no handshake line: %v (%q)", err, line)
			}
			f := strings.Split(strings.TrimSuffix(line, "\n"), "|")
			want := offer[len(offer)-1:]
			if len(f) != 6 || f[0] != "1" || f[1] != want || f[2] != "unix" || f[4] != "grpc" {
				t.Fatalf("handshake line %q, want 1|%s|unix|<path>|grpc|<cert>", line, want)
			}
			if _, err := os.Stat(f[3]); err != nil || filepath.Base(f[3]) != "plugin.sock" {
				t.Errorf("socket %s: %v", f[3], err)
			}
			der, err := base64.RawStdEncoding.DecodeString(f[5])
			if err != nil {
				t.Fatalf("certificate field is not unpadded standard base64: %v", err)
			}
			cert, err := x509.ParseCertificate(der)
			if err != nil || !slices.Contains(cert.DNSNames, "localhost") || !cert.IsCA {
				t.Fatalf("certificate: %v, DNS names %v, CA %v", err, cert.DNSNames, cert.IsCA)
			}
			// Stdout is closed once the line is out: nothing can follow it.
			rest, _ := io.ReadAll(r)
			if len(rest) != 0 {
				t.Errorf("stdout after the handshake line: %q", rest)
			}
			go func() { exited <- cmd.Wait() }()

			if err := fakeHost.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = fakeHost.Wait()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("plugin exit after its host died: %v, want status 0", err)
				}
				if _, err := os.Stat(filepath.Dir(f[3])); !os.IsNotExist(err) {
					t.Errorf("the socket's directory outlived the plugin: %v", err)
				}
			case <-time.After(liveness):
				t.Fatal("the plugin outlived its host")
			}
			if left, _ := os.ReadDir(sockDir); len(left) != 0 {
				t.Errorf("the plugin left %d entries in its socket directory (%s...)", len(left), left[0].Name())
			}
		})
	}
}

// selfSignedPEM is a client certificate for PLUGIN_CLIENT_CERT.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestStrayOutput: prints after the SDK is imported (at start, in the
// constructor, in a handler, even straight to file descriptor 1) neither
// break the handshake nor the stream; they reach the host's log.
func TestStrayOutput(t *testing.T) {
	needPython(t)
	script := filepath.Join(t.TempDir(), "noisy.py")
	src := fmt.Sprintf(`#!%s
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp
print("noisy: printed at import")

class Noisy(hp.Plugin):
    name, version = "noisy", "1.0.0"

    def __init__(self):
        print("noisy: printed in the constructor")

    def transform_llm_output(self, out):
        print("noisy: printed in a handler")
        os.write(1, b"noisy: written to fd 1\n")
        return out.text + "!"

hp.serve(Noisy())
`, python, abs(t, "src"))
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	log := newLog(t)
	_, bus := start(t, parse(t, fmt.Sprintf("[plugins]\nenabled = [\"noisy\"]\n[plugins.entries.noisy]\npath = %q\n", script)), log)
	for i := 0; i < 3; i++ {
		if text, _ := bus.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: "hi"}); text != "hi!" {
			t.Fatalf("transform_llm_output = %q", text)
		}
	}
	for _, want := range []string{"printed at import", "printed in the constructor", "printed in a handler", "written to fd 1"} {
		w := want
		waitFor(t, fmt.Sprintf("%q in the host's log", w), func() bool { return strings.Contains(log.String(), w) })
	}
	if st := bus.Stats(); len(failures(st)) != 0 {
		t.Errorf("failures: %v", failures(st))
	}
}

// TestDebugModeReattach starts conform.py by hand with
// HOOKHOST_PLUGIN_DEBUG=1: it prints the reattach line, the host attaches
// to it without TLS and calls it, leaves it running when it closes, and
// SIGTERM stops it with status 0.
func TestDebugModeReattach(t *testing.T) {
	needPython(t)
	cmd := exec.Command(abs(t, "conform/conform.py"))
	cmd.Env = []string{"HOOKHOST_PLUGIN_DEBUG=1", "PLUGIN_UNIX_SOCKET_DIR=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no reattach line: %v; stderr: %s", err, stderr.String())
	}
	value, ok := strings.CutPrefix(strings.TrimSpace(line), "HOOKHOST_REATTACH_PLUGINS='")
	value, ok2 := strings.CutSuffix(value, "'")
	if !ok || !ok2 {
		t.Fatalf("reattach line %q", line)
	}

	log := newLog(t)
	cfg := parse(t, "[plugins]\nenabled = [\"conform\"]\n[plugins.entries.conform]\npath = \"/nonexistent/conform\"\n")
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log.logger(), Getenv: func(k string) string {
		if k == "HOOKHOST_REATTACH_PLUGINS" {
			return value
		}
		return ""
	}})
	for _, e := range errs {
		t.Fatalf("attaching: %v", e)
	}
	if st := h.Plugins()[0]; st.PID != cmd.Process.Pid || st.Protocol != 2 {
		t.Errorf("attached to %+v, want pid %d on protocol 2", st, cmd.Process.Pid)
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log.logger()})
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := bus.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: "hi"}); text != "hi -- conform" {
		t.Errorf("transform_llm_output through the attached plugin: %q", text)
	}
	bus.Close(context.Background())
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if gone(cmd.Process.Pid) {
		t.Fatal("closing the host stopped the attached plugin")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want status 0; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "serving in debug mode (protocol version 2") {
		t.Errorf("stderr does not explain debug mode:\n%s", stderr.String())
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestHandlersSeeCancellation: a handler waiting on its context returns
// early once the host gives up on the call, over both protocol versions
// (version 1: the RPC's cancellation; version 2: the deadline and Cancel).
func TestHandlersSeeCancellation(t *testing.T) {
	needPython(t)
	script := filepath.Join(t.TempDir(), "waiter.py")
	src := fmt.Sprintf(`#!%s
import sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

class Waiter(hp.Plugin):
    name, version = "waiter", "1.0.0"
    tools = [hp.ToolSpec("waiter__wait", "Wait.", {"type": "object"})]
    matchers = ["waiter__*"]

    def pre_tool_call_can_provide_result(self, call, ctx):
        t0 = time.monotonic()
        over = ctx.wait(30)
        hp.logger().warn("waiter returned", over=over, reason=ctx.reason,
                         early=time.monotonic() - t0 < 10)
        return hp.ToolResult("late")

hp.serve(Waiter())
`, python, abs(t, "src"))
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("protocol%d", protocol), func(t *testing.T) {
			log := newLog(t)
			cfg := parse(t, fmt.Sprintf("[plugins]\nenabled = [\"waiter\"]\n[plugins.entries.waiter]\npath = %q\nprotocol = %d\ntool_timeout = \"300ms\"\n", script, protocol))
			_, bus := start(t, cfg, log)
			t0 := time.Now()
			if r := bus.PreToolCallCanProvideResult(context.Background(), hooks.ToolCallRequest{Name: "waiter__wait", Arguments: []byte(`{}`)}); r != nil {
				t.Errorf("a call past its deadline answered %+v", r)
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Errorf("the host waited %v for a call with a 300ms deadline", d)
			}
			waitFor(t, "the handler to return early, its call over", func() bool {
				l := log.String()
				return strings.Contains(l, "waiter returned") && strings.Contains(l, "early=true") && strings.Contains(l, "over=true")
			})
		})
	}
}

// TestInvalidPluginFailsToStart: a plugin the SDK cannot serve (here, a
// handler with the wrong signature) exits 1 before the handshake, and the
// host's error quotes why.
func TestInvalidPluginFailsToStart(t *testing.T) {
	needPython(t)
	script := filepath.Join(t.TempDir(), "broken.py")
	src := fmt.Sprintf(`#!%s
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

class Broken(hp.Plugin):
    name = "broken"

    def pre_tool_call(self):
        return None

hp.serve(Broken())
`, python, abs(t, "src"))
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, fmt.Sprintf("[plugins]\nenabled = [\"broken\"]\n[plugins.entries.broken]\npath = %q\n", script))
	results := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: newLog(t).logger()})
	if len(results) != 1 || results[0].OK || results[0].Err == nil {
		t.Fatalf("check of a broken plugin: %+v", results)
	}
	if msg := results[0].Err.Error(); !strings.Contains(msg, "pre_tool_call must take the payload") {
		t.Errorf("check error %q does not say what is wrong", msg)
	}
}
