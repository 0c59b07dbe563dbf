package hookhost_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// guardBin is the examples/guard plugin, and chaosBin host's chaos test
// plugin, built once for the tests that run a real plugin process.
var guardBin, chaosBin string

// repoRoot is the directory the tests started in, the repository's root.
// The tests run in an empty directory of their own instead: ExampleOpen,
// as the README has it, reads ./hookhost.toml when there is one, and a
// user's own hookhost.toml at the root (a real provider, say) must not
// change what the tests do.
var repoRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hookhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	guardBin = filepath.Join(dir, "guard")
	if out, err := exec.Command("go", "build", "-o", guardBin, "./examples/guard").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the guard plugin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	chaosBin = filepath.Join(dir, "chaos")
	if out, err := exec.Command("go", "build", "-o", chaosBin, "./host/internal/testplugins/chaos").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the chaos plugin: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	if repoRoot, err = os.Getwd(); err == nil {
		err = os.Chdir(dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "moving the tests out of the repository: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(src), "hookhost.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// env is a Getenv over a fixed map, so tests do not depend on the
// machine's environment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func open(t *testing.T, cfg *config.Config, getenv func(string) string) *hookhost.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := hookhost.Open(ctx, cfg, hookhost.Options{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func TestOpenOfflineDefaults(t *testing.T) {
	h := open(t, config.Default(), env())
	if route, source := h.Route(); route != hooks.RouteBypass || source != "default" {
		t.Errorf("route %s from %s, want bypass by default", route, source)
	}
	if h.Bus() != nil || h.Plugins() != nil || h.StartErrors() != nil {
		t.Errorf("no plugin is enabled, yet bus %v, plugins %v, start errors %v", h.Bus(), h.Plugins(), h.StartErrors())
	}
	if got := h.Models(); !reflect.DeepEqual(got, []string{"offline-small"}) {
		t.Errorf("models %q", got)
	}
	if u := h.Upstream(); u.Provider != "offline" || u.BaseURL != "" || len(u.Header) != 0 {
		t.Errorf("offline upstream %+v, want no URL and no header", u)
	}
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "what is 6*7")
	if err != nil || !strings.Contains(turn.Answer, "42") {
		t.Fatalf("answer %+v, err %v", turn, err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestOpenResolvesTheRoute(t *testing.T) {
	cfg := parse(t, "[routing]\ngateway = true\n")
	if route, source := open(t, cfg, env()).Route(); route != hooks.RouteGateway || source != "routing.gateway" {
		t.Errorf("route %s from %s, want gateway from routing.gateway", route, source)
	}
	if route, source := open(t, cfg, env("HOOKHOST_USE_GATEWAY", "0")).Route(); route != hooks.RouteBypass || source != config.GatewayEnv {
		t.Errorf("route %s from %s, want bypass from %s", route, source, config.GatewayEnv)
	}
	_, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Getenv: env("HOOKHOST_USE_GATEWAY", "perhaps")})
	var ce *hookhost.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "HOOKHOST_USE_GATEWAY") {
		t.Fatalf("err = %v, want a ConfigError naming HOOKHOST_USE_GATEWAY", err)
	}
}

func TestOpenNamesAMissingKey(t *testing.T) {
	cfg := parse(t, "[llm]\nprovider = \"anthropic\"\nmodel = \"claude-sonnet-4-5\"\napi_key_env = \"TEAM_ANTHROPIC_KEY\"\n")
	_, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Getenv: env("ANTHROPIC_API_KEY", "sk-other")})
	var ce *hookhost.ConfigError
	var key *config.Error
	if !errors.As(err, &ce) || !errors.As(err, &key) || key.Key != "llm.api_key_env" || !strings.Contains(err.Error(), "TEAM_ANTHROPIC_KEY is not set") {
		t.Fatalf("err = %v, want a config error at llm.api_key_env naming TEAM_ANTHROPIC_KEY", err)
	}
}

func TestOpenRefusesAProviderNoneRegistered(t *testing.T) {
	cfg := config.Default()
	cfg.LLM.Provider = "nope"
	_, err := hookhost.Open(context.Background(), cfg, hookhost.Options{})
	var ce *hookhost.ConfigError
	const want = `config: llm.provider "nope" is not available in this build (use offline, openai or anthropic)`
	if !errors.As(err, &ce) || err.Error() != want {
		t.Fatalf("err = %v, want a *hookhost.ConfigError %q", err, want)
	}
}

func TestModelsInOrderWithoutDuplicates(t *testing.T) {
	cfg := parse(t, `
[llm]
provider = "openai"
model = "gpt-4.1-mini"
api_key_env = ""
[llm.tiers]
small = "gpt-4.1-mini"
strong = "gpt-4.1"
[server]
models = ["o3", "gpt-4.1", "gpt-5"]
`)
	want := []string{"gpt-4.1-mini", "gpt-4.1", "o3", "gpt-5"}
	h := open(t, cfg, env())
	if got := h.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("models %q, want %q", got, want)
	}
	h.Models()[0] = "changed"
	if got := h.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("a caller's change leaked into the host: %q", got)
	}
}

// The upstream header carries the key as the provider sends it: checked
// against what a real model call puts on the wire.
func TestUpstreamCarriesTheProvidersCredentials(t *testing.T) {
	tests := []struct {
		provider, model, path, keyHeader, keyValue, reply string
	}{
		{"openai", "gpt-4.1-mini", "/v1/chat/completions", "Authorization", "Bearer sk-test-1",
			`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hello"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`},
		{"anthropic", "claude-sonnet-4-5", "/v1/messages", "X-Api-Key", "sk-test-1",
			`{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			fake := fakeapi.New(t, fakeapi.JSON(200, tt.reply))
			base := fake.URL()
			if tt.provider == "openai" {
				base += "/v1"
			}
			cfg := parse(t, fmt.Sprintf(`
[llm]
provider = %q
model = %q
base_url = %q
api_key_env = "TEST_KEY"
max_retries = 0
[llm.headers]
X-Team = "blue"
`, tt.provider, tt.model, base))
			h := open(t, cfg, env("TEST_KEY", " sk-test-1\n"))
			u := h.Upstream()
			if u.Provider != tt.provider || u.BaseURL != base {
				t.Errorf("upstream %s at %s, want %s at %s", u.Provider, u.BaseURL, tt.provider, base)
			}
			if got := u.Header.Get(tt.keyHeader); got != tt.keyValue || u.Header.Get("X-Team") != "blue" {
				t.Errorf("upstream header %v, want %s: %s and X-Team: blue", u.Header, tt.keyHeader, tt.keyValue)
			}
			u.Header.Set(tt.keyHeader, "changed")
			if h.Upstream().Header.Get(tt.keyHeader) != tt.keyValue {
				t.Error("a caller's change to the header leaked into the host")
			}

			s, err := h.NewSession(hookhost.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Send(context.Background(), "hi")
			if err != nil || turn.Answer != "hello" {
				t.Fatalf("turn %+v, err %v", turn, err)
			}
			reqs := fake.Requests()
			if len(reqs) != 1 || reqs[0].Path != tt.path {
				t.Fatalf("requests %+v, want one to %s", reqs, tt.path)
			}
			for name := range u.Header {
				if name == tt.keyHeader {
					continue // changed above
				}
				if got, want := reqs[0].Header.Get(name), h.Upstream().Header.Get(name); got != want {
					t.Errorf("the provider sent %s: %q, the upstream header says %q", name, got, want)
				}
			}
			if got := reqs[0].Header.Get(tt.keyHeader); got != tt.keyValue {
				t.Errorf("the provider sent %s: %q, want %q", tt.keyHeader, got, tt.keyValue)
			}
		})
	}
}

func TestAServerWithoutKeySendsNone(t *testing.T) {
	cfg := parse(t, "[llm]\nprovider = \"openai\"\nmodel = \"llama3\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key_env = \"\"\n")
	if h := open(t, cfg, env("OPENAI_API_KEY", "sk-unused")).Upstream().Header; len(h) != 0 {
		t.Fatalf("header %v, want none", h)
	}
}

func guardConfig(t *testing.T, extra string) *config.Config {
	return parse(t, fmt.Sprintf(`
[llm]
provider = "offline"
model = "offline-large"
[routing]
gateway = true
[plugins]
enabled = ["guard"]
[plugins.entries.guard]
path = %q
[plugins.entries.guard.config]
deny = [{tool = "read_file", args_match = '(?i)secret|\.env', reason = "secrets stay out"}]
%s`, guardBin, extra))
}

// Sessions on one host share its provider, tools and Bus; run several at
// once through a real plugin process, each with its own history.
func TestConcurrentSessionsShareOneHost(t *testing.T) {
	h := open(t, guardConfig(t, ""), env())
	if errs := h.StartErrors(); len(errs) != 0 {
		t.Fatalf("start errors: %v", errs)
	}
	if ps := h.Plugins(); len(ps) != 1 || ps[0].Name != "guard" || ps[0].State != host.StateRunning {
		t.Fatalf("plugins %+v, want guard running", ps)
	}
	const sessions, rounds = 6, 3
	var wg sync.WaitGroup
	errs := make(chan error, sessions*rounds)
	for i := range sessions {
		wg.Go(func() {
			s, err := h.NewSession(hookhost.SessionOptions{})
			if err != nil {
				errs <- err
				return
			}
			for r := range rounds {
				n := i*10 + r + 2
				turn, err := s.Send(context.Background(), fmt.Sprintf("what is %d*3", n))
				if err != nil || !strings.Contains(turn.Answer, fmt.Sprint(n*3)) {
					errs <- fmt.Errorf("session %d, round %d: answer %q, err %v", i, r, turn.Answer, err)
					return
				}
				turn, err = s.Send(context.Background(), "read the file .env")
				if err != nil {
					errs <- fmt.Errorf("session %d, round %d: %v", i, r, err)
					return
				}
				if len(turn.ToolCalls) == 0 || turn.ToolCalls[0].Path != dispatch.PathBlocked || turn.ToolCalls[0].AnsweredBy != "guard" {
					errs <- fmt.Errorf("session %d, round %d: reading .env was not blocked by the guard: %+v", i, r, turn.ToolCalls)
					return
				}
			}
			if got := len(s.History()); got < 4*rounds {
				errs <- fmt.Errorf("session %d keeps %d messages, want its own %d turns", i, got, 2*rounds)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A plugin that does not start is reported and left out; a fail_closed one
// is kept as down and blocks every tool call.
func TestStartErrorsAreKept(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	for _, failClosed := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail_closed=%v", failClosed), func(t *testing.T) {
			cfg := parse(t, fmt.Sprintf("[routing]\ngateway = true\n[plugins]\nenabled = [\"ghost\"]\n[plugins.entries.ghost]\npath = %q\nfail_closed = %v\n", missing, failClosed))
			h := open(t, cfg, env())
			errs := h.StartErrors()
			var se *host.StartError
			if len(errs) != 1 || !errors.As(errs[0], &se) || se.Plugin != "ghost" || !strings.Contains(se.Reason, "does not exist") {
				t.Fatalf("start errors %v, want one for ghost saying its binary does not exist", errs)
			}
			s, err := h.NewSession(hookhost.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Send(context.Background(), "what is 6*7")
			if err != nil || len(turn.ToolCalls) != 1 {
				t.Fatalf("turn %+v, err %v", turn, err)
			}
			ps := h.Plugins()
			if !failClosed {
				if len(ps) != 0 || turn.ToolCalls[0].Path != dispatch.PathNative {
					t.Fatalf("plugins %+v, call %+v, want no plugin and the native tool", ps, turn.ToolCalls[0])
				}
				return
			}
			if len(ps) != 1 || ps[0].State != host.StateDown || turn.ToolCalls[0].Path != dispatch.PathBlocked {
				t.Fatalf("plugins %+v, call %+v, want ghost down and the call blocked", ps, turn.ToolCalls[0])
			}
		})
	}
}

// A plugin process that patches, or asks to reissue with, a temperature
// no upstream takes (NaN and infinities cannot even be encoded; Anthropic
// takes at most 1) does not end the turn: its answers are malformed, count
// as nil, and the request goes out as it was.
func TestAPluginTemperatureNoUpstreamTakesLeavesTheTurnAlone(t *testing.T) {
	replies := map[string]string{
		"openai":    `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hello"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
		"anthropic": `{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`,
	}
	cases := []struct{ provider, temperature string }{
		{"openai", "NaN"}, {"openai", "+Inf"}, {"openai", "-Inf"}, {"openai", "2.5"},
		{"anthropic", "NaN"}, {"anthropic", "+Inf"}, {"anthropic", "1.5"},
	}
	for _, c := range cases {
		t.Run(c.provider+"/"+c.temperature, func(t *testing.T) {
			fake := fakeapi.New(t, fakeapi.JSON(200, replies[c.provider]), fakeapi.JSON(200, replies[c.provider]))
			base := fake.URL()
			if c.provider == "openai" {
				base += "/v1"
			}
			cfg := parse(t, fmt.Sprintf(`
[llm]
provider = %q
model = "m"
base_url = %q
api_key_env = ""
max_retries = 0
[routing]
gateway = true
[plugins]
enabled = ["chaos"]
[plugins.entries.chaos]
path = %q
[plugins.entries.chaos.config]
temperature = %q
reissue = true
`, c.provider, base, chaosBin, c.temperature))
			h := open(t, cfg, env())
			if errs := h.StartErrors(); len(errs) != 0 {
				t.Fatalf("start errors: %v", errs)
			}
			s, err := h.NewSession(hookhost.SessionOptions{})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := s.Send(context.Background(), "hi")
			if err != nil || turn.Answer != "hello" {
				t.Fatalf("turn %+v, err %v; want the answer as if chaos had said nothing", turn, err)
			}
			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests upstream, want 1 (no reissue)", len(reqs))
			}
			if body := string(reqs[0].Body); strings.Contains(body, "temperature") || strings.Contains(body, "patched by chaos") {
				t.Fatalf("chaos's patch reached the upstream: %s", body)
			}
			st := h.Bus().Stats()
			for _, hook := range []hooks.Name{hooks.PreAPIRequestMutable, hooks.PostLLMCallCanReissue} {
				if n := st.Failures("chaos", hook, hookbus.KindMalformed); n != 1 {
					t.Errorf("%s: %d malformed answers counted, want 1", hook, n)
				}
			}
		})
	}
}
