package agenttest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The markers that start each scenario's prompt, by which the fake model
// tells a scenario's turns from the requests a CLI makes on its own.
const (
	markPlugin = "agenttest plugin-tool:"
	markOwn    = "agenttest own-tool:"
	markGuard  = "agenttest guard:"
)

// finalPrefix starts every final answer of the fake model, which then
// quotes the tool results it was given.
const finalPrefix = "agenttest final answer. The tool said: "

// What the lookup plugin answers, and what the guard says when it blocks.
const (
	pluginTool    = "lookup__weather"
	pluginAnswer  = "sunny, 21 C"
	guardMessage  = "blocked by guard: recursive deletes are not allowed"
	guardedPrefix = "rm -rf"
)

// config is hookhost's config for the agent runs: upstream is the fake
// provider, the guard first (it blocks any tool call whose arguments hold
// a recursive delete) and the lookup plugin, whose tool lookup__weather
// hookhost runs itself. Clients may ask for models, the first being
// llm.model.
func config(up *upstream, models ...string) string {
	provider, api := "anthropic", ""
	switch up.proto {
	case chat:
		provider, api = "openai", `api = "chat"`
	case responses:
		provider, api = "openai", `api = "responses"`
	}
	return fmt.Sprintf(`
[llm]
provider = %q
%s
model = %q
base_url = %q
api_key_env = %q
max_retries = 0

[routing]
gateway = true

[server]
models = %s

[plugins]
enabled = ["guard", "lookup"]
dir = %q

%s`, provider, api, models[0], up.baseURL(), upstreamKeyEnv, mustJSON(models), binDir, guardEntry)
}

// guardEntry is the guard's entry in hookhost's config: it blocks any
// tool call whose arguments hold a recursive delete, whatever the CLI
// names its shell tool. The README shows it.
const guardEntry = `[plugins.entries.guard]
fail_closed = true

[plugins.entries.guard.config]
message = "blocked by guard: {reason}"
deny = [{ tool = "*", args_match = 'rm\s+-rf', reason = "recursive deletes are not allowed" }]
`

// scenario is one thing an agent does through hookhost.
type scenario struct {
	name   string
	marker string
	// prompt is what the user asks, after the marker.
	prompt string
	// call is the tool call the fake model makes for the prompt, given the
	// tools offered, or "" when the tool it needs is not among them.
	call func(a agent, tools []string, dir string) (name, args string)
	// setup prepares the working directory; check checks the outcome.
	setup func(t *testing.T, dir string) string
	check func(t *testing.T, a agent, r run)
}

// run is everything one scenario's run left behind.
type run struct {
	dir      string
	nonce    string
	out      ran
	clientEx []exchange // what the CLI sent to hookhost
	upReqs   []seen     // what hookhost sent upstream
	upProto  string
}

// scenarioModel is the fake model of a scenario: the scenario's prompt
// gets its tool call, the tool's result gets a final answer quoting it,
// and anything else (titles, warm-ups) a short text.
func scenarioModel(sc scenario, a agent, proto, dir string) model {
	return func(conv []item, tools []string) reply {
		last := -1
		for i, it := range conv {
			if it.Kind == "text" && it.Role == "user" && strings.Contains(it.Content, sc.marker) {
				last = i
			}
		}
		if last < 0 || len(tools) == 0 {
			return reply{Text: "agenttest side reply"}
		}
		var results []string
		for _, it := range conv[last+1:] {
			if it.Kind == "result" {
				results = append(results, it.Content)
			}
		}
		if len(results) > 0 {
			return reply{Text: finalPrefix + strings.Join(results, " | ")}
		}
		name, args := sc.call(a, tools, dir)
		if name == "" {
			return reply{Text: fmt.Sprintf("agenttest: the tool this scenario needs is not offered (tools: %s)", strings.Join(tools, ", "))}
		}
		id := "call_agenttest1"
		if proto == messages {
			id = "toolu_agenttest1"
		}
		return reply{Calls: []call{{ID: id, Name: name, Args: args}}}
	}
}

func shellCall(command string) func(a agent, tools []string, dir string) (string, string) {
	return func(a agent, tools []string, dir string) (string, string) {
		name, args := a.shell(tools)
		if name == "" {
			return "", ""
		}
		return name, args(command)
	}
}

var scenarios = []scenario{
	{
		name:   "plugin-tool",
		marker: markPlugin,
		prompt: "What is the weather in Paris? Use the lookup__weather tool.",
		call: func(a agent, tools []string, dir string) (string, string) {
			if !slices.Contains(tools, pluginTool) {
				return "", ""
			}
			return pluginTool, `{"city":"Paris"}`
		},
		check: func(t *testing.T, a agent, r run) {
			// hookhost ran the plugin's tool and sent its result upstream.
			if !upstreamGotResult(t, r, pluginAnswer, false) {
				t.Errorf("no request upstream carried the result of %s (%q)", pluginTool, pluginAnswer)
			}
			// The CLI never saw the plugin's call, only the answer.
			for _, ex := range r.clientEx {
				for _, it := range clientConversation(a, ex) {
					if it.Kind == "call" && it.Name == pluginTool {
						t.Errorf("the CLI sent back a call to %s, which hookhost should have run: %s", pluginTool, it)
					}
				}
			}
			wantAnswer(t, a, r, pluginAnswer)
		},
	},
	{
		name:   "own-tool",
		marker: markOwn,
		prompt: "Show me what note.txt in this directory says, by running cat on it.",
		setup: func(t *testing.T, dir string) string {
			b := make([]byte, 8)
			rand.Read(b)
			nonce := "note-" + hex.EncodeToString(b)
			if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte(nonce+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return nonce
		},
		call: shellCall("cat note.txt"),
		check: func(t *testing.T, a agent, r run) {
			// The nonce is only in the file: a request carrying it is the
			// CLI sending back what its own tool read.
			sent := false
			for _, ex := range r.clientEx {
				for _, it := range clientConversation(a, ex) {
					if it.Kind == "result" && strings.Contains(it.Content, r.nonce) {
						sent = true
					}
				}
			}
			if !sent {
				t.Errorf("the CLI sent hookhost no tool result holding the file's content %q", r.nonce)
			}
			if !upstreamGotResult(t, r, r.nonce, false) {
				t.Errorf("no request upstream carried the CLI's tool result %q", r.nonce)
			}
			wantAnswer(t, a, r, r.nonce)
		},
	},
	{
		name:   "guard",
		marker: markGuard,
		prompt: "Clean up this directory completely.",
		setup: func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "canary.txt"), []byte("still here\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return ""
		},
		call: shellCall(guardedPrefix + " canary.txt"),
		check: func(t *testing.T, a agent, r run) {
			if _, err := os.Stat(filepath.Join(r.dir, "canary.txt")); err != nil {
				t.Errorf("the canary is gone: %v", err)
			}
			// The guard answered the call: the model got the block
			// message as the tool's error result.
			if !upstreamGotResult(t, r, guardMessage, true) {
				t.Errorf("no request upstream carried the guard's block %q as an error result", guardMessage)
			}
			// The CLI never got the call to run.
			for _, ex := range r.clientEx {
				for _, it := range clientConversation(a, ex) {
					if it.Kind == "call" && strings.Contains(it.Content, guardedPrefix) {
						t.Errorf("the CLI was handed the blocked call: %s", it)
					}
				}
			}
			wantAnswer(t, a, r, guardMessage)
		},
	},
}

// clientConversation is the conversation in a request the CLI sent.
func clientConversation(a agent, ex exchange) []item {
	if ex.Method != "POST" || ex.Path != paths[a.front] {
		return nil
	}
	conv, _ := conversationOf(a.front, ex.Body)
	return conv
}

// upstreamGotResult reports whether a request upstream carried a tool
// result holding want; isError asks that it be marked as an error where
// the upstream protocol can say so (Anthropic's is_error).
func upstreamGotResult(t *testing.T, r run, want string, isError bool) bool {
	t.Helper()
	for _, rq := range r.upReqs {
		conv, err := conversationOf(r.upProto, rq.Body)
		if err != nil {
			t.Errorf("a request upstream: %v", err)
			continue
		}
		for _, it := range conv {
			if it.Kind == "result" && strings.Contains(it.Content, want) && (!isError || r.upProto != messages || it.IsError) {
				return true
			}
		}
	}
	return false
}

// wantAnswer checks the CLI finished and printed the fake model's final
// answer quoting want.
func wantAnswer(t *testing.T, a agent, r run, want string) {
	t.Helper()
	if r.out.err != nil {
		t.Errorf("%s failed: %v", a.name, r.out.err)
	}
	if !strings.Contains(r.out.stdout, finalPrefix) || !strings.Contains(r.out.stdout, want) {
		t.Errorf("%s printed no final answer quoting %q\nstdout: %s", a.name, want, r.out.stdout)
	}
}

// refusals lists the errors hookhost answered the CLI with, so that a
// failing scenario says what hookhost refused.
func refusals(ex []exchange) string {
	var b strings.Builder
	for _, e := range ex {
		if e.Status >= 400 {
			fmt.Fprintf(&b, "\n  %s %s -> %d %s", e.Method, e.Path, e.Status, e.Answer)
		}
	}
	return b.String()
}

// featureHeaders are the providers' headers that switch features on for a
// request, such as the betas whose fields Claude Code puts in its bodies.
var featureHeaders = []string{"Anthropic-Beta", "Anthropic-Version", "Openai-Beta"}

// checkFeatureHeaders checks that, with the same protocol in and out,
// every request upstream carried the feature headers the CLI sent, since
// the body fields they enable are passed on too.
func checkFeatureHeaders(t *testing.T, runs []run) {
	for _, h := range featureHeaders {
		sent := map[string]bool{}
		for _, r := range runs {
			for _, ex := range r.clientEx {
				if v := ex.Header.Get(h); v != "" {
					sent[v] = true
				}
			}
		}
		if len(sent) == 0 {
			continue
		}
		var wrong []string
		n := 0
		for _, r := range runs {
			for _, rq := range r.upReqs {
				n++
				if v := rq.Header.Get(h); !sent[v] {
					wrong = append(wrong, fmt.Sprintf("%q", v))
				}
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%d of %d requests upstream carried %s %s, not what the CLI sent: %v", len(wrong), n, h, strings.Join(slices.Compact(slices.Sorted(slices.Values(wrong))), ", "), slices.Sorted(maps.Keys(sent)))
		}
	}
}

// logEnv makes TestAgents log what each CLI printed on stderr even when
// it passes.
const logEnv = "HOOKHOST_AGENTS_LOG"

// crossOf is the upstream protocol each CLI is also run against: one the
// CLI does not speak, so hookhost translates every request.
var crossOf = map[string]string{messages: chat, responses: chat, chat: messages}

// TestAgents runs each agent CLI through each scenario, with hookhost in
// front of a fake upstream that speaks the CLI's protocol and one that
// does not.
func TestAgents(t *testing.T) {
	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			needAgents(t, a)
			for _, proto := range []string{a.front, crossOf[a.front]} {
				t.Run("upstream="+proto, func(t *testing.T) {
					up := newUpstream(t, proto)
					model := a.modelFor(proto)
					s := serve(t, config(up, model))
					var runs []run
					for _, sc := range scenarios {
						t.Run(sc.name, func(t *testing.T) {
							rec := record(t, s.URL)
							dir := t.TempDir()
							r := run{dir: dir, upProto: proto}
							if sc.setup != nil {
								r.nonce = sc.setup(t, dir)
							}
							up.use(scenarioModel(sc, a, proto, dir))
							r.out = runAgent(t, a, rec.srv.URL, dir, model, sc.marker+" "+sc.prompt)
							r.clientEx, r.upReqs = rec.exchanges(), up.requests()
							runs = append(runs, r)
							sc.check(t, a, r)
							if t.Failed() || os.Getenv(logEnv) != "" {
								t.Logf("hookhost refused:%s\n%s stderr: %s", refusals(r.clientEx), a.name, r.out.stderr)
							}
							if os.Getenv(recordEnv) != "" {
								kind := "same"
								if proto != a.front {
									kind = "cross"
								}
								saveFixtures(t, a, sc, r, kind)
							}
						})
					}
					if proto == a.front {
						t.Run("feature-headers", func(t *testing.T) { checkFeatureHeaders(t, runs) })
					}
				})
			}
		})
	}
}
