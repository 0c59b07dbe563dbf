package gateway

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
)

const (
	inboundKey  = "sk-inbound-7f3a9c1e5b"
	inboundKey2 = "sk-second-0d2e4f6a8c"
)

func TestInboundKeys(t *testing.T) {
	p := testParts()
	p.server.APIKeyEnv = "GATEWAY_KEYS"
	p.getenv = func(k string) string {
		if k == "GATEWAY_KEYS" {
			return inboundKey + "," + inboundKey2
		}
		return ""
	}
	s := newTest(t, p)
	var seen strings.Builder
	for _, tc := range []struct {
		name   string
		header []string
		ok     bool
	}{
		{"no key", nil, false},
		{"wrong bearer", []string{"Authorization", "Bearer " + inboundKey + "x"}, false},
		{"wrong x-api-key", []string{"x-api-key", inboundKey[:10]}, false},
		{"key without Bearer", []string{"Authorization", inboundKey}, false},
		{"empty bearer", []string{"Authorization", "Bearer "}, false},
		{"bearer", []string{"Authorization", "Bearer " + inboundKey}, true},
		{"lower-case bearer", []string{"Authorization", "bearer " + inboundKey2}, true},
		{"x-api-key", []string{"x-api-key", inboundKey2}, true},
		{"wrong bearer, right x-api-key", []string{"Authorization", "Bearer nope", "x-api-key", inboundKey}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/chat/completions", "/v1/messages"} {
				resp := post(t, s.url, path, chatBody, tc.header...)
				if tc.ok {
					body := readAll(t, resp)
					seen.Write(body)
					if resp.StatusCode != 200 {
						t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
					}
					continue
				}
				msg := wantFrontError(t, resp, 401, path, "authentication_error")
				seen.WriteString(msg)
				if !strings.Contains(msg, "server.api_key_env") {
					t.Errorf("401 message %q should say where keys come from", msg)
				}
			}
			req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/models", nil)
			for i := 0; i+1 < len(tc.header); i += 2 {
				req.Header.Set(tc.header[i], tc.header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			seen.Write(readAll(t, resp))
			if (resp.StatusCode == 200) != tc.ok {
				t.Fatalf("/v1/models: %d", resp.StatusCode)
			}
		})
	}
	// Health, readiness and metrics are for the operator's probes, which
	// carry no key.
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		seen.Write(body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s without a key: %d", path, resp.StatusCode)
		}
	}
	all := seen.String() + s.logs.String()
	if !strings.Contains(all, `rejected_total{reason="auth"}`) {
		t.Fatalf("/metrics does not count the refused keys:\n%s", seen.String())
	}
	for _, k := range []string{inboundKey, inboundKey2, inboundKey[:10]} {
		if strings.Contains(all, k) {
			t.Fatalf("a key appears in a response, /metrics or the log:\n%s", all)
		}
	}
}

func TestLoopErrorsReachTheClient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		status   int
		typ      string
		inMsg    string
		retryOff bool
	}{
		{name: "dialect error as is", err: &relay.Error{Err: dialect.Invalid("tools", "tools[0] has no name")}, status: 400, typ: "invalid_request_error", inMsg: "tools[0] has no name"},
		{name: "upstream 429", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 429, Message: "slow down"}}, status: 429, typ: "rate_limit_error", inMsg: "slow down"},
		{name: "upstream 500", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 500, Message: "boom"}}, status: 500, typ: "api_error", inMsg: "boom"},
		{name: "upstream 529", err: &relay.Error{Err: &llm.ProviderError{Provider: "anthropic", StatusCode: 529, Message: "Overloaded"}}, status: 529, typ: "overloaded_error", inMsg: "Overloaded"},
		{name: "upstream 503", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 503}}, status: 503, typ: "overloaded_error", inMsg: "HTTP 503"},
		{name: "upstream 400", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 400, Message: "bad schema"}}, status: 400, typ: "invalid_request_error", inMsg: "bad schema"},
		{name: "upstream refuses hookhost's key", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 401, Message: "invalid key"}}, status: 502, typ: "api_error", inMsg: "llm.api_key_env"},
		{name: "upstream unreachable", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}}, status: 502, typ: "api_error", inMsg: "connection refused"},
		{name: "host failure after a plugin tool ran", err: &relay.Error{Err: errors.New("store full"), ToolsRan: true}, status: 500, typ: "api_error", inMsg: "store full", retryOff: true},
		{name: "upstream 500 after a plugin tool ran", err: &relay.Error{Err: &llm.ProviderError{Provider: "openai", StatusCode: 500}, ToolsRan: true}, status: 500, typ: "api_error", retryOff: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testParts()
			p.hooked = runFunc(func(context.Context, dialect.Front, *dialect.Call, dialect.Sink) (*dialect.Result, error) {
				return nil, tc.err
			})
			s := newTest(t, p)
			for _, body := range []string{chatBody, strings.Replace(chatBody, `"model"`, `"stream":true,"model"`, 1)} {
				resp := post(t, s.url, "/v1/responses", body)
				msg := wantFrontError(t, resp, tc.status, "/v1/responses", tc.typ)
				if !strings.Contains(msg, tc.inMsg) {
					t.Errorf("message %q should contain %q", msg, tc.inMsg)
				}
				if got := resp.Header.Get("x-should-retry"); (got == "false") != tc.retryOff {
					t.Errorf("x-should-retry %q", got)
				}
				if ra := resp.Header.Get("Retry-After"); ra != "" {
					t.Errorf("retry-after %q: the gateway cannot know when the upstream will take requests again", ra)
				}
			}
		})
	}
}

// An error once the stream has started goes in-band, through the sink.
func TestErrorAfterStreamStartGoesInBand(t *testing.T) {
	p := testParts()
	p.hooked = runFunc(func(_ context.Context, _ dialect.Front, _ *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		sink.Text("partial")
		return nil, &relay.Error{Err: &llm.ProviderError{Provider: "anthropic", StatusCode: 529, Message: "Overloaded"}, ToolsRan: true}
	})
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/messages", `{"model":"m1","stream":true,"messages":[]}`)
	body := string(readAll(t, resp))
	if resp.StatusCode != 200 || !strings.Contains(body, "event: text\ndata: \"partial\"") ||
		!strings.Contains(body, "event: error\ndata: {\"Status\":529,\"Type\":\"overloaded_error\"") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestRequestDeadline(t *testing.T) {
	p := testParts()
	// The runner waits for the deadline, however late it fires.
	p.server.RequestTimeout = 50 * time.Millisecond
	p.hooked = runFunc(func(ctx context.Context, _ dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		if call.Stream {
			sink.Text("thinking")
		}
		<-ctx.Done()
		return nil, &relay.Error{Err: ctx.Err()}
	})
	s := newTest(t, p)
	msg := wantFrontError(t, post(t, s.url, "/v1/chat/completions", chatBody), 504, "/v1/chat/completions", "timeout_error")
	if !strings.Contains(msg, "server.request_timeout") {
		t.Errorf("504 message %q should name server.request_timeout", msg)
	}
	resp := post(t, s.url, "/v1/chat/completions", strings.Replace(chatBody, `"model"`, `"stream":true,"model"`, 1))
	body := string(readAll(t, resp))
	if resp.StatusCode != 200 || !strings.Contains(body, `event: error`) || !strings.Contains(body, `"timeout_error"`) {
		t.Fatalf("deadline mid-stream: %d %s", resp.StatusCode, body)
	}
}

func TestPanicIsA500NotACrash(t *testing.T) {
	p := testParts()
	var calls atomic.Int32
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		if calls.Add(1) == 1 {
			var m map[string]int
			m["boom"]++ // a nil map write: a real runtime panic
		}
		return echo(ctx, f, call, sink)
	})
	s := newTest(t, p)
	msg := wantFrontError(t, post(t, s.url, "/v1/messages", chatBody), 500, "/v1/messages", "api_error")
	if strings.Contains(msg, "goroutine") {
		t.Errorf("the stack reached the client: %s", msg)
	}
	resp := post(t, s.url, "/v1/messages", chatBody)
	if b := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("the server did not go on after a panic: %d %s", resp.StatusCode, b)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "[ERROR]") || !strings.Contains(logs, "assignment to entry in nil map") || !strings.Contains(logs, "goroutine") {
		t.Fatalf("the panic was not logged at ERROR with its stack:\n%s", logs)
	}
}

// A client that goes away mid-stream ends its request: nothing stays in
// flight and the runner sees its context end.
func TestClientLeavingMidStream(t *testing.T) {
	p := testParts()
	ended := make(chan struct{})
	p.hooked = runFunc(func(ctx context.Context, _ dialect.Front, _ *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		defer close(ended)
		if err := sink.Text("first"); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, &relay.Error{Err: ctx.Err()}
	})
	s := newTest(t, p)
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/messages", strings.NewReader(`{"model":"m1","stream":true,"messages":[]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "event: start\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close()
	<-ended
	eventually(t, "the request to leave the in-flight gauge", func() bool {
		return scrape(t, s.url, "hookhost_gateway_in_flight") == "0"
	})
	eventually(t, "the request's log line", func() bool { return strings.Contains(s.logs.String(), "path=/v1/messages status=200") })
}

// scrape returns the value of a sample of /metrics, "" when absent.
func scrape(t *testing.T, url, sample string) string {
	t.Helper()
	for _, l := range strings.Split(metricsOf(t, url), "\n") {
		if v, ok := strings.CutPrefix(l, sample+" "); ok {
			return v
		}
	}
	return ""
}
