// Package bench holds the benchmarks that compare hookhost's plugin path
// with its alternatives, measured side by side in one run: a remote plugin
// over go-plugin (AutoMTLS), a raw gRPC call to a child process over a unix
// socket, a process started per hook, and an in-process plugin. `make bench`
// runs them and prints medians and ratios with bench/report.
package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds the benchmark's child programs once per run; benchmarks
// call it lazily so `go test` without -bench builds nothing.
func binaries(b *testing.B) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "hookhost-bench")
		if buildErr != nil {
			return
		}
		for _, name := range []string{"benchplugin", "rawgrpc", "execjson"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "./internal/"+name).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return binDir
}

// pluginCopies puts n copies of the bench plugin under distinct names and
// returns a config enabling them all.
func pluginCopies(b *testing.B, n int) *config.Config {
	dir := binaries(b)
	src, err := os.ReadFile(filepath.Join(dir, "benchplugin"))
	if err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	cfg.Plugins.Entries = map[string]config.PluginEntry{}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("bench%d", i)
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			if err := os.WriteFile(path, src, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		cfg.Plugins.Enabled = append(cfg.Plugins.Enabled, name)
		cfg.Plugins.Entries[name] = config.PluginEntry{Path: path, Timeout: 5 * time.Second, ToolTimeout: 10 * time.Second, Config: json.RawMessage(`{}`)}
	}
	return cfg
}

// remoteBus starts n bench plugins and a Bus over them.
func remoteBus(b *testing.B, n int) (*hooks.Bus, *host.Host) {
	cfg := pluginCopies(b, n)
	h, errs := host.Start(context.Background(), cfg, host.Options{})
	if len(errs) > 0 {
		b.Fatal(errs[0])
	}
	bus, err := hooks.NewBus(h.Members(), hooks.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		bus.Close(context.Background())
		h.Close(context.Background())
	})
	return bus, h
}

var toolCall = hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "lookup", Arguments: json.RawMessage(`{"key":"k"}`)}

// BenchmarkHookRoundTrip is one pre_tool_call_can_provide_result answered
// by one plugin, four ways.
func BenchmarkHookRoundTrip(b *testing.B) {
	ctx := context.Background()

	b.Run("inprocess", func(b *testing.B) {
		bus, err := hooks.NewBus([]hooks.Member{{Plugin: &hooks.Funcs{
			Name: "bench1",
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: `{"ok":true}`}, nil
			},
		}}}, hooks.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer bus.Close(ctx)
		for b.Loop() {
			if bus.ProvideResult(ctx, toolCall) == nil {
				b.Fatal("no result")
			}
		}
	})

	b.Run("remote", func(b *testing.B) {
		bus, _ := remoteBus(b, 1)
		for b.Loop() {
			if bus.ProvideResult(ctx, toolCall) == nil {
				b.Fatal("no result")
			}
		}
	})

	b.Run("rawgrpc", func(b *testing.B) {
		client := rawGRPC(b, false)
		req := &pluginv1.ToolCallRequest{SessionId: toolCall.SessionID, CallId: toolCall.CallID, Name: toolCall.Name, Arguments: toolCall.Arguments}
		for b.Loop() {
			resp, err := client.PreToolCallCanProvideResult(ctx, req)
			if err != nil || resp.Result == nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("rawgrpc-tls", func(b *testing.B) {
		client := rawGRPC(b, true)
		req := &pluginv1.ToolCallRequest{SessionId: toolCall.SessionID, CallId: toolCall.CallID, Name: toolCall.Name, Arguments: toolCall.Arguments}
		for b.Loop() {
			resp, err := client.PreToolCallCanProvideResult(ctx, req)
			if err != nil || resp.Result == nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("exec", func(b *testing.B) {
		bin := filepath.Join(binaries(b), "execjson")
		in, _ := json.Marshal(toolCall)
		for b.Loop() {
			cmd := exec.Command(bin)
			cmd.Stdin = bytes.NewReader(in)
			out, err := cmd.Output()
			if err != nil || !bytes.Contains(out, []byte(`"content"`)) {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}

// rawGRPC starts the raw gRPC child and returns a client connected to it
// over a unix socket, over TLS when useTLS is set.
func rawGRPC(b *testing.B, useTLS bool) pluginv1.PluginClient {
	sock := filepath.Join(b.TempDir(), "raw.sock")
	args := []string{sock}
	if useTLS {
		args = []string{"-tls", sock}
	}
	cmd := exec.Command(filepath.Join(binaries(b), "rawgrpc"), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	fields := strings.Fields(line)
	if err != nil || len(fields) == 0 || fields[0] != "ready" {
		b.Fatalf("raw gRPC child: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	creds := insecure.NewCredentials()
	if useTLS {
		der, err := base64.StdEncoding.DecodeString(fields[1])
		if err != nil {
			b.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			b.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(cert)
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	}
	conn, err := grpc.NewClient("unix:"+sock, grpc.WithTransportCredentials(creds))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return pluginv1.NewPluginClient(conn)
}

// BenchmarkUnsubscribedHook fires pre_api_request_mutable, which the running
// remote plugin does not implement: the Bus makes no RPC at all.
func BenchmarkUnsubscribedHook(b *testing.B) {
	bus, _ := remoteBus(b, 1)
	ctx := context.Background()
	ev := hooks.APIRequest{Request: hooks.ModelRequest{Model: "m"}}
	before := bus.Stats().Calls()
	for b.Loop() {
		bus.MutateRequest(ctx, ev)
	}
	b.ReportMetric(float64(bus.Stats().Calls()-before)/float64(b.N), "rpcs/op")
}

// BenchmarkToolCall runs one whole tool call through the dispatch pipeline:
// natively with no plugin, and answered by one remote plugin that
// subscribes to every tool hook.
func BenchmarkToolCall(b *testing.B) {
	tool := dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "lookup", Description: "looks a key up", InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)},
		Run:  func(context.Context, json.RawMessage) (any, error) { return map[string]bool{"ok": true}, nil },
	}
	reg, err := dispatch.NewRegistry(tool)
	if err != nil {
		b.Fatal(err)
	}
	call := hooks.ToolCall{ID: "c", Name: "lookup", Arguments: json.RawMessage(`{"key":"k"}`)}
	ctx := context.Background()

	b.Run("native", func(b *testing.B) {
		p := &dispatch.Pipeline{Registry: reg}
		for b.Loop() {
			p.Run(ctx, "s", call)
		}
	})
	b.Run("remote", func(b *testing.B) {
		bus, _ := remoteBus(b, 1)
		p := &dispatch.Pipeline{Registry: reg, Bus: bus}
		for b.Loop() {
			if out := p.Run(ctx, "s", call); out.Path != dispatch.PathProvided {
				b.Fatalf("path %s", out.Path)
			}
		}
	})
}

// BenchmarkStartup is the time from Start to every plugin described,
// configured and ready, plus shutdown, for 1 and 8 plugins.
func BenchmarkStartup(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			cfg := pluginCopies(b, n)
			for b.Loop() {
				h, errs := host.Start(context.Background(), cfg, host.Options{})
				if len(errs) > 0 {
					b.Fatal(errs[0])
				}
				if len(h.Members()) != n {
					b.Fatalf("%d of %d plugins running", len(h.Members()), n)
				}
				b.StopTimer()
				h.Close(context.Background())
				b.StartTimer()
			}
		})
	}
}

// BenchmarkIdleRSS reports the resident memory of one idle plugin process.
func BenchmarkIdleRSS(b *testing.B) {
	_, h := remoteBus(b, 1)
	pid := h.Plugins()[0].PID
	time.Sleep(200 * time.Millisecond)
	var kib float64
	for b.Loop() {
		kib = rssKiB(b, pid)
	}
	b.ReportMetric(kib, "idle-rss-KiB")
}

func rssKiB(b *testing.B, pid int) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc on this system")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	b.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
