package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/llm/openai"
)

// realParts are a server over the real fronts and relay.
func realParts() parts {
	p := testParts()
	p.fronts, p.hooked, p.plain = nil, nil, nil
	return p
}

// offlineParts is realParts on the offline model, offering offline-small.
func offlineParts() parts {
	p := realParts()
	p.provider, p.models = offline.New(), []string{"offline-small"}
	return p
}

// The offline model answers on every endpoint, whole and streamed, on
// both routes (bypass: the loop with no Bus, since offline cannot be
// proxied); bad bodies get each protocol's own 400.
func TestOfflineOnEveryEndpoint(t *testing.T) {
	for _, route := range []hooks.Route{hooks.RouteGateway, hooks.RouteBypass} {
		p := offlineParts()
		p.route = route
		s := newTest(t, p)
		for _, tc := range []struct {
			path, body, header string
			wantWhole          string
			wantStream         string
			wantBad            string
		}{
			{"/v1/chat/completions", `{"model":"offline-small","messages":[{"role":"user","content":"hello"}]}`, "",
				`"object":"chat.completion"`, "data: [DONE]\n\n", `{"error":{`},
			{"/v1/responses", `{"model":"offline-small","input":"hello"}`, "",
				`"object":"response"`, "event: response.completed", `{"error":{`},
			{"/v1/messages", `{"model":"offline-small","max_tokens":100,"messages":[{"role":"user","content":"hello"}]}`, "2023-06-01",
				`"type":"message"`, "event: message_stop", `{"type":"error","error":{`},
		} {
			hdr := []string{}
			if tc.header != "" {
				hdr = []string{"anthropic-version", tc.header}
			}
			resp := post(t, s.url, tc.path, tc.body, hdr...)
			got := string(readAll(t, resp))
			if resp.StatusCode != 200 || !strings.Contains(got, tc.wantWhole) {
				t.Fatalf("%s %s whole: %d %s", route, tc.path, resp.StatusCode, got)
			}
			resp = post(t, s.url, tc.path, strings.Replace(tc.body, `"model"`, `"stream":true,"model"`, 1), hdr...)
			got = string(readAll(t, resp))
			if resp.StatusCode != 200 || !strings.Contains(got, tc.wantStream) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("%s %s stream: %d %s", route, tc.path, resp.StatusCode, got)
			}
			resp = post(t, s.url, tc.path, `{"model":`, hdr...)
			got = string(readAll(t, resp))
			if resp.StatusCode != 400 || !strings.HasPrefix(got, tc.wantBad) {
				t.Fatalf("%s %s bad JSON: %d %s", route, tc.path, resp.StatusCode, got)
			}
			resp = post(t, s.url, tc.path, strings.Replace(tc.body, "offline-small", "gpt-9", 1), hdr...)
			got = string(readAll(t, resp))
			if resp.StatusCode != 404 || !strings.HasPrefix(got, tc.wantBad) || !strings.Contains(got, "gpt-9") {
				t.Fatalf("%s %s unknown model: %d %s", route, tc.path, resp.StatusCode, got)
			}
		}
	}
}

// After a plugin tool ran, a failing upstream round gets the client a
// response that tells its SDK not to retry.
func TestNoRetryAfterAPluginToolRan(t *testing.T) {
	var ran atomic.Int32
	bus, err := hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{
		Name:  "shop",
		Tools: []hooks.ToolSpec{{Name: "shop__buy", Description: "buys", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			ran.Add(1)
			return &hooks.ToolResult{Content: "bought"}, nil
		},
	}}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	fake := fakeapi.New(t,
		fakeapi.JSON(200, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"shop__buy","arguments":"{}"}}]}}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`),
		fakeapi.JSON(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`),
	)
	prov, err := openai.New(openai.Config{BaseURL: fake.URL() + "/v1", APIKey: upstreamKey})
	if err != nil {
		t.Fatal(err)
	}
	p := realParts()
	p.provider, p.bus, p.models = prov, bus, []string{"gpt-test"}
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"buy it"}]}`)
	got := readAll(t, resp)
	if resp.StatusCode != 500 || resp.Header.Get("x-should-retry") != "false" || !strings.Contains(string(got), "The server had an error") {
		t.Fatalf("got %d x-should-retry %q %s", resp.StatusCode, resp.Header.Get("x-should-retry"), got)
	}
	if ran.Load() != 1 {
		t.Fatalf("the plugin tool ran %d times", ran.Load())
	}
	if strings.Contains(s.logs.String(), upstreamKey) || strings.Contains(string(got), upstreamKey) {
		t.Fatal("the upstream key is in the log or the response")
	}
}

// endlessChat is an upstream whose chat stream never ends: one text chunk,
// then keepalives until the request is cancelled.
func endlessChat(t *testing.T) (*fakeapi.Server, *openai.Provider) {
	fake := fakeapi.New(t, fakeapi.Endless(5*time.Millisecond,
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"thinking"},"finish_reason":null}]}`),
		fakeapi.Keepalive,
	))
	prov, err := openai.New(openai.Config{BaseURL: fake.URL() + "/v1", APIKey: upstreamKey})
	if err != nil {
		t.Fatal(err)
	}
	return fake, prov
}

// A client leaving a stream of the hook loop cancels the upstream call and
// leaves nothing in flight.
func TestClientLeavingTheHookLoopsStream(t *testing.T) {
	fake, prov := endlessChat(t)
	p := realParts()
	p.provider, p.models = prov, []string{"gpt-test"}
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"think"}]}`)
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatalf("no first byte: %v", err)
	}
	resp.Body.Close()
	select {
	case <-fake.Requests()[0].Done:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream call went on after the client left")
	}
	eventually(t, "the in-flight gauge to drop", func() bool {
		return scrape(t, s.url, "hookhost_gateway_in_flight") == "0"
	})
}

// server.request_timeout ends a stream that runs too long with the
// protocol's in-stream error.
func TestRequestDeadlineThroughTheHookLoop(t *testing.T) {
	_, prov := endlessChat(t)
	p := realParts()
	p.provider, p.models = prov, []string{"gpt-test"}
	p.server.RequestTimeout = 200 * time.Millisecond
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"think"}]}`)
	got := string(readAll(t, resp))
	if resp.StatusCode != 200 || !strings.Contains(got, `"content":"thinking"`) || !strings.Contains(got, `data: {"error":{`) || !strings.Contains(got, "server.request_timeout") {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
}

// Many requests at once, on every endpoint, whole and streamed, all get
// their answer (and -race watches the server's shared state).
func TestManyRequestsAtOnce(t *testing.T) {
	p := offlineParts()
	p.server.MaxConcurrent = 64
	s := newTest(t, p)
	bodies := map[string]string{
		"/v1/chat/completions": `{"model":"offline-small","messages":[{"role":"user","content":"hello"}]}`,
		"/v1/responses":        `{"model":"offline-small","input":"hello"}`,
		"/v1/messages":         `{"model":"offline-small","max_tokens":100,"messages":[{"role":"user","content":"hello"}]}`,
	}
	var wg sync.WaitGroup
	failed := make(chan string, 48)
	for i := range 48 {
		for path, body := range bodies {
			if i%3 != len(path)%3 {
				continue
			}
			if i%2 == 0 {
				body = strings.Replace(body, `"model"`, `"stream":true,"model"`, 1)
			}
			wg.Go(func() {
				resp, err := http.Post(s.url+path, "application/json", strings.NewReader(body))
				if err != nil {
					failed <- fmt.Sprintf("%s: %v", path, err)
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || err != nil {
					failed <- fmt.Sprintf("%s: %d %v %s", path, resp.StatusCode, err, got)
				}
			})
		}
	}
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	if got := scrape(t, s.url, "hookhost_gateway_in_flight"); got != "0" {
		t.Errorf("in flight %q after every request ended", got)
	}
}
