package gateway

import (
	"strings"
	"testing"
)

// The OpenAI fronts' default client requests reach an upstream of another
// protocol (the offline model speaks none) and the hints they carry show
// in hookhost_gateway_fields_dropped_total, by endpoint and table path.
func TestDroppedHintsAreCountedInMetrics(t *testing.T) {
	p := offlineParts()
	s := newTest(t, p)

	// Codex CLI, streamed.
	codex := `{"model":"offline-small","instructions":"You are a coding agent.","input":[` +
		`{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>workspace-write</permissions instructions>"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],` +
		`"tools":[{"type":"function","name":"exec_command","description":"Runs a command","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}}],` +
		`"tool_choice":"auto","parallel_tool_calls":false,"reasoning":{"effort":"medium","summary":"auto"},"store":false,"stream":true,` +
		`"include":["reasoning.encrypted_content"],"prompt_cache_key":"0199c3a1-5b7e-7c52-9d1e-3f2a8b6c4d10","client_metadata":{"originator":"codex_cli_rs"}}`
	resp := post(t, s.url, "/v1/responses", codex)
	if got := string(readAll(t, resp)); resp.StatusCode != 200 || !strings.Contains(got, "event: response.completed") {
		t.Fatalf("codex: %d %s", resp.StatusCode, got)
	}
	// LangChain ChatOpenAI, a tool message naming its tool, and the
	// Agents SDK's strict tools.
	chat := `{"model":"offline-small","messages":[{"role":"user","content":"hello","name":"alice"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
		`{"role":"tool","content":"nothing","tool_call_id":"call_1","name":"lookup"}],` +
		`"tools":[{"type":"function","function":{"name":"lookup","description":"Looks up","parameters":{"type":"object","properties":{},"additionalProperties":false},"strict":true}}],"user":"u-1","top_p":0.9}`
	resp = post(t, s.url, "/v1/chat/completions", chat)
	if got := string(readAll(t, resp)); resp.StatusCode != 200 || !strings.Contains(got, `"object":"chat.completion"`) {
		t.Fatalf("chat: %d %s", resp.StatusCode, got)
	}

	text := metricsOf(t, s.url)
	wantMetrics(t, text,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/responses",field="prompt_cache_key"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/responses",field="client_metadata"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/responses",field="include[]: reasoning.encrypted_content"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/responses",field="store"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/responses",field="tools[].strict"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/chat/completions",field="messages[].name"} 1`,
		`hookhost_gateway_fields_dropped_total{endpoint="/v1/chat/completions",field="tools[].function.strict"} 1`,
	)
	if strings.Contains(text, `field="user"`) || strings.Contains(text, `field="top_p"`) {
		t.Errorf("mapped fields are counted as dropped:\n%s", text)
	}
}
