// Package bench holds the benchmarks that compare hookhost's plugin path
// with its alternatives, measured side by side in one run: a remote plugin
// over go-plugin (AutoMTLS) speaking protocol 1 (one unary RPC per hook) or
// protocol 2 (one bidirectional stream per plugin), the same answer from a
// raw gRPC child process over a unix socket (unary and on a stream, with and
// without TLS), a process started per hook, an in-process plugin, and one
// byte to a child process and back, the floor of any of them; then
// whole tool calls, an MCP tools/call through hookhost against straight to
// its server, startup and idle memory. `make bench` runs them and
// bench/report prints medians and ratios.
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/hookstretch"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// children are the benchmark's child programs: the package each is built
// from, relative to this directory.
var children = map[string]string{
	"benchplugin": "./internal/benchplugin",
	"rawgrpc":     "./internal/rawgrpc",
	"execjson":    "./internal/execjson",
	"pingpong":    "./internal/pingpong",
	"kora":        "../plugins/kora",
	"goconform":   "../internal/conformance/goconform",
	"cache":       "../examples/cache",
	"mcpfake":     "../cmd/hookhost/testdata/mcpfake",
}

var (
	binMu    sync.Mutex
	binDir   string
	binBuilt = map[string]error{}
)

// binary builds one child program once per run and returns its path;
// benchmarks call it lazily so `go test` without -bench builds nothing,
// and a run that never needs Kora never builds it.
func binary(b *testing.B, name string) string {
	binMu.Lock()
	defer binMu.Unlock()
	if binDir == "" {
		dir, err := os.MkdirTemp("", "hookhost-bench")
		if err != nil {
			b.Fatal(err)
		}
		binDir = dir
	}
	path := filepath.Join(binDir, name)
	err, done := binBuilt[name]
	if !done {
		var out []byte
		out, err = exec.Command("go", "build", "-o", path, children[name]).CombinedOutput()
		if err != nil {
			err = fmt.Errorf("build %s: %v\n%s", name, err, out)
		}
		binBuilt[name] = err
	}
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// TestMain removes the built children once every benchmark is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// pluginCopies puts n copies of the bench plugin under distinct names and
// returns a config enabling them all, each pinned to protocol (0: the
// highest both sides speak). The config is written as TOML so that the
// benchmarks go through the same keys a user writes.
func pluginCopies(b *testing.B, n, protocol int) *config.Config {
	return namedPluginCopies(b, "bench", n, protocol)
}

// namedPluginCopies is pluginCopies with the copies named prefix1,
// prefix2, ...: copies named stream* do not serve the lane (see
// benchplugin).
func namedPluginCopies(b *testing.B, prefix string, n, protocol int) *config.Config {
	src, err := os.ReadFile(binary(b, "benchplugin"))
	if err != nil {
		b.Fatal(err)
	}
	var names []string
	var entries strings.Builder
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s%d", prefix, i)
		path := filepath.Join(binDir, name)
		if _, err := os.Stat(path); err != nil {
			if err := os.WriteFile(path, src, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		names = append(names, strconv.Quote(name))
		fmt.Fprintf(&entries, "\n[plugins.entries.%s]\npath = %q\ntimeout = \"5s\"\ntool_timeout = \"10s\"\n", name, path)
		if protocol != 0 {
			fmt.Fprintf(&entries, "protocol = %d\n", protocol)
		}
	}
	toml := "[plugins]\nenabled = [" + strings.Join(names, ", ") + "]\n" + entries.String()
	cfg, err := config.Parse([]byte(toml), "bench.toml", binDir)
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// startHost starts the plugins of cfg and checks that every one speaks
// protocol, when it is pinned (not 0).
func startHost(b *testing.B, cfg *config.Config, protocol int) *host.Host {
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
	b.Cleanup(func() { h.Close(context.Background()) })
	if len(errs) > 0 {
		b.Fatal(errs[0])
	}
	for _, st := range h.Plugins() {
		if protocol != 0 && st.Protocol != protocol {
			b.Fatalf("plugin %s speaks protocol %d, pinned to %d", st.Name, st.Protocol, protocol)
		}
	}
	return h
}

// newBus makes a Bus over members, closed before the host (cleanups run
// last in, first out).
func newBus(b *testing.B, members []hookbus.Member) *hookbus.Bus {
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bus.Close(context.Background()) })
	return bus
}

// startBus starts the plugins of cfg and a Bus over them.
func startBus(b *testing.B, cfg *config.Config) (*hookbus.Bus, *host.Host) {
	h := startHost(b, cfg, 0)
	return newBus(b, h.Members()), h
}

// remoteBus starts n bench plugins pinned to protocol and a Bus over them.
func remoteBus(b *testing.B, n, protocol int) (*hookbus.Bus, *host.Host) {
	h := startHost(b, pluginCopies(b, n, protocol), protocol)
	return newBus(b, h.Members()), h
}

// remotePlugin is what the Bus uses of a plugin the host runs: calls,
// stretches of the tool pipeline, observer batches, and the promise to
// honour contexts. A wrapper that drops one of them measures a host that
// does not exist: without Batcher, every observer event was sent alone.
type remotePlugin interface {
	hooks.Plugin
	hookstretch.Stretcher
	hookstretch.Batcher
	hookbus.ContextHonouring
}

// exchanges counts the synchronous exchanges with a remote plugin: a
// plain call of a hook that is not an observer, or a stretch (several
// hooks of one tool call asked in one exchange), where the Bus's Stats
// count one call per hook asked.
type exchanges struct {
	remotePlugin
	n atomic.Uint64
}

func (e *exchanges) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	if !hook.Observer() {
		e.n.Add(1)
	}
	return e.remotePlugin.Handle(ctx, hook, req)
}

func (e *exchanges) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	st, err := e.remotePlugin.Stretch(ctx, req)
	if err == nil {
		e.n.Add(1)
	}
	return st, err
}

var (
	_ hookstretch.Stretcher    = (*exchanges)(nil)
	_ hookstretch.Batcher      = (*exchanges)(nil)
	_ hookbus.ContextHonouring = (*exchanges)(nil)
)

// remoteProtocols are the protocol versions a remote plugin is measured
// over, by sub-benchmark name.
var remoteProtocols = []struct {
	name     string
	protocol int
}{{"v1", 1}, {"v2", 2}}

var toolCall = hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "lookup", Arguments: json.RawMessage(`{"key":"k"}`)}

// BenchmarkHookRoundTrip is one pre_tool_call_can_provide_result answered
// by one plugin: in process; remote over protocol 1 and 2 (v2 on the lane,
// v2-stream on the gRPC Hooks stream); the same answer
// from a raw gRPC child (no go-plugin, no host) as a unary call over TLS,
// as one message each way on a long-lived bidirectional stream over TLS,
// and as a plaintext unary call; and from a process started per hook.
func BenchmarkHookRoundTrip(b *testing.B) {
	ctx := context.Background()

	b.Run("inprocess", func(b *testing.B) {
		bus, err := hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{
			Name: "bench1",
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: `{"ok":true}`}, nil
			},
		}}}, hookbus.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer bus.Close(ctx)
		for b.Loop() {
			if bus.PreToolCallCanProvideResult(ctx, toolCall) == nil {
				b.Fatal("no result")
			}
		}
	})

	for _, rp := range remoteProtocols {
		b.Run(rp.name, func(b *testing.B) {
			bus, _ := remoteBus(b, 1, rp.protocol)
			for b.Loop() {
				if bus.PreToolCallCanProvideResult(ctx, toolCall) == nil {
					b.Fatal("no result")
				}
			}
		})
	}

	// v2 runs on the lane; v2-stream is the same plugin with its calls on
	// the gRPC Hooks stream, as for a plugin that does not serve the lane.
	b.Run("v2-stream", func(b *testing.B) {
		h := startHost(b, namedPluginCopies(b, "stream", 1, 2), 2)
		bus := newBus(b, h.Members())
		for b.Loop() {
			if bus.PreToolCallCanProvideResult(ctx, toolCall) == nil {
				b.Fatal("no result")
			}
		}
	})

	req := &pluginv1.ToolCallRequest{SessionId: toolCall.SessionID, CallId: toolCall.CallID, Name: toolCall.Name, Arguments: toolCall.Arguments}

	b.Run("rawgrpc-unary-tls", func(b *testing.B) {
		client := pluginv1.NewPluginClient(rawGRPC(b, true))
		for b.Loop() {
			resp, err := client.PreToolCallCanProvideResult(ctx, req)
			if err != nil || resp.Result == nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("rawgrpc-bidi-tls", func(b *testing.B) {
		stream, err := pluginv2.NewPluginClient(rawGRPC(b, true)).Hooks(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer stream.CloseSend()
		stages := []*pluginv2.Stage{{Hook: string(hooks.PreToolCallCanProvideResult), TimeoutNs: int64(10 * time.Second)}}
		var id uint64
		var resp pluginv1.ToolResultResponse
		for b.Loop() {
			id++
			// Encoding the payload is part of each op, as it is for any
			// host that carries version 1 messages on the stream.
			payload, err := proto.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			call := &pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: &pluginv2.HookCall{Id: id, Stages: stages, Payload: payload}}}
			if err := stream.Send(call); err != nil {
				b.Fatal(err)
			}
			msg, err := stream.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if msg.Id != id || msg.Failure != nil {
				b.Fatalf("answer %d to call %d, failure %v", msg.Id, id, msg.Failure)
			}
			if err := proto.Unmarshal(msg.Answer, &resp); err != nil || resp.Result == nil {
				b.Fatalf("answer: %v", err)
			}
		}
	})

	b.Run("rawgrpc", func(b *testing.B) {
		client := pluginv1.NewPluginClient(rawGRPC(b, false))
		for b.Loop() {
			resp, err := client.PreToolCallCanProvideResult(ctx, req)
			if err != nil || resp.Result == nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("pingpong", func(b *testing.B) {
		w, r := pingPong(b)
		buf := []byte{'x'}
		for b.Loop() {
			if n, err := syscall.Write(w, buf); n != 1 || err != nil {
				b.Fatalf("ping: %d, %v", n, err)
			}
			if n, err := syscall.Read(r, buf); n != 1 || err != nil {
				b.Fatalf("pong: %d, %v", n, err)
			}
		}
	})

	b.Run("exec", func(b *testing.B) {
		bin := binary(b, "execjson")
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

// pingPong starts the ping-pong child with two blocking pipes, and returns
// the descriptors its parent writes to and reads from. They are used with
// plain system calls, not through the runtime's poller, so that the
// exchange costs what the operating system charges and nothing else.
func pingPong(b *testing.B) (w, r int) {
	childIn, ping, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	pong, childOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(binary(b, "pingpong"))
	cmd.ExtraFiles = []*os.File{childIn, childOut} // descriptors 3 and 4
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	childIn.Close()
	childOut.Close()
	b.Cleanup(func() {
		// The child ends when its read does.
		ping.Close()
		cmd.Wait()
		pong.Close()
	})
	// Fd puts each descriptor back in blocking mode.
	return int(ping.Fd()), int(pong.Fd())
}

// rawGRPC starts the raw gRPC child and returns a connection to it over a
// unix socket, over TLS when useTLS is set.
func rawGRPC(b *testing.B, useTLS bool) *grpc.ClientConn {
	sock := filepath.Join(b.TempDir(), "raw.sock")
	args := []string{sock}
	if useTLS {
		args = []string{"-tls", sock}
	}
	cmd := exec.Command(binary(b, "rawgrpc"), args...)
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
	return conn
}

// BenchmarkUnsubscribedHook fires pre_api_request_mutable, which the running
// remote plugin does not implement: the Bus makes no RPC at all.
func BenchmarkUnsubscribedHook(b *testing.B) {
	bus, _ := remoteBus(b, 1, 2)
	ctx := context.Background()
	ev := hooks.APIRequest{Request: hooks.ModelRequest{Model: "m"}}
	before := bus.Stats().Calls()
	for b.Loop() {
		bus.PreAPIRequestMutable(ctx, ev)
	}
	b.ReportMetric(float64(bus.Stats().Calls()-before)/float64(b.N), "rpcs/op")
}

// BenchmarkToolCall runs one whole tool call through the dispatch pipeline:
// natively with no plugin; answered by one remote plugin that subscribes to
// all four tool hooks, over protocol 1 and 2; and natively with the demo
// config's plugins (Kora, built from plugins/kora with its own manifest),
// which must not cost a single synchronous plugin call. rpcs/op counts the
// synchronous plugin calls per tool call.
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
			if out := p.Run(ctx, "s", call); out.Path != dispatch.PathNative {
				b.Fatalf("path %s", out.Path)
			}
		}
	})
	for _, rp := range remoteProtocols {
		b.Run("remote-"+rp.name, func(b *testing.B) {
			h := startHost(b, pluginCopies(b, 1, rp.protocol), rp.protocol)
			members := h.Members()
			ex := &exchanges{remotePlugin: members[0].Plugin.(remotePlugin)}
			members[0].Plugin = ex
			bus := newBus(b, members)
			p := &dispatch.Pipeline{Registry: reg, Bus: bus}
			before := bus.Stats().SyncCalls()
			for b.Loop() {
				if out := p.Run(ctx, "s", call); out.Path != dispatch.PathProvided {
					b.Fatalf("path %s", out.Path)
				}
			}
			b.ReportMetric(float64(bus.Stats().SyncCalls()-before)/float64(b.N), "rpcs/op")
			b.ReportMetric(float64(ex.n.Load())/float64(b.N), "exchanges/op")
		})
	}
	b.Run("native-demo", func(b *testing.B) {
		bus, _ := startBus(b, demoConfig(b))
		now := builtin.Now(time.Now)
		demoReg, err := dispatch.NewRegistry(now)
		if err != nil {
			b.Fatal(err)
		}
		p := &dispatch.Pipeline{Registry: demoReg, Bus: bus}
		nowCall := hooks.ToolCall{ID: "c", Name: now.Spec.Name, Arguments: json.RawMessage(`{}`)}
		before := bus.Stats().SyncCalls()
		for b.Loop() {
			if out := p.Run(ctx, "s", nowCall); out.Path != dispatch.PathNative || out.Result.IsError {
				b.Fatalf("path %s: %s", out.Path, out.Result.Content)
			}
		}
		after := bus.Stats()
		b.ReportMetric(float64(after.SyncCalls()-before)/float64(b.N), "rpcs/op")
		// Say who was asked, so that a regression names its cause.
		for _, h := range after.Hooks {
			if !h.Observer && h.Calls > 0 {
				b.Logf("%s was asked %s %d times", h.Plugin, h.Hook, h.Calls)
			}
		}
	})
}

// demoConfig is examples/demo.toml, the config `make run` uses, with Kora's
// binary built from plugins/kora and its ledger in a fresh directory.
func demoConfig(b *testing.B) *config.Config {
	cfg, err := config.Load(filepath.Join("..", "examples", "demo.toml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range cfg.Plugins.Enabled {
		if name != "kora" {
			b.Fatalf("the demo config enables %q; this benchmark knows how to build only kora", name)
		}
	}
	e := cfg.Entry("kora")
	e.Path = binary(b, "kora")
	var settings map[string]any
	if err := json.Unmarshal(e.Config, &settings); err != nil {
		b.Fatal(err)
	}
	settings["state_dir"] = b.TempDir()
	if e.Config, err = json.Marshal(settings); err != nil {
		b.Fatal(err)
	}
	cfg.Plugins.Entries["kora"] = e
	return cfg
}

// BenchmarkStartup is the time from Start to every plugin described,
// configured and ready, plus shutdown, for 1 and 8 plugins.
func BenchmarkStartup(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			cfg := pluginCopies(b, n, 0)
			for b.Loop() {
				h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
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

// BenchmarkIdleRSS reports the resident memory of one idle plugin process
// speaking protocol 2, its stream open.
func BenchmarkIdleRSS(b *testing.B) {
	_, h := remoteBus(b, 1, 2)
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
