package mcpgate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestUpstreamNamespacesToolsAndNegotiates(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	spec.Tools = []string{"echo", "dotted.*", "rich"}
	u := startUpstream(t, spec, Options{})
	st := u.Status()
	if st.State != StateRunning || st.Transport != "stdio" || st.PID == 0 {
		t.Fatalf("status = %+v", st)
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), st.Protocol) {
		t.Fatalf("negotiated protocol %q is none the SDK speaks", st.Protocol)
	}
	t.Logf("negotiated protocol version over stdio: %s", st.Protocol)
	if want := []string{"fake__dotted__name", "fake__echo", "fake__rich"}; !slices.Equal(st.Tools, want) {
		t.Fatalf("tools = %v, want %v (allowlist and namespacing)", st.Tools, want)
	}
	res, err := u.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"hi"}`), nil)
	if err != nil || textOf(res) != "echo: hi" {
		t.Fatalf("echo = %v, %v", res, err)
	}
	if got := calls(t, logFile); !slices.Equal(got, []string{`call echo {"text":"hi"}`}) {
		t.Fatalf("server saw %q", got)
	}
}

func TestUpstreamRefusesToolsThatCollideAfterNamespacing(t *testing.T) {
	spec, _ := fake(t, "clash", "collide")
	u, err := New(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close(context.Background())
	err = u.Start(context.Background())
	if err == nil {
		t.Fatal("a server whose tools collide was accepted")
	}
	for _, want := range []string{`"a.b"`, `"a__b"`, `"clash__a__b"`, `mcp server "clash"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
	if _, err := u.CallTool(context.Background(), "a.b", nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("call to a refused server = %v, want ErrUnavailable", err)
	}
}

func TestUpstreamTimeoutNamesServerAndRelaysCancellation(t *testing.T) {
	spec, logFile := fake(t, "slow", "normal")
	spec.Timeout = 300 * time.Millisecond
	u := startUpstream(t, spec, Options{})
	_, err := u.CallTool(context.Background(), "hang", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "slow"`) || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Fatalf("hung call = %v", err)
	}
	eventually(t, "the server to see the call cancelled", func() bool {
		return slices.Contains(calls(t, logFile), "cancelled hang")
	})
	res, err := u.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"still here"}`), nil)
	if err != nil || textOf(res) != "echo: still here" {
		t.Fatalf("call after a timeout = %v, %v", res, err)
	}
}

func TestUpstreamErrorResultIsAResult(t *testing.T) {
	spec, _ := fake(t, "f", "normal")
	u := startUpstream(t, spec, Options{})
	res, err := u.CallTool(context.Background(), "fails", nil, nil)
	if err != nil || !res.IsError || textOf(res) != "disk full" {
		t.Fatalf("fails = %+v, %v", res, err)
	}
	_, err = u.CallTool(context.Background(), "nosuch", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "f": tool "nosuch"`) {
		t.Fatalf("unknown tool = %v", err)
	}
}

// restartsAfter has the server fail one call with what, then checks that
// the error names the server and that the server comes back.
func restartsAfter(t *testing.T, tool string, wantErr ...string) {
	spec, _ := fake(t, "flaky", "normal")
	spec.MaxResultSize = 1 << 20
	u := startUpstream(t, spec, Options{BackoffInitial: time.Millisecond})
	pidBefore := u.Status().PID

	_, err := u.CallTool(context.Background(), tool, nil, nil)
	if err == nil {
		t.Fatalf("%s: no error", tool)
	}
	for _, want := range append([]string{`mcp server "flaky"`}, wantErr...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not say %q", tool, err, want)
		}
	}
	eventually(t, "the server to be restarted", func() bool {
		st := u.Status()
		return st.State == StateRunning && st.PID != pidBefore && st.PID != 0
	})
	if !processGone(pidBefore) {
		t.Errorf("the first server process %d is still there", pidBefore)
	}
	res, err := u.CallTool(context.Background(), "pid", nil, nil)
	if err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	if got, _ := strconv.Atoi(textOf(res)); got == pidBefore || got == 0 {
		t.Fatalf("answered by pid %s, first server was %d", textOf(res), pidBefore)
	}
	if st := u.Status(); st.Restarts < 1 {
		t.Fatalf("restarts = %d", st.Restarts)
	}
}

func TestUpstreamKilledMidCallRestarts(t *testing.T) {
	restartsAfter(t, "crash", "lost the server during the call")
}

func TestUpstreamGarbageRestarts(t *testing.T) {
	restartsAfter(t, "garbage", `"garbage"`)
}

func TestUpstreamHugeResultIsBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	restartsAfter(t, "huge", "over 1048576 bytes", "max_result_size")
	runtime.ReadMemStats(&after)
	// The server wrote 64 MiB; reading it whole would allocate at least
	// that much.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("the host allocated %d MiB for a result bounded to 1 MiB", grew>>20)
	}
}

func TestUpstreamResultOverLimitWithinFrame(t *testing.T) {
	spec, _ := fake(t, "tight", "normal")
	spec.MaxResultSize = 40 // the rich result is larger, the slack lets its message through
	u := startUpstream(t, spec, Options{})
	_, err := u.CallTool(context.Background(), "rich", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "over the limit of 40") {
		t.Fatalf("rich over 40 bytes = %v", err)
	}
	if st := u.Status(); st.State != StateRunning {
		t.Fatalf("a result over the limit took the server down: %+v", st)
	}
}

func TestUpstreamEndlessProgressIsBounded(t *testing.T) {
	spec, _ := fake(t, "busy", "normal")
	spec.Timeout = 500 * time.Millisecond
	u := startUpstream(t, spec, Options{})
	var got atomic.Int64
	_, err := u.CallTool(context.Background(), "progress", nil, func(p *mcp.ProgressNotificationParams) {
		if p.Message == "working" {
			got.Add(1)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("endless progress = %v", err)
	}
	if got.Load() == 0 {
		t.Fatal("no progress notification was relayed")
	}
}

func TestUpstreamCloseLeavesNoProcess(t *testing.T) {
	spec, _ := fake(t, "parent", "normal")
	u, err := New(spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := u.Status().PID
	res, err := u.CallTool(context.Background(), "child", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(textOf(res))
	if child == 0 || processGone(child) {
		t.Fatalf("the server's child did not start: %q", textOf(res))
	}
	if err := u.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		t.Errorf("server %d outlived Close", pid)
	}
	eventually(t, "the server's child to be gone", func() bool { return processGone(child) })
	if st := u.Status(); st.State != StateStopped || st.PID != 0 {
		t.Fatalf("status after Close = %+v", st)
	}
	if _, err := u.CallTool(context.Background(), "echo", nil, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("call after Close = %v", err)
	}
}

func TestUpstreamCircuitOpens(t *testing.T) {
	spec := ServerSpec{Name: "broken", Command: "/bin/false"}
	u, err := New(spec, Options{BackoffInitial: time.Millisecond, BackoffMax: time.Millisecond, CircuitFailures: 2, CircuitCooldown: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close(context.Background())
	if err := u.Start(context.Background()); err == nil || !strings.Contains(err.Error(), `mcp server "broken"`) {
		t.Fatalf("start of /bin/false = %v", err)
	}
	eventually(t, "the circuit to open", func() bool { return u.Status().State == StateCircuitOpen })
	_, err = u.CallTool(context.Background(), "x", nil, nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "circuit_open") {
		t.Fatalf("call with the circuit open = %v", err)
	}
	if st := u.Status(); st.Restarts != 2 || !strings.Contains(st.Reason, "exited") {
		t.Fatalf("status = %+v", st)
	}
}

func TestServerEnvIsScrubbed(t *testing.T) {
	t.Setenv("MCPGATE_PASSED", "yes")
	t.Setenv("MCPGATE_SECRET", "no")
	env := serverEnv([]string{"MCPGATE_PASSED", "MCPGATE_UNSET"})
	if !slices.Equal(env, []string{"MCPGATE_PASSED=yes"}) {
		t.Fatalf("env = %q", env)
	}
	if env := serverEnv(nil); env == nil || len(env) != 0 {
		t.Fatalf("no names gives %q; nil would pass the whole environment", env)
	}
}

func TestSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		spec ServerSpec
		want string
	}{
		{ServerSpec{Name: "a__b", Command: "x"}, `mcp.servers.a__b: server name "a__b" cannot namespace tools`},
		{ServerSpec{Name: "a"}, "mcp.servers.a: neither command nor url is set"},
		{ServerSpec{Name: "a", Command: "x", URL: "http://h/"}, "mcp.servers.a.url: both command and url are set"},
		{ServerSpec{Name: "a", URL: "ftp://h/"}, `mcp.servers.a.url: "ftp://h/" is not an http(s) URL`},
		{ServerSpec{Name: "a", Command: "x", Headers: map[string]string{"X": "1"}}, "mcp.servers.a.headers: headers apply to a url server only"},
		{ServerSpec{Name: "a", URL: "http://h/", BearerTokenEnv: "T", Headers: map[string]string{"authorization": "x"}}, "Authorization is set both here and by bearer_token_env"},
		{ServerSpec{Name: "a", Command: "x", Tools: []string{"["}}, `mcp.servers.a.tools: "[" is not a valid glob`},
		{ServerSpec{Name: "a", Command: "x", Env: []string{"A=B"}}, `mcp.servers.a.env: "A=B" is not an environment variable name`},
		{ServerSpec{Name: "a", Command: "x", Timeout: -1}, "mcp.servers.a.timeout: negative duration"},
	} {
		err := tc.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
	if err := (ServerSpec{Name: "git-hub_1", URL: "https://h/mcp", BearerTokenEnv: "T"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestNamespacedName(t *testing.T) {
	if n, ok := NamespacedName("gh", "repos.list"); !ok || n != "gh__repos__list" {
		t.Fatalf("got %q %v", n, ok)
	}
	if _, ok := NamespacedName("gh", strings.Repeat("x", 61)); ok {
		t.Fatal("a name over 64 characters was accepted")
	}
	if _, ok := NamespacedName("gh", "a/b"); ok {
		t.Fatal("a name with '/' was accepted")
	}
}

// processGone reports whether pid is gone (a zombie is not).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestServerDiesWithTheHost SIGKILLs a host process (no Close, no
// cleanup) and checks that the kernel takes its server down with it.
func TestServerDiesWithTheHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's; elsewhere a server sees its stdin close")
	}
	host := exec.Command(os.Args[0], hostMarker, filepath.Join(t.TempDir(), "calls.log"))
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = host.Process.Kill()
		t.Fatalf("the host printed no server pid: %v", err)
	}
	server, _ := strconv.Atoi(strings.TrimSpace(line))
	if server == 0 || processGone(server) {
		t.Fatalf("no server running: %q", line)
	}
	_ = host.Process.Kill()
	_ = host.Wait()
	eventually(t, "the server to die with its host", func() bool { return processGone(server) })
}

// TestUpstreamStoppedServerDoesNotHangTheCaller stops the server (SIGSTOP:
// it reads nothing more) and sends it more than a pipe holds: the write
// blocks, yet the call returns after its deadline, and the server, taken
// for hung, is replaced.
func TestUpstreamStoppedServerDoesNotHangTheCaller(t *testing.T) {
	spec, _ := fake(t, "stopped", "normal")
	spec.Timeout = 300 * time.Millisecond
	u := startUpstream(t, spec, Options{BackoffInitial: time.Millisecond})
	pid := u.Status().PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": strings.Repeat("y", 4<<20)})
	_, err := u.CallTool(context.Background(), "echo", args, nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "stopped": tool "echo" did not answer within 300ms`) {
		t.Fatalf("call to a stopped server = %v", err)
	}
	eventually(t, "the stopped server to be replaced", func() bool {
		st := u.Status()
		return st.State == StateRunning && st.PID != pid && st.PID != 0
	})
	eventually(t, "the stopped server to be gone", func() bool { return processGone(pid) })
	if res, err := u.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"back"}`), nil); err != nil || textOf(res) != "echo: back" {
		t.Fatalf("call after the replacement = %v, %v", res, err)
	}
}
