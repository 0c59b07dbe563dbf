package python

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestPluginIsNotDumpable: a Python plugin marks itself non-dumpable when
// the SDK is imported, so that the secrets its env list hands it are not
// readable by other processes of its user in /proc/<pid>/environ. It runs
// as a user other than root here (from root, as nobody), since a root
// process's /proc files are root's either way; the kernel makes them root's
// once a process is not dumpable.
func TestPluginIsNotDumpable(t *testing.T) {
	needPython(t)
	sockDir, err := os.MkdirTemp("", "hookhost-py-dumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	cmd := exec.Command(abs(t, "conform/conform.py"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		if err := os.Chown(sockDir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	cmd.Env = []string{
		"HOOKHOST_PLUGIN=d3c1b0a2-hookhost-plugin-v1",
		"PLUGIN_PROTOCOL_VERSIONS=1,2",
		"PLUGIN_CLIENT_CERT=" + selfSignedPEM(t),
		"PLUGIN_UNIX_SOCKET_DIR=" + sockDir,
		fmt.Sprintf("HOOKHOST_HOST_PID=%d", os.Getpid()),
		"CONFORM_SECRET=hunter2",
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("no handshake line: %v (%q)", err, line)
	}

	dir := fmt.Sprintf("/proc/%d", cmd.Process.Pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		t.Fatal(err)
	}
	euid := -1
	for _, l := range strings.Split(string(status), "\n") {
		if f, ok := strings.CutPrefix(l, "Uid:"); ok {
			euid, _ = strconv.Atoi(strings.Fields(f)[1])
		}
	}
	if euid <= 0 {
		t.Fatalf("the plugin runs as uid %d, want a user other than root", euid)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir+"/environ", &st); err != nil {
		t.Fatal(err)
	}
	if int(st.Uid) == euid {
		t.Fatalf("%s/environ belongs to the plugin's user %d: the plugin is dumpable, its secrets readable by every process of that user", dir, euid)
	}
}
