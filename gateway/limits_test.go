package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// fixedClock is a clock that stays where it is set, so that a test's
// requests all fall in one window.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fixedClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// limitedParts are offlineParts with the key "ci" (secret "secret-ci")
// limited to rpm requests and tpm tokens per minute, counted in memory
// by clock, which starts 20 s into a minute.
func limitedParts(rpm, tpm int64) (parts, *fixedClock) {
	p := offlineParts()
	p.server.Keys = map[string]config.ServerKey{"ci": {Name: "ci", Env: "HK_CI", RequestsPerMinute: &rpm, TokensPerMinute: &tpm}}
	p.getenv = envOf(map[string]string{"HK_CI": "secret-ci"})
	clock := &fixedClock{now: time.Date(2026, 1, 1, 10, 0, 20, 0, time.UTC)}
	p.counter = statestore.NewMemory(statestore.Limits{}, clock.Now)
	return p, clock
}

// Over requests_per_minute, each endpoint answers 429 in its protocol's
// own error shape with retry-after in seconds until the minute ends,
// before anything goes upstream; the metric counts the refusals under the
// key's name, never its secret; the next minute admits again.
func TestRequestsPerMinuteShapes(t *testing.T) {
	p, clock := limitedParts(1, 0)
	rec := &recording{Provider: p.provider}
	p.provider = rec
	s := newTest(t, p)
	key := []string{"Authorization", "Bearer secret-ci"}
	chat := `{"model":"offline-small","messages":[{"role":"user","content":"hi"}]}`
	if resp := post(t, s.url, "/v1/chat/completions", chat, key...); resp.StatusCode != 200 {
		t.Fatalf("first request: %d %s", resp.StatusCode, readAll(t, resp))
	}
	calls := func() int { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.reqs) }
	upstream := calls()

	want := `inbound key \"ci\" has used its 1 requests per minute (server.limits); retry in 40 s, when the next minute starts`
	for _, tc := range []struct{ path, body, raw string }{
		{"/v1/chat/completions", chat,
			`{"error":{"message":"` + want + `","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
		{"/v1/responses", `{"model":"offline-small","input":"hi"}`,
			`{"error":{"message":"` + want + `","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
		{"/v1/messages", `{"model":"offline-small","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			`{"type":"error","error":{"type":"rate_limit_error","message":"` + want + `"}}`},
	} {
		resp := post(t, s.url, tc.path, tc.body, key...)
		raw := string(readAll(t, resp))
		if resp.StatusCode != http.StatusTooManyRequests || !strings.HasPrefix(raw, strings.TrimSuffix(tc.raw, "}}")) {
			t.Errorf("%s over the limit: %d %s\nwant 429 %s", tc.path, resp.StatusCode, raw, tc.raw)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "40" {
			t.Errorf("%s: retry-after %q, want 40 (seconds to the end of the minute)", tc.path, ra)
		}
	}
	if calls() != upstream {
		t.Errorf("refused requests reached the upstream: %d calls, want %d", calls(), upstream)
	}
	m := metricsOf(t, s.url)
	wantMetrics(t, m, `hookhost_limit_rejections_total{key="ci",limit="requests"} 3`)
	if strings.Contains(m, "secret-ci") {
		t.Error("/metrics shows the key's secret")
	}
	clock.add(time.Minute)
	if resp := post(t, s.url, "/v1/chat/completions", chat, key...); resp.StatusCode != 200 {
		t.Fatalf("a request in the next minute: %d %s", resp.StatusCode, readAll(t, resp))
	}
}

// The official SDKs read the 429 as a rate limit error; with retries off
// they return it at once.
func TestLimitSeenBySDKs(t *testing.T) {
	p, _ := limitedParts(1, 0)
	s := newTest(t, p)
	ctx := context.Background()
	oc := openai.NewClient(option.WithBaseURL(s.url+"/v1"), option.WithAPIKey("secret-ci"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "offline-small", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	if _, err := oc.Chat.Completions.New(ctx, params); err != nil {
		t.Fatalf("first request: %v", err)
	}
	_, err := oc.Chat.Completions.New(ctx, params)
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 429 || oe.Code != "rate_limit_exceeded" || !strings.Contains(oe.Message, `inbound key "ci"`) {
		t.Fatalf("openai-go over the limit: %v", err)
	}
	ac := anthropic.NewClient(anthropicoption.WithBaseURL(s.url), anthropicoption.WithAPIKey("secret-ci"), anthropicoption.WithMaxRetries(0))
	_, err = ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "offline-small", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != 429 || !strings.Contains(ae.RawJSON(), `"type":"rate_limit_error"`) {
		t.Fatalf("anthropic-sdk-go over the limit: %v", err)
	}
	if ae.Response.Header.Get("retry-after") == "" {
		t.Error("anthropic-sdk-go's 429 has no retry-after")
	}
}

// tokens answers every request with usage of 300 input and 200 output
// tokens.
var tokens = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
	res, err := echo(ctx, f, call, sink)
	if res != nil {
		res.Usage = hooks.Usage{InputTokens: 300, OutputTokens: 200}
	}
	return res, err
})

// A request reserves an estimate of its tokens and is settled to its
// usage: with 1000 tokens per minute and 500 used per request, the third
// request is refused although the estimates alone would admit ten.
func TestTokensPerMinuteSettledByUsage(t *testing.T) {
	p, _ := limitedParts(0, 1000)
	p.fronts, p.hooked, p.plain = testFronts(), tokens, tokens
	p.models = []string{"m1"}
	s := newTest(t, p)
	body := `{"model":"m1","max_tokens":50,"messages":[{"role":"user","content":"hello"}]}`
	for i := range 2 {
		if resp := post(t, s.url, "/v1/chat/completions", body, "x-api-key", "secret-ci"); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, readAll(t, resp))
		} else {
			readAll(t, resp)
		}
		// The client has the answer before the handler settles.
		eventually(t, "the request's usage to be counted", func() bool { return tokensCounted(t, s) == int64(500*(i+1)) })
	}
	msg := wantFrontError(t, post(t, s.url, "/v1/chat/completions", body, "x-api-key", "secret-ci"), 429, "/v1/chat/completions", "rate_limit_error")
	if want := `inbound key "ci" has used its 1000 tokens per minute (1000 counted in this minute`; !strings.HasPrefix(msg, want) {
		t.Fatalf("message %q, want it to start %q", msg, want)
	}
	wantMetrics(t, metricsOf(t, s.url), `hookhost_limit_rejections_total{key="ci",limit="tokens"} 1`)
}

// An estimate over the whole token budget is capped at it, so a large
// request still runs in an unused minute; requests refused on tokens do not
// count against requests.
func TestTokensRefusalGivesTheRequestBack(t *testing.T) {
	p, _ := limitedParts(5, 100)
	p.fronts, p.hooked, p.plain = testFronts(), tokens, tokens
	p.models = []string{"m1"}
	s := newTest(t, p)
	big := `{"model":"m1","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	if resp := post(t, s.url, "/v1/chat/completions", big, "x-api-key", "secret-ci"); resp.StatusCode != 200 {
		t.Fatalf("a request estimated over the budget in an unused minute: %d %s", resp.StatusCode, readAll(t, resp))
	} else {
		readAll(t, resp)
	}
	eventually(t, "the first request's usage to be counted", func() bool { return tokensCounted(t, s) == 500 })
	for range 3 {
		wantFrontError(t, post(t, s.url, "/v1/chat/completions", big, "x-api-key", "secret-ci"), 429, "/v1/chat/completions", "rate_limit_error")
	}
	c := s.limits.counter
	r, err := c.Reserve(context.Background(), "ci", requestsCounter, 0, 0, limitWindow)
	if err != nil || r.Count != 1 {
		t.Fatalf("requests counted: %d (%v), want 1: the three refused on tokens count for nothing", r.Count, err)
	}
	if n := tokensCounted(t, s); n != 500 {
		t.Fatalf("tokens counted: %d, want the 500 the one request used", n)
	}
}

// tokensCounted reads the tokens key ci has used in this minute.
func tokensCounted(t *testing.T, s *testServer) int64 {
	t.Helper()
	r, err := s.limits.counter.Reserve(context.Background(), "ci", tokensCounter, 0, 0, limitWindow)
	if err != nil {
		t.Fatal(err)
	}
	return r.Count
}

// waitForFreshMinute waits until the current minute has at least 20 s to
// run, so that a burst of requests falls in one window of the backend's
// clock (the same machine's).
func waitForFreshMinute() {
	if left := time.Minute - time.Duration(time.Now().UnixMilli()%60000)*time.Millisecond; left < 20*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// limitedReplica is a gateway over the real fronts and the offline model
// whose limits are counted in the Redis at url.
func limitedReplica(t *testing.T, url string, rpm int64) *testServer {
	t.Helper()
	p := offlineParts()
	p.server.ResponsesMaxBytes = 0
	p.server.Limits = config.Limits{RequestsPerMinute: rpm}
	p.server.Keys = map[string]config.ServerKey{"ci": {Name: "ci", Env: "HK_CI"}, "ops": {Name: "ops", Env: "HK_OPS"}}
	p.state = config.State{Backend: config.StateRedis, URLEnv: redisURLEnv, Prefix: "limits:",
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	p.getenv = envOf(map[string]string{redisURLEnv: url, "HK_CI": "secret-ci", "HK_OPS": "secret-ops"})
	s := newTest(t, p)
	if s.backend == nil || s.limits == nil || s.limits.backend == nil {
		t.Fatal("[state] backend = \"redis\" with limits set did not count them in redis")
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Two replicas sharing one Redis share each key's budget: under
// concurrent load on both, exactly the limit is admitted per key, the
// rest get 429.
func TestLimitsSharedByReplicas(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	const limit, each = 15, 20
	a, b := limitedReplica(t, srv.URL(), limit), limitedReplica(t, srv.URL(), limit)
	waitForFreshMinute()
	var admitted, refused [2]atomic.Int64
	var wg sync.WaitGroup
	var failures sync.Map
	for i := range 2 * each {
		for k, secret := range []string{"secret-ci", "secret-ops"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := a
				if i%2 == 1 {
					s = b
				}
				req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions",
					strings.NewReader(`{"model":"offline-small","messages":[{"role":"user","content":"hi"}]}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+secret)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failures.Store(fmt.Sprint(i, k), err.Error())
					return
				}
				defer resp.Body.Close()
				switch resp.StatusCode {
				case 200:
					admitted[k].Add(1)
				case 429:
					if _, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil {
						failures.Store(fmt.Sprint(i, k), "429 without retry-after in seconds")
					}
					refused[k].Add(1)
				default:
					failures.Store(fmt.Sprint(i, k), "status "+resp.Status)
				}
			}()
		}
	}
	wg.Wait()
	failures.Range(func(k, v any) bool { t.Errorf("request %v: %v", k, v); return true })
	for k, name := range []string{"ci", "ops"} {
		if admitted[k].Load() != limit || refused[k].Load() != 2*each-limit {
			t.Errorf("key %s: %d admitted and %d refused over two replicas, want %d and %d", name, admitted[k].Load(), refused[k].Load(), limit, 2*each-limit)
		}
	}
	var total float64
	for _, s := range []*testServer{a, b} {
		for _, line := range strings.Split(metricsOf(t, s.url), "\n") {
			if v, ok := strings.CutPrefix(line, `hookhost_limit_rejections_total{key="ci",limit="requests"} `); ok {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
		}
	}
	if total != 2*each-limit {
		t.Errorf("the replicas' metrics count %v refusals of ci, want %d", total, 2*each-limit)
	}
}

// With Redis down, a request that needs a limit check gets a 503 in its
// protocol's shape naming the state backend; once it is back, requests
// are counted again.
func TestLimitsBackendDown(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	s := limitedReplica(t, srv.URL(), 100)
	srv.Stop()
	want := "hookhost: state backend redis at " + srv.Addr() + " "
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"offline-small","messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "secret-ci")
	raw := readAll(t, resp)
	var e openAIError
	if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(raw, &e) != nil || e.Error.Type != "server_error" ||
		!strings.HasPrefix(e.Error.Message, want) || !strings.Contains(e.Error.Message, "server.limits") {
		t.Fatalf("chat with redis down: %d %s, want 503 naming the backend and server.limits", resp.StatusCode, raw)
	}
	resp = post(t, s.url, "/v1/messages", `{"model":"offline-small","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "secret-ci")
	raw = readAll(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(raw), `{"type":"error","error":{"type":"api_error","message":"`+want) {
		t.Fatalf("messages with redis down: %d %s, want 503 in Anthropic's shape", resp.StatusCode, raw)
	}
	srv.Restart()
	eventually(t, "requests to be served once redis is back", func() bool {
		resp := post(t, s.url, "/v1/chat/completions", `{"model":"offline-small","messages":[{"role":"user","content":"hi"}]}`, "x-api-key", "secret-ci")
		readAll(t, resp)
		return resp.StatusCode == 200
	})
}

// On the bypass route the tokens are settled by the usage the proxied
// answer reports: a whole JSON answer's, or an event stream's (Anthropic
// reports input in message_start and output in message_delta).
func TestTokensSettledOnBypass(t *testing.T) {
	for _, tc := range []struct {
		name, provider, path, body string
		reply                      fakeapi.Reply
	}{
		{"chat json", "openai", "/v1/chat/completions", `{"model":"m1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			fakeapi.JSON(200, `{"id":"c","object":"chat.completion","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":200,"total_tokens":500}}`)},
		{"responses stream", "openai", "/v1/responses", `{"model":"m1","stream":true,"input":"hi"}`,
			fakeapi.SSE(fakeapi.Data(`{"type":"response.created","response":{"id":"r","usage":null}}`),
				fakeapi.Data(`{"type":"response.completed","response":{"id":"r","usage":{"input_tokens":300,"output_tokens":200,"total_tokens":500}}}`))},
		{"messages stream", "anthropic", "/v1/messages", `{"model":"m1","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			fakeapi.SSE("event: message_start\n"+fakeapi.Data(`{"type":"message_start","message":{"id":"m","usage":{"input_tokens":250,"cache_read_input_tokens":50,"output_tokens":1}}}`),
				"event: message_delta\n"+fakeapi.Data(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":200}}`),
				"event: message_stop\n"+fakeapi.Data(`{"type":"message_stop"}`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeapi.New(t, tc.reply)
			base := fake.URL()
			if tc.provider == "openai" {
				base += "/v1"
			}
			p := bypassParts(t, tc.provider, base)
			tpm := int64(100000)
			p.server.Keys = map[string]config.ServerKey{"ci": {Name: "ci", Env: "HK_CI", TokensPerMinute: &tpm}}
			p.getenv = envOf(map[string]string{"HK_CI": "secret-ci"})
			clock := &fixedClock{now: time.Date(2026, 1, 1, 10, 0, 20, 0, time.UTC)}
			p.counter = statestore.NewMemory(statestore.Limits{}, clock.Now)
			s := newTest(t, p)
			resp := post(t, s.url, tc.path, tc.body, "x-api-key", "secret-ci", "anthropic-version", "2023-06-01")
			if body := readAll(t, resp); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			// The client has the answer before the handler settles.
			eventually(t, "the tokens counted to be the 500 the answer reported", func() bool {
				return tokensCounted(t, s) == 500
			})
		})
	}
}

// With no inbound key, [server.limits] bounds every client together, under
// the name "anonymous".
func TestLimitsWithoutKeys(t *testing.T) {
	p := offlineParts()
	p.server.Limits = config.Limits{RequestsPerMinute: 2}
	clock := &fixedClock{now: time.Date(2026, 1, 1, 10, 0, 20, 0, time.UTC)}
	p.counter = statestore.NewMemory(statestore.Limits{}, clock.Now)
	s := newTest(t, p)
	chat := `{"model":"offline-small","messages":[{"role":"user","content":"hi"}]}`
	for range 2 {
		if resp := post(t, s.url, "/v1/chat/completions", chat); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, readAll(t, resp))
		} else {
			readAll(t, resp)
		}
	}
	resp := post(t, s.url, "/v1/chat/completions", chat)
	if raw := readAll(t, resp); resp.StatusCode != 429 || !strings.Contains(string(raw), `inbound key \"anonymous\" has used its 2 requests per minute`) {
		t.Fatalf("third request: %d %s, want 429 naming anonymous", resp.StatusCode, raw)
	}
	wantMetrics(t, metricsOf(t, s.url), `hookhost_limit_rejections_total{key="anonymous",limit="requests"} 1`)
}
