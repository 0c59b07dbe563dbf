package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
)

// lookupPlugin is the plugin the client tests run: it owns
// lookup__weather, whose calls hookhost runs and hides.
func lookupPlugin(b *testing.B) string { return buildPlugin(b, "../clienttest/internal/lookup") }

// mixedUpstream answers a conversation ending in the user's text with a
// plugin call and a client call in one response, and anything else with
// text at once.
func mixedUpstream(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":"pong"}`
		finish := "stop"
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
			msg = `{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_w","type":"function","function":{"name":"lookup__weather","arguments":"{\"city\":\"Paris\"}"}},` +
				`{"id":"call_r","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]}`
			finish = "tool_calls"
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":%q,"choices":[{"index":0,"finish_reason":%q,"message":%s}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, model, finish, msg)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// stateGateway serves the gateway route in front of up with the lookup
// plugin, its state in memory (redisURL "") or in Redis.
func stateGateway(b *testing.B, up, redisURL string) string {
	cfg := config.Default()
	cfg.LLM.Provider, cfg.LLM.API, cfg.LLM.Model = "openai", "chat", model
	cfg.LLM.BaseURL, cfg.LLM.APIKeyEnv, cfg.LLM.MaxRetries = up+"/v1", keyEnv, 0
	cfg.Plugins.Enabled = []string{"lookup"}
	cfg.Plugins.Entries = map[string]config.PluginEntry{"lookup": {
		Path: lookupPlugin(b), Timeout: 5 * time.Second, ToolTimeout: 10 * time.Second, Config: json.RawMessage(`{}`),
	}}
	const urlEnv = "HOOKHOST_BENCH_REDIS_URL"
	if redisURL != "" {
		cfg.State = config.State{Backend: config.StateRedis, URLEnv: urlEnv, Prefix: "bench:",
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	}
	getenv := func(name string) string {
		switch name {
		case keyEnv:
			return "sk-bench"
		case config.GatewayEnv:
			return "1"
		case urlEnv:
			return redisURL
		}
		return ""
	}
	h, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Getenv: getenv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	if errs := h.StartErrors(); len(errs) > 0 {
		b.Fatal(errs[0])
	}
	srv, err := gateway.New(h, gateway.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

const readFileTool = `[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]`

// post sends body and returns the answer, failing on anything but a 200
// containing want.
func post(c *http.Client, root, body, want string) ([]byte, error) {
	resp, err := c.Post(root+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(out, []byte(want)) {
		return nil, fmt.Errorf("status %d, want 200 with %s: %s", resp.StatusCode, want, out)
	}
	return out, nil
}

// mixedTurn is one conversation's mixed call on first and its continuation
// on second; it returns each request's latency.
func mixedTurn(c *http.Client, first, second string, i int) (mixed, cont time.Duration, err error) {
	user := fmt.Sprintf(`{"role":"user","content":"question %d"}`, i)
	t0 := time.Now()
	out, err := post(c, first, `{"model":"`+model+`","tools":`+readFileTool+`,"messages":[`+user+`]}`, `"read_file"`)
	mixed = time.Since(t0)
	if err != nil {
		return mixed, 0, err
	}
	var r struct {
		Choices []struct{ Message json.RawMessage }
	}
	var calls struct {
		ToolCalls []struct{ ID string } `json:"tool_calls"`
	}
	if json.Unmarshal(out, &r) != nil || len(r.Choices) != 1 || json.Unmarshal(r.Choices[0].Message, &calls) != nil || len(calls.ToolCalls) != 1 {
		return mixed, 0, fmt.Errorf("mixed call answered %s, want read_file alone", out)
	}
	body := `{"model":"` + model + `","tools":` + readFileTool + `,"messages":[` + user + `,` + string(r.Choices[0].Message) +
		`,{"role":"tool","tool_call_id":"` + calls.ToolCalls[0].ID + `","content":"hi"}]}`
	t0 = time.Now()
	_, err = post(c, second, body, `"pong"`)
	return mixed, time.Since(t0), err
}

// BenchmarkHiddenRoundsState measures what keeping hidden rounds in Redis
// adds to a mixed plugin and client tool call (the plugin's round run and
// kept) and to its continuation (the rounds looked up and spliced back),
// against the default store in memory: one replica in memory, and two
// replicas sharing one Redis, the continuation landing on the other.
// It reports p50 and p99 of each request.
func BenchmarkHiddenRoundsState(b *testing.B) {
	up := mixedUpstream(b)
	for _, backend := range []string{"memory", "redis"} {
		b.Run(backend, func(b *testing.B) {
			first := stateGateway(b, up, "")
			second := first
			if backend == "redis" {
				srv := statestoretest.StartRedis(b)
				first, second = stateGateway(b, up, srv.URL()), stateGateway(b, up, srv.URL())
			}
			c := client(1)
			defer c.CloseIdleConnections()
			for i := range 20 {
				if _, _, err := mixedTurn(c, first, second, -1-i); err != nil {
					b.Fatalf("warm-up: %v", err)
				}
			}
			mixed := make([]time.Duration, 0, b.N)
			cont := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				m, k, err := mixedTurn(c, first, second, i)
				if err != nil {
					b.Fatal(err)
				}
				mixed, cont = append(mixed, m), append(cont, k)
			}
			b.StopTimer()
			slices.Sort(mixed)
			slices.Sort(cont)
			b.ReportMetric(float64(quantile(mixed, 0.50).Nanoseconds())/1e3, "mixed-p50-µs")
			b.ReportMetric(float64(quantile(mixed, 0.99).Nanoseconds())/1e3, "mixed-p99-µs")
			b.ReportMetric(float64(quantile(cont, 0.50).Nanoseconds())/1e3, "continue-p50-µs")
			b.ReportMetric(float64(quantile(cont, 0.99).Nanoseconds())/1e3, "continue-p99-µs")
		})
	}
}

// longHistory plays a conversation of turns turns on first and second in
// turn, each a mixed call, the client's result and the final answer, and
// returns its messages, ready for one more user message.
func longHistory(b *testing.B, c *http.Client, first, second string, turns int) []string {
	var msgs []string
	ask := func(root, want string) json.RawMessage {
		out, err := post(c, root, `{"model":"`+model+`","tools":`+readFileTool+`,"messages":[`+strings.Join(msgs, ",")+`]}`, want)
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Choices []struct{ Message json.RawMessage }
		}
		if json.Unmarshal(out, &r) != nil || len(r.Choices) != 1 {
			b.Fatalf("answer %s", out)
		}
		return r.Choices[0].Message
	}
	for i := range turns {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d"}`, i))
		m := ask(first, `"read_file"`)
		var calls struct {
			ToolCalls []struct{ ID string } `json:"tool_calls"`
		}
		if json.Unmarshal(m, &calls) != nil || len(calls.ToolCalls) != 1 {
			b.Fatalf("turn %d answered %s, want read_file alone", i, m)
		}
		msgs = append(msgs, string(m), `{"role":"tool","tool_call_id":"`+calls.ToolCalls[0].ID+`","content":"hi"}`)
		msgs = append(msgs, string(ask(second, `"pong"`)))
	}
	return msgs
}

// BenchmarkHiddenRoundsStateLong measures one request continuing a
// conversation of 10 turns that each took hidden rounds: every earlier
// turn's rounds, answer and result are looked up (30 values), in memory or
// in Redis.
func BenchmarkHiddenRoundsStateLong(b *testing.B) {
	up := mixedUpstream(b)
	for _, backend := range []string{"memory", "redis"} {
		b.Run(backend, func(b *testing.B) {
			first := stateGateway(b, up, "")
			second := first
			if backend == "redis" {
				srv := statestoretest.StartRedis(b)
				first, second = stateGateway(b, up, srv.URL()), stateGateway(b, up, srv.URL())
			}
			c := client(1)
			defer c.CloseIdleConnections()
			msgs := longHistory(b, c, first, second, 10)
			// The next turn's question: its answer is a mixed call again,
			// whose history the upstream gets whole.
			body := `{"model":"` + model + `","tools":` + readFileTool + `,"messages":[` + strings.Join(msgs, ",") + `,{"role":"user","content":"one more"}]}`
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				root := first
				if i%2 == 1 {
					root = second
				}
				t0 := time.Now()
				if _, err := post(c, root, body, `"read_file"`); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(quantile(lat, 0.50).Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(quantile(lat, 0.99).Nanoseconds())/1e3, "p99-µs")
		})
	}
}
