package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeAskOnTheGatewayRoute serves the gateway route with a real plugin
// process that answers ask on every tool call, streamed and not: a call of
// the client's own tool goes back to the client, whose own permission flow
// decides; the plugin's own tool, run by hookhost, is blocked with the
// reason by default and runs with server.on_ask = "allow".
func TestServeAskOnTheGatewayRoute(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	plugins := buildDecider(t, "asker")
	const reason = "asker wants a person to approve asker__stamp"
	for _, onAsk := range []string{"", "block", "allow"} {
		t.Run("on_ask="+onAsk, func(t *testing.T) {
			server := ""
			if onAsk != "" {
				server = fmt.Sprintf("[server]\non_ask = %q\n", onAsk)
			}
			base, _, _, sigs, done := startServe(t, serveConfig+`
[plugins]
enabled = ["asker"]
dir = "`+plugins+`"

[plugins.entries.asker.config]
default = "ask"
`+server)
			defer func() {
				sigs <- syscall.SIGTERM
				select {
				case <-done:
				case <-time.After(time.Minute):
					t.Error("serve did not return within a minute of SIGTERM")
				}
			}()
			for _, stream := range []bool{false, true} {
				// The plugin's tool: hookhost runs it, or blocks it.
				body := completion(t, base, stream, `{"model":"offline-large","stream":%t,"messages":[{"role":"user","content":"stamp my arguments"}]}`)
				if onAsk == "allow" {
					if !strings.Contains(body, "stamped_by") {
						t.Errorf("stream=%t: the allowed plugin tool did not run; body:\n%s", stream, body)
					}
				} else if !strings.Contains(body, "blocked: approval required: "+reason) || strings.Contains(body, "stamped_by") {
					t.Errorf("stream=%t: the plugin tool was not blocked with the reason; body:\n%s", stream, body)
				}
				// The client's tool: back to the client, arguments intact.
				body = completion(t, base, stream, `{"model":"offline-large","stream":%t,"messages":[{"role":"user","content":"read the file notes.txt"}],`+
					`"tools":[{"type":"function","function":{"name":"read_file","description":"read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]}`)
				if !strings.Contains(body, `read_file`) || !strings.Contains(body, `tool_calls`) || strings.Contains(body, "approval required") {
					t.Errorf("stream=%t: the client's call did not come back to it; body:\n%s", stream, body)
				}
			}
		})
	}
}

// completion posts a chat completion, the body format's %t being stream,
// and returns the response body.
func completion(t *testing.T, base string, stream bool, format string) string {
	t.Helper()
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(fmt.Sprintf(format, stream)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat completion: %d %s", resp.StatusCode, body)
	}
	if !stream && !json.Valid(body) {
		t.Fatalf("chat completion: not JSON: %s", body)
	}
	return string(body)
}
