//go:build linux

package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// lanerJS answers every provided tool with how its call came and what
// its environment says of the lane; the tool "children" also starts two
// processes, one spawned (detached) and one through a shell, and gives
// their pids.
const lanerJS = `#!%s
const { spawn, exec } = require("node:child_process");
const { serve } = require(%q);
serve({
  name: "laner",
  version: "1.0.0",
  preToolCallCanProvideResult(call, ctx) {
    const out = { carrier: ctx.carrier, variable: process.env.HOOKHOST_LANE_FD ?? null };
    if (call.name === "children") {
      const spawned = spawn("/bin/sleep", ["60"], { detached: true, stdio: "ignore" });
      spawned.unref();
      const shelled = exec("exec /bin/sleep 61");
      shelled.unref();
      out.children = [spawned.pid, shelled.pid];
    }
    return { content: JSON.stringify(out) };
  },
});
`

type lanerAnswer struct {
	Carrier  string  `json:"carrier"`
	Variable *string `json:"variable"`
	Children []int   `json:"children"`
}

// TestTypeScriptPluginServesItsLaneUnderTheHost runs a plugin written with the SDK
// under the real host: its hook calls come on the lane, the handler's
// context says so, the plugin no longer has the lane's variable, and the
// processes it starts inherit neither the variable nor the lane, so that
// once the plugin is killed no process holds its end open.
func TestTypeScriptPluginServesItsLaneUnderTheHost(t *testing.T) {
	index := tsbuild.Need(t, "plugins/typescript/dist/src/index.js")
	path := filepath.Join(t.TempDir(), "laner.js")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(lanerJS, tsbuild.Node, index)), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf("[plugins]\nenabled = [\"laner\"]\n[plugins.entries.laner]\npath = %q\ntool_timeout = \"10s\"\n", path)), "t.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, errs := host.Start(ctx, host.Specs(cfg), host.Options{})
	defer func() { _ = h.Close(ctx) }()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bus.Close(ctx) }()
	ask := func(tool string) lanerAnswer {
		t.Helper()
		r := bus.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: tool, Arguments: json.RawMessage(`{}`)})
		if r == nil || r.IsError {
			t.Fatalf("%s: %+v, want the plugin's answer", tool, r)
		}
		var a lanerAnswer
		if err := json.Unmarshal([]byte(r.Content), &a); err != nil {
			t.Fatalf("%s: %q: %v", tool, r.Content, err)
		}
		return a
	}

	if a := ask("plain"); a.Carrier != "lane" || a.Variable != nil {
		t.Errorf("the handler saw carrier %q and HOOKHOST_LANE_FD %v; want the lane, and the variable unset", a.Carrier, a.Variable)
	}
	st := h.Plugins()[0]
	if !st.Lane || st.Protocol != 2 {
		t.Fatalf("status: Lane %v, Protocol %d; want the lane, protocol 2", st.Lane, st.Protocol)
	}

	// The plugin's end of the lane is its descriptor 3.
	lane, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/3", st.PID))
	if err != nil || !strings.HasPrefix(lane, "socket:") {
		t.Fatalf("the plugin's descriptor 3 is %q (%v), want its end of the lane", lane, err)
	}
	a := ask("children")
	if len(a.Children) != 2 {
		t.Fatalf("children: %+v, want two pids", a)
	}
	for _, pid := range a.Children {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	for _, pid := range a.Children {
		if holders := holdersOf(t, lane, pid); len(holders) != 0 {
			t.Errorf("the plugin's child %d holds the lane (%s) as %v", pid, lane, holders)
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatalf("child %d: %v", pid, err)
		}
		if strings.Contains("\x00"+string(env), "\x00HOOKHOST_LANE_FD=") {
			t.Errorf("the plugin's child %d has HOOKHOST_LANE_FD in its environment", pid)
		}
	}

	// Killed, the plugin leaves no process holding its end of the lane (its
	// children may be gone too: the host kills its process group, and an
	// orphan's new parent may end it).
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !gone(st.PID) {
		if time.Now().After(deadline) {
			t.Fatalf("plugin pid %d still runs 10 s after SIGKILL", st.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if holders := holdersOf(t, lane, 0); len(holders) != 0 {
		t.Errorf("with the plugin dead, %v still hold its end of the lane (%s)", holders, lane)
	}
}

// holdersOf lists the descriptors (/proc/<pid>/fd/<n>) that are the
// socket link names, of process pid, or of every process for 0.
func holdersOf(t *testing.T, link string, pid int) []string {
	t.Helper()
	pattern := "/proc/[0-9]*/fd/*"
	if pid != 0 {
		pattern = fmt.Sprintf("/proc/%d/fd/*", pid)
	}
	fds, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == link {
			holders = append(holders, fd)
		}
	}
	return holders
}
