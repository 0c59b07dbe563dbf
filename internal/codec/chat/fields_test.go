package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/dialect/dialecttest"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// example is a request holding one row's field with a value that asks for
// something (not the protocol's default), and for a mapped row what the
// neutral request must then say.
type example = dialecttest.Example

const user = `{"role":"user","content":"hi"}`

func with(fields string) string {
	return `{"model":"m","messages":[` + user + `],` + fields + `}`
}

func msgs(m ...string) string {
	return `{"model":"m","messages":[` + strings.Join(m, ",") + `]}`
}

const asstCall = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`

var examples = map[string]example{
	"model":                              {Body: msgs(user)},
	"messages":                           {Body: msgs(`{"role":"system","content":"be brief"}`, user)},
	"audio":                              {Body: with(`"audio":{"voice":"alloy","format":"wav"}`)},
	"frequency_penalty":                  {Body: with(`"frequency_penalty":0.5`)},
	"function_call":                      {Body: with(`"function_call":"auto"`)},
	"functions":                          {Body: with(`"functions":[{"name":"f"}]`)},
	"logit_bias":                         {Body: with(`"logit_bias":{"50256":-100}`)},
	"logprobs":                           {Body: with(`"logprobs":true`)},
	"max_completion_tokens":              {Body: with(`"max_completion_tokens":10`)},
	"max_tokens":                         {Body: with(`"max_tokens":10`)},
	"metadata":                           {Body: with(`"metadata":{"run":"r1"}`)},
	"modalities":                         {Body: with(`"modalities":["text","audio"]`)},
	"n":                                  {Body: with(`"n":2`)},
	"parallel_tool_calls":                {Body: with(`"parallel_tool_calls":false`)},
	"prediction":                         {Body: with(`"prediction":{"type":"content","content":"hello"}`)},
	"presence_penalty":                   {Body: with(`"presence_penalty":0.5`)},
	"prompt_cache_key":                   {Body: with(`"prompt_cache_key":"k1"`)},
	"prompt_cache_retention":             {Body: with(`"prompt_cache_retention":"24h"`)},
	"reasoning_effort":                   {Body: with(`"reasoning_effort":"low"`)},
	"response_format":                    {Body: with(`"response_format":{"type":"json_object"}`)},
	"safety_identifier":                  {Body: with(`"safety_identifier":"u-1"`), Mapped: func(r hooks.ModelRequest) bool { return r.User == "u-1" }},
	"seed":                               {Body: with(`"seed":7`), Mapped: func(r hooks.ModelRequest) bool { return r.Seed != nil && *r.Seed == 7 }},
	"service_tier":                       {Body: with(`"service_tier":"flex"`)},
	"stop":                               {Body: with(`"stop":["\n\n","END"]`), Mapped: func(r hooks.ModelRequest) bool { return slices.Equal(r.Stop, []string{"\n\n", "END"}) }},
	"store":                              {Body: with(`"store":true`)},
	"stream":                             {Body: with(`"stream":true`)},
	"stream_options.include_usage":       {Body: with(`"stream":true,"stream_options":{"include_usage":true}`)},
	"stream_options.include_obfuscation": {Body: with(`"stream":true,"stream_options":{"include_obfuscation":false}`)},
	"stream_options.*":                   {Body: with(`"stream":true,"stream_options":{"some_future_option":true}`)},
	"temperature":                        {Body: with(`"temperature":0.5`)},
	"tool_choice":                        {Body: with(`"tool_choice":"required","tools":[{"type":"function","function":{"name":"f"}}]`)},
	"tools":                              {Body: with(`"tools":[{"type":"function","function":{"name":"f"}}]`)},
	"top_logprobs":                       {Body: with(`"logprobs":false,"top_logprobs":3`)},
	"top_p":                              {Body: with(`"top_p":0.5`), Mapped: func(r hooks.ModelRequest) bool { return r.TopP != nil && *r.TopP == 0.5 }},
	"user":                               {Body: with(`"user":"u-2"`), Mapped: func(r hooks.ModelRequest) bool { return r.User == "u-2" }},
	"verbosity":                          {Body: with(`"verbosity":"low"`)},
	"web_search_options":                 {Body: with(`"web_search_options":{"search_context_size":"low"}`)},
	"messages[].role":                    {Body: msgs(`{"role":"developer","content":"be brief"}`, user)},
	"messages[].content":                 {Body: msgs(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`)},
	"messages[].name":                    {Body: msgs(`{"role":"user","name":"alice","content":"hi"}`)},
	"messages[].cache_control":           {Body: msgs(`{"role":"user","content":"hi","cache_control":{"type":"ephemeral"}}`)},
	"messages[].name (role tool)":        {Body: msgs(user, `{"role":"tool","tool_call_id":"c9","name":"get_weather","content":"sunny"}`), Mapped: func(r hooks.ModelRequest) bool { return r.Messages[1].ToolName == "get_weather" }},
	"messages[].tool_call_id":            {Body: msgs(user, asstCall, `{"role":"tool","tool_call_id":"c1","content":"sunny"}`)},
	"messages[].tool_calls":              {Body: msgs(user, asstCall)},
	"messages[].tool_calls[] (custom)":   {Body: msgs(user, `{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"run","input":"ls"}}]}`)},
	"messages[].refusal":                 {Body: msgs(user, `{"role":"assistant","content":null,"refusal":"no"}`)},
	"messages[].audio":                   {Body: msgs(user, `{"role":"assistant","content":"ok","audio":{"id":"audio_1"}}`)},
	"messages[].function_call":           {Body: msgs(user, `{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}`)},
	"messages[].content[] (text)":        {Body: msgs(`{"role":"user","content":[{"type":"text","text":"hi"}]}`)},
	"messages[].content[] (refusal)":     {Body: msgs(user, `{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}`)},
	"messages[].content[].role":          {Body: msgs(user, `{"role":"assistant","content":[{"type":"text","text":"hello","role":"assistant"}]}`)},
	"messages[].content[].cache_control": {Body: msgs(`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}`)},
	"messages[].content[] (image_url)":   {Body: msgs(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]}`)},
	"messages[].content[] (input_audio)": {Body: msgs(`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}`)},
	"messages[].content[] (file)":        {Body: msgs(`{"role":"user","content":[{"type":"file","file":{"file_id":"f1"}}]}`)},
	"tools[].type":                       {Body: with(`"tools":[{"type":"function","function":{"name":"f"}}]`)},
	"tools[].function.name":              {Body: with(`"tools":[{"type":"function","function":{"name":"f"}}]`)},
	"tools[].function.description":       {Body: with(`"tools":[{"type":"function","function":{"name":"f","description":"does f"}}]`)},
	"tools[].function.parameters":        {Body: with(`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`)},
	"tools[].function.strict":            {Body: with(`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}]`)},
}

// headers are the request headers the official SDKs send, each of which
// the table must say the handling of.
var headers = []string{"authorization", "openai-organization", "openai-project", "openai-beta", "idempotency-key", "x-stainless-*", "user-agent"}

// TestFieldsTableDrivesDecode decodes, for every row of the table, a
// request holding that field, and holds the decoder to the row: a
// translated or mapped field is read (a mapped one into the neutral
// request), a hint is dropped by its row's path and nothing else, a
// refused field is a 400 or named in Foreign. Every row has its example,
// and every example its row.
func TestFieldsTableDrivesDecode(t *testing.T) {
	dialecttest.CheckRows(t, chat.New(), examples, nil, headers)
}

func TestDecodeRefusesBadMappedValues(t *testing.T) {
	for _, c := range []struct{ name, body, param string }{
		{"top_p above 1", with(`"top_p":1.5`), "top_p"},
		{"top_p a string", with(`"top_p":"x"`), "top_p"},
		{"seed a fraction", with(`"seed":1.5`), "seed"},
		{"seed a string", with(`"seed":"7"`), "seed"},
		{"stop a number", with(`"stop":3`), "stop"},
		{"stop with a number", with(`"stop":["a",3]`), "stop"},
		{"user a number", with(`"user":3`), "user"},
		{"safety_identifier an object", with(`"safety_identifier":{}`), "safety_identifier"},
		{"tool name a number", msgs(user, asstCall, `{"role":"tool","tool_call_id":"c1","name":5,"content":"x"}`), "messages[2].name"},
		{"stream_options not an object", with(`"stream":true,"stream_options":[1]`), "stream_options"},
		{"refusal part without refusal", msgs(user, `{"role":"assistant","content":[{"type":"refusal"}]}`), "messages[1].content[0].refusal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := chat.New().Decode([]byte(c.body))
			var de *dialect.Error
			if !errors.As(err, &de) || de.Status != 400 || de.Param != c.param {
				t.Errorf("Decode = %v, want a 400 about %s", err, c.param)
			}
		})
	}
}

// A stop given as one string is one sequence; safety_identifier names the
// end user over the deprecated user.
func TestDecodeStopStringAndSafetyIdentifierWins(t *testing.T) {
	call, err := chat.New().Decode([]byte(with(`"stop":"END","user":"old","safety_identifier":"new"`)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(call.Request.Stop, []string{"END"}) || call.Request.User != "new" {
		t.Errorf("stop %q, user %q", call.Request.Stop, call.Request.User)
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

func (d *drops) count(endpoint, field string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got[endpoint+" "+field]
}

// anthropicText is an Anthropic answer of plain text.
func anthropicText(text string) fakeapi.Reply {
	return fakeapi.JSON(200, `{"id":"msg_up","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":`+
		fakeapi.Quote(text)+`}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":3}}`)
}

// anthropicStreamText is an Anthropic stream of plain text.
func anthropicStreamText(text string) fakeapi.Reply {
	return fakeapi.SSE(
		fakeapi.Named("message_start", `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`),
		fakeapi.Named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		fakeapi.Named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+fakeapi.Quote(text)+`}}`),
		fakeapi.Named("content_block_stop", `{"type":"content_block_stop","index":0}`),
		fakeapi.Named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`),
		fakeapi.Named("message_stop", `{"type":"message_stop"}`),
	)
}

// anthropicToolUse is an Anthropic answer calling one tool.
func anthropicToolUse(id, name, input string) fakeapi.Reply {
	return fakeapi.JSON(200, `{"id":"msg_up","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":`+
		fakeapi.Quote(id)+`,"name":`+fakeapi.Quote(name)+`,"input":`+input+`}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":3}}`)
}

// crossGateway is the Chat Completions front, the relay (no plugins) and
// an Anthropic upstream: every request crosses protocols.
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

// run decodes body and runs it; a streamed request is written to a
// recorder, whose body is returned, and a whole one encoded.
func (g *crossGateway) run(t *testing.T, body string) (*dialect.Call, []byte) {
	t.Helper()
	front := chat.New()
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

// upstreamBody is the n-th request the Anthropic upstream received.
func (g *crossGateway) upstreamBody(t *testing.T, n int) map[string]json.RawMessage {
	t.Helper()
	reqs := g.up.Requests()
	if len(reqs) <= n {
		t.Fatalf("upstream got %d requests, want more than %d", len(reqs), n)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(reqs[n].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestEveryHintCrossesTheRelayCounted runs each hint row's example through
// the relay to an Anthropic upstream: the request is answered, and the
// drop is counted under the front's endpoint and the row's path.
func TestEveryHintCrossesTheRelayCounted(t *testing.T) {
	for _, row := range chat.New().Fields() {
		if row.Handling != dialect.Hint || strings.HasPrefix(row.Path, "header: ") {
			continue
		}
		t.Run(row.Path, func(t *testing.T) {
			body := examples[row.Path].Body
			reply := anthropicText("done")
			if strings.Contains(body, `"stream":true`) {
				reply = anthropicStreamText("done")
			}
			g := newCrossGateway(t, reply)
			_, out := g.run(t, body)
			if !strings.Contains(string(out), `"done"`) {
				t.Errorf("answer %s", out)
			}
			if n := g.drops.count("/v1/chat/completions", row.Path); n != 1 {
				t.Errorf("dropped %q counted %d times, want 1 (counted: %v)", row.Path, n, g.drops.got)
			}
		})
	}
}
