package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// inPluginCgroup reports whether pid runs in a cgroup the host made for a
// plugin.
func inPluginCgroup(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(b), "/hookhost-")
}

// needCgroups stops a test that needs plugin cgroups where this machine
// cannot make them (under CI that is a failure), and fails it when the
// plugin does not run in one though the host could make it.
func needCgroups(t *testing.T, pluginPID int) {
	t.Helper()
	if probe := newPluginCgroup("probe"); probe != nil {
		probe.remove()
	} else {
		msg := fmt.Sprintf("this host cannot make cgroups (%s): the kill of a plugin's cgroup cannot be tested", cgroupsUnavailable())
		// CI runs where cgroups can be made: there this is a failure.
		if testenv.InCI() {
			t.Fatal(msg)
		}
		testenv.SkipUnlessRun(t, "this host cannot make cgroups, so the kill of a plugin's cgroup cannot be tested",
			"on Linux 5.14+ with cgroup v2, "+testenv.AsRoot("./host/"), cgroupsUnavailable())
	}
	if !inPluginCgroup(pluginPID) {
		t.Errorf("plugin %d runs in no cgroup of its own, though the host can make cgroups", pluginPID)
	}
}

// removeCgroupsOf removes, when the test ends, the plugin cgroups a killed
// child host could not remove itself.
func removeCgroupsOf(t *testing.T, hostPID int) {
	t.Helper()
	t.Cleanup(func() {
		base := cgroupBase()
		if base == "" {
			return
		}
		dirs, _ := filepath.Glob(filepath.Join(base, fmt.Sprintf("hookhost-%d-*", hostPID)))
		for _, d := range dirs {
			cg := &pluginCgroup{dir: d}
			cg.kill()
			cg.remove()
		}
	})
}

// A child that leaves its plugin's process group with setsid goes with the
// plugin: when it crashes (before the restart) and when the host closes.
func TestSetsidChildGoesWithItsPlugin(t *testing.T) {
	t.Parallel()
	h, errs := Start(context.Background(), Specs(configOf(plug{"leaver", entry(echoAs(t, "leaver"))})), fastOptions())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			h.Close(context.Background())
		}
	})
	s := memberOf(t, h, 0)
	needCgroups(t, s.Status().PID)
	setsidChild := func() int {
		t.Helper()
		r, err := callDirect(s, "setsid", "", livenessTimeout)
		if err != nil || r == nil {
			t.Fatalf("setsid: %+v, %v", r, err)
		}
		pid, _ := strconv.Atoi(r.Content)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		if sid, err := sessionOf(pid); err != nil || sid != pid {
			t.Fatalf("the child %d is in session %d (%v), want its own", pid, sid, err)
		}
		return pid
	}

	child := setsidChild()
	if _, err := callDirect(s, "crash", "", livenessTimeout); err == nil {
		t.Fatal("crash: no error")
	}
	waitFor(t, "the crashed plugin's setsid child to go", func() bool { return gone(child) })
	waitFor(t, "the restart", func() bool { st := s.Status(); return st.State == StateRunning && st.Restarts == 1 })

	child = setsidChild()
	pid := s.Status().PID
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	closed = true
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Fatalf("plugin %d still runs after Close", pid)
	}
	// The cgroup was killed before Close returned; the kernel delivers
	// that SIGKILL on its own time.
	waitFor(t, "the setsid child of the closed plugin to go", func() bool { return gone(child) })
	// The plugin's cgroup is removed once empty.
	for _, l := range strings.Split(string(cg), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			dir := filepath.Join(cgroupBase(), filepath.Base(p))
			waitFor(t, "the plugin's cgroup to be removed", func() bool {
				_, err := os.Stat(dir)
				return os.IsNotExist(err)
			})
		}
	}
}

// A host that is SIGKILLed stops nothing itself: its plugin, told by the
// kernel, kills its own cgroup on the way out, setsid child included.
func TestNoSetsidChildOutlivesASIGKILLedHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "leaver2"
	if err := os.WriteFile(filepath.Join(dir, name+".spawnsetsid"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, lines := startChildHost(t, []string{startDirVar + "=" + dir}, echoAs(t, name))
	pids := waitChildHostReady(t, lines)
	children := pidsIn(filepath.Join(dir, name+".children"))
	t.Cleanup(func() {
		for _, pid := range append(pids, children...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if len(pids) != 1 || len(children) != 1 {
		t.Fatalf("child host reported plugins %v, children %v; want one of each", pids, children)
	}
	needCgroups(t, pids[0])
	if sid, err := sessionOf(children[0]); err != nil || sid != children[0] {
		t.Fatalf("the child %d is in session %d (%v), want its own", children[0], sid, err)
	}
	killHost(t, cmd)
	waitFor(t, "the plugin and its setsid child to exit", func() bool { return gone(pids[0]) && gone(children[0]) })
}

// Where the host cannot make cgroups, plugins start as before, in their
// process group only, and still go with a SIGKILLed host.
func TestPluginsRunWithoutCgroupsWhereTheHostCannotMakeThem(t *testing.T) {
	t.Parallel()
	cmd, lines := startChildHost(t, []string{cgroupBaseVar + "=" + filepath.Join(t.TempDir(), "no-cgroup-here")}, echoAs(t, "plain1"))
	pids := waitChildHostReady(t, lines)
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if len(pids) != 1 {
		t.Fatalf("child host reported pids %v", pids)
	}
	if inPluginCgroup(pids[0]) {
		t.Fatalf("plugin %d runs in a cgroup of the host's, which could make none", pids[0])
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "HOOKHOST_CGROUP=") {
		t.Fatal("the plugin was told of a cgroup it is not in")
	}
	killHost(t, cmd)
	waitFor(t, "the plugin of the killed host to exit", func() bool { return gone(pids[0]) })
}

// sessionOf reads pid's session id from /proc/<pid>/stat.
func sessionOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp session ...
	if i < 0 || len(f) < 4 {
		return 0, fmt.Errorf("cannot read /proc/%d/stat: %q", pid, b)
	}
	return strconv.Atoi(f[3])
}
