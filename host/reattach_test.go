//go:build unix

package host

import (
	"context"
	"errors"
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
	"github.com/hookhost/hookhost/internal/debugplugin"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// debugPlugin is a plugin started by hand in debug mode, as its author
// would under a debugger.
type debugPlugin struct {
	cmd    *exec.Cmd
	line   string // the JSON object of HOOKHOST_REATTACH_PLUGINS='...'
	exited <-chan struct{}
}

// startDebugPlugin runs the echo plugin as name in debug mode and reads the
// reattach line it prints. The test's cleanup kills it.
func startDebugPlugin(t *testing.T, name string) *debugPlugin {
	t.Helper()
	cmd := exec.Command(echoAs(t, name))
	// Nothing of the test's environment: the plugin would take
	// TESTPLUGIN_TOOLS and declare a tool outside its namespace.
	cmd.Env = []string{hangDirVar + "=" + os.Getenv(hangDirVar)}
	// Leading a process group of its own, as a plugin started from a
	// shell does: a host that killed the group would take it down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := debugplugin.Start(t, cmd, livenessTimeout)
	return &debugPlugin{cmd: cmd, line: p.Line, exited: p.Exited}
}

func (d *debugPlugin) running() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// A plugin started outside the host is attached, called through the Bus
// and left running when the host closes, twice: once through the variable,
// once through the config key.
func TestReattachToAPluginStartedByHand(t *testing.T) {
	t.Parallel()
	const name = "handmade"
	d := startDebugPlugin(t, name)
	want, err := config.ParseReattach(name, d.line)
	if err != nil {
		t.Fatal(err)
	}
	if want.Pid != d.cmd.Process.Pid {
		t.Fatalf("reattach line names pid %d, the plugin is %d", want.Pid, d.cmd.Process.Pid)
	}
	// Nothing is launched, so the path need not exist; a sha256 pin that
	// would refuse a launched binary is skipped, with a warning.
	e := entry(filepath.Join(t.TempDir(), "not-built"))
	e.SHA256 = strings.Repeat("ab", 32)

	for _, via := range []string{"variable", "config key"} {
		opts := fastOptions()
		logs := &syncbuf.Buffer{}
		opts.Logger = tracingOptions(logs).Logger
		ent := e
		if via == "variable" {
			opts.Getenv = envOf(map[string]string{config.ReattachEnv: d.line})
		} else {
			opts.Getenv = envOf(nil)
			ent.Reattach = &want
		}
		h, errs := Start(context.Background(), Specs(configOf(plug{name, ent})), opts)
		if len(errs) > 0 {
			h.Close(context.Background())
			t.Fatalf("via the %s: %v", via, errs)
		}
		st := h.Plugins()[0]
		if !st.Attached || st.PID != want.Pid || st.State != StateRunning || st.Protocol != want.ProtocolVersion {
			t.Errorf("via the %s: status %+v, want attached, running, pid %d, protocol %d", via, st, want.Pid, want.ProtocolVersion)
		}
		bus := busOf(t, h)
		if r := provide(bus, "lookup", ""); r == nil || r.Plugin != name || r.Content != "answered by "+name {
			t.Errorf("via the %s: result %+v, want the attached plugin's answer", via, r)
		}
		bus.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
		err := h.Close(ctx)
		cancel()
		if err != nil {
			t.Fatalf("via the %s: Close: %v", via, err)
		}
		if !d.running() {
			t.Fatalf("via the %s: the attached plugin exited when the host closed", via)
		}
		if !strings.Contains(logs.String(), "sha256 check skipped") {
			t.Errorf("via the %s: no warning that the sha256 pin was not checked:\n%s", via, logs)
		}
	}

	// Check attaches too, and lets go without stopping it.
	opts := fastOptions()
	opts.Getenv = envOf(map[string]string{config.ReattachEnv: d.line})
	res := Check(context.Background(), Specs(configOf(plug{name, e})), opts)
	if len(res) != 1 || !res[0].OK || !res[0].Attached || res[0].Protocol != want.ProtocolVersion {
		t.Errorf("Check = %+v, want the attached plugin healthy", res)
	}
	if !d.running() {
		t.Fatal("the attached plugin exited after Check")
	}

	// The plugin is still serving after the hosts let go of it: the
	// second host's call above reached it after the first host closed.
	// Its author stops it.
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.exited:
	case <-time.After(livenessTimeout):
		t.Fatal("the debug-mode plugin did not stop on an interrupt")
	}
}

// An attached plugin that goes away is not restarted: the host did not
// start it. It stays down, says why and what to do, and calls to it fall
// through as unavailable.
func TestAttachedPluginThatDiesStaysDown(t *testing.T) {
	t.Parallel()
	const name = "fragile"
	d := startDebugPlugin(t, name)
	e := entry(filepath.Join(t.TempDir(), "not-built"))
	opts := fastOptions()
	opts.Getenv = envOf(map[string]string{config.ReattachEnv: d.line})
	h := startOK(t, configOf(plug{name, e}), opts)
	bus := busOf(t, h)
	s := memberOf(t, h, 0)
	mustCall(t, s, "lookup", "", "answered by "+name)

	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.exited
	waitFor(t, "the attached plugin to be down", func() bool { return s.Status().State == StateDown })
	st := s.Status()
	if st.PID != 0 || st.Restarts != 0 || !strings.Contains(st.Reason, "does not restart") ||
		!strings.Contains(st.Reason, "HOOKHOST_PLUGIN_DEBUG=1") || !strings.Contains(st.Reason, config.ReattachEnv) {
		t.Errorf("status %+v, want down, not restarted, with the fix", st)
	}
	if _, err := callDirect(s, "lookup", "", 5*time.Second); !errors.Is(err, hooks.ErrUnavailable) {
		t.Errorf("call to the dead attached plugin: %v, want ErrUnavailable", err)
	}
	if r := provide(bus, "lookup", ""); r != nil {
		t.Errorf("a call to the dead attached plugin through the Bus gave %+v, want nil (fall through)", r)
	}
	if n := bus.Stats().Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindUnavailable); n != 1 {
		t.Errorf("unavailable failures counted = %d, want 1", n)
	}
}

func TestReattachStartErrors(t *testing.T) {
	t.Parallel()
	// Above Linux's PID_MAX_LIMIT (4194304): no process can have it.
	const gonePID = 1<<22 + 1
	sock := filepath.Join(t.TempDir(), "nothing.sock")
	cases := []struct {
		name, env string
		fragments []string
	}{
		{"badjson", `{"badjson":`, []string{config.ReattachEnv, "is not valid", "HOOKHOST_PLUGIN_DEBUG=1"}},
		{"badentry", `{"badentry":{"Protocol":"netrpc"}}`, []string{config.ReattachEnv, "badentry", `"netrpc"`}},
		{"nolistener", `{"nolistener":{"Protocol":"grpc","ProtocolVersion":1,"Pid":` + strconv.Itoa(os.Getpid()) +
			`,"Test":true,"Addr":{"Network":"unix","String":"` + sock + `"}}}`, []string{"cannot attach", sock, "HOOKHOST_PLUGIN_DEBUG=1"}},
		{"noprocess", `{"noprocess":{"Protocol":"grpc","ProtocolVersion":1,"Pid":` + strconv.Itoa(gonePID) +
			`,"Test":true,"Addr":{"Network":"unix","String":"` + sock + `"}}}`, []string{"no process", strconv.Itoa(gonePID)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := fastOptions()
			opts.Getenv = envOf(map[string]string{config.ReattachEnv: c.env})
			// The binary exists and would start: a developer who asked to
			// attach must not silently get a launched plugin instead.
			h, errs := start(t, configOf(plug{c.name, entry(echoAs(t, c.name))}), opts)
			wantErr(t, errs, c.name, c.fragments...)
			if len(h.Members()) != 0 {
				t.Errorf("members = %v, want none", names(h))
			}
		})
	}
	// A pinned protocol the attached plugin does not serve.
	e := entry(echoAs(t, "pinned"))
	e.Protocol = 2
	e.Reattach = &config.Reattach{Protocol: "grpc", ProtocolVersion: 1, Pid: os.Getpid(), Test: true, Network: "unix", Address: sock}
	_, errs := start(t, configOf(plug{"pinned", e}), fastOptions())
	wantErr(t, errs, "pinned", "serves protocol 1", "plugins.entries.pinned.protocol pins version 2")
}
