package typescript

import (
	"bufio"
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

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// childHostEnv turns the test binary into a host of its own, for the test
// that SIGKILLs a host: it starts the plugin at the path it holds, sets
// its handler spinning, prints the plugin's pid and waits to be killed.
const childHostEnv = "HOOKHOST_TS_CHILD_HOST"

func TestMain(m *testing.M) {
	if path := os.Getenv(childHostEnv); path != "" {
		os.Exit(childHost(path))
	}
	os.Exit(m.Run())
}

func configFor(path string) string {
	return fmt.Sprintf("[plugins]\nenabled = [\"spin\"]\n[plugins.entries.spin]\npath = %q\ntimeout = \"1s\"\n", path)
}

func childHost(path string) int {
	cfg, err := config.Parse([]byte(configFor(path)), "child.toml", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs[0])
		return 1
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go bus.PreToolCall(context.Background(), hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "spin", Arguments: json.RawMessage(`{}`)})
	time.Sleep(300 * time.Millisecond) // long enough for the handler to be spinning
	fmt.Println(h.Plugins()[0].PID)
	time.Sleep(time.Minute)
	return 0
}

// TestStuckPluginExitsWithItsKilledHost: a handler stuck in synchronous
// code holds Node's event loop, where the SIGTERM listener and the
// host-death poll run; the SDK's watchdog thread must still take the
// plugin down once its host is SIGKILLed.
func TestStuckPluginExitsWithItsKilledHost(t *testing.T) {
	index := tsbuild.Need(t, "plugins/typescript/dist/src/index.js")
	path := filepath.Join(t.TempDir(), "spin.js")
	src := fmt.Sprintf("#!%s\nconst { serve } = require(%q);\n"+
		`serve({ name: "spin", version: "1.0.0", preToolCall(call) { if (call.name === "spin") { for (;;) {} } } });`+"\n", tsbuild.Node, index)
	if err := os.WriteFile(path, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childHostEnv+"="+path)
	var stderr strings.Builder
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child host: %v; stderr: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		t.Fatalf("child host printed %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin pid %d still runs 5 s after its host was SIGKILLed, its handler stuck", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gone reports whether process pid has ended; a zombie has.
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}
