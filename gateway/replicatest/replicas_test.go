package replicatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/nginxtest"
	"github.com/hookhost/hookhost/gateway/internal/servetest"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/testenv"
)

// Set by TestMain: where hookhost and the plugin were built.
var (
	binDir   string
	setupErr error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	binDir, setupErr = servetest.Build("hookhost-replicatest", map[string]string{
		"hookhost": "github.com/hookhost/hookhost/cmd/hookhost",
		// The plugin the client tests run: it owns lookup__weather, whose
		// calls hookhost runs and hides from the client.
		"lookup": "github.com/hookhost/hookhost/gateway/clienttest/internal/lookup",
	})
	defer os.RemoveAll(binDir)
	return m.Run()
}

const (
	upstreamKeyEnv = "REPLICATEST_UPSTREAM_KEY"
	redisURLEnv    = "REPLICATEST_REDIS_URL"
	// The inbound keys: the one every scenario presents, unlimited, and
	// the one the rate-limit scenario spends.
	clientKeyEnv  = "REPLICATEST_CLIENT_KEY"
	clientKey     = "hk-client-0123"
	limitedKeyEnv = "REPLICATEST_LIMITED_KEY"
	limitedKey    = "hk-limited-0123"
	limitedRPM    = 20
	model         = "gpt-test"
	// readFile is the client's own tool, handed back to it.
	readFile = `[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]`
)

// answer is the fake model: "mixed N" gets a plugin call and a client
// call in one response; a tool result, "done"; any other text, an
// answer naming it.
func answer(req fakeapi.Request) fakeapi.Turn {
	items, err := fakeapi.Conversation(fakeapi.Chat, req.Body)
	if err != nil || len(items) == 0 {
		return fakeapi.Turn{Status: 400, Message: fmt.Sprintf("fake upstream: no conversation (%v)", err)}
	}
	last := items[len(items)-1]
	if last.Kind == "result" {
		return fakeapi.Turn{Text: "done", In: 1, Out: 1}
	}
	if n, ok := strings.CutPrefix(last.Content, "mixed "); ok {
		return fakeapi.Turn{In: 1, Out: 1, Calls: []fakeapi.Call{
			{ID: "call_w" + n, Name: "lookup__weather", Args: `{"city":"Paris"}`},
			{ID: "call_r" + n, Name: "read_file", Args: `{"path":"notes.txt"}`},
		}}
	}
	return fakeapi.Turn{Text: "answer to " + last.Content, In: 1, Out: 1}
}

// replicaConfig is one replica's hookhost.toml: the fake upstream, the
// plugin, the inbound keys, and the state in Redis.
func replicaConfig(up *fakeapi.Upstream) string {
	return fmt.Sprintf(`[server]
api_key_env = %q

[server.keys.limited]
env = %q
requests_per_minute = %d

[llm]
provider = "openai"
api = "chat"
model = %q
base_url = %q
api_key_env = %q
max_retries = 0

[conversation]
max_iterations = 4

[plugins]
enabled = ["lookup"]
dir = %q

[state]
backend = "redis"
url_env = %q
dial_timeout = "1s"
read_timeout = "1s"
write_timeout = "1s"
`, clientKeyEnv, limitedKeyEnv, limitedRPM, model, up.BaseURL(), upstreamKeyEnv, binDir, redisURLEnv)
}

// The deployment of examples/deploy, in miniature: three replicas of
// hookhost serve behind nginx, sharing Redis.
func TestReplicasShareConversations(t *testing.T) {
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	redis := statestoretest.StartRedis(t)
	nginxBin := findNginx(t)
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(answer)
	cfg := replicaConfig(up)
	env := append(environ(), "HOOKHOST_USE_GATEWAY=1", upstreamKeyEnv+"=sk-upstream-0123", redisURLEnv+"="+redis.URL(),
		clientKeyEnv+"="+clientKey, limitedKeyEnv+"="+limitedKey)
	var replicas []*servetest.Server
	for range 3 {
		replicas = append(replicas, servetest.StartWithConfig(t, filepath.Join(binDir, "hookhost"), cfg, env))
	}
	a, b, c := replicas[0], replicas[1], replicas[2]
	lb := startNginx(t, nginxBin, replicas)
	names := map[string]string{hostPort(a.URL): "A", hostPort(b.URL): "B", hostPort(c.URL): "C"}

	t.Run("mixed call on A continued on B", func(t *testing.T) {
		mixedConversation(t, up, a.URL, b.URL, "1")
	})

	t.Run("previous_response_id chain over every replica", func(t *testing.T) {
		served := map[string]bool{}
		chain(t, up, lb, 4, func(by string) { served[names[lastAddr(by)]] = true })
		if len(served) != 3 {
			t.Errorf("the chain was served by %v, want all three replicas (nginx round-robin)", served)
		}
	})

	// Before the SIGKILL below, so that nginx still sends to all three.
	t.Run("a key's requests per minute are shared by the replicas", func(t *testing.T) {
		sharedLimit(t, lb, names)
	})

	t.Run("SIGKILL of the replica a conversation started on", func(t *testing.T) {
		got, _ := mixedStart(t, c.URL, "2")
		c.Kill(t)
		by := mixedFinish(t, up, lb, "2", got)
		if names[lastAddr(by)] == "C" || names[lastAddr(by)] == "" {
			t.Errorf("the continuation was served by %q (%s), want A or B", by, names[lastAddr(by)])
		}
		chain(t, up, lb, 3, func(string) {})
	})

	t.Run("Redis restarted", func(t *testing.T) {
		// A conversation begun before the outage, and a stored response.
		first, _ := mixedStart(t, a.URL, "3")
		resp := postJSON(t, lb, "/v1/responses", `{"model":"`+model+`","input":"before the outage"}`)
		stored := field(t, resp, "id")

		redis.Stop()
		want := "hookhost: state backend redis at " + redis.Addr() + " is unreachable"
		for _, tc := range []struct{ name, path, body, why string }{
			{"continuing a mixed call", "/v1/chat/completions", continuation(t, "3", first), "hidden tool-call rounds"},
			{"continuing a mixed call, streamed", "/v1/chat/completions", strings.Replace(continuation(t, "3", first), `{"model"`, `{"stream":true,"model"`, 1), "hidden tool-call rounds"},
			{"previous_response_id", "/v1/responses", `{"model":"` + model + `","store":false,"previous_response_id":"` + stored + `","input":"and then?"}`, "stored responses"},
			{"a mixed call whose rounds could not be kept", "/v1/chat/completions", mixedBody("4"), "hidden tool-call rounds"},
		} {
			r := postJSON(t, lb, tc.path, tc.body)
			var e struct {
				Error struct{ Message, Type string }
			}
			if r.status != http.StatusServiceUnavailable || json.Unmarshal(r.body, &e) != nil {
				t.Fatalf("%s with Redis down: %d %s, want a 503 in OpenAI's error shape", tc.name, r.status, r.body)
			}
			if !strings.HasPrefix(e.Error.Message, want) || !strings.Contains(e.Error.Message, tc.why) {
				t.Errorf("%s with Redis down: %q, want a message starting %q that says %q", tc.name, e.Error.Message, want, tc.why)
			}
		}
		// What needs no state is served.
		r := postJSON(t, lb, "/v1/chat/completions", `{"model":"`+model+`","messages":[{"role":"user","content":"hello"}],"tools":`+readFile+`}`)
		if r.status != 200 || !strings.Contains(string(r.body), "answer to hello") {
			t.Errorf("a request needing no state with Redis down: %d %s", r.status, r.body)
		}
		for _, s := range []*servetest.Server{a, b} {
			if code, body := get(t, s.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"state":"down"`) {
				t.Errorf("/readyz with Redis down: %d %s", code, body)
			}
		}

		redis.Restart()
		for _, s := range []*servetest.Server{a, b} {
			waitReady(t, s.URL)
		}
		mixedConversation(t, up, b.URL, a.URL, "5")
		chain(t, up, lb, 2, func(string) {})
		for name, s := range map[string]*servetest.Server{"A": a, "B": b} {
			log := s.Log()
			if n := strings.Count(log, "the state backend is unreachable"); n != 1 {
				t.Errorf("replica %s logged the outage %d times, want once", name, n)
			}
			if !strings.Contains(log, "the state backend is reachable again") {
				t.Errorf("replica %s did not log the end of the outage", name)
			}
		}
	})
}

// mixedBody is the first request of conversation n.
func mixedBody(n string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"mixed ` + n + `"}],"tools":` + readFile + `}`
}

// mixedStart sends conversation n's first request to url and returns the
// assistant message the client got, and who served it.
func mixedStart(t *testing.T, url, n string) (json.RawMessage, string) {
	t.Helper()
	r := postJSON(t, url, "/v1/chat/completions", mixedBody(n))
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string
					Function struct{ Name string }
				} `json:"tool_calls"`
			}
		}
	}
	var raw struct {
		Choices []struct{ Message json.RawMessage }
	}
	if r.status != 200 || json.Unmarshal(r.body, &out) != nil || json.Unmarshal(r.body, &raw) != nil || len(out.Choices) != 1 {
		t.Fatalf("mixed call %s: %d %s", n, r.status, r.body)
	}
	calls := out.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "read_file" || strings.HasPrefix(calls[0].ID, "call_r") {
		t.Fatalf("mixed call %s: the client got %s, want read_file alone under an id hookhost minted", n, r.body)
	}
	return raw.Choices[0].Message, r.by
}

// continuation is conversation n's second request: the client's message,
// what it got, and its result for read_file.
func continuation(t *testing.T, n string, got json.RawMessage) string {
	t.Helper()
	var m struct {
		ToolCalls []struct{ ID string } `json:"tool_calls"`
	}
	if err := json.Unmarshal(got, &m); err != nil || len(m.ToolCalls) != 1 {
		t.Fatalf("assistant message %s: %v", got, err)
	}
	return `{"model":"` + model + `","tools":` + readFile + `,"messages":[{"role":"user","content":"mixed ` + n + `"},` +
		string(got) + `,{"role":"tool","tool_call_id":"` + m.ToolCalls[0].ID + `","content":"notes ` + n + `"}]}`
}

// mixedConversation starts conversation n on from and continues it on to,
// then checks that the upstream saw the hidden plugin round spliced back.
// It returns who served the continuation.
func mixedConversation(t *testing.T, up *fakeapi.Upstream, from, to, n string) string {
	t.Helper()
	got, _ := mixedStart(t, from, n)
	return mixedFinish(t, up, to, n, got)
}

// mixedFinish continues conversation n, whose first answer was got, on to,
// as mixedConversation does.
func mixedFinish(t *testing.T, up *fakeapi.Upstream, to, n string, got json.RawMessage) string {
	t.Helper()
	r := postJSON(t, to, "/v1/chat/completions", continuation(t, n, got))
	if r.status != 200 || !strings.Contains(string(r.body), `"done"`) {
		t.Fatalf("continuation of %s: %d %s", n, r.status, r.body)
	}
	var history []string
	for _, s := range up.Requests() {
		items, _ := fakeapi.Conversation(fakeapi.Chat, s.Body)
		if len(items) > 0 && items[len(items)-1].ID == "call_r"+n {
			history = history[:0]
			for _, it := range items {
				history = append(history, it.Kind+" "+it.Role+" "+it.ID+" "+it.Name+" "+strings.ReplaceAll(it.Content, " ", "_"))
			}
		}
	}
	want := []string{
		"text user   mixed_" + n,
		"call assistant call_w" + n + " lookup__weather {\"city\":\"Paris\"}",
		"call assistant call_r" + n + " read_file {\"path\":\"notes.txt\"}",
		"result tool call_w" + n + "  ",
		"result tool call_r" + n + "  notes_" + n,
	}
	if history == nil {
		t.Fatalf("no upstream request ended in the result for call_r%s under the upstream's id: the continuation of %s went up without its hidden rounds", n, n)
	}
	if len(history) != len(want) {
		t.Fatalf("the upstream saw the continuation of %s as\n%s\nwant\n%s", n, strings.Join(history, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		// The plugin's weather result is the plugin's own text.
		if i == 3 && strings.HasPrefix(history[i], want[i]) && len(history[i]) > len(want[i]) {
			continue
		}
		if history[i] != want[i] {
			t.Errorf("the upstream saw item %d of the continuation of %s as %q, want %q", i, n, history[i], want[i])
		}
	}
	return r.by
}

// chain is a Responses conversation of turns turns by
// previous_response_id through url; served is told who served each.
func chain(t *testing.T, up *fakeapi.Upstream, url string, turns int, served func(by string)) {
	t.Helper()
	tag := fmt.Sprint(time.Now().UnixNano())
	prev := ""
	for k := 1; k <= turns; k++ {
		body := `{"model":"` + model + `","input":"turn ` + fmt.Sprint(k) + ` of ` + tag + `"`
		if prev != "" {
			body += `,"previous_response_id":"` + prev + `"`
		}
		r := postJSON(t, url, "/v1/responses", body+"}")
		if r.status != 200 {
			t.Fatalf("turn %d: %d %s", k, r.status, r.body)
		}
		prev = field(t, r, "id")
		served(r.by)
		reqs := up.Requests()
		items, _ := fakeapi.Conversation(fakeapi.Chat, reqs[len(reqs)-1].Body)
		var texts []string
		for _, it := range items {
			texts = append(texts, it.Role+": "+it.Content)
		}
		var want []string
		for j := 1; j <= k; j++ {
			turn := fmt.Sprintf("turn %d of %s", j, tag)
			want = append(want, "user: "+turn)
			if j < k {
				want = append(want, "assistant: answer to "+turn)
			}
		}
		if strings.Join(texts, "\n") != strings.Join(want, "\n") {
			t.Fatalf("turn %d (served by %s) reached the upstream as\n%s\nwant\n%s", k, r.by, strings.Join(texts, "\n"), strings.Join(want, "\n"))
		}
	}
}

type reply struct {
	status int
	body   []byte
	by     string // nginx's X-Upstream: the replica(s) tried
	// retryAfter is the Retry-After header, which a 429 carries.
	retryAfter string
}

// postJSON posts body to url+path with the unlimited client key.
func postJSON(t *testing.T, url, path, body string) reply {
	t.Helper()
	r, err := send(http.DefaultClient, clientKey, url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// send posts body to url presenting the inbound key key. It fails no
// test, so that goroutines other than the test's may call it.
func send(client *http.Client, key, url, body string) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("POST %s: reading the answer: %v", url, err)
	}
	return reply{status: resp.StatusCode, body: out, by: resp.Header.Get("X-Upstream"), retryAfter: resp.Header.Get("Retry-After")}, nil
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// waitReady waits for url's /readyz to answer 200: go-redis paces its
// dials to a server that failed, so the restarted one is used again
// within a few seconds.
func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, url+"/readyz")
		if code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz still answers %d 30s after Redis restarted: %s", url, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func field(t *testing.T, r reply, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	var s string
	if json.Unmarshal(r.body, &m) != nil || json.Unmarshal(m[name], &s) != nil {
		t.Fatalf("no string %q in %s", name, r.body)
	}
	return s
}

// lastAddr is the replica that answered, out of nginx's list of those
// tried ("127.0.0.1:1, 127.0.0.1:2").
func lastAddr(by string) string {
	parts := strings.Split(by, ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

func hostPort(url string) string { return strings.TrimPrefix(url, "http://") }

// environ is this process's environment without what would change the
// route or leak a real key into the replicas.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOOKHOST_USE_GATEWAY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// findNginx is Debian's nginx binary; without it the test skips saying
// how to install it (under CI, fails).
func findNginx(t testing.TB) string {
	t.Helper()
	bin, err := nginxtest.Find()
	if err != nil {
		testenv.Skip(t, "nginx not found (the replicas test runs it as the load balancer in front of three hookhost serve processes)", nginxtest.InstallCommand, err)
	}
	return bin
}

// startNginx runs nginx as a round-robin proxy in front of replicas until
// the test ends; it returns its URL. Each answer says which replica served
// it in X-Upstream.
func startNginx(t testing.TB, bin string, replicas []*servetest.Server) string {
	t.Helper()
	var servers []string
	for _, r := range replicas {
		servers = append(servers, hostPort(r.URL))
	}
	return nginxtest.Start(t, bin, nginxtest.Proxy{
		Servers:      servers,
		ServerParams: "max_fails=1 fail_timeout=30s",
		Location: `proxy_buffering off;
proxy_next_upstream error timeout;
add_header X-Upstream $upstream_addr always;`,
	})
}
