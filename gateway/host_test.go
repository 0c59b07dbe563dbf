package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// hostServer opens a real host from the config text src (an OpenAI-speaking
// upstream at fake, max_retries 0, and whatever src adds), builds the
// gateway with New, and serves it until the test ends.
func hostServer(t *testing.T, src string) (*Server, string) {
	t.Helper()
	cfg, err := config.Parse([]byte(src), "hookhost.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := hookhost.Open(ctx, cfg, hookhost.Options{Getenv: func(k string) string {
		if k == "UPSTREAM_KEY" {
			return upstreamKey
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	if errs := h.StartErrors(); len(errs) > 0 {
		t.Fatalf("plugins did not start: %v", errs)
	}
	s, err := New(h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, s)
	return s, "http://" + addr
}

func upstreamConfig(base string, gateway bool) string {
	return fmt.Sprintf(`
[llm]
provider = "openai"
model = "gpt-test"
base_url = %q
api_key_env = "UPSTREAM_KEY"
max_retries = 0
[routing]
gateway = %v
[server]
listen = "127.0.0.1:0"
`, base, gateway)
}

// Through the real fronts and relay, an upstream 429 or 500 reaches the
// client with its status, its message and the endpoint's error shape.
func TestUpstreamErrorsThroughTheHookLoop(t *testing.T) {
	fake := fakeapi.New(t,
		fakeapi.JSON(429, `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}}`),
		fakeapi.JSON(500, `{"error":{"message":"The server had an error while processing your request","type":"server_error","param":null,"code":null}}`),
		fakeapi.JSON(429, `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}}`),
	)
	_, url := hostServer(t, upstreamConfig(fake.URL()+"/v1", true))
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`
	for _, want := range []struct {
		status int
		msg    string
	}{{429, "Rate limit reached"}, {500, "The server had an error"}} {
		resp := post(t, url, "/v1/chat/completions", body)
		got := readAll(t, resp)
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if resp.StatusCode != want.status || json.Unmarshal(got, &e) != nil || !strings.Contains(e.Error.Message, want.msg) || e.Error.Type == "" {
			t.Fatalf("got %d %s, want %d in OpenAI's shape with %q", resp.StatusCode, got, want.status, want.msg)
		}
		if strings.Contains(string(got), upstreamKey) {
			t.Fatalf("the upstream key reached the client: %s", got)
		}
	}
	// Anthropic's shape on /v1/messages, from the same OpenAI upstream.
	resp := post(t, url, "/v1/messages", `{"model":"gpt-test","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	got := readAll(t, resp)
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != 429 || json.Unmarshal(got, &e) != nil || e.Type != "error" || e.Error.Type != "rate_limit_error" {
		t.Fatalf("got %d %s, want 429 in Anthropic's shape", resp.StatusCode, got)
	}
	if seen := fake.Requests(); seen[0].Header.Get("Authorization") != "Bearer "+upstreamKey {
		t.Fatalf("upstream got Authorization %q", seen[0].Header.Get("Authorization"))
	}
}

// buildPlugin builds the test plugin into dir and returns its path.
func buildPlugin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "victim")
	cmd := exec.Command("go", "build", "-o", bin, "./internal/testplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	return bin
}

// A plugin SIGKILLed while its tool runs for a streamed request degrades to
// the failure rule: the client still gets a whole, valid answer.
func TestPluginKilledMidStream(t *testing.T) {
	dir := t.TempDir()
	bin := buildPlugin(t, dir)
	toolCall := fakeapi.SSE(
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me check. "},"finish_reason":null}]}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"victim__work","arguments":"{}"}}]},"finish_reason":null}]}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`),
		fakeapi.Data(`[DONE]`),
	)
	finalAnswer := fakeapi.SSE(
		fakeapi.Data(`{"id":"c2","object":"chat.completion.chunk","created":2,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"The work could not be done."},"finish_reason":null}]}`),
		fakeapi.Data(`{"id":"c2","object":"chat.completion.chunk","created":2,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
		fakeapi.Data(`{"id":"c2","object":"chat.completion.chunk","created":2,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":6,"total_tokens":26}}`),
		fakeapi.Data(`[DONE]`),
	)
	fake := fakeapi.New(t, toolCall, finalAnswer)
	s, url := hostServer(t, upstreamConfig(fake.URL()+"/v1", true)+fmt.Sprintf(`
[plugins]
enabled = ["victim"]
[plugins.entries.victim]
path = %q
tool_timeout = "5m"
[plugins.entries.victim.config]
dir = %q
`, bin, dir))

	done := make(chan answer, 1)
	go func() {
		done <- postAside(url, "/v1/chat/completions",
			`{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"do the work"}]}`)
	}()

	pidFile := filepath.Join(dir, "work.pid")
	var pid int
	eventually(t, "the plugin's tool to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing the plugin: %v", err)
	}

	var r answer
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the request did not end after its plugin was killed")
	}
	if r.err != nil || r.code != 200 {
		t.Fatalf("got %d %v, want a 200 stream:\n%s", r.code, r.err, r.body)
	}
	// The first round's text went out before the plugin died.
	if !strings.Contains(r.body, `"content":"Let me check. "`) || !strings.Contains(r.body, "The work could not be done.") || !strings.HasSuffix(r.body, "data: [DONE]\n\n") || strings.Contains(r.body, `"error"`) {
		t.Fatalf("the stream is not a whole answer:\n%s", r.body)
	}
	seen := fake.Requests()
	if len(seen) != 2 || !strings.Contains(string(seen[1].Body), `"tool_call_id":"call_1"`) {
		t.Fatalf("upstream saw %d requests; the second should carry the tool's result:\n%s", len(seen), seen[len(seen)-1].Body)
	}
	// The supervisor notices the death and brings the plugin back.
	eventually(t, "the plugin to be restarted", func() bool {
		for _, p := range s.p.plugins() {
			if p.Name == "victim" && p.Restarts > 0 && p.State == host.StateRunning {
				return true
			}
		}
		return false
	})
	if got := scrape(t, url, `hookhost_plugin_restarts_total{plugin="victim"}`); got == "" || got == "0" {
		t.Errorf("restarts on /metrics: %q", got)
	}
	if got := scrape(t, url, `hookhost_gateway_tool_calls_total{how="plugin"}`); got != "1" {
		t.Errorf("plugin tool calls on /metrics: %q", got)
	}
	if got := scrape(t, url, `hookhost_gateway_upstream_rounds_total{protocol="openai-chat"}`); got != "2" {
		t.Errorf("upstream rounds on /metrics: %q", got)
	}
}

// The inbound keys are read from the environment the host was opened with,
// so a program embedding hookhost can supply them without os.Setenv.
func TestInboundKeysComeFromTheHostsEnvironment(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	_, url := hostServer(t, upstreamConfig(fake.URL()+"/v1", true)+"api_key_env = \"UPSTREAM_KEY\"\n")
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`
	for key, want := range map[string]int{"": 401, "wrong": 401, upstreamKey: 200} {
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("key %q: status %d, want %d", key, resp.StatusCode, want)
		}
	}
}

// An upstream 429's Retry-After reaches the client on the gateway route,
// so the SDK waits as long as the upstream asked before it retries.
func TestUpstreamRetryAfterReachesTheClient(t *testing.T) {
	e429 := `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	fake := fakeapi.New(t,
		fakeapi.JSON(429, e429, "Retry-After", "7"),
		fakeapi.JSON(429, e429),
	)
	_, url := hostServer(t, upstreamConfig(fake.URL()+"/v1", true))
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"hi"}]}`
	for _, want := range []string{"7", ""} {
		resp := post(t, url, "/v1/chat/completions", body)
		readAll(t, resp)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != want {
			t.Errorf("got %d with Retry-After %q, want 429 with %q", resp.StatusCode, resp.Header.Get("Retry-After"), want)
		}
	}
}
