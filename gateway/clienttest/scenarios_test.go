package clienttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
)

// models of the fake upstreams, as the configs name them.
var models = map[string]string{chat: "gpt-test", responses: "gpt-test", messages: "claude-test"}

// config is a hookhost config in front of up, with the lookup plugin.
func config(up *upstream) string {
	provider, api := "openai", "chat"
	switch up.proto {
	case responses:
		api = "responses"
	case messages:
		provider, api = "anthropic", ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[llm]\nprovider = %q\nmodel = %q\nbase_url = %q\napi_key_env = %q\nmax_retries = 0\n", provider, models[up.proto], up.BaseURL(), upstreamKeyEnv)
	if api != "" {
		fmt.Fprintf(&b, "api = %q\n", api)
	}
	b.WriteString(plugins())
	return b.String()
}

func plugins() string {
	return fmt.Sprintf("[conversation]\nmax_iterations = 4\n[plugins]\nenabled = [\"lookup\"]\ndir = %q\n", binDir)
}

// TestFakesSatisfyTheSDKs points each SDK straight at the fake upstream of
// its protocol: the fakes the gateway is tested against must themselves be
// what the SDKs accept, and the stream checks must pass on them.
func TestFakesSatisfyTheSDKs(t *testing.T) {
	needClients(t)
	t.Parallel()
	for _, proto := range []string{chat, responses, messages} {
		up := newUpstream(t, proto)
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", proto, stream), func(t *testing.T) {
				rd := round{Text: "Hello there. ", Calls: []call{{ID: "call_time_0", Name: "get_time", Args: `{"zone":"CET"}`}}, In: 3, Out: 4}
				up.script(rd)
				o := runClient(t, up.URL(), proto, stream, request(proto, models[proto], []any{user("hi")}, []tool{getTime}, stream))
				v := check(t, proto, stream, o)
				if v.Text != rd.Text || !sameCalls(v.Calls, rd.Calls) || v.In != rd.In || v.Out != rd.Out || v.Stop != toolStop(proto) {
					t.Errorf("the SDK got %+v from the fake's round %+v", v, rd)
				}
				if got := o.only(t).bytes(); !bytes.Equal(got, up.responses()[0]) {
					t.Errorf("the captured body differs from what the fake sent:\n%s\n%s", got, up.responses()[0])
				}
			})
		}
	}
}

// suite is a fake upstream with hookhost serve in front of it on the
// gateway route.
type suite struct {
	up *upstream
	gw *servetest.Server
}

func newSuite(t *testing.T, proto string) *suite {
	up := newUpstream(t, proto)
	return &suite{up: up, gw: serve(t, config(up), true)}
}

// TestGatewayChatCompletions runs the scenarios on an OpenAI Chat
// Completions upstream with the openai client's chat.completions, then an
// Anthropic client on the same upstream, then the bypass route.
func TestGatewayChatCompletions(t *testing.T) {
	needClients(t)
	t.Parallel()
	s := newSuite(t, chat)
	s.sameProtocol(t, chat)
	t.Run("anthropic client/stream", func(t *testing.T) { s.pluginToolTwoRounds(t, messages, true) })
	t.Run("anthropic client/create", func(t *testing.T) { s.pluginToolTwoRounds(t, messages, false) })
	t.Run("anthropic client/untranslatable field", func(t *testing.T) { s.untranslatable(t, messages) })
	t.Run("bypass", func(t *testing.T) { bypass(t, s.up) })
}

// TestGatewayResponses runs the scenarios on an OpenAI Responses upstream
// with the openai client's responses, then the bypass route.
func TestGatewayResponses(t *testing.T) {
	needClients(t)
	t.Parallel()
	s := newSuite(t, responses)
	s.sameProtocol(t, responses)
	t.Run("bypass", func(t *testing.T) { bypass(t, s.up) })
}

// TestGatewayMessages runs the scenarios on an Anthropic Messages upstream
// with the @anthropic-ai/sdk client, then an OpenAI chat client on the same
// upstream, then the bypass route.
func TestGatewayMessages(t *testing.T) {
	needClients(t)
	t.Parallel()
	s := newSuite(t, messages)
	s.sameProtocol(t, messages)
	t.Run("openai chat client/stream", func(t *testing.T) { s.pluginToolTwoRounds(t, chat, true) })
	t.Run("openai chat client/create", func(t *testing.T) { s.pluginToolTwoRounds(t, chat, false) })
	t.Run("bypass", func(t *testing.T) { bypass(t, s.up) })
}

// sameProtocol runs every gateway scenario with the client speaking the
// upstream's protocol.
func (s *suite) sameProtocol(t *testing.T, sdk string) {
	for _, stream := range []bool{true, false} {
		mode := map[bool]string{true: "stream", false: "create"}[stream]
		t.Run("plugin tool over two rounds/"+mode, func(t *testing.T) { s.pluginToolTwoRounds(t, sdk, stream) })
		t.Run("mixed then continued/"+mode, func(t *testing.T) { s.mixed(t, sdk, stream) })
		t.Run("blocked client tool/"+mode, func(t *testing.T) { s.blocked(t, sdk, stream) })
	}
	t.Run("modified client args/stream", func(t *testing.T) { s.modified(t, sdk) })
	t.Run("client tool answered by a plugin/stream", func(t *testing.T) { s.provided(t, sdk) })
	for _, stream := range []bool{true, false} {
		mode := map[bool]string{true: "stream", false: "create"}[stream]
		t.Run("upstream 429/"+mode, func(t *testing.T) {
			s.upstreamError(t, sdk, stream, http.StatusTooManyRequests, "RateLimitError")
		})
		t.Run("upstream 500/"+mode, func(t *testing.T) {
			s.upstreamError(t, sdk, stream, http.StatusInternalServerError, "InternalServerError")
		})
		t.Run("upstream 500 after a plugin tool/"+mode, func(t *testing.T) { s.errorAfterPluginTool(t, sdk, stream) })
	}
}

// pluginToolTwoRounds: the model calls the plugin's tool, hookhost runs it
// and calls upstream again; the client sees one message with both rounds'
// text, the usage of both, and nothing of the plugin's call.
func (s *suite) pluginToolTwoRounds(t *testing.T, sdk string, stream bool) {
	s.up.script(
		round{Text: "Let me check. ", Calls: []call{{ID: "call_weather_1", Name: pluginTool, Args: `{"city":"Paris"}`}}, In: 11, Out: 5},
		round{Text: "It is sunny in Paris.", In: 23, Out: 7},
	)
	params := request(sdk, models[s.up.proto], []any{user("What is the weather in Paris?")}, []tool{getTime}, stream)
	extra := unmodelled[sdk]
	if sdk != s.up.proto {
		// Across protocols these would be refused with a 400, by design.
		extra = nil
	}
	for k, v := range extra {
		params[k] = v
	}
	o := runClient(t, s.gw.URL, sdk, stream, params)
	v := check(t, sdk, stream, o)
	if want := "Let me check. It is sunny in Paris."; words(v.Text) != want {
		t.Errorf("text %q, want %q", v.Text, want)
	}
	if len(v.Calls) != 0 || v.Stop != finalStop(sdk) {
		t.Errorf("the client got calls %v and stop %q, want none and %q", v.Calls, v.Stop, finalStop(sdk))
	}
	if v.In != 11+23 || v.Out != 5+7 {
		t.Errorf("usage %d in / %d out, want the sum of both rounds, %d / %d", v.In, v.Out, 11+23, 5+7)
	}
	hidden(t, o, "call_weather_1", pluginToolMatch, pluginResult)

	reqs := s.up.requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2 rounds", len(reqs))
	}
	if tools := toolsOf(t, s.up.proto, reqs[0].Body); !contains(tools, pluginTool) || !contains(tools, getTime.Name) {
		t.Errorf("the upstream was offered %v, want the client's %s and the plugin's %s", tools, getTime.Name, pluginTool)
	}
	for i, r := range reqs {
		var body map[string]json.RawMessage
		mustDecode(t, r.Body, &body)
		for k, want := range extra {
			if got, ok := body[k]; !ok || !sameJSON(string(got), string(mustJSON(want))) {
				t.Errorf("round %d: the upstream got %s = %s, the client sent %s", i+1, k, got, mustJSON(want))
			}
		}
	}
	conv := conversationOf(t, s.up.proto, reqs[1].Body)
	c, r := find(conv, "call", "call_weather_1"), find(conv, "result", "call_weather_1")
	if c < 0 || r < c || !strings.Contains(conv[r].Content, pluginResult) {
		t.Errorf("the second round does not carry the plugin's call and its result %q after it:\n%v", pluginResult, conv)
	}
	s.credentials(t)
}

// untranslatable: a field only the client's protocol can carry, sent to
// an upstream of another protocol, is refused with a 400 naming it before
// anything goes upstream, never silently dropped.
func (s *suite) untranslatable(t *testing.T, sdk string) {
	s.up.script()
	params := request(sdk, models[s.up.proto], []any{user("hi")}, nil, false)
	params["x_future_field"] = map[string]any{"nested": true}
	o := runClient(t, s.gw.URL, sdk, false, params)
	if o.Error == nil || o.Error.Class != "BadRequestError" || o.Error.Status != http.StatusBadRequest || !strings.Contains(o.Error.Message, "x_future_field") {
		t.Errorf("the SDK got %+v / %s, want a BadRequestError naming x_future_field", o.Error, o.Result)
	}
	if n := len(s.up.requests()); n != 0 {
		t.Errorf("the upstream got %d requests, want none", n)
	}
}

// unmodelled are request fields hookhost does not model, per protocol:
// on the gateway route with an upstream of the client's protocol, each
// must reach every upstream round unchanged.
var unmodelled = map[string]map[string]any{
	chat: {
		"seed": 7, "parallel_tool_calls": false, "response_format": map[string]any{"type": "text"},
		"metadata": map[string]any{"trace": "t-1"}, "x_future_field": map[string]any{"nested": []any{1, "two"}},
	},
	responses: {
		"parallel_tool_calls": false, "reasoning": map[string]any{"effort": "low"}, "metadata": map[string]any{"trace": "t-1"},
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "x_future_field": map[string]any{"nested": []any{1, "two"}},
	},
	messages: {
		"metadata": map[string]any{"user_id": "u-1"}, "top_k": 5, "stop_sequences": []any{"\n\nEND"},
		"x_future_field": map[string]any{"nested": []any{1, "two"}},
	},
}

// mixed: one response calls the plugin's tool and the client's; the client
// gets only its own call, and when it sends that call's result the
// upstream gets the hidden round back in its history, in order.
func (s *suite) mixed(t *testing.T, sdk string, stream bool) {
	s.up.script(
		round{Text: "Checking. ", Calls: []call{{ID: "call_weather_2", Name: pluginTool, Args: `{"city":"Paris"}`}, {ID: "call_time_2", Name: getTime.Name, Args: `{"zone":"CET"}`}}, In: 13, Out: 9},
		round{Text: "At 12:00 CET it is sunny in Paris.", In: 31, Out: 8},
	)
	model := models[s.up.proto]
	tools := []tool{getTime}
	input := []any{user("What time is it in Paris, and what is the weather?")}
	o := runClient(t, s.gw.URL, sdk, stream, request(sdk, model, input, tools, stream))
	v := check(t, sdk, stream, o)
	if want := []call{{ID: "call_time_2", Name: getTime.Name, Args: `{"zone":"CET"}`}}; !sameCalls(v.Calls, want) || v.Stop != toolStop(sdk) {
		t.Fatalf("the client got calls %v, stop %q; want only its own %v, stop %q", v.Calls, v.Stop, want, toolStop(sdk))
	}
	if words(v.Text) != "Checking." {
		t.Errorf("text %q, want %q", v.Text, "Checking. ")
	}
	if v.In != 13 || v.Out != 9 {
		t.Errorf("usage %d in / %d out, want 13 / 9", v.In, v.Out)
	}
	hidden(t, o, "call_weather_2", pluginToolMatch, pluginResult)
	if n := len(s.up.requests()); n != 1 {
		t.Fatalf("the upstream got %d requests before the client continued, want 1", n)
	}
	// A call handed back beside hidden rounds carries an id hookhost minted,
	// which the client sends back with its result.
	handed := v.Calls[0].ID
	if handed == "call_time_2" {
		t.Errorf("the client got the upstream's own call id %q beside a hidden round; want one hookhost minted", handed)
	}

	next := continuation(t, sdk, input, o.Result, []call{{ID: handed, Args: "12:00"}})
	o = runClient(t, s.gw.URL, sdk, stream, request(sdk, model, next, tools, stream))
	v = check(t, sdk, stream, o)
	if words(v.Text) != "At 12:00 CET it is sunny in Paris." || len(v.Calls) != 0 || v.Stop != finalStop(sdk) {
		t.Errorf("the continuation answered %+v", v)
	}
	if v.In != 31 || v.Out != 8 {
		t.Errorf("continuation usage %d in / %d out, want 31 / 8", v.In, v.Out)
	}
	reqs := s.up.requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(reqs))
	}
	conv := conversationOf(t, s.up.proto, reqs[1].Body)
	cw, ct := find(conv, "call", "call_weather_2"), find(conv, "call", "call_time_2")
	rw, rt := find(conv, "result", "call_weather_2"), find(conv, "result", "call_time_2")
	switch {
	case cw < 0 || ct < 0 || rw < 0 || rt < 0:
		t.Errorf("the continuation upstream lacks the hidden call, the client's call or a result:\n%v", conv)
	case !(cw < rw && ct < rt && cw < rt && ct < rw && rw < rt):
		t.Errorf("the continuation upstream is out of order (want both calls, then the plugin's result, then the client's):\n%v", conv)
	case !strings.Contains(conv[rw].Content, pluginResult) || conv[rt].Content != "12:00":
		t.Errorf("the continuation upstream carries results %q and %q", conv[rw].Content, conv[rt].Content)
	}
	if first := conv[0]; first.Kind != "text" || first.Role != "user" {
		t.Errorf("the continuation upstream does not start with the user's message:\n%v", conv)
	}
}

// blocked: the plugin blocks the client's delete_everything; hookhost
// answers it with the block message as an error result and goes on, and
// the client never sees the call.
func (s *suite) blocked(t *testing.T, sdk string, stream bool) {
	s.up.script(
		round{Calls: []call{{ID: "call_delete_3", Name: deleteEverything.Name, Args: `{}`}}, In: 9, Out: 4},
		round{Text: "I will not delete anything.", In: 20, Out: 6},
	)
	o := runClient(t, s.gw.URL, sdk, stream, request(sdk, models[s.up.proto], []any{user("Delete everything.")}, []tool{getTime, deleteEverything}, stream))
	v := check(t, sdk, stream, o)
	if words(v.Text) != "I will not delete anything." || len(v.Calls) != 0 || v.Stop != finalStop(sdk) {
		t.Errorf("the client got %+v, want only the second round's answer", v)
	}
	if v.In != 29 || v.Out != 10 {
		t.Errorf("usage %d in / %d out, want 29 / 10", v.In, v.Out)
	}
	hidden(t, o, "call_delete_3", blockedMessage)
	reqs := s.up.requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(reqs))
	}
	conv := conversationOf(t, s.up.proto, reqs[1].Body)
	c, r := find(conv, "call", "call_delete_3"), find(conv, "result", "call_delete_3")
	if c < 0 || r < c || !strings.Contains(conv[r].Content, blockedMessage) {
		t.Fatalf("the second round does not carry the blocked call and the block message as its result:\n%v", conv)
	}
	if s.up.proto == messages && !conv[r].IsError {
		t.Errorf("the block message reached the upstream without is_error: %v", conv[r])
	}
}

// modified: the plugin rewrites the arguments of the client's get_time
// call; the client receives the rewritten call, whole, in its stream.
func (s *suite) modified(t *testing.T, sdk string) {
	s.up.script(round{Calls: []call{{ID: "call_time_6", Name: getTime.Name, Args: `{"zone":"cet"}`}}, In: 7, Out: 3})
	o := runClient(t, s.gw.URL, sdk, true, request(sdk, models[s.up.proto], []any{user("What time is it in Paris?")}, []tool{getTime}, true))
	v := check(t, sdk, true, o)
	if want := []call{{ID: "call_time_6", Name: getTime.Name, Args: `{"zone":"CET"}`}}; !sameCalls(v.Calls, want) || v.Stop != toolStop(sdk) {
		t.Errorf("the client got calls %v, stop %q; want %v as the plugin rewrote it, stop %q", v.Calls, v.Stop, want, toolStop(sdk))
	}
	if v.In != 7 || v.Out != 3 {
		t.Errorf("usage %d in / %d out, want 7 / 3", v.In, v.Out)
	}
}

// provided: the plugin answers the client's get_time call itself, as a
// cache would; hookhost goes on upstream with that result and the client
// gets only the answer.
func (s *suite) provided(t *testing.T, sdk string) {
	s.up.script(
		round{Calls: []call{{ID: "call_time_7", Name: getTime.Name, Args: `{"zone":"UTC"}`}}, In: 7, Out: 3},
		round{Text: "It is 12:00 UTC.", In: 15, Out: 5},
	)
	o := runClient(t, s.gw.URL, sdk, true, request(sdk, models[s.up.proto], []any{user("What time is it in London?")}, []tool{getTime}, true))
	v := check(t, sdk, true, o)
	if v.Text != "It is 12:00 UTC." || len(v.Calls) != 0 || v.Stop != finalStop(sdk) || v.In != 22 || v.Out != 8 {
		t.Errorf("the client got %+v, want the second round's answer and the usage of both", v)
	}
	hidden(t, o, "call_time_7", "lookup cache")
	reqs := s.up.requests()
	if len(reqs) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(reqs))
	}
	conv := conversationOf(t, s.up.proto, reqs[1].Body)
	if r := find(conv, "result", "call_time_7"); r < 0 || !sameJSON(conv[r].Content, cachedTime) || conv[r].IsError {
		t.Errorf("the second round does not carry the plugin's answer %q for the client's call:\n%v", cachedTime, conv)
	}
}

// upstreamError: an upstream error reaches the client with its status and
// message, in the SDK's error class for that status.
func (s *suite) upstreamError(t *testing.T, sdk string, stream bool, status int, class string) {
	msg := fmt.Sprintf("fake upstream refuses with %d", status)
	s.up.script(round{Status: status, Message: msg})
	o := runClient(t, s.gw.URL, sdk, stream, request(sdk, models[s.up.proto], []any{user("hi")}, nil, stream))
	if o.Error == nil {
		t.Fatalf("the SDK returned %s, want a %s", o.Result, class)
	}
	if o.Error.Class != class || o.Error.Status != status || !strings.Contains(o.Error.Message, msg) {
		t.Errorf("the SDK threw %s status %d %q, want %s status %d with %q", o.Error.Class, o.Error.Status, o.Error.Message, class, status, msg)
	}
	if n := len(s.up.requests()); n != 1 {
		t.Errorf("the upstream got %d requests, want 1 (llm.max_retries = 0)", n)
	}
}

// callMarkers are how a tool call starts in each protocol's answers.
var callMarkers = map[string]string{chat: `"tool_calls"`, responses: `"type":"function_call"`, messages: `"type":"tool_use"`}

// errorAfterPluginTool: the upstream fails on the round after a plugin
// tool ran. Not streamed, the client gets the upstream's 500 with
// x-should-retry: false (the tool may have had side effects); streamed,
// the first round's text is already out, so the error arrives in the
// stream and the SDK helper must surface it rather than return a message.
func (s *suite) errorAfterPluginTool(t *testing.T, sdk string, stream bool) {
	msg := "fake upstream fails on the second round"
	s.up.script(
		round{Text: "Let me check. ", Calls: []call{{ID: "call_weather_5", Name: pluginTool, Args: `{"city":"Paris"}`}}, In: 11, Out: 5},
		round{Status: http.StatusInternalServerError, Message: msg},
	)
	o := runClient(t, s.gw.URL, sdk, stream, request(sdk, models[s.up.proto], []any{user("What is the weather in Paris?")}, nil, stream))
	if n := len(s.up.requests()); n != 2 {
		t.Fatalf("the upstream got %d requests, want 2", n)
	}
	hidden(t, o, "call_weather_5", pluginResult)
	if !stream {
		if o.Error == nil || o.Error.Class != "InternalServerError" || o.Error.Status != http.StatusInternalServerError || !strings.Contains(o.Error.Message, msg) {
			t.Fatalf("the SDK got %+v / %s, want an InternalServerError with %q", o.Error, o.Result, msg)
		}
		if got := o.Error.Headers["x-should-retry"]; got != "false" {
			t.Errorf("x-should-retry is %q after a plugin tool ran, want \"false\"", got)
		}
		return
	}
	raw := o.only(t).Body
	if !strings.Contains(raw, msg) {
		t.Errorf("the stream does not carry the upstream's error %q:\n%s", msg, raw)
	}
	if o.Error != nil {
		if !strings.Contains(o.Error.Message, msg) {
			t.Errorf("the SDK threw %s %q, which does not say %q", o.Error.Class, o.Error.Message, msg)
		}
		return
	}
	// A Responses stream may end with response.failed, which the helper
	// returns as a failed response instead of throwing.
	var r struct {
		Status string `json:"status"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	mustDecode(t, o.Result, &r)
	if sdk != responses || r.Status != "failed" || !strings.Contains(r.Error.Message, msg) {
		t.Errorf("the SDK helper returned %s after an in-stream error, want it to throw (or a failed response saying %q)", o.Result, msg)
	}
}

// hidden fails when any of the strings reached the client.
func hidden(t *testing.T, o outcome, secrets ...string) {
	t.Helper()
	body := o.only(t).Body
	for _, s := range secrets {
		if strings.Contains(body, s) || strings.Contains(string(o.Result), s) {
			t.Errorf("%q reached the client:\n%s", s, body)
		}
	}
}

// credentials checks that the upstream got hookhost's key, never the
// client's.
func (s *suite) credentials(t *testing.T) {
	t.Helper()
	for _, r := range s.up.requests() {
		want, got := "Bearer "+upstreamKey, r.Header.Get("Authorization")
		if s.up.proto == messages {
			want, got = upstreamKey, r.Header.Get("x-api-key")
		}
		if got != want {
			t.Errorf("the upstream got credentials %q, want hookhost's %q", got, want)
		}
		for name, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, clientKey) {
					t.Errorf("the client's key reached the upstream in %s", name)
				}
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// bypass runs a second hookhost on the bypass route: the request the fake
// gets is the client's, byte for byte, and the answer the client gets is
// the fake's, byte for byte, streamed or not.
func bypass(t *testing.T, up *upstream) {
	bp := serve(t, config(up), false)
	sdk := up.proto
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			up.script(round{Text: "Straight through.", Calls: []call{{ID: "call_time_4", Name: getTime.Name, Args: `{"zone":"UTC"}`}}, In: 5, Out: 3})
			o := runClient(t, bp.URL, sdk, stream, request(sdk, models[sdk], []any{user("What time is it?")}, []tool{getTime}, stream))
			check(t, sdk, stream, o)
			ex := o.only(t)
			reqs := up.requests()
			if len(reqs) != 1 {
				t.Fatalf("the upstream got %d requests, want 1", len(reqs))
			}
			if ex.Request == nil || !bytes.Equal(reqs[0].Body, []byte(*ex.Request)) {
				t.Errorf("the upstream got\n%s\nthe client sent\n%v", reqs[0].Body, ex.Request)
			}
			if got, want := ex.bytes(), up.responses()[0]; !bytes.Equal(got, want) {
				t.Errorf("the client got\n%s\nthe upstream sent\n%s", got, want)
			}
			(&suite{up: up}).credentials(t)
		})
	}
}

// TestGatewayOffline runs each client against the offline provider on the
// gateway route, where the offline model calls the plugin's weather tool
// and answers from its result, streamed and not.
func TestGatewayOffline(t *testing.T) {
	needClients(t)
	t.Parallel()
	gw := serve(t, "[llm]\nprovider = \"offline\"\nmodel = \"offline-large\"\n"+plugins(), true)
	for _, sdk := range []string{chat, responses, messages} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", sdk, stream), func(t *testing.T) {
				o := runClient(t, gw.URL, sdk, stream, request(sdk, "offline-large", []any{user("What is the weather in Paris?")}, nil, stream))
				v := check(t, sdk, stream, o)
				if strings.TrimSpace(v.Text) == "" || len(v.Calls) != 0 || v.Stop != finalStop(sdk) {
					t.Errorf("the offline model answered %+v, want text and no calls", v)
				}
				if v.In <= 0 || v.Out <= 0 {
					t.Errorf("usage %d in / %d out, want both counted", v.In, v.Out)
				}
				// The offline model answers from the plugin's result (and
				// names the tool in its text), so the round that called the
				// tool ran inside hookhost; the call itself stays hidden.
				if !strings.Contains(v.Text, pluginResult) {
					t.Errorf("the answer %q does not come from the plugin's result %q", v.Text, pluginResult)
				}
				hidden(t, o, callMarkers[sdk])
			})
		}
	}
}
