package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

const (
	sonnet = "claude-sonnet-4-5-20250929"
	haiku  = "claude-haiku-4-5-20251001"
)

// modelsIn returns every "model" string value in a body, whole or SSE.
func modelsIn(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, m := range modelValue.FindAllSubmatch(body, -1) {
		var s string
		if err := json.Unmarshal(m[1], &s); err != nil {
			t.Fatalf("model value %s: %v", m[1], err)
		}
		out = append(out, s)
	}
	return out
}

func wantOnly(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if len(got) == 0 {
		t.Errorf("%s names no model", what)
	}
	for _, m := range got {
		if m != want {
			t.Errorf("%s names model %q, want %q (all: %q)", what, m, want, got)
		}
	}
}

// The README's recipe for Claude Code on any upstream: its model names,
// aliased, run on the offline model; every response and stream event
// names the model Claude Code asked for.
func TestAliasClaudeCodeOnOffline(t *testing.T) {
	for _, route := range []hooks.Route{hooks.RouteGateway, hooks.RouteBypass} {
		p := offlineParts()
		p.route = route
		p.server.ModelAliases = map[string]string{sonnet: "offline-large", haiku: "offline-small"}
		s := newTest(t, p)
		for _, model := range []string{sonnet, haiku} {
			body := `{"model":"` + model + `","max_tokens":256,"messages":[{"role":"user","content":"hello"}]}`
			resp := post(t, s.url, "/v1/messages", body, "anthropic-version", "2023-06-01")
			got := readAll(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d %s", route, model, resp.StatusCode, got)
			}
			wantOnly(t, string(route)+" whole", modelsIn(t, got), model)
			resp = post(t, s.url, "/v1/messages", strings.Replace(body, `"max_tokens"`, `"stream":true,"max_tokens"`, 1), "anthropic-version", "2023-06-01")
			got = readAll(t, resp)
			if resp.StatusCode != 200 || !bytes.Contains(got, []byte("event: message_stop")) {
				t.Fatalf("%s %s stream: %d %s", route, model, resp.StatusCode, got)
			}
			wantOnly(t, string(route)+" stream", modelsIn(t, got), model)
		}
	}
}

// On the gateway route the upstream and the hooks get the target; the
// client, whole or streamed, sees the alias.
func TestAliasOnTheGatewayRoute(t *testing.T) {
	chatOK := `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	chunk := func(delta, finish string) string {
		return fakeapi.Data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-2025-04-14","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`)
	}
	fake := fakeapi.New(t, fakeapi.JSON(200, chatOK),
		fakeapi.SSE(chunk(`{"role":"assistant","content":"hi"}`, "null"), chunk(`{}`, `"stop"`), fakeapi.Data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-2025-04-14","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), fakeapi.Data("[DONE]")),
		fakeapi.JSON(200, chatOK))
	p := gatewayKeyParts(t, "openai", fake)
	p.server.ModelAliases = map[string]string{sonnet: "gpt-4.1"}
	s := newTest(t, p)
	for i, stream := range []string{"", `"stream":true,`} {
		resp := post(t, s.url, "/v1/chat/completions", `{`+stream+`"model":"`+sonnet+`","messages":[{"role":"user","content":"hi"}]}`)
		got := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, got)
		}
		wantOnly(t, "response "+stream, modelsIn(t, got), sonnet)
		if sent := fake.Requests()[i].Body; !bytes.Contains(sent, []byte(`"model":"gpt-4.1"`)) {
			t.Errorf("upstream got %s, want the alias's target", sent)
		}
	}
	// Across protocols too: an Anthropic client on the OpenAI upstream.
	resp := post(t, s.url, "/v1/messages", `{"model":"`+sonnet+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, "anthropic-version", "2023-06-01")
	got := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	wantOnly(t, "messages response", modelsIn(t, got), sonnet)
	if sent := fake.Requests()[2].Body; !bytes.Contains(sent, []byte(`"model":"gpt-4.1"`)) {
		t.Errorf("upstream got %s, want the alias's target", sent)
	}
}

// On the bypass route the request body changes in its model value only,
// and the response in its model values only, whole and streamed.
func TestAliasOnTheBypassRoute(t *testing.T) {
	whole := "{\n  \"id\": \"msg_1\",\n  \"type\": \"message\",\n  \"model\": \"claude-sonnet-4-5-20250929\",\n  \"content\": [{\"type\":\"text\",\"text\":\"the \\\"model\\\": \\\"x\\\" field\"}]\n}\n"
	frames := []string{
		fakeapi.Named("message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`),
		fakeapi.Named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`),
		fakeapi.Named("message_stop", `{"type":"message_stop"}`),
	}
	fake := fakeapi.New(t, fakeapi.JSON(200, whole), fakeapi.SSE(frames...))
	p := bypassParts(t, "anthropic", fake.URL())
	p.server.ModelAliases = map[string]string{"cc-main": "claude-sonnet-4-5"}
	s := newTest(t, p)
	reqBody := "{ \"max_tokens\": 10,\n \"model\" :  \"cc-main\" , \"messages\":[{\"role\":\"user\",\"content\":\"the model is cc-main\"}]}\n"
	wantSent := "{ \"max_tokens\": 10,\n \"model\" :  \"claude-sonnet-4-5\" , \"messages\":[{\"role\":\"user\",\"content\":\"the model is cc-main\"}]}\n"

	resp := post(t, s.url, "/v1/messages", reqBody, "anthropic-version", "2023-06-01", "Accept-Encoding", "gzip")
	got := readAll(t, resp)
	wantWhole := strings.Replace(whole, `"model": "claude-sonnet-4-5-20250929"`, `"model": "cc-main"`, 1)
	if resp.StatusCode != 200 || string(got) != wantWhole {
		t.Fatalf("whole: %d %q\nwant %q", resp.StatusCode, got, wantWhole)
	}
	resp = post(t, s.url, "/v1/messages", reqBody, "anthropic-version", "2023-06-01")
	got = readAll(t, resp)
	wantStream := strings.ReplaceAll(strings.Join(frames, ""), `"model":"claude-sonnet-4-5-20250929"`, `"model":"cc-main"`)
	if resp.StatusCode != 200 || string(got) != wantStream {
		t.Fatalf("stream: %d %q\nwant %q", resp.StatusCode, got, wantStream)
	}
	for i, r := range fake.Requests() {
		if string(r.Body) != wantSent {
			t.Errorf("request %d reached the upstream as %q, want %q", i, r.Body, wantSent)
		}
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("request %d asked the upstream for %q; a renamed response must come uncompressed", i, r.Header.Get("Accept-Encoding"))
		}
	}
}

// A model that is no alias passes the bypass route byte for byte, and
// the server's own /v1/models lists the aliases beside the models.
func TestAliasesListedAndOthersUntouched(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{"model": "m1-2025"}`))
	p := bypassParts(t, "openai", fake.URL()+"/v1")
	p.server.ModelAliases = map[string]string{"zz-alias": "m1", "aa-alias": "m2"}
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"m1","messages":[]}`)
	if got := readAll(t, resp); string(got) != `{"model": "m1-2025"}` {
		t.Errorf("a request for no alias got %q, want the upstream's bytes", got)
	}
	if got := fake.Requests()[0].Body; string(got) != `{"model":"m1","messages":[]}` {
		t.Errorf("upstream got %q", got)
	}
	for _, hdr := range [][]string{nil, {"anthropic-version", "2023-06-01"}} {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/models", nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(readAll(t, resp), &list); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range list.Data {
			ids = append(ids, d.ID)
		}
		if strings.Join(ids, ",") != "m1,m2,aa-alias,zz-alias" {
			t.Errorf("/v1/models %v lists %v, want the models then the aliases", hdr, ids)
		}
	}
}

func TestSetModel(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"a"}`: `{"model":"target"}`,
		"{\"x\":{\"model\":\"a\"},\n\"model\" : \"a\" }": "{\"x\":{\"model\":\"a\"},\n\"model\" : \"target\" }",
		`{"model":"\u0061","stream":true}`:               `{"model":"target","stream":true}`,
	} {
		got, err := setModel([]byte(in), "target")
		if err != nil || string(got) != want {
			t.Errorf("setModel(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := setModel([]byte(`{"stream":true}`), "t"); err == nil {
		t.Error("a body without model: no error")
	}
}

// The renamer finds model values split across reads, leaves alone what
// only looks like one, and holds back no more than a few hundred bytes
// however long the body.
func TestModelRenamer(t *testing.T) {
	long := strings.Repeat("x", 300)
	in := `{"model":"a"}` + "\n" + `data: {"x":1,"model" :  "b-2025"}` + "\n" +
		`{"text":"say \"model\":\"c\""}` + "\n" + `{"model":"` + long + `"}` + "\n" + `{"models":"d","model":null}`
	want := `{"model":"alias"}` + "\n" + `data: {"x":1,"model" :  "alias"}` + "\n" +
		`{"text":"say \"model\":\"c\""}` + "\n" + `{"model":"` + long + `"}` + "\n" + `{"models":"d","model":null}`
	for name, src := range map[string]io.Reader{
		"whole":         strings.NewReader(in),
		"one byte each": iotest.OneByteReader(strings.NewReader(in)),
		"half reads":    iotest.HalfReader(strings.NewReader(in)),
	} {
		resp := &http.Response{Header: http.Header{"Content-Length": {"1"}}, Body: io.NopCloser(src), ContentLength: 1}
		renameModels(resp, "alias")
		got, err := io.ReadAll(resp.Body)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v\nwant %q", name, got, err, want)
		}
		if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
			t.Errorf("%s: the length of a renamed body is still announced", name)
		}
	}
	// A compressed body is left as it is.
	resp := &http.Response{Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(strings.NewReader(in))}
	renameModels(resp, "alias")
	if got, _ := io.ReadAll(resp.Body); string(got) != in {
		t.Error("a gzip body was changed")
	}
	// Memory stays bounded on a long body with no match.
	r := &modelRenamer{src: io.NopCloser(io.LimitReader(neverQuote{}, 8<<20)), quoted: []byte(`"alias"`), buf: make([]byte, 32<<10)}
	buf := make([]byte, 4096)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if len(r.in) > modelHold+len(r.buf) || cap(r.out) > modelHold+2*len(r.buf) {
			t.Fatalf("the renamer holds %d bytes", len(r.in)+cap(r.out))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if total != 8<<20 {
		t.Errorf("read %d bytes, want %d", total, 8<<20)
	}
}

// neverQuote is an endless stream of "model" keys that never get a value.
type neverQuote struct{}

func (neverQuote) Read(p []byte) (int, error) {
	const s = `"model": `
	for i := range p {
		p[i] = s[i%len(s)]
	}
	return len(p), nil
}
