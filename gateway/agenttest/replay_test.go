package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// answer is what a client got back, whatever the protocol: the text, the
// tools called, and how the message ended.
type answer struct {
	Text  string
	Calls []string
	Stop  string
}

// answerOf reads a 200 answer of protocol proto, streamed or not, and
// checks it has the shape the protocol's clients rely on (shared/WIRE.md).
func answerOf(proto string, stream bool, ctype string, body []byte) (answer, error) {
	var a answer
	if !stream {
		if !strings.HasPrefix(ctype, "application/json") {
			return a, fmt.Errorf("a JSON answer with Content-Type %q", ctype)
		}
		switch proto {
		case chat:
			var r struct {
				Object  string `json:"object"`
				Choices []struct {
					FinishReason string `json:"finish_reason"`
					Message      struct {
						Role      string  `json:"role"`
						Content   *string `json:"content"`
						ToolCalls []struct {
							Function struct{ Name string } `json:"function"`
						} `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return a, err
			}
			if r.Object != "chat.completion" || len(r.Choices) != 1 || r.Choices[0].Message.Role != "assistant" {
				return a, fmt.Errorf("not one assistant chat.completion: %.300s", body)
			}
			c := r.Choices[0]
			if c.Message.Content != nil {
				a.Text = *c.Message.Content
			}
			for _, tc := range c.Message.ToolCalls {
				a.Calls = append(a.Calls, tc.Function.Name)
			}
			a.Stop = c.FinishReason
		case responses:
			var r struct {
				Object string            `json:"object"`
				Status string            `json:"status"`
				Output []json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return a, err
			}
			if r.Object != "response" {
				return a, fmt.Errorf("not a response: %.300s", body)
			}
			a.Stop = r.Status
			if err := a.addOutput(r.Output); err != nil {
				return a, err
			}
		case messages:
			var r struct {
				Type       string `json:"type"`
				Role       string `json:"role"`
				StopReason string `json:"stop_reason"`
				Content    []struct {
					Type, Text, Name string
				} `json:"content"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return a, err
			}
			if r.Type != "message" || r.Role != "assistant" {
				return a, fmt.Errorf("not an assistant message: %.300s", body)
			}
			for _, b := range r.Content {
				switch b.Type {
				case "text":
					a.Text += b.Text
				case "tool_use":
					a.Calls = append(a.Calls, b.Name)
				}
			}
			a.Stop = r.StopReason
		}
		return a, nil
	}
	if !strings.HasPrefix(ctype, "text/event-stream") {
		return a, fmt.Errorf("a stream with Content-Type %q: %.300s", ctype, body)
	}
	type frame struct {
		event string
		data  []byte
	}
	var frames []frame
	for _, raw := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
		var f frame
		for _, line := range strings.Split(raw, "\n") {
			switch {
			case strings.HasPrefix(line, "event:"):
				f.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				f.data = append(f.data, strings.TrimSpace(strings.TrimPrefix(line, "data:"))...)
			}
		}
		if f.event != "" || f.data != nil {
			frames = append(frames, f)
		}
	}
	if len(frames) == 0 {
		return a, fmt.Errorf("an empty stream")
	}
	switch proto {
	case chat:
		if string(frames[len(frames)-1].data) != "[DONE]" {
			return a, fmt.Errorf("a chat stream that does not end with [DONE]")
		}
		calls := map[int]string{}
		for _, f := range frames[:len(frames)-1] {
			if f.event != "" {
				return a, fmt.Errorf("a chat stream with an event: line (%s)", f.event)
			}
			var c struct {
				Error   json.RawMessage `json:"error"`
				Choices []struct {
					FinishReason *string `json:"finish_reason"`
					Delta        struct {
						Content   string `json:"content"`
						ToolCalls []struct {
							Index    *int `json:"index"`
							Function struct {
								Name string `json:"name"`
							} `json:"function"`
						} `json:"tool_calls"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal(f.data, &c); err != nil {
				return a, fmt.Errorf("a chat chunk that is not JSON: %v: %.200s", err, f.data)
			}
			if c.Error != nil {
				return a, fmt.Errorf("an error in the stream: %s", c.Error)
			}
			for _, ch := range c.Choices {
				a.Text += ch.Delta.Content
				for _, tc := range ch.Delta.ToolCalls {
					if tc.Index == nil {
						return a, fmt.Errorf("a tool-call delta without index: %s", f.data)
					}
					if tc.Function.Name != "" {
						calls[*tc.Index] = tc.Function.Name
					}
				}
				if ch.FinishReason != nil {
					a.Stop = *ch.FinishReason
				}
			}
		}
		for i := 0; i < len(calls); i++ {
			a.Calls = append(a.Calls, calls[i])
		}
	case responses:
		if frames[0].event != "response.created" {
			return a, fmt.Errorf("a Responses stream that starts with %q", frames[0].event)
		}
		last := frames[len(frames)-1]
		if last.event != "response.completed" {
			return a, fmt.Errorf("a Responses stream that ends with %q: %.300s", last.event, last.data)
		}
		var r struct {
			Response struct {
				Status string            `json:"status"`
				Output []json.RawMessage `json:"output"`
			} `json:"response"`
		}
		if err := json.Unmarshal(last.data, &r); err != nil {
			return a, err
		}
		a.Stop = r.Response.Status
		if err := a.addOutput(r.Response.Output); err != nil {
			return a, err
		}
	case messages:
		if frames[0].event != "message_start" {
			return a, fmt.Errorf("a Messages stream that starts with %q", frames[0].event)
		}
		if last := frames[len(frames)-1]; last.event != "message_stop" {
			return a, fmt.Errorf("a Messages stream that ends with %q: %.300s", last.event, last.data)
		}
		for _, f := range frames {
			var d struct {
				Type         string `json:"type"`
				ContentBlock struct {
					Type, Name string
				} `json:"content_block"`
				Delta struct {
					Type, Text string
					StopReason string `json:"stop_reason"`
				} `json:"delta"`
			}
			if err := json.Unmarshal(f.data, &d); err != nil {
				return a, fmt.Errorf("a Messages frame that is not JSON: %v", err)
			}
			if d.Type != f.event {
				return a, fmt.Errorf("a Messages frame named %q holding %q", f.event, d.Type)
			}
			switch {
			case d.Type == "error":
				return a, fmt.Errorf("an error in the stream: %s", f.data)
			case d.Type == "content_block_start" && d.ContentBlock.Type == "tool_use":
				a.Calls = append(a.Calls, d.ContentBlock.Name)
			case d.Type == "content_block_delta" && d.Delta.Type == "text_delta":
				a.Text += d.Delta.Text
			case d.Type == "message_delta":
				a.Stop = d.Delta.StopReason
			}
		}
	}
	return a, nil
}

// addOutput adds the text and calls of Responses output items.
func (a *answer) addOutput(output []json.RawMessage) error {
	for _, raw := range output {
		var it struct {
			Type    string          `json:"type"`
			Name    string          `json:"name"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return err
		}
		switch it.Type {
		case "message":
			a.Text += fakeapi.Text(it.Content)
		case "function_call", "custom_tool_call":
			a.Calls = append(a.Calls, it.Name)
		}
	}
	return nil
}

// replayed is the text the replay's fake model ends a tool round trip with.
const replayed = "agenttest replayed the tool result"

// replayModel is the fake model of the replay: a request whose
// conversation ends in tool results gets a text; one that offers the CLI's
// shell tool gets a call to it, which hookhost hands to the client; any
// other a text.
func replayModel(a agent) model {
	return func(conv []item, tools []string) reply {
		if n := len(conv); n > 0 && conv[n-1].Kind == "result" {
			return reply{Text: replayed}
		}
		if name, args := a.shell(tools); name != "" {
			return reply{Calls: []call{{ID: "call_replay1", Name: name, Args: args("echo hi")}}}
		}
		return reply{Text: "agenttest side reply"}
	}
}

// fixtureModels are the models the recorded requests ask for.
func fixtureModels() []string {
	var models []string
	for _, a := range agents {
		for _, m := range []string{a.model, a.crossModel} {
			if m != "" && !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
	}
	return models
}

// demoConfig is examples/demo.toml, the README's demo (the offline model,
// Kora, the gateway route), with its paths made absolute.
func demoConfig(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../examples/demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(raw)
	if !strings.Contains(cfg, `provider = "offline"`) {
		t.Fatal(`examples/demo.toml no longer runs the offline model: update demoConfig`)
	}
	tmp := t.TempDir()
	for old, repl := range map[string]string{
		`read_root = ".."`:                fmt.Sprintf("read_root = %q", tmp),
		`dir = "../bin/plugins"`:          fmt.Sprintf("dir = %q", binDir),
		`state_dir = "../bin/kora-state"`: fmt.Sprintf("state_dir = %q", filepath.Join(tmp, "kora")),
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("examples/demo.toml no longer holds %q: update demoConfig", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	return cfg
}

// TestReplay sends every request the agent CLIs were recorded sending
// (testdata/<cli>/*.json, written by `make agents` with
// HOOKHOST_AGENTS_RECORD=1) to a real hookhost serve on the gateway route:
// on the README's demo config, and in front of a fake upstream of each
// protocol. Each must be accepted and answered in the shape of the
// protocol the CLI speaks. It needs no npm.
func TestReplay(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	byName := map[string]agent{}
	for _, a := range agents {
		byName[a.name] = a
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []fixture
	var names []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fx fixture
		if err := json.Unmarshal(raw, &fx); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		fixtures = append(fixtures, fx)
		names = append(names, filepath.ToSlash(strings.TrimSuffix(strings.TrimPrefix(f, "testdata"+string(filepath.Separator)), ".json")))
	}
	for _, a := range agents {
		found := false
		for _, n := range names {
			found = found || strings.HasPrefix(n, a.name+"/")
		}
		if !found {
			t.Errorf("no recorded requests of %s under testdata/%s", a.name, a.name)
		}
	}

	for _, upProto := range []string{"offline", chat, responses, messages} {
		t.Run("upstream="+upProto, func(t *testing.T) {
			var up *upstream
			var s *servetest.Server
			if upProto == "offline" {
				s = serve(t, demoConfig(t))
			} else {
				up = newUpstream(t, upProto)
				s = serve(t, config(up, fixtureModels()...))
			}
			for i, fx := range fixtures {
				t.Run(names[i], func(t *testing.T) {
					a, ok := byName[strings.Split(names[i], "/")[0]]
					if !ok {
						t.Fatalf("no agent CLI named %q", strings.Split(names[i], "/")[0])
					}
					if up != nil {
						up.use(replayModel(a))
					}
					replay(t, s, a, fx, up)
				})
			}
		})
	}
}

// replay sends one recorded request and checks its answer.
func replay(t *testing.T, s *servetest.Server, a agent, fx fixture, up *upstream) {
	t.Helper()
	var body bytes.Buffer
	if err := json.Compact(&body, fx.Body); err != nil {
		t.Fatal(err)
	}
	sent := body.Bytes()
	if up == nil {
		// The offline model serves only its own names: the CLI is pointed
		// at the demo with one of them, as the README says.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(sent, &fields); err != nil {
			t.Fatal(err)
		}
		fields["model"] = json.RawMessage(`"offline-small"`)
		sent = mustJSON(fields)
	}
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(sent, &req)
	hr, err := http.NewRequest(fx.Method, s.URL+fx.Path, bytes.NewReader(sent))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range fx.Header {
		hr.Header.Set(k, v)
	}
	hr.Header.Set("Authorization", "Bearer "+clientKey)
	client := &http.Client{Timeout: 2 * time.Minute}
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s (%s, %s) got %d: %s", fx.CLI, fx.Scenario, fx.Upstream, resp.StatusCode, out)
	}
	got, err := answerOf(a.front, req.Stream, resp.Header.Get("Content-Type"), out)
	if err != nil {
		t.Fatalf("the answer is not a valid %s answer: %v", a.front, err)
	}
	if up == nil {
		// The offline model answers as it sees fit; it must say something.
		if got.Text == "" && len(got.Calls) == 0 {
			t.Errorf("an empty answer: %+v", got)
		}
		return
	}
	conv, err := conversationOf(a.front, sent)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := toolsOf(a.front, sent)
	if err != nil {
		t.Fatal(err)
	}
	shell, _ := a.shell(tools)
	switch {
	case len(conv) > 0 && conv[len(conv)-1].Kind == "result":
		if got.Text != replayed || len(got.Calls) != 0 {
			t.Errorf("a tool result's answer is %+v, want the text %q", got, replayed)
		}
	case shell != "":
		if len(got.Calls) != 1 || got.Calls[0] != shell {
			t.Errorf("the answer is %+v, want a call to %s handed to the client", got, shell)
		}
	default:
		if got.Text == "" {
			t.Errorf("an empty answer: %+v", got)
		}
	}
	if len(up.requests()) == 0 {
		t.Error("hookhost answered without asking the upstream")
	}
}
