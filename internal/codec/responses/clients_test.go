package responses_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// The requests below are what the clients send on their default settings,
// turn after turn, as they build the history themselves; the upstream
// speaks Anthropic Messages, so every field crosses protocols.

// toolResults are the tool_result blocks of the n-th Anthropic request, by
// the id of the call they answer.
func (g *crossGateway) toolResults(t *testing.T, n int) map[string]string {
	t.Helper()
	reqs := g.up.Requests()
	if len(reqs) <= n {
		t.Fatalf("upstream got %d requests, want more than %d", len(reqs), n)
	}
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[n].Body, &body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range body.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = string(b.Content)
			}
		}
	}
	return out
}

// codexRequest is the Codex CLI's streamed request: its developer and
// context messages, function tools with strict, and the fields it always
// sends.
func codexRequest(input ...string) string {
	return `{"model":"gpt-5-codex","instructions":"You are a coding agent running in the Codex CLI.",` +
		`"input":[` + strings.Join(input, ",") + `],` +
		`"tools":[{"type":"function","name":"exec_command","description":"Runs a command in a PTY.","strict":false,` +
		`"parameters":{"type":"object","properties":{"cmd":{"type":"string"},"workdir":{"type":"string"}},"required":["cmd"],"additionalProperties":false}},` +
		`{"type":"function","name":"update_plan","description":"Updates the task plan.","strict":false,` +
		`"parameters":{"type":"object","properties":{"plan":{"type":"array","items":{"type":"object"}}},"required":["plan"],"additionalProperties":false}}],` +
		`"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"medium","summary":"auto"},"store":false,"stream":true,` +
		`"include":["reasoning.encrypted_content"],"prompt_cache_key":"0199c3a1-5b7e-7c52-9d1e-3f2a8b6c4d10",` +
		`"text":{"verbosity":"medium"},"client_metadata":{"originator":"codex_cli_rs"}}`
}

const (
	codexDeveloper = `{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>workspace-write</permissions instructions>"}]}`
	codexContext   = `{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/tmp/work</cwd>\n</environment_context>"}]}`
	codexAsk       = `{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files here"}]}`
)

// The Codex CLI's default requests, streamed over two turns with one of
// its own tools round-tripped: answered on an Anthropic upstream, each
// hint it sends dropped and counted once per request.
func TestCodexDefaultRequestsAcrossProtocols(t *testing.T) {
	g := newCrossGateway(t,
		anthropicStreamToolUse("toolu_up1", "exec_command", `{"cmd":"ls"}`),
		anthropicStreamText("There are two files: a.txt and b.txt."),
	)
	_, out := g.run(t, codexRequest(codexDeveloper, codexContext, codexAsk))
	s, err := streamcheck.Responses(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(s.Calls) != 1 || s.Calls[0].Name != "exec_command" || s.Calls[0].Arguments != `{"cmd":"ls"}` {
		t.Fatalf("calls %+v", s.Calls)
	}
	id := s.Calls[0].ID

	call := `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"` + id + `"}`
	result := `{"type":"function_call_output","call_id":"` + id + `","output":"a.txt\nb.txt"}`
	_, out = g.run(t, codexRequest(codexDeveloper, codexContext, codexAsk, call, result))
	s, err = streamcheck.Responses(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Status != "completed" || s.Text != "There are two files: a.txt and b.txt." {
		t.Errorf("status %q, text %q", s.Status, s.Text)
	}
	if res := g.toolResults(t, 1); len(res) != 1 || !strings.Contains(res[id], "a.txt") {
		t.Errorf("upstream tool results %v, want the output for %s", res, id)
	}
	for _, field := range []string{"prompt_cache_key", "client_metadata", "include[]: reasoning.encrypted_content", "store",
		"tools[].strict", "reasoning", "parallel_tool_calls", "text.verbosity"} {
		if n := g.drops.count(field); n != 2 {
			t.Errorf("%s dropped %d times, want once per request", field, n)
		}
	}
}

// Codex replays the reasoning items it received (with their encrypted
// content) and the phase of its assistant messages; across protocols
// they are hints, and the conversation goes on.
func TestCodexReplayedReasoningAndPhase(t *testing.T) {
	g := newCrossGateway(t, anthropicStreamText("Done."))
	reasoning := `{"type":"reasoning","summary":[{"type":"summary_text","text":"**Listing files**"}],"content":null,"encrypted_content":"gAAAAABo-opaque"}`
	said := `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Two files."}],"phase":"final_answer"}`
	call, out := g.run(t, codexRequest(codexDeveloper, codexContext, codexAsk, reasoning, said,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}`))
	if s, err := streamcheck.Responses(out); err != nil || s.Text != "Done." {
		t.Fatalf("stream %v:\n%s", err, out)
	}
	var asst []string
	for _, m := range call.Request.Messages {
		if m.Role == "assistant" {
			asst = append(asst, m.Content)
		}
	}
	if len(asst) != 1 || asst[0] != "Two files." {
		t.Errorf("assistant turns %q", asst)
	}
	for _, field := range []string{"input[] (reasoning)", "input[].phase"} {
		if n := g.drops.count(field); n != 1 {
			t.Errorf("%s dropped %d times, want 1", field, n)
		}
	}
}

// The Vercel AI SDK's Responses provider (store true by default) and the
// OpenAI Agents SDK's Responses model (strict zod tools, an empty include)
// on their first turn.
func TestAISDKAndAgentsSDKResponsesDefaults(t *testing.T) {
	g := newCrossGateway(t, anthropicText("Hello!"), anthropicStreamText("Hi!"))
	_, out := g.run(t, `{"model":"gpt-4o","input":[{"role":"user","content":[{"type":"input_text","text":"hello"}]}],"store":true,`+
		`"tools":[{"type":"function","name":"weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},"strict":false}],"tool_choice":"auto"}`)
	if !strings.Contains(string(out), `"Hello!"`) {
		t.Errorf("answer %s", out)
	}
	_, out = g.run(t, `{"model":"gpt-4.1","instructions":"You are helpful.","input":[{"type":"message","role":"user","content":"hi"}],"include":[],`+
		`"tools":[{"type":"function","name":"weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}],"stream":true}`)
	if s, err := streamcheck.Responses(out); err != nil || s.Text != "Hi!" {
		t.Errorf("stream %v:\n%s", err, out)
	}
	if g.drops.count("store") != 1 || g.drops.count("tools[].strict") != 2 {
		t.Errorf("counted %v", g.drops.got)
	}
}
