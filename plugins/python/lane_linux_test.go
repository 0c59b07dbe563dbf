package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// lanePy answers provided tools with what the lane tests look at: the
// carrier its call came by, what a child it starts inherits (its
// descriptors, and HOOKHOST_LANE_FD), and its own HOOKHOST_LANE_FD.
const lanePy = `#!/usr/bin/python3
import json, os, subprocess, sys
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

# What a child sees: its descriptors ("<n> -> <target>") and the variable.
CHILD = """
import os
for d in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        print(d, "->", os.readlink("/proc/self/fd/" + d))
    except OSError:
        pass  # the listing's own descriptor, closed already
print("HOOKHOST_LANE_FD=" + os.environ.get("HOOKHOST_LANE_FD", "unset"))
"""

class Laner(hp.Plugin):
    name, version = "laner", "1.0.0"

    def pre_tool_call_can_provide_result(self, call, ctx):
        if call.name == "carrier":
            return hp.ToolResult(ctx.carrier)
        if call.name == "child":
            # close_fds=False: only close-on-exec keeps a descriptor from it.
            done = subprocess.run([sys.executable, "-c", CHILD], close_fds=False,
                                  capture_output=True, text=True, check=True)
            return hp.ToolResult(done.stdout)
        if call.name == "env":
            return hp.ToolResult(json.dumps(os.environ.get("HOOKHOST_LANE_FD")))
        return None

if __name__ == "__main__":
    hp.serve(Laner())
`

// writeLaner writes lanePy to a file of the test's and returns its path.
func writeLaner(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "laner.py")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(lanePy, abs(t, "src"))), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func lanerConfig(path string, protocol int) string {
	return fmt.Sprintf("[plugins]\nenabled = [\"laner\"]\n[plugins.entries.laner]\npath = %q\nprotocol = %d\n", path, protocol)
}

// provided is what the plugin answered for tool name, failing the test
// when it answered nothing.
func provided(t *testing.T, bus *hookbus.Bus, name string) string {
	t.Helper()
	r := bus.PreToolCallCanProvideResult(context.Background(),
		hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: name, Arguments: json.RawMessage(`{}`)})
	if r == nil || r.IsError {
		t.Fatalf("provide %s: %+v, want the plugin's answer", name, r)
	}
	return r.Content
}

// TestLaneUnderTheHost: over protocol 2 a plugin written with the SDK
// gets its hook calls on the lane, and the host says so; over protocol 1
// on gRPC. Either way, neither the plugin (once serving) nor a process it
// starts has HOOKHOST_LANE_FD, and the child inherits no socket: the lane
// is the plugin's alone.
func TestLaneUnderTheHost(t *testing.T) {
	needPython(t)
	path := writeLaner(t)
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("protocol%d", protocol), func(t *testing.T) {
			log := newLog(t)
			h, bus := start(t, parse(t, lanerConfig(path, protocol)), log)
			wantCarrier, wantLane := "grpc", false
			if protocol == 2 {
				wantCarrier, wantLane = "lane", true
			}
			if got := provided(t, bus, "carrier"); got != wantCarrier {
				t.Errorf("the plugin's call came by %q, want %q", got, wantCarrier)
			}
			st := h.Plugins()[0]
			if st.Protocol != protocol || st.Lane != wantLane {
				t.Errorf("Host.Plugins: Protocol %d, Lane %v; want %d, %v", st.Protocol, st.Lane, protocol, wantLane)
			}

			if got := provided(t, bus, "env"); got != "null" {
				t.Errorf("the plugin's own HOOKHOST_LANE_FD = %s, want it unset", got)
			}
			child := provided(t, bus, "child")
			t.Logf("the plugin's child saw:\n%s", child)
			fds := 0
			for _, line := range strings.Split(child, "\n") {
				if !strings.Contains(line, " -> ") {
					continue
				}
				fds++
				if strings.Contains(line, "socket:") {
					t.Errorf("the plugin's child inherited a socket: %s", line)
				}
			}
			if fds == 0 {
				t.Errorf("the child listed no descriptors:\n%s", child)
			}
			if !strings.Contains(child, "HOOKHOST_LANE_FD=unset") {
				t.Errorf("the plugin's child sees HOOKHOST_LANE_FD:\n%s", child)
			}
			if protocol == 2 && !h.Plugins()[0].Lane {
				t.Error("the plugin left its lane during the test, so what its child saw proves less")
			}
		})
	}
}

// wrapperPy starts the plugin with HOOKHOST_LANE_FD set to what the test
// gives ({devnull} is a descriptor open on /dev/null, not a socket).
const wrapperPy = `#!/usr/bin/python3
import os
fd = os.open("/dev/null", os.O_RDONLY)
os.set_inheritable(fd, True)
os.environ["HOOKHOST_LANE_FD"] = %q.replace("{devnull}", str(fd))
os.execv("/usr/bin/python3", ["/usr/bin/python3", %q])
`

// laneWarning is the plugin's warning about a lane it cannot take, as the
// host logs it.
var laneWarning = regexp.MustCompile(`\[WARN\] +test\.plugin\.laner\S*: the plugin cannot serve the host's lane; its hook calls come on gRPC:[^\n]* error="HOOKHOST_LANE_FD=([^"]*)"`)

// TestMalformedLaneFD: a HOOKHOST_LANE_FD that names no lane (not a
// number, below 3, not a socket) is a warning in the host's log; the
// plugin serves its calls on the Hooks stream.
func TestMalformedLaneFD(t *testing.T) {
	needPython(t)
	plugin := writeLaner(t)
	for _, c := range []struct{ value, why string }{
		{"abc", `'abc' is not a descriptor the host could have handed over`},
		{"2", `'2' is not a descriptor the host could have handed over`},
		{"{devnull}", `is not a socket`},
	} {
		t.Run(c.value, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wrapper.py")
			if err := os.WriteFile(path, []byte(fmt.Sprintf(wrapperPy, c.value, plugin)), 0o755); err != nil {
				t.Fatal(err)
			}
			log := newLog(t)
			h, bus := start(t, parse(t, lanerConfig(path, 2)), log)
			if got := provided(t, bus, "carrier"); got != "grpc" {
				t.Errorf("the plugin's call came by %q, want grpc", got)
			}
			st := h.Plugins()[0]
			if st.Protocol != 2 || st.Lane {
				t.Errorf("Host.Plugins: Protocol %d, Lane %v; want protocol 2 on the Hooks stream", st.Protocol, st.Lane)
			}
			// Stderr is read apart from the calls: the line may follow them.
			var got []string
			waitFor(t, "the plugin's warning about its lane in the host's log", func() bool {
				got = laneWarning.FindStringSubmatch(log.String())
				return got != nil
			})
			if !strings.Contains(got[1], c.why) {
				t.Errorf("the warning says %q, want it to say %q", got[1], c.why)
			}
		})
	}
}
