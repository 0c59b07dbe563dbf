package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway"
	"github.com/hookhost/hookhost/internal/decisionlog"
)

// guardTraceConfig runs the guard on the gateway route, refusing to read
// .env, with the decision log written to logFile; deny is the guard's
// rule's args_match.
func guardTraceConfig(plugins, logFile, deny string) string {
	return `[llm]
provider = "offline"
model = "offline-large"
[routing]
gateway = true
[plugins]
enabled = ["guard"]
dir = "` + plugins + `"
[plugins.entries.guard.config]
deny = [{ tool = "read_file", args_match = '` + deny + `', reason = "secrets stay out" }]
[trace]
file = "` + logFile + `"
`
}

// readLog returns the entries of the decision log at path, by request id.
func readLog(t *testing.T, path string) map[string][]decisionlog.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]decisionlog.Entry{}
	if err := decisionlog.Read(f, func(_ int, e decisionlog.Entry) error {
		out[e.RequestID] = append(out[e.RequestID], e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every response of hookhost serve, plain, streamed or an error, names its
// request; the decision log files that request's hook calls under the same
// id.
func TestServeResponsesNameTheirRequestInTheDecisionLog(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	base, _, _, sigs, done := startServe(t, guardTraceConfig(buildGuard(t), logFile, `\.env`))

	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	// The client offers read_file; the guard sees the model's call of it.
	const tools = `"tools":[{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`
	plain, body := post(`{"model":"offline-large",` + tools + `,"messages":[{"role":"user","content":"read the file .env"}]}`)
	if plain.StatusCode != http.StatusOK || !strings.Contains(body, "secrets stay out") {
		t.Fatalf("plain: %d %s", plain.StatusCode, body)
	}
	streamed, body := post(`{"model":"offline-large","stream":true,` + tools + `,"messages":[{"role":"user","content":"read the file .env please"}]}`)
	if streamed.StatusCode != http.StatusOK || !strings.Contains(streamed.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(body, "data: [DONE]") {
		t.Fatalf("streamed: %d %s %s", streamed.StatusCode, streamed.Header.Get("Content-Type"), body)
	}
	bad, body := post(`{"model":`)
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad body: %d %s", bad.StatusCode, body)
	}
	missing, err := http.Get(base + "/v1/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	missing.Body.Close()

	ids := map[string]bool{}
	for name, resp := range map[string]*http.Response{"plain": plain, "streamed": streamed, "bad request": bad, "not found": missing} {
		id := resp.Header.Get(gateway.RequestIDHeader)
		if !strings.HasPrefix(id, "req_") || ids[id] {
			t.Errorf("%s response: %s = %q, want a fresh request id", name, gateway.RequestIDHeader, id)
		}
		ids[id] = true
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
	byRequest := readLog(t, logFile)
	for name, resp := range map[string]*http.Response{"plain": plain, "streamed": streamed} {
		id := resp.Header.Get(gateway.RequestIDHeader)
		var blocked bool
		for _, e := range byRequest[id] {
			blocked = blocked || (e.Plugin == "guard" && e.Hook == "pre_tool_call" && strings.Contains(string(e.Answer), "secrets stay out"))
		}
		if !blocked {
			t.Errorf("%s: the decision log has no guard block under %s: %+v", name, id, byRequest[id])
		}
	}
	if n := len(byRequest[bad.Header.Get(gateway.RequestIDHeader)]); n != 0 {
		t.Errorf("a request refused before any hook has %d entries", n)
	}
}

// chat -v shows each plugin hook call at DEBUG, as the log records it.
func TestChatVerboseShowsEachDecision(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "decisions.jsonl")
	cfg := writeConfig(t, guardTraceConfig(buildGuard(t), logFile, `\.env`))
	code, out, errOut := runCLI(t, "", "chat", "-v", "-c", cfg, "read the file .env")
	if code != 0 || !strings.Contains(out, "secrets stay out") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, `[DEBUG] hookhost.decision: guard pre_tool_call → answer {"block":{"message":"blocked by guard: secrets stay out`) {
		t.Errorf("stderr does not show the guard's decision:\n%s", errOut)
	}
	code, _, errOut = runCLI(t, "", "chat", "-c", cfg, "read the file .env")
	if code != 0 || strings.Contains(errOut, "hookhost.decision") {
		t.Errorf("without -v, decisions are shown (exit %d):\n%s", code, errOut)
	}
}
