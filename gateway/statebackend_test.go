package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/offline"
)

const redisURLEnv = "TEST_HOOKHOST_REDIS_URL"

// redisParts are parts over the real fronts and the offline model whose
// Responses store is the Redis backend at url, as [state] backend =
// "redis" sets it up.
func redisParts(url string, rec *recording) parts {
	p := realParts()
	p.provider, p.models = rec, []string{"offline-small"}
	p.state = config.State{Backend: config.StateRedis, URLEnv: redisURLEnv, Prefix: "test:",
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
	p.getenv = func(name string) string {
		if name == redisURLEnv {
			return url
		}
		return ""
	}
	return p
}

// redisReplica is a gateway server over the Redis backend at url, closed
// when the test ends.
func redisReplica(t *testing.T, url string) (*testServer, *recording) {
	t.Helper()
	rec := &recording{Provider: offline.New()}
	s := newTest(t, redisParts(url, rec))
	if s.backend == nil {
		t.Fatal("[state] backend = \"redis\" did not put the Responses store in redis")
	}
	t.Cleanup(func() { s.Close() })
	return s, rec
}

// A conversation by previous_response_id goes on from one replica to
// another sharing the same Redis: each continues what the other stored.
func TestRedisStateSharedByReplicas(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	a, recA := redisReplica(t, srv.URL())
	b, recB := redisReplica(t, srv.URL())

	r1 := respond(t, a, `{"model":"offline-small","input":"first question"}`)
	r2 := respond(t, b, `{"model":"offline-small","stream":true,"previous_response_id":`+string(r1["id"])+`,"input":"second question"}`)
	inOrder(t, "replica B's upstream request", recB.transcript(), "user: first question", "assistant: ", "user: second question")
	respond(t, a, `{"model":"offline-small","previous_response_id":`+string(r2["id"])+`,"input":"third question"}`)
	inOrder(t, "replica A's upstream request", recA.transcript(), "user: first question", "user: second question", "user: third question")

	// The stored object B made is served by A.
	resp, err := http.Get(a.url + "/v1/responses/" + str(t, r2["id"]))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(string(body), str(t, r2["id"])) {
		t.Fatalf("GET on replica A of the response B stored: %d %s", resp.StatusCode, body)
	}
	for _, s := range []*testServer{a, b} {
		ready := getReady(t, s)
		if ready.code != 200 || ready.State.Backend != "redis" || ready.State.State != "up" || ready.State.Addr != srv.Addr() {
			t.Fatalf("/readyz with redis up: %d %+v", ready.code, ready.State)
		}
	}
}

type readyBody struct {
	code   int
	raw    string
	Status string `json:"status"`
	State  struct {
		Backend, Addr, State, Error string
	} `json:"state"`
}

func getReady(t *testing.T, s *testServer) readyBody {
	t.Helper()
	resp, err := http.Get(s.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, resp)
	var out readyBody
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("/readyz is not JSON: %v: %s", err, raw)
	}
	out.code, out.raw = resp.StatusCode, string(raw)
	return out
}

// openAIError is the error body of the Responses endpoint.
type openAIError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// With Redis down, a request that needs stored state gets a 503 naming
// the backend in the Responses error shape; requests that need none are
// served; /readyz says why it is not ready; the outage is logged once.
// Once Redis is back, service resumes without restarting the gateway.
func TestRedisStateOutage(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	s, _ := redisReplica(t, srv.URL())
	r1 := respond(t, s, `{"model":"offline-small","input":"first question"}`)

	srv.Stop()
	want := "hookhost: state backend redis at " + srv.Addr() + " is unreachable: "
	for _, tc := range []struct{ name, body, why string }{
		{"previous_response_id", `{"model":"offline-small","previous_response_id":` + string(r1["id"]) + `,"input":"again"}`, "names stored responses"},
		{"item_reference", `{"model":"offline-small","input":[{"type":"item_reference","id":"` + outputIDs(t, r1)[0] + `"},{"role":"user","content":"again"}]}`, "names stored responses"},
		{"store defaulting to true", `{"model":"offline-small","input":"a new conversation"}`, "store: false"},
		{"store true, streamed", `{"model":"offline-small","store":true,"stream":true,"input":"a new conversation"}`, "store: false"},
	} {
		resp := post(t, s.url, "/v1/responses", tc.body)
		raw := readAll(t, resp)
		var e openAIError
		if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal(raw, &e) != nil {
			t.Fatalf("%s with redis down: %d %s, want a 503 in the Responses error shape", tc.name, resp.StatusCode, raw)
		}
		if !strings.HasPrefix(e.Error.Message, want) || !strings.Contains(e.Error.Message, tc.why) || e.Error.Type != "server_error" {
			t.Errorf("%s: error %+v, want type server_error (OpenAI's for a 503) and a message starting %q that says %q", tc.name, e.Error, want, tc.why)
		}
	}
	resp := post(t, s.url, "/v1/responses", `{"model":"offline-small","store":false,"input":"no state needed"}`)
	if body := readAll(t, resp); resp.StatusCode != 200 {
		t.Errorf("store:false with redis down: %d %s, want 200", resp.StatusCode, body)
	}
	resp = post(t, s.url, "/v1/chat/completions", `{"model":"offline-small","messages":[{"role":"user","content":"hello"}]}`)
	if body := readAll(t, resp); resp.StatusCode != 200 {
		t.Errorf("a chat completion with redis down: %d %s, want 200", resp.StatusCode, body)
	}
	resp, err := http.Get(s.url + "/v1/responses/" + str(t, r1["id"]))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), want) {
		t.Errorf("GET of a stored response with redis down: %d %s", resp.StatusCode, body)
	}
	ready := getReady(t, s)
	if ready.code != http.StatusServiceUnavailable || ready.Status != "not_ready" || ready.State.State != "down" || !strings.HasPrefix(ready.State.Error, want) {
		t.Fatalf("/readyz with redis down: %d %s", ready.code, ready.raw)
	}
	if n := strings.Count(s.logs.String(), "the state backend is unreachable"); n != 1 {
		t.Errorf("the outage is logged %d times, want once:\n%s", n, s.logs)
	}
	wantUp(t, s, "0")
	if strings.Contains(s.logs.String(), "[ERROR]") {
		t.Errorf("requests refused during the outage logged errors of their own:\n%s", s.logs)
	}

	srv.Restart()
	eventually(t, "/readyz to report redis back", func() bool { return getReady(t, s).code == 200 })
	// The restarted server kept nothing (no persistence): the old id is
	// gone, a 404 as for any expired response, and new conversations go on.
	resp = post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":`+string(r1["id"])+`,"input":"again"}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "previous_response_not_found") {
		t.Errorf("continuing a response the restarted redis lost: %d %s, want 404", resp.StatusCode, body)
	}
	n1 := respond(t, s, `{"model":"offline-small","input":"after the outage"}`)
	respond(t, s, `{"model":"offline-small","previous_response_id":`+string(n1["id"])+`,"input":"and on"}`)
	wantUp(t, s, "1")
	if !strings.Contains(s.logs.String(), "the state backend is reachable again") {
		t.Errorf("the end of the outage is not logged:\n%s", s.logs)
	}
	if n := strings.Count(s.logs.String(), "the state backend is unreachable"); n != 1 {
		t.Errorf("the outage is logged %d times, want once:\n%s", n, s.logs)
	}
}

// The variable state.url_env names must be set: the error names it and
// where the file asks for it.
func TestRedisStateURLUnset(t *testing.T) {
	p := redisParts("", &recording{Provider: offline.New()})
	p.where = func(key string) string {
		if key == "state.url_env" {
			return "hookhost.toml:12"
		}
		return ""
	}
	_, err := newServer(p)
	want := "config: hookhost.toml:12: state.url_env: the environment variable " + redisURLEnv + " is unset or empty"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want it to start %q", err, want)
	}

	p = redisParts("http://:hunter2@db:6379", &recording{Provider: offline.New()})
	_, err = newServer(p)
	if err == nil || !strings.Contains(err.Error(), "state.url_env: the URL in "+redisURLEnv) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err = %v, want the URL refused without repeating it", err)
	}
}

// With the memory backend (the default) /readyz reports it, always up.
func TestReadyzMemoryState(t *testing.T) {
	s := newTest(t, testParts())
	ready := getReady(t, s)
	if ready.code != 200 || ready.State.Backend != "memory" || ready.State.State != "up" {
		t.Fatalf("/readyz: %d %s", ready.code, ready.raw)
	}
}

// wantUp checks the metric of whether the state backend answers.
func wantUp(t *testing.T, s *testServer, v string) {
	t.Helper()
	if body := metricsOf(t, s.url); !strings.Contains(body, "\nhookhost_gateway_state_backend_up "+v+"\n") {
		t.Errorf("/metrics does not say hookhost_gateway_state_backend_up %s:\n%s", v, body)
	}
}

// With [state] backend = "redis", the hidden round of a mixed call made
// on one replica is spliced back when the client continues on another
// (Chat Completions, whole history); with Redis down, that continuation
// gets a 503 naming the backend, never an answer from a history without
// the hidden round.
func TestRedisHiddenRoundsSharedByReplicas(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	mixed := fakeapi.JSON(200, `{"id":"c1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[`+
		`{"id":"call_c1","type":"function","function":{"name":"read_file","arguments":"{}"}},{"id":"call_k1","type":"function","function":{"name":"kora__burn","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	up := fakeapi.New(t, mixed, chatText("the file says hi"))
	replica := func() *testServer {
		p := redisParts(srv.URL(), nil)
		p.provider, p.models, p.bus = upstreamKinds[0].build(t, up.URL()), []string{"m1"}, koraBus(t)
		s := newTest(t, p)
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := replica(), replica()
	tools := `"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]`
	resp := post(t, a.url, "/v1/chat/completions", `{"model":"m1",`+tools+`,"messages":[{"role":"user","content":"read the file"}]}`)
	raw := readAll(t, resp)
	var out struct {
		Choices []struct{ Message json.RawMessage }
	}
	var msg struct {
		ToolCalls []struct{ ID string } `json:"tool_calls"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &out) != nil || len(out.Choices) != 1 ||
		json.Unmarshal(out.Choices[0].Message, &msg) != nil || len(msg.ToolCalls) != 1 {
		t.Fatalf("mixed call on replica A: %d %s, want read_file alone", resp.StatusCode, raw)
	}
	next := `{"model":"m1",` + tools + `,"messages":[{"role":"user","content":"read the file"},` + string(out.Choices[0].Message) +
		`,{"role":"tool","tool_call_id":"` + msg.ToolCalls[0].ID + `","content":"hi"}]}`

	resp = post(t, b.url, "/v1/chat/completions", next)
	if raw = readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(string(raw), "the file says hi") {
		t.Fatalf("continuation on replica B: %d %s", resp.StatusCode, raw)
	}
	inOrder(t, "the continuation's upstream request", string(up.Requests()[1].Body), "read the file", "call_c1", "call_k1", "burnt", "call_c1")

	srv.Stop()
	resp = post(t, b.url, "/v1/chat/completions", next)
	raw = readAll(t, resp)
	want := "hookhost: state backend redis at " + srv.Addr() + " is unreachable"
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(raw), want) || !strings.Contains(string(raw), "hidden tool-call rounds") {
		t.Fatalf("continuation on B with Redis down: %d %s, want a 503 naming the backend and why", resp.StatusCode, raw)
	}
	if n := len(up.Requests()); n != 2 {
		t.Fatalf("the upstream got %d requests, want 2: a continuation must not go up without its hidden round", n)
	}
}
