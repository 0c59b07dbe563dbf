// Package processtest runs plugins written with the TypeScript SDK as real
// processes under the real host, for what only a process shows: a stuck
// event loop, deadlines beyond what Node timers hold.
package processtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

const childEnv = "HOOKHOST_TS_PROCESSTEST_CHILD_HOST"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(childHost(path))
	}
	os.Exit(m.Run())
}

// script writes an executable plugin script using the built SDK.
func script(t *testing.T, body string) string {
	t.Helper()
	index := tsbuild.Need(t, "plugins/typescript/dist/src/index.js")
	p := filepath.Join(t.TempDir(), "plugin.js")
	src := fmt.Sprintf("#!%s\nconst { serve, s, tool } = require(%q);\n%s\n", tsbuild.Node, index, body)
	if err := os.WriteFile(p, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func configFor(path, extra string) string {
	return fmt.Sprintf(`
[plugins]
enabled = ["spin"]
[plugins.entries.spin]
path = %q
%s
`, path, extra)
}

// spinner answers pre_tool_call for tool "spin" by never returning: a
// handler stuck in a synchronous loop (a catastrophic regexp, a bug).
const spinner = `serve({ name: "spin", version: "1.0.0", preToolCall(call) { if (call.name === "spin") { for (;;) {} } } });`

func childHost(path string) int {
	cfg, err := config.Parse([]byte(configFor(path, `timeout = "1s"`)), "child.toml", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, errs := host.Start(context.Background(), cfg, host.Options{})
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs[0])
		return 1
	}
	bus, err := hooks.NewBus(h.Members(), hooks.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go bus.PreToolCall(context.Background(), hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "spin", Arguments: json.RawMessage(`{}`)})
	time.Sleep(500 * time.Millisecond) // the handler is spinning by now
	fmt.Println(h.Plugins()[0].PID)
	time.Sleep(time.Minute)
	return 0
}

// A plugin whose handler is stuck in synchronous code must still exit
// when its host is SIGKILLed (PROTOCOL.md, "Exiting with the host"): the
// Go SDK does, since its host-death watch runs on its own goroutine.
func TestPluginWithAStuckHandlerOutlivesAKilledHost(t *testing.T) {
	path := script(t, spinner)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+path)
	var stderr bytes.Buffer
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child host: %v; stderr: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child host printed %q", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin pid %d still running 10 s after its host was SIGKILLed (its handler is stuck in a loop; the SIGTERM listener and the host-death poll both wait for the event loop)", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gone reports whether pid has ended (a zombie counts as ended).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] == 'Z' || data[i+2] == 'X'
	}
	return false
}

// An entry's timeout may be any positive duration; the README's Debugging
// section says to raise it while stepping through a handler. Under the
// real host, with timeout = "720h", a handler that answers after 20 ms
// must have its answer taken.
func TestLongTimeoutUnderTheHost(t *testing.T) {
	path := script(t, `serve({ name: "spin", version: "1.0.0", async preToolCall() { await new Promise((r) => setTimeout(r, 20)); return { block: { message: "no" } }; } });`)
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", protocol), func(t *testing.T) {
			cfg, err := config.Parse([]byte(configFor(path, fmt.Sprintf("timeout = \"720h\"\nprotocol = %d", protocol))), "t.toml", "")
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			h, errs := host.Start(context.Background(), cfg, host.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &log})})
			defer h.Close(context.Background())
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			bus, err := hooks.NewBus(h.Members(), hooks.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer bus.Close(context.Background())
			out := bus.PreToolCall(context.Background(), hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "x", Arguments: json.RawMessage(`{}`)})
			if !out.Blocked {
				t.Errorf("pre_tool_call under timeout 720h: %+v, want blocked; stats %+v\nhost log:\n%s", out, bus.Stats().Hooks, log.String())
			}
		})
	}
}
