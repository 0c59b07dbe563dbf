package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway"
)

// The guard plugin, a process of its own, is told over the wire where a
// call goes: on the gateway route a rule keyed by origin "client" blocks
// the client's own read_file, and the decision log records that origin;
// in chat the same name is the host's native tool, which the rule lets
// through.
func TestGuardSeesTheClientsOriginOverTheWire(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	src := `[llm]
provider = "offline"
model = "offline-large"
[routing]
gateway = true
[tools]
read_root = "` + t.TempDir() + `"
[plugins]
enabled = ["guard"]
dir = "` + buildGuard(t) + `"
[plugins.entries.guard.config]
deny = [{ origin = "client", tool = "read_file", reason = "the client's files stay with the client" }]
[trace]
file = "` + logFile + `"
`
	base, _, _, sigs, done := startServe(t, src)
	const tools = `"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"offline-large",`+tools+`,"messages":[{"role":"user","content":"read the file notes.txt"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "the client's files stay with the client") {
		t.Fatalf("the client's read_file: %d %s, want the guard's block", resp.StatusCode, body)
	}
	sigs <- os.Interrupt
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
	var origins []string
	for _, e := range readLog(t, logFile)[resp.Header.Get(gateway.RequestIDHeader)] {
		if e.Plugin == "guard" && e.Hook == "pre_tool_call" {
			var in struct{ Name, Origin string }
			if err := json.Unmarshal(e.Input, &in); err != nil {
				t.Fatal(err)
			}
			origins = append(origins, in.Name+" "+in.Origin)
		}
	}
	if len(origins) != 1 || origins[0] != "read_file client" {
		t.Errorf("the decision log has the guard asked about %q, want read_file from the client", origins)
	}

	code, out, errOut := runCLI(t, "", "chat", "-v", "-c", writeConfig(t, src), "read the file notes.txt")
	if code != 0 || strings.Contains(out, "stay with the client") || !strings.Contains(errOut, `tool read_file({"path":"notes.txt"}) [native] → native`) {
		t.Errorf("chat's native read_file: exit %d\n%s\n%s", code, out, errOut)
	}
}
