package messages_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/offline"
)

// Bodies for the samples: a request to the offline model with one user
// message, and fragments put at the top level, in a message or in a tool.
func withTop(frag string) string {
	return `{"model":"offline-small","max_tokens":50,"messages":[{"role":"user","content":"hi"}],` + frag + `}`
}

func withMessages(msgs string) string {
	return `{"model":"offline-small","max_tokens":50,"messages":[` + msgs + `]}`
}

// withBlock puts block in an assistant turn between two user turns.
func withBlock(block string) string {
	return withMessages(`{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"so"},` + block + `]},{"role":"user","content":"go on"}`)
}

func withTool(frag string) string {
	return withTop(`"tools":[{"name":"lookup","input_schema":{"type":"object"}` + frag + `}]`)
}

const useAndResult = `{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}]},`

func withResult(result string) string {
	return withMessages(useAndResult + `{"role":"user","content":[` + result + `]}`)
}

// sample is a request holding one row's field, and what to check.
type sample struct {
	body string
	// refusedAs is what the 400 of a refused or carried row names.
	refusedAs string
	// mapped checks the neutral value of a mapped row.
	mapped func(hooks.ModelRequest) bool
}

var samples = map[string]sample{
	"model":                                 {body: withTop(`"temperature":1`)},
	"max_tokens":                            {body: withTop(`"temperature":1`)},
	"messages":                              {body: withTop(`"temperature":1`)},
	"billing_policy":                        {body: withTop(`"billing_policy":{"type":"billing_policy","bill_to":"user_profile"}`)},
	"cache_control":                         {body: withTop(`"cache_control":{"type":"ephemeral"}`)},
	"compaction":                            {body: withTop(`"compaction":{"type":"summarize"}`), refusedAs: "compaction"},
	"container":                             {body: withTop(`"container":"container_1"`), refusedAs: "container"},
	"context_management":                    {body: withTop(`"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}`)},
	"diagnostics":                           {body: withTop(`"diagnostics":{"previous_message_id":"msg_1"}`)},
	"fallback_credit_token":                 {body: withTop(`"fallback_credit_token":"fct_1"`)},
	"fallbacks":                             {body: withTop(`"fallbacks":"default"`)},
	"inference_geo":                         {body: withTop(`"inference_geo":"eu"`), refusedAs: "inference_geo"},
	"mcp_servers":                           {body: withTop(`"mcp_servers":[{"type":"url","name":"docs","url":"https://mcp.example.com"}]`), refusedAs: "mcp_servers"},
	"metadata":                              {body: withTop(`"metadata":{"user_id":"u-1","trace":"t-9"}`)},
	"metadata.user_id":                      {body: withTop(`"metadata":{"user_id":"user_abc_account__session_1"}`), mapped: func(r hooks.ModelRequest) bool { return r.User == "user_abc_account__session_1" }},
	"output_config":                         {body: withTop(`"output_config":{}`)},
	"output_config.effort":                  {body: withTop(`"output_config":{"effort":"high"}`)},
	"output_config.format":                  {body: withTop(`"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}`), refusedAs: "output_config.format"},
	"output_config.task_budget":             {body: withTop(`"output_config":{"task_budget":{"type":"tokens","total":1000}}`)},
	"output_format":                         {body: withTop(`"output_format":{"type":"json_schema","schema":{"type":"object"}}`), refusedAs: "output_format"},
	"service_tier":                          {body: withTop(`"service_tier":"standard_only"`)},
	"speed":                                 {body: withTop(`"speed":"fast"`)},
	"stop_sequences":                        {body: withTop(`"stop_sequences":["END","\n\nHuman:"]`), mapped: func(r hooks.ModelRequest) bool { return slices.Equal(r.Stop, []string{"END", "\n\nHuman:"}) }},
	"stream":                                {body: withTop(`"stream":false`)},
	"system":                                {body: withTop(`"system":[{"type":"text","text":"be brief"}]`)},
	"system[].cache_control":                {body: withTop(`"system":[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral","ttl":"1h"}}]`)},
	"system[].citations":                    {body: withTop(`"system":[{"type":"text","text":"be brief","citations":[{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}]}]`)},
	"temperature":                           {body: withTop(`"temperature":0.2`)},
	"thinking":                              {body: withTop(`"thinking":{"type":"adaptive"}`)},
	"thread":                                {body: withTop(`"thread":{"type":"continue","previous_message_id":"msg_1"}`), refusedAs: "thread"},
	"tool_choice":                           {body: withTop(`"tools":[{"name":"lookup","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"lookup"}`), refusedAs: "tool_choice"},
	"tool_choice.disable_parallel_tool_use": {body: withTop(`"tools":[{"name":"lookup","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`), refusedAs: "tool_choice.disable_parallel_tool_use"},
	"tools":                                 {body: withTool(``)},
	"top_k":                                 {body: withTop(`"top_k":5`)},
	"top_p":                                 {body: withTop(`"top_p":0.9`), mapped: func(r hooks.ModelRequest) bool { return r.TopP != nil && *r.TopP == 0.9 }},

	"messages[].role": {body: withMessages(`{"role":"user","content":"hi"}`)},
	"messages[] (role system)": {body: withMessages(`{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"<system-reminder>be brief</system-reminder>"}]},{"role":"user","content":"go on"}`),
		mapped: func(r hooks.ModelRequest) bool {
			return len(r.Messages) == 3 && r.Messages[1].Role == hooks.RoleSystem && r.Messages[1].Content == "<system-reminder>be brief</system-reminder>"
		}},
	"messages[].clear_at":                          {body: withMessages(`{"role":"user","content":"hi"},{"role":"system","content":"be brief","clear_at":"next_user_message"}`)},
	"messages[].output_config":                     {body: withMessages(`{"role":"user","content":"hi"},{"role":"system","content":"be brief","output_config":{"effort":"low"}}`)},
	"messages[].content":                           {body: withMessages(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)},
	"messages[].content[] (text)":                  {body: withMessages(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)},
	"messages[].content[].cache_control":           {body: withMessages(`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`)},
	"messages[].content[].citations":               {body: withBlock(`{"type":"text","text":"cited","citations":[{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}]}`)},
	"messages[].content[] (tool_use)":              {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}`)},
	"messages[].content[].caller":                  {body: withMessages(`{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup","input":{},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_1"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}`), refusedAs: "messages[1].content[0].caller"},
	"messages[].content[].toolset_name":            {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","toolset_name":"docs"}`), refusedAs: "messages[2].content[0].toolset_name"},
	"messages[].content[] (tool_result)":           {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}`)},
	"messages[].content[].content":                 {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"}]}`)},
	"messages[].content[].is_error":                {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":"no","is_error":true}`)},
	"messages[].content[].content[].cache_control": {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok","cache_control":{"type":"ephemeral"}}]}`)},
	"messages[].content[].content[].citations":     {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok","citations":[]}]}`)},
	"messages[].content[].content[] (image, document, search_result, tool_reference)": {body: withResult(`{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"lookup"}]}`), refusedAs: "messages[2].content[0].content[0] (tool_reference)"},
	"messages[].content[] (image)":             {body: withMessages(`{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]}`), refusedAs: "messages[0].content[0] (image)"},
	"messages[].content[] (document)":          {body: withMessages(`{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"x"}}]}`), refusedAs: "messages[0].content[0] (document)"},
	"messages[].content[] (search_result)":     {body: withMessages(`{"role":"user","content":[{"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"x"}]}]}`), refusedAs: "messages[0].content[0] (search_result)"},
	"messages[].content[] (thinking)":          {body: withBlock(`{"type":"thinking","thinking":"hm","signature":"EqQB"}`)},
	"messages[].content[] (redacted_thinking)": {body: withBlock(`{"type":"redacted_thinking","data":"EmwK"}`)},

	"tools[].name":                  {body: withTool(``)},
	"tools[].description":           {body: withTool(`,"description":"looks up"`)},
	"tools[].input_schema":          {body: withTool(``)},
	"tools[].type":                  {body: withTool(`,"type":"custom"`)},
	"tools[].cache_control":         {body: withTool(`,"cache_control":{"type":"ephemeral"}`)},
	"tools[].defer_loading":         {body: withTool(`,"defer_loading":true`)},
	"tools[].eager_input_streaming": {body: withTool(`,"eager_input_streaming":true`)},
	"tools[].strict":                {body: withTool(`,"strict":true`)},
	"tools[].input_examples":        {body: withTool(`,"input_examples":[{"q":"x"}]`)},
	"tools[].allowed_callers":       {body: withTool(`,"allowed_callers":["code_execution_20250825"]`), refusedAs: "tools[0].allowed_callers"},
	"tools[] (server tools: web_search_*, bash_*, code_execution_*, mcp_toolset, …)": {body: withTop(`"tools":[{"type":"web_search_20250305","name":"web_search"}]`), refusedAs: "tools[0] (web_search_20250305)"},
}

func init() {
	for _, typ := range []string{
		"server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "advisor_tool_result",
		"code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
		"tool_search_tool_result", "mcp_tool_use", "mcp_tool_result", "mcp_tool_listing",
		"container_upload", "compaction", "tool_addition", "tool_removal", "fallback",
	} {
		samples["messages[].content[] ("+typ+")"] = sample{body: withBlock(`{"type":"` + typ + `"}`), refusedAs: "messages[1].content[1] (" + typ + ")"}
	}
}

// drops records the fields the relay counts as dropped.
type drops struct {
	mu     sync.Mutex
	fields []string
}

func (d *drops) Round(llm.Protocol) {}
func (d *drops) ToolCall(string)    {}
func (d *drops) FieldDropped(endpoint, field string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if endpoint == "/v1/messages" {
		d.fields = append(d.fields, field)
	}
}

// Every row of the table holds for a request sent to an upstream of
// another protocol (the offline model): a hint is accepted and counted, a
// mapped field sets its neutral value, a refused or carried field is a 400
// naming it, and a translated one is served.
func TestFieldTableHolds(t *testing.T) {
	front := messages.New()
	for _, row := range front.Fields() {
		if strings.HasPrefix(row.Path, "header: ") {
			continue // headers do not reach Decode; the gateway's tests hold them
		}
		t.Run(row.Path, func(t *testing.T) {
			s, ok := samples[row.Path]
			if !ok {
				t.Fatalf("no sample request for the row %q (%s): add one", row.Path, row.Handling)
			}
			call, err := front.Decode([]byte(s.body))
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, s.body)
			}
			rec := &drops{}
			r := relay.New(relay.Config{Provider: offline.New(), Observe: rec})
			_, err = r.Run(context.Background(), front, call, nil)
			switch row.Handling {
			case dialect.Refused, dialect.Carried:
				var e *dialect.Error
				if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, s.refusedAs) || s.refusedAs == "" {
					t.Fatalf("across protocols: %v, want a 400 naming %q", err, s.refusedAs)
				}
				return
			}
			if err != nil {
				t.Fatalf("across protocols: %v", err)
			}
			switch row.Handling {
			case dialect.Hint:
				if !slices.Contains(rec.fields, row.Path) {
					t.Errorf("dropped %q, want %q counted", rec.fields, row.Path)
				}
			case dialect.Mapped:
				if s.mapped == nil || !s.mapped(call.Request) {
					t.Errorf("the neutral request does not hold the mapped value: %+v", call.Request)
				}
			}
			for _, f := range rec.fields {
				if h := handling(front, f); h != dialect.Hint {
					t.Errorf("counted %q as dropped, whose row is %q", f, h)
				}
			}
		})
	}
}

func handling(front *messages.Front, path string) dialect.Handling {
	for _, f := range front.Fields() {
		if f.Path == path {
			return f.Handling
		}
	}
	return "not in the table"
}

// On the same protocol nothing is dropped or refused: every field reaches
// the upstream (the Pass keeps it), mapped ones included.
func TestMappedFieldsStayForTheSameProtocol(t *testing.T) {
	call, err := messages.New().Decode([]byte(withTop(`"top_p":0.9,"stop_sequences":["END"],"metadata":{"user_id":"u"},"top_k":3`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"top_p", "stop_sequences", "metadata", "top_k"} {
		if _, ok := call.Pass.Fields[k]; !ok {
			t.Errorf("%s is not kept for an Anthropic upstream", k)
		}
	}
}

// A field newer than the table is dropped inside metadata, a hint
// position, and foreign anywhere else; so are blocks of a system message
// that are not text.
func TestFieldsNewerThanTheTable(t *testing.T) {
	tests := []struct {
		body             string
		foreign, dropped []string
	}{
		{withTop(`"metadata":{"user_id":"u","session_tag":"x"}`), nil, []string{"metadata"}},
		{withTop(`"x_future":{"a":1}`), []string{"x_future"}, nil},
		{withTop(`"output_config":{"effort":"low","x_future":1}`), []string{"output_config.x_future"}, []string{"output_config.effort"}},
		{withTool(`,"x_future":true`), []string{"tools[0].x_future"}, nil},
		{withMessages(`{"role":"user","content":"hi"},{"role":"system","content":[{"type":"text","text":"t"},{"type":"tool_addition","tool":{"type":"tool_reference","tool_name":"x"}}]}`),
			[]string{"messages[1].content[1] (tool_addition)"}, nil},
		{withMessages(`{"role":"user","content":"hi","x_future":1}`), []string{"messages[0].x_future"}, nil},
	}
	for _, tt := range tests {
		call, err := messages.New().Decode([]byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.body, err)
		}
		if !slices.Equal(call.Foreign, tt.foreign) || !slices.Equal(call.Dropped, tt.dropped) {
			t.Errorf("%s:\nforeign %q, dropped %q\nwant    %q, %q", tt.body, call.Foreign, call.Dropped, tt.foreign, tt.dropped)
		}
	}
}
