package toolfmt

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

var weather = hooks.ToolSpec{
	Name:        "get_weather",
	Description: "Current weather for a city",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWireShapes(t *testing.T) {
	schema := string(weather.InputSchema)
	chat, err := ToOpenAIChat(weather)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, chat), `{"type":"function","function":{"name":"get_weather","description":"Current weather for a city","parameters":`+schema+`}}`; got != want {
		t.Errorf("chat tool = %s\nwant %s", got, want)
	}
	resp, err := ToResponses(weather)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, resp), `{"type":"function","name":"get_weather","description":"Current weather for a city","parameters":`+schema+`,"strict":false}`; got != want {
		t.Errorf("responses tool = %s\nwant %s", got, want)
	}
	ant, err := ToAnthropic(weather)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, ant), `{"name":"get_weather","description":"Current weather for a city","input_schema":`+schema+`}`; got != want {
		t.Errorf("anthropic tool = %s\nwant %s", got, want)
	}
	ro, destructive := true, false
	mcp, err := ToMCP(Tool{Spec: weather, Title: "Weather", Annotations: &Annotations{ReadOnlyHint: &ro, DestructiveHint: &destructive}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, mcp), `{"name":"get_weather","title":"Weather","description":"Current weather for a city","inputSchema":`+schema+`,"annotations":{"readOnlyHint":true,"destructiveHint":false}}`; got != want {
		t.Errorf("mcp tool = %s\nwant %s", got, want)
	}
}

func TestRoundTrips(t *testing.T) {
	specs := []hooks.ToolSpec{
		weather,
		{Name: "kora__get_burn", Description: "", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	for _, s := range specs {
		c, err := ToOpenAIChat(s)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := FromOpenAIChat(c); err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("chat round trip of %s = %+v, %v", s.Name, back, err)
		}
		r, err := ToResponses(s)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := FromResponses(r); err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("responses round trip of %s = %+v, %v", s.Name, back, err)
		}
		a, err := ToAnthropic(s)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := FromAnthropic(a); err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("anthropic round trip of %s = %+v, %v", s.Name, back, err)
		}
		yes := true
		tool := Tool{Spec: s, Title: "T", OutputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &Annotations{IdempotentHint: &yes, OpenWorldHint: &yes}}
		m, err := ToMCP(tool)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := FromMCP(m); err != nil || !reflect.DeepEqual(back, tool) {
			t.Errorf("mcp round trip of %s = %+v, %v", s.Name, back, err)
		}
	}
}

func TestImportFromWireJSON(t *testing.T) {
	var c ChatTool
	json.Unmarshal([]byte(`{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}`), &c)
	if s, err := FromOpenAIChat(c); err != nil || s.Name != "f" || string(s.InputSchema) != `{"type":"object"}` {
		t.Errorf("FromOpenAIChat = %+v, %v", s, err)
	}
	if _, err := FromOpenAIChat(ChatTool{Type: "custom", Function: ChatFunction{Name: "f"}}); err == nil {
		t.Error("a non-function chat tool was accepted")
	}
	var m MCPTool
	json.Unmarshal([]byte(`{"name":"files.read","title":"Read","description":"Reads","inputSchema":{"type":"object"},"annotations":{"title":"Read file","readOnlyHint":true,"openWorldHint":false}}`), &m)
	tool, err := FromMCP(m)
	if err != nil {
		t.Fatal(err)
	}
	if tool.Spec.Name != "files__read" || tool.Title != "Read" || tool.Annotations == nil ||
		tool.Annotations.Title != "Read file" || !*tool.Annotations.ReadOnlyHint || *tool.Annotations.OpenWorldHint ||
		tool.Annotations.DestructiveHint != nil {
		t.Errorf("FromMCP = %+v %+v", tool, tool.Annotations)
	}
	if _, err := FromMCP(MCPTool{Name: "x", InputSchema: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a non-object schema was accepted")
	}
	if _, err := FromMCP(MCPTool{Name: "x", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`"s"`)}); err == nil {
		t.Error("a non-object output schema was accepted")
	}
}

func TestMissingSchemaBecomesEmptyObject(t *testing.T) {
	a, err := ToAnthropic(hooks.ToolSpec{Name: "now"})
	if err != nil || string(a.InputSchema) != string(EmptySchema) {
		t.Errorf("ToAnthropic without schema = %s, %v", a.InputSchema, err)
	}
	if _, err := ToOpenAIChat(hooks.ToolSpec{Name: "x", InputSchema: json.RawMessage(`"string"`)}); err == nil {
		t.Error("a non-object schema was sent")
	}
}

func TestNames(t *testing.T) {
	if got := MapName("files.read.all"); got != "files__read__all" {
		t.Errorf("MapName = %q", got)
	}
	m, err := NewNameMap([]string{"files.read", "kora__get_burn", "now"})
	if err != nil {
		t.Fatal(err)
	}
	for wire, id := range map[string]string{"files__read": "files.read", "kora__get_burn": "kora__get_burn", "now": "now", "invented": "invented"} {
		if got := m.ID(wire); got != id {
			t.Errorf("ID(%q) = %q, want %q", wire, got, id)
		}
	}
	if m.Wire("files.read") != "files__read" {
		t.Errorf("Wire(files.read) = %q", m.Wire("files.read"))
	}
	c, err := ToOpenAIChat(hooks.ToolSpec{Name: "files.read"})
	if err != nil || c.Function.Name != "files__read" {
		t.Errorf("ToOpenAIChat(files.read) = %+v, %v", c, err)
	}

	tests := []struct {
		ids  []string
		want string
	}{
		{[]string{"a.b", "a__b"}, `tools "a.b" and "a__b" both become "a__b"`},
		{[]string{"x__y", "x.y"}, `tools "x__y" and "x.y" both become "x__y"`},
		{[]string{"now", "now"}, `tool "now" is listed twice`},
		{[]string{"bad name"}, `tool name "bad name" must match`},
		{[]string{""}, `tool name "" must match`},
		{[]string{strings.Repeat("a", 65)}, "must match"},
		{[]string{strings.Repeat("a.", 30) + "b"}, "its provider name"},
	}
	for _, tt := range tests {
		err := CheckNames(tt.ids)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckNames(%q) = %v, want %q", tt.ids, err, tt.want)
		}
	}
	if err := CheckNames([]string{"a.b", "a_b", "a-b"}); err != nil {
		t.Errorf("CheckNames of distinct names = %v", err)
	}
}

func TestToMCPKeepsDottedIDs(t *testing.T) {
	m, err := ToMCP(Tool{Spec: hooks.ToolSpec{Name: "files.read"}})
	if err != nil || m.Name != "files.read" || string(m.InputSchema) != string(EmptySchema) {
		t.Errorf("ToMCP = %+v, %v", m, err)
	}
	if _, err := ToMCP(Tool{Spec: hooks.ToolSpec{Name: "a b"}}); err == nil {
		t.Error("an invalid MCP name was exported")
	}
}

// A tool's schema is checked on every request that offers it, so the
// check must not copy it: a client's tools run to tens of kilobytes. The
// bound is on bytes, not on allocations, because the race detector's
// sync.Pool drops what is put back, and json.Valid pools its scanner.
func TestSchemaCheckCopiesNothing(t *testing.T) {
	props := make([]string, 200)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","description":"property %d"}`, i, i)
	}
	spec := hooks.ToolSpec{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)}
	const runs = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := ToOpenAIChat(spec); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > uint64(len(spec.InputSchema)/10) {
		t.Errorf("ToOpenAIChat of a %d-byte schema allocated %d bytes a call, want under a tenth of the schema", len(spec.InputSchema), perRun)
	}
}
