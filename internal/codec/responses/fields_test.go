package responses_test

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/dialect/dialecttest"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/internal/streamcheck"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// example is a request holding one row's field with a value that asks for
// something (not the protocol's default), and for a mapped row what the
// neutral request must then say.
type example = dialecttest.Example

func with(fields string) string { return `{"model":"m","input":"hi",` + fields + `}` }

func items(it ...string) string {
	return `{"model":"m","input":[` + strings.Join(it, ",") + `]}`
}

const (
	ask       = `{"role":"user","content":"hi"}`
	fnTool    = `{"type":"function","name":"f","parameters":{"type":"object"}}`
	callItem  = `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`
	outItem   = `{"type":"function_call_output","call_id":"c1","output":"done"}`
	asstText  = `{"type":"output_text","text":"ok"}`
	asstParts = `{"type":"message","role":"assistant","content":[` + asstText + `]}`
)

var examples = map[string]example{
	"background":                                       {Body: with(`"background":true`)},
	"conversation":                                     {Body: with(`"conversation":"conv_1"`)},
	"include[]: reasoning.encrypted_content":           {Body: with(`"include":["reasoning.encrypted_content"]`)},
	"include[]: message.output_text.logprobs":          {Body: with(`"include":["message.output_text.logprobs"]`)},
	"include[]: web_search_call.action.sources":        {Body: with(`"include":["web_search_call.action.sources"]`)},
	"include[]: code_interpreter_call.outputs":         {Body: with(`"include":["code_interpreter_call.outputs"]`)},
	"include[]: computer_call_output.output.image_url": {Body: with(`"include":["computer_call_output.output.image_url"]`)},
	"include[]: file_search_call.results":              {Body: with(`"include":["file_search_call.results"]`)},
	"include[]: message.input_image.image_url":         {Body: with(`"include":["message.input_image.image_url"]`)},
	"input":                              {Body: items(ask)},
	"instructions":                       {Body: with(`"instructions":"be brief"`)},
	"max_output_tokens":                  {Body: with(`"max_output_tokens":10`)},
	"max_tool_calls":                     {Body: with(`"max_tool_calls":3`)},
	"metadata":                           {Body: with(`"metadata":{"run":"r1"}`)},
	"model":                              {Body: with(`"stream":false`)},
	"parallel_tool_calls":                {Body: with(`"parallel_tool_calls":false`)},
	"prompt":                             {Body: with(`"prompt":{"id":"pmpt_1","version":"2"}`)},
	"prompt_cache_key":                   {Body: with(`"prompt_cache_key":"k1"`)},
	"prompt_cache_retention":             {Body: with(`"prompt_cache_retention":"24h"`)},
	"reasoning":                          {Body: with(`"reasoning":{"effort":"high","summary":"auto"}`)},
	"safety_identifier":                  {Body: with(`"safety_identifier":"u-1"`), Mapped: func(r hooks.ModelRequest) bool { return r.User == "u-1" }},
	"service_tier":                       {Body: with(`"service_tier":"flex"`)},
	"store":                              {Body: with(`"store":false`)},
	"stream":                             {Body: with(`"stream":true`)},
	"stream_options.include_obfuscation": {Body: with(`"stream":true,"stream_options":{"include_obfuscation":false}`)},
	"stream_options.*":                   {Body: with(`"stream":true,"stream_options":{"some_future_option":true}`)},
	"temperature":                        {Body: with(`"temperature":0.5`)},
	"text.format":                        {Body: with(`"text":{"format":{"type":"json_object"}}`)},
	"text.verbosity":                     {Body: with(`"text":{"verbosity":"low"}`)},
	"tool_choice":                        {Body: with(`"tool_choice":"required","tools":[` + fnTool + `]`)},
	"tools":                              {Body: with(`"tools":[` + fnTool + `]`)},
	"top_logprobs":                       {Body: with(`"top_logprobs":3`)},
	"top_p":                              {Body: with(`"top_p":0.5`), Mapped: func(r hooks.ModelRequest) bool { return r.TopP != nil && *r.TopP == 0.5 }},
	"truncation":                         {Body: with(`"truncation":"auto"`)},
	"user":                               {Body: with(`"user":"u-2"`), Mapped: func(r hooks.ModelRequest) bool { return r.User == "u-2" }},
	"client_metadata":                    {Body: with(`"client_metadata":{"originator":"codex_cli_rs"}`)},
	"input[].type":                       {Body: items(ask, callItem, outItem)},
	"input[].role":                       {Body: items(`{"type":"message","role":"developer","content":"be brief"}`, ask)},
	"input[].content":                    {Body: items(`{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}`)},
	"input[].call_id":                    {Body: items(ask, callItem, outItem)},
	"input[].name":                       {Body: items(ask, callItem, outItem)},
	"input[].arguments":                  {Body: items(ask, callItem, outItem)},
	"input[].output":                     {Body: items(ask, callItem, `{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"done"}]}`)},
	"input[].id":                         {Body: items(`{"type":"message","id":"msg_1","role":"user","content":"hi"}`)},
	"input[].status":                     {Body: items(ask, `{"type":"message","role":"assistant","status":"completed","content":[`+asstText+`]}`)},
	"input[].phase":                      {Body: items(ask, `{"type":"message","role":"assistant","phase":"final_answer","content":[`+asstText+`]}`)},
	"input[] (reasoning)":                {Body: items(ask, `{"type":"reasoning","summary":[],"encrypted_content":"gAAAA-opaque"}`, asstParts)},
	"input[] (other types)":              {Body: items(ask, `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}`)},
	"input[].content[] (input_text)":     {Body: items(`{"role":"user","content":[{"type":"input_text","text":"hi"}]}`)},
	"input[].content[] (output_text)":    {Body: items(ask, asstParts)},
	"input[].content[] (refusal)":        {Body: items(ask, `{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"no"}]}`)},
	"input[].content[].annotations":      {Body: items(ask, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[{"type":"url_citation","url":"https://x.test","start_index":0,"end_index":2,"title":"x"}]}]}`)},
	"input[].content[].logprobs":         {Body: items(ask, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok","logprobs":[{"token":"ok","logprob":-0.1,"bytes":[111,107],"top_logprobs":[]}]}]}`)},
	"input[].content[] (input_image)":    {Body: items(`{"role":"user","content":[{"type":"input_image","image_url":"https://x.test/a.png"}]}`)},
	"input[].content[] (input_file)":     {Body: items(`{"role":"user","content":[{"type":"input_file","file_id":"file_1"}]}`)},
	"input[].content[] (input_audio)":    {Body: items(`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}`)},
	"tools[].type":                       {Body: with(`"tools":[` + fnTool + `]`)},
	"tools[].name":                       {Body: with(`"tools":[` + fnTool + `]`)},
	"tools[].description":                {Body: with(`"tools":[{"type":"function","name":"f","description":"does f","parameters":{"type":"object"}}]`)},
	"tools[].parameters":                 {Body: with(`"tools":[` + fnTool + `]`)},
	"tools[].strict":                     {Body: with(`"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"strict":true}]`)},
	"tools[] (built-in)":                 {Body: with(`"tools":[{"type":"web_search"}]`)},
	"tools[] (namespace)":                {Body: with(`"tools":[{"type":"namespace","name":"agents","description":"d","tools":[{"type":"function","name":"spawn","parameters":{"type":"object"}}]}]`)},
}

// stateRows are resolved from hookhost's own store of responses, which
// holds and tests them itself; this front's decoder leaves them as they
// were.
var stateRows = map[string]bool{"previous_response_id": true, "input[] (item_reference)": true}

var headers = []string{"authorization", "openai-organization", "openai-project", "openai-beta", "idempotency-key", "x-stainless-*", "user-agent"}

// TestFieldsTableDrivesDecode decodes, for every row of the table, a
// request holding that field, and holds the decoder to the row: a
// translated or mapped field is read (a mapped one into the neutral
// request), a hint is dropped by its row's path and nothing else, a
// refused field is a 400 or named in Foreign. Every row has its example,
// and every example its row.
func TestFieldsTableDrivesDecode(t *testing.T) {
	dialecttest.CheckRows(t, responses.New(), examples, func(path string) bool { return stateRows[path] }, headers)
	missing := maps.Clone(stateRows)
	for _, row := range responses.New().Fields() {
		delete(missing, row.Path)
	}
	for path := range missing {
		t.Errorf("the table has no row for %q", path)
	}
}

func TestDecodeRefusesBadMappedValues(t *testing.T) {
	for _, c := range []struct{ name, body, param string }{
		{"top_p above 1", with(`"top_p":1.5`), "top_p"},
		{"top_p a string", with(`"top_p":"x"`), "top_p"},
		{"user a number", with(`"user":3`), "user"},
		{"safety_identifier an object", with(`"safety_identifier":{}`), "safety_identifier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := responses.New().Decode([]byte(c.body))
			var de *dialect.Error
			if !errors.As(err, &de) || de.Status != 400 || de.Param != c.param {
				t.Errorf("Decode = %v, want a 400 about %s", err, c.param)
			}
		})
	}
}

// Keys no row names are Foreign wherever they sit outside a hint position:
// on items, on text parts, on function tools, under text, in include.
func TestDecodeNamesUnknownKeysForeign(t *testing.T) {
	body := `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi","future_part_key":1}],"future_item_key":"x"},` +
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}","future_call_key":true},` +
		`{"type":"function_call_output","call_id":"c1","output":"ok","id":"fco_1"}],` +
		`"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"defer_loading":true}],` +
		`"text":{"future_text_key":"x"},"include":["some.future.include"]}`
	call, err := responses.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"include[0] (some.future.include)", "text.future_text_key", "tools[0].defer_loading",
		"input[0].future_item_key", "input[0].content[0].future_part_key", "input[1].future_call_key"}
	if !slices.Equal(call.Foreign, want) {
		t.Errorf("foreign =\n%q\nwant\n%q", call.Foreign, want)
	}
	if !slices.Equal(call.Dropped, []string{"input[].id"}) {
		t.Errorf("dropped = %q", call.Dropped)
	}
}

// drops counts what the relay reports, as the server's metrics do.
type drops struct {
	mu  sync.Mutex
	got map[string]int
}

func (d *drops) Round(llm.Protocol) {}
func (d *drops) ToolCall(string)    {}
func (d *drops) FieldDropped(endpoint, field string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.got == nil {
		d.got = map[string]int{}
	}
	d.got[endpoint+" "+field]++
}

func (d *drops) count(field string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got["/v1/responses "+field]
}

func anthropicText(text string) fakeapi.Reply {
	return fakeapi.JSON(200, `{"id":"msg_up","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":`+
		fakeapi.Quote(text)+`}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":3}}`)
}

// anthropicStream is an Anthropic stream of one content block, text or a
// tool_use whose input arrives as one fragment.
func anthropicStream(block, delta, stop string) fakeapi.Reply {
	return fakeapi.SSE(
		fakeapi.Named("message_start", `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`),
		fakeapi.Named("content_block_start", `{"type":"content_block_start","index":0,"content_block":`+block+`}`),
		fakeapi.Named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+delta+`}`),
		fakeapi.Named("content_block_stop", `{"type":"content_block_stop","index":0}`),
		fakeapi.Named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":3}}`),
		fakeapi.Named("message_stop", `{"type":"message_stop"}`),
	)
}

func anthropicStreamText(text string) fakeapi.Reply {
	return anthropicStream(`{"type":"text","text":""}`, `{"type":"text_delta","text":`+fakeapi.Quote(text)+`}`, "end_turn")
}

func anthropicStreamToolUse(id, name, input string) fakeapi.Reply {
	return anthropicStream(`{"type":"tool_use","id":`+fakeapi.Quote(id)+`,"name":`+fakeapi.Quote(name)+`,"input":{}}`,
		`{"type":"input_json_delta","partial_json":`+fakeapi.Quote(input)+`}`, "tool_use")
}

// crossGateway is the Responses front, the relay (no plugins) and an
// Anthropic upstream: every request crosses protocols.
type crossGateway struct {
	r     *relay.Relay
	up    *fakeapi.Server
	drops *drops
}

func newCrossGateway(t *testing.T, replies ...fakeapi.Reply) *crossGateway {
	t.Helper()
	up := fakeapi.New(t, replies...)
	prov, err := anthropic.New(anthropic.Config{BaseURL: up.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	d := &drops{}
	return &crossGateway{r: relay.New(relay.Config{Provider: prov, Store: relay.NewStore(time.Minute, 100), Observe: d}), up: up, drops: d}
}

// run decodes body and runs it; a streamed answer is written to a
// recorder, whose body is returned, and a whole one encoded.
func (g *crossGateway) run(t *testing.T, body string) (*dialect.Call, []byte) {
	t.Helper()
	front := responses.New()
	call, err := front.Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if call.Stream {
		rec := httptest.NewRecorder()
		sink := front.NewStream(rec, call, dialect.Meta{Model: call.Request.Model})
		if _, err := g.r.Run(ctx, front, call, sink); err != nil {
			t.Fatalf("Run: %v", err)
		}
		return call, rec.Body.Bytes()
	}
	res, err := g.r.Run(ctx, front, call, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out, err := front.Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	return call, out
}

// TestEveryHintCrossesTheRelayCounted runs each hint row's example through
// the relay to an Anthropic upstream: the request is answered, and the
// drop is counted under the front's endpoint and the row's path.
func TestEveryHintCrossesTheRelayCounted(t *testing.T) {
	for _, row := range responses.New().Fields() {
		if row.Handling != dialect.Hint || strings.HasPrefix(row.Path, "header: ") {
			continue
		}
		t.Run(row.Path, func(t *testing.T) {
			body := examples[row.Path].Body
			streamed := strings.Contains(body, `"stream":true`)
			reply := anthropicText("done")
			if streamed {
				reply = anthropicStreamText("done")
			}
			g := newCrossGateway(t, reply)
			_, out := g.run(t, body)
			if streamed {
				s, err := streamcheck.Responses(out)
				if err != nil || s.Text != "done" {
					t.Errorf("stream %v, text %q:\n%s", err, s.Text, out)
				}
			} else if !strings.Contains(string(out), `"done"`) {
				t.Errorf("answer %s", out)
			}
			if n := g.drops.count(row.Path); n != 1 {
				t.Errorf("dropped %q counted %d times, want 1 (counted: %v)", row.Path, n, g.drops.got)
			}
		})
	}
}
