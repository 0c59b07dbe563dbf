package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/llm/openai"
)

// recording is an upstream provider that keeps every request it is asked,
// for an upstream (offline) that has no wire to look at.
type recording struct {
	llm.Provider
	mu   sync.Mutex
	reqs []llm.Request
}

func (r *recording) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Provider.Complete(ctx, req)
}

// transcript is the last request's messages as text, in order.
func (r *recording) transcript() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, m := range r.reqs[len(r.reqs)-1].Messages {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	return b.String()
}

// streams reports whether a fake upstream's request asks for a stream.
func streams(r fakeapi.Seen) bool { return bytes.Contains(r.Body, []byte(`"stream":true`)) }

func sse(event, data string) string {
	if event == "" {
		return "data: " + data + "\n\n"
	}
	return "event: " + event + "\ndata: " + data + "\n\n"
}

// Replies of each fake upstream protocol answering text, as one JSON body
// or, when the request streams, as events.
func chatText(text string) fakeapi.Reply {
	return func(w http.ResponseWriter, r fakeapi.Seen) {
		if !streams(r) {
			fakeapi.JSON(200, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":`+quoteJSON(text)+`}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)(w, r)
			return
		}
		chunk := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m1","choices":[%s],"usage":%s}`
		fakeapi.SSE(
			sse("", fmt.Sprintf(chunk, `{"index":0,"delta":{"role":"assistant","content":`+quoteJSON(text)+`},"finish_reason":null}`, "null")),
			sse("", fmt.Sprintf(chunk, `{"index":0,"delta":{},"finish_reason":"stop"}`, "null")),
			sse("", fmt.Sprintf(chunk, "", `{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}`)),
			"data: [DONE]\n\n",
		)(w, r)
	}
}

func messagesText(text string) fakeapi.Reply {
	return func(w http.ResponseWriter, r fakeapi.Seen) {
		if !streams(r) {
			fakeapi.JSON(200, `{"id":"msg_01","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":`+quoteJSON(text)+`}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}`)(w, r)
			return
		}
		fakeapi.SSE(
			sse("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"m1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`),
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
			sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+quoteJSON(text)+`}}`),
			sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`),
			sse("message_stop", `{"type":"message_stop"}`),
		)(w, r)
	}
}

// respOutput answers a Responses request with output items, as one JSON
// object or, when the request streams, as events (text deltas for the
// message items).
func respOutput(id string, output ...string) fakeapi.Reply {
	final := `{"id":"` + id + `","object":"response","created_at":1,"status":"completed","model":"m1","output":[` + strings.Join(output, ",") +
		`],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`
	return func(w http.ResponseWriter, r fakeapi.Seen) {
		if !streams(r) {
			fakeapi.JSON(200, final)(w, r)
			return
		}
		frames := []string{sse("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"`+id+`","object":"response","status":"in_progress","output":[]}}`)}
		for i, it := range output {
			var item struct {
				ID      string `json:"id"`
				Type    string `json:"type"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal([]byte(it), &item)
			if item.Type == "message" && len(item.Content) > 0 {
				frames = append(frames, sse("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":%q,"output_index":%d,"content_index":0,"delta":%s}`,
					i+1, item.ID, i, quoteJSON(item.Content[0].Text))))
			}
		}
		frames = append(frames, sse("response.completed", `{"type":"response.completed","sequence_number":99,"response":`+final+`}`))
		fakeapi.SSE(frames...)(w, r)
	}
}

func respText(id, itemID, text string) fakeapi.Reply {
	return respOutput(id, `{"type":"message","id":"`+itemID+`","status":"completed","role":"assistant","content":[{"type":"output_text","text":`+quoteJSON(text)+`,"annotations":[]}]}`)
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// upstreamKind is one upstream a Responses client may be served from.
type upstreamKind struct {
	name string
	// text returns the reply answering text (resp names the response, for
	// a Responses upstream).
	text func(n int, text string) fakeapi.Reply
	// build returns the provider for a fake at url.
	build func(t *testing.T, url string) llm.Provider
}

var upstreamKinds = []upstreamKind{
	{"chat", func(_ int, text string) fakeapi.Reply { return chatText(text) }, func(t *testing.T, url string) llm.Provider {
		p, err := openai.New(openai.Config{BaseURL: url + "/v1", APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"anthropic", func(_ int, text string) fakeapi.Reply { return messagesText(text) }, func(t *testing.T, url string) llm.Provider {
		p, err := anthropic.New(anthropic.Config{BaseURL: url, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
	{"responses", func(n int, text string) fakeapi.Reply {
		return respText(fmt.Sprintf("resp_up%d", n), fmt.Sprintf("msg_up%d", n), text)
	}, func(t *testing.T, url string) llm.Provider {
		p, err := openai.New(openai.Config{API: openai.APIResponses, BaseURL: url + "/v1", APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}},
}

// stateServer is a gateway-route server over the real fronts and relay on
// provider, with store (nil: the default in-memory one).
func stateServer(t *testing.T, provider llm.Provider, store statestore.Store, edit ...func(*parts)) *testServer {
	t.Helper()
	p := realParts()
	p.provider, p.responses = provider, store
	for _, e := range edit {
		e(&p)
	}
	return newTest(t, p)
}

// respond posts a Responses request and returns its Response object (the
// final event's, when it streams), failing the test on anything but 200.
func respond(t *testing.T, s *testServer, body string, header ...string) map[string]json.RawMessage {
	t.Helper()
	resp := post(t, s.url, "/v1/responses", body, header...)
	raw := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("POST /v1/responses %s: %d %s", body, resp.StatusCode, raw)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = completedEvent(t, raw)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("not a Response object: %v: %s", err, raw)
	}
	return obj
}

// completedEvent is the response a stream's response.completed carries.
func completedEvent(t *testing.T, stream []byte) []byte {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "response.completed" {
			return ev.Response
		}
	}
	t.Fatalf("no response.completed in the stream:\n%s", stream)
	return nil
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a string", raw)
	}
	return s
}

// outputIDs are the ids of a Response object's output items.
func outputIDs(t *testing.T, obj map[string]json.RawMessage) []string {
	t.Helper()
	var items []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(obj["output"], &items); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// inOrder fails unless every part is in s, each after the one before.
func inOrder(t *testing.T, what, s string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			t.Fatalf("%s: %q is missing, or out of order, in\n%s", what, p, s)
		}
		at += i + len(p)
	}
}

// anyID matches ids shaped like those hookhost mints.
var anyID = regexp.MustCompile(`(resp|msg|fc)_[0-9a-f]{48}`)

// noMintedIDs fails if a request an upstream received names an id hookhost
// minted.
func noMintedIDs(t *testing.T, up *fakeapi.Server) {
	t.Helper()
	for i, r := range up.Requests() {
		for _, id := range anyID.FindAllString(string(r.Body), -1) {
			if responses.Minted(id) {
				t.Fatalf("upstream request %d carries the id %s that hookhost minted:\n%s", i+1, id, r.Body)
			}
		}
	}
}

// previous_response_id continues a stored response on every upstream,
// over three turns (the second streamed): the upstream gets every earlier
// turn's input and output, in order, and never an id hookhost minted.
func TestPreviousResponseIDOnEveryUpstream(t *testing.T) {
	for _, k := range upstreamKinds {
		t.Run(k.name, func(t *testing.T) {
			up := fakeapi.New(t, k.text(1, "answer one"), k.text(2, "answer two"), k.text(3, "answer three"))
			s := stateServer(t, k.build(t, up.URL()), nil)
			r1 := respond(t, s, `{"model":"m1","input":"first question"}`)
			r2 := respond(t, s, `{"model":"m1","stream":true,"previous_response_id":`+string(r1["id"])+`,"input":[{"role":"user","content":"second question"}]}`)
			if string(r2["previous_response_id"]) != string(r1["id"]) || string(r2["store"]) != "true" {
				t.Errorf("the response echoes previous_response_id %s, store %s", r2["previous_response_id"], r2["store"])
			}
			respond(t, s, `{"model":"m1","previous_response_id":`+string(r2["id"])+`,"input":"third question"}`)
			reqs := up.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d upstream requests, want 3", len(reqs))
			}
			last := string(reqs[2].Body)
			inOrder(t, "the third turn upstream", last, "first question", "answer one", "second question", "answer two", "third question")
			if strings.Contains(last, "previous_response_id") {
				t.Errorf("a previous_response_id resolved by hookhost reached the upstream:\n%s", last)
			}
			noMintedIDs(t, up)
		})
	}
	t.Run("offline", func(t *testing.T) {
		rec := &recording{Provider: offline.New()}
		s := stateServer(t, rec, nil, func(p *parts) { p.models = []string{"offline-small"} })
		r1 := respond(t, s, `{"model":"offline-small","input":"first question"}`)
		r2 := respond(t, s, `{"model":"offline-small","stream":true,"previous_response_id":`+string(r1["id"])+`,"input":"second question"}`)
		respond(t, s, `{"model":"offline-small","previous_response_id":`+string(r2["id"])+`,"input":"third question"}`)
		answer := func(obj map[string]json.RawMessage) string {
			var out []struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			json.Unmarshal(obj["output"], &out)
			if len(out) == 0 || len(out[0].Content) == 0 {
				t.Fatalf("no text in %s", obj["output"])
			}
			return out[0].Content[0].Text
		}
		inOrder(t, "the third turn upstream", rec.transcript(),
			"user: first question", "assistant: "+answer(r1), "user: second question", "assistant: "+answer(r2), "user: third question")
	})
}

// An item_reference to an output item hookhost returned is the item
// itself, on any upstream; on a Responses upstream the item goes without
// the id hookhost gave it.
func TestItemReference(t *testing.T) {
	for _, k := range upstreamKinds {
		t.Run(k.name, func(t *testing.T) {
			up := fakeapi.New(t, k.text(1, "answer one"), k.text(2, "answer two"))
			s := stateServer(t, k.build(t, up.URL()), nil)
			// Streamed, so that even a Responses upstream's answer gets
			// ids of hookhost's.
			r1 := respond(t, s, `{"model":"m1","stream":true,"input":"first question"}`)
			ids := outputIDs(t, r1)
			if len(ids) != 1 || !responses.Minted(ids[0]) {
				t.Fatalf("output ids %v, want one minted by hookhost", ids)
			}
			// As the Vercel AI SDK sends turn two with store:true.
			respond(t, s, `{"model":"m1","input":[{"role":"user","content":[{"type":"input_text","text":"first question"}]},{"type":"item_reference","id":"`+ids[0]+`"},{"role":"user","content":[{"type":"input_text","text":"second question"}]}]}`)
			last := string(up.Requests()[1].Body)
			inOrder(t, "turn two upstream", last, "first question", "answer one", "second question")
			if strings.Contains(last, "item_reference") {
				t.Errorf("a reference hookhost resolved reached the upstream:\n%s", last)
			}
			noMintedIDs(t, up)
		})
	}
}

// wantNotFound checks an OpenAI-shaped 404 naming id.
func wantNotFound(t *testing.T, resp *http.Response, want string) {
	t.Helper()
	body := readAll(t, resp)
	if resp.StatusCode != 404 {
		t.Fatalf("status %d, want 404: %s", resp.StatusCode, body)
	}
	var got, w any
	json.Unmarshal(body, &got)
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(got, w) {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func previousNotFound(id string) string {
	return `{"error":{"message":"Previous response with id '` + id + `' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`
}

// Ids hookhost did not mint are a Responses upstream's own state: they
// pass through to it unchanged. Elsewhere, and for ids of hookhost's it
// does not hold, they are a 404 naming the id, before any upstream call.
func TestIDsNotStoredHere(t *testing.T) {
	forged := "resp_" + strings.Repeat("ab", 24)
	// Ids hookhost minted that this server never stored: from another
	// server (a replica).
	up := fakeapi.New(t, chatText("x"))
	other := respond(t, stateServer(t, upstreamKinds[0].build(t, up.URL()), nil), `{"model":"m1","input":"hi"}`)
	minted, mintedItem := str(t, other["id"]), outputIDs(t, other)[0]
	for _, k := range upstreamKinds {
		t.Run(k.name, func(t *testing.T) {
			up := fakeapi.New(t, k.text(1, "ok"), k.text(2, "ok"))
			s := stateServer(t, k.build(t, up.URL()), nil)
			resp := post(t, s.url, "/v1/responses", `{"model":"m1","previous_response_id":"`+minted+`","input":"more"}`)
			wantNotFound(t, resp, previousNotFound(minted))
			resp = post(t, s.url, "/v1/responses", `{"model":"m1","input":[{"type":"item_reference","id":"`+mintedItem+`"}]}`)
			if resp.StatusCode != 404 || !strings.Contains(string(readAll(t, resp)), mintedItem) {
				t.Fatalf("a reference to an item of hookhost's not stored here: %d", resp.StatusCode)
			}
			prev := `{"model":"m1","previous_response_id":"` + forged + `","input":"more"}`
			ref := `{"model":"m1","input":[{"role":"user","content":"a"},{"type":"item_reference","id":"msg_upstream7"},{"role":"user","content":"b"}]}`
			if k.name != "responses" {
				wantNotFound(t, post(t, s.url, "/v1/responses", prev), previousNotFound(forged))
				wantNotFound(t, post(t, s.url, "/v1/responses", ref),
					`{"error":{"message":"Item with id 'msg_upstream7' not found.","type":"invalid_request_error","param":"input[1]","code":null}}`)
				if n := len(up.Requests()); n != 0 {
					t.Fatalf("%d upstream requests for refused ones", n)
				}
				return
			}
			respond(t, s, prev)
			respond(t, s, ref)
			reqs := up.Requests()
			if !strings.Contains(string(reqs[0].Body), `"previous_response_id":"`+forged+`"`) {
				t.Errorf("the upstream's own previous_response_id did not reach it:\n%s", reqs[0].Body)
			}
			if !strings.Contains(string(reqs[1].Body), `{"type":"item_reference","id":"msg_upstream7"}`) {
				t.Errorf("a reference to the upstream's own item did not reach it:\n%s", reqs[1].Body)
			}
		})
	}
}

// A response continued from one that continued an upstream's own response
// names that upstream response again, so the upstream's part of the
// conversation is not lost.
func TestUpstreamPreviousIsCarried(t *testing.T) {
	k := upstreamKinds[2]
	up := fakeapi.New(t, k.text(1, "answer one"), k.text(2, "answer two"))
	s := stateServer(t, k.build(t, up.URL()), nil)
	r1 := respond(t, s, `{"model":"m1","stream":true,"previous_response_id":"resp_fromupstream","input":"first question"}`)
	respond(t, s, `{"model":"m1","previous_response_id":`+string(r1["id"])+`,"input":"second question"}`)
	last := string(up.Requests()[1].Body)
	if !strings.Contains(last, `"previous_response_id":"resp_fromupstream"`) {
		t.Fatalf("the upstream's own previous response was not named again:\n%s", last)
	}
	inOrder(t, "turn two upstream", last, "first question", "answer one", "second question")
	noMintedIDs(t, up)
}

// readFile is a client tool; kora__burn a plugin tool hookhost runs.
const readFileTool = `{"type":"function","name":"read_file","parameters":{"type":"object"}}`

func koraBus(t *testing.T) *hookbus.Bus {
	t.Helper()
	bus, err := hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{
		Name:  "kora",
		Tools: []hooks.ToolSpec{{Name: "kora__burn", Description: "burn", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		PreToolCallCanProvideResultFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if req.Name != "kora__burn" {
				return nil, nil
			}
			return &hooks.ToolResult{Content: `{"burnt":true}`}, nil
		},
	}}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return bus
}

// A client tool round trip continued with previous_response_id and only
// the new function_call_output (as openai-go's README does): the upstream
// gets the plugin round hookhost hid from the client spliced back, and the
// client's result under the upstream's own call id.
func TestClientToolRoundTripByPreviousResponseID(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  upstreamKind
		mixed fakeapi.Reply
	}{
		{"chat", upstreamKinds[0], fakeapi.JSON(200, `{"id":"c1","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[`+
			`{"id":"call_c1","type":"function","function":{"name":"read_file","arguments":"{}"}},{"id":"call_k1","type":"function","function":{"name":"kora__burn","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)},
		{"responses", upstreamKinds[2], respOutput("resp_up1",
			`{"type":"function_call","id":"fc_up1","call_id":"call_c1","name":"read_file","arguments":"{}","status":"completed"}`,
			`{"type":"function_call","id":"fc_up2","call_id":"call_k1","name":"kora__burn","arguments":"{}","status":"completed"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := fakeapi.New(t, tc.mixed, tc.kind.text(2, "the file says hi"), tc.kind.text(3, "you are welcome"))
			s := stateServer(t, tc.kind.build(t, up.URL()), nil, func(p *parts) { p.bus = koraBus(t) })
			r1 := respond(t, s, `{"model":"m1","input":"read the file","tools":[`+readFileTool+`]}`)
			var calls []struct {
				Type   string `json:"type"`
				CallID string `json:"call_id"`
				Name   string `json:"name"`
			}
			json.Unmarshal(r1["output"], &calls)
			if len(calls) != 1 || calls[0].Name != "read_file" || calls[0].CallID == "call_c1" {
				t.Fatalf("handed calls %+v, want read_file alone under an id of hookhost's", calls)
			}
			r2 := respond(t, s, `{"model":"m1","previous_response_id":`+string(r1["id"])+`,"tools":[`+readFileTool+`],`+
				`"input":[{"type":"function_call_output","call_id":"`+calls[0].CallID+`","output":"hi"}]}`)
			if !strings.Contains(string(r2["output"]), "the file says hi") {
				t.Fatalf("turn two: %s", r2["output"])
			}
			last := string(up.Requests()[1].Body)
			inOrder(t, "turn two upstream", last, "read the file", "call_c1", "call_k1", "burnt", "call_c1")
			if strings.Contains(last, calls[0].CallID) {
				t.Errorf("the upstream got the call id hookhost handed the client, not its own:\n%s", last)
			}
			// A third turn, continuing from the second, still carries the
			// whole round trip, hidden round included.
			respond(t, s, `{"model":"m1","previous_response_id":`+string(r2["id"])+`,"input":"thanks"}`)
			last = string(up.Requests()[2].Body)
			inOrder(t, "turn three upstream", last, "read the file", "call_c1", "call_k1", "burnt", "call_c1", "the file says hi", "thanks")
			noMintedIDs(t, up)
		})
	}
}

// store:false keeps nothing: the response cannot be continued or fetched.
func TestStoreFalseKeepsNothing(t *testing.T) {
	mem := statestore.NewMemory(statestore.Limits{Entries: 100, Bytes: 1 << 20}, nil)
	s := stateServer(t, offline.New(), mem, func(p *parts) { p.models = []string{"offline-small"} })
	for _, body := range []string{
		`{"model":"offline-small","store":false,"input":"hello"}`,
		`{"model":"offline-small","store":false,"stream":true,"input":"hello"}`,
	} {
		r := respond(t, s, body)
		if string(r["store"]) != "false" {
			t.Errorf("store:false answered with store %s", r["store"])
		}
		id := str(t, r["id"])
		wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+id+`","input":"more"}`), previousNotFound(id))
	}
	if n, _, _ := mem.Usage(); n != 0 {
		t.Fatalf("store:false left %d entries", n)
	}
}

// GET /v1/responses/{id} returns the object the client got, streamed or
// not; DELETE removes it (and its items) and answers as OpenAI does.
func TestGetAndDeleteStoredResponses(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) { p.models = []string{"offline-small"} })
	resp := post(t, s.url, "/v1/responses", `{"model":"offline-small","input":"hello"}`)
	whole := readAll(t, resp)
	var obj map[string]json.RawMessage
	json.Unmarshal(whole, &obj)
	id := str(t, obj["id"])
	got := do(t, http.MethodGet, s.url+"/v1/responses/"+id)
	if body := readAll(t, got); got.StatusCode != 200 || !bytes.Equal(body, whole) {
		t.Fatalf("GET: %d\n%s\nwant the body the client got\n%s", got.StatusCode, body, whole)
	}
	resp = post(t, s.url, "/v1/responses", `{"model":"offline-small","stream":true,"input":"hello"}`)
	final := completedEvent(t, readAll(t, resp))
	json.Unmarshal(final, &obj)
	streamed := str(t, obj["id"])
	got = do(t, http.MethodGet, s.url+"/v1/responses/"+streamed)
	if body := readAll(t, got); got.StatusCode != 200 || !bytes.Equal(body, final) {
		t.Fatalf("GET of a streamed response: %d\n%s\nwant response.completed's\n%s", got.StatusCode, body, final)
	}
	items := outputIDs(t, obj)

	del := do(t, http.MethodDelete, s.url+"/v1/responses/"+streamed)
	body := readAll(t, del)
	var d, w any
	json.Unmarshal(body, &d)
	json.Unmarshal([]byte(`{"id":"`+streamed+`","object":"response","deleted":true}`), &w)
	if del.StatusCode != 200 || !jsonEqual(d, w) {
		t.Fatalf("DELETE: %d %s", del.StatusCode, body)
	}
	notFound := `{"error":{"message":"Response with id '` + streamed + `' not found.","type":"invalid_request_error","param":null,"code":null}}`
	wantNotFound(t, do(t, http.MethodGet, s.url+"/v1/responses/"+streamed), notFound)
	wantNotFound(t, do(t, http.MethodDelete, s.url+"/v1/responses/"+streamed), notFound)
	resp = post(t, s.url, "/v1/responses", `{"model":"offline-small","input":[{"type":"item_reference","id":"`+items[0]+`"}]}`)
	if resp.StatusCode != 404 || !strings.Contains(string(readAll(t, resp)), items[0]) {
		t.Fatalf("a deleted response's item is still referable: %d", resp.StatusCode)
	}
	got = do(t, http.MethodGet, s.url+"/v1/responses/"+id)
	if readAll(t, got); got.StatusCode != 200 {
		t.Fatalf("deleting one response removed another: %d", got.StatusCode)
	}

	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/v1/responses/" + id, 405},
		{http.MethodGet, "/v1/responses/" + id + "/input_items", 404},
		{http.MethodGet, "/v1/responses/" + id + "?stream=true", 400},
	} {
		r := do(t, tc.method, s.url+tc.path)
		body := readAll(t, r)
		if r.StatusCode != tc.status || !bytes.HasPrefix(body, []byte(`{"error":{`)) {
			t.Errorf("%s %s: %d %s, want %d in OpenAI's shape", tc.method, tc.path, r.StatusCode, body, tc.status)
		}
	}
}

// testClock is a time source a test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// After server.state_ttl without use a stored response is gone: a
// continuation gets OpenAI's 404, never an answer without its context.
func TestStoredResponseExpires(t *testing.T) {
	clock := &testClock{t: time.Unix(1_800_000_000, 0)}
	mem := statestore.NewMemory(statestore.Limits{Entries: 100, Bytes: 1 << 20}, clock.now)
	rec := &recording{Provider: offline.New()}
	s := stateServer(t, rec, mem, func(p *parts) { p.models = []string{"offline-small"} })
	r1 := respond(t, s, `{"model":"offline-small","input":"hello"}`)
	id := str(t, r1["id"])
	clock.add(50 * time.Minute)
	r2 := respond(t, s, `{"model":"offline-small","previous_response_id":"`+id+`","input":"again"}`)
	clock.add(50 * time.Minute) // r1 was used 50m ago: still there
	respond(t, s, `{"model":"offline-small","previous_response_id":"`+id+`","input":"again"}`)
	clock.add(61 * time.Minute)
	calls := len(rec.reqs)
	wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+id+`","input":"again"}`), previousNotFound(id))
	r2id := str(t, r2["id"])
	wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","stream":true,"previous_response_id":"`+r2id+`","input":"again"}`), previousNotFound(r2id))
	if len(rec.reqs) != calls {
		t.Fatal("a request naming an expired response reached the upstream")
	}
}

// Stored responses belong to the key that made them: another key's GET,
// DELETE and continuation get the 404 an unknown id gets.
func TestStoredResponsesPerTenant(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) {
		p.models = []string{"offline-small"}
		p.server.APIKeyEnv = "HOOKHOST_KEYS"
		p.getenv = func(string) string { return "key-alice,key-bob" }
	})
	alice, bob := []string{"Authorization", "Bearer key-alice"}, []string{"Authorization", "Bearer key-bob"}
	r := respond(t, s, `{"model":"offline-small","input":"hello"}`, alice...)
	id := str(t, r["id"])
	item := outputIDs(t, r)[0]
	wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+id+`","input":"mine now"}`, bob...), previousNotFound(id))
	resp := post(t, s.url, "/v1/responses", `{"model":"offline-small","input":[{"type":"item_reference","id":"`+item+`"}]}`, bob...)
	if resp.StatusCode != 404 {
		t.Fatalf("another tenant's item reference: %d %s", resp.StatusCode, readAll(t, resp))
	}
	readAll(t, resp)
	notFound := `{"error":{"message":"Response with id '` + id + `' not found.","type":"invalid_request_error","param":null,"code":null}}`
	wantNotFound(t, do(t, http.MethodGet, s.url+"/v1/responses/"+id, bob...), notFound)
	wantNotFound(t, do(t, http.MethodDelete, s.url+"/v1/responses/"+id, bob...), notFound)
	if got := do(t, http.MethodGet, s.url+"/v1/responses/"+id); got.StatusCode != 401 {
		t.Fatalf("GET with no key: %d", got.StatusCode)
	}
	got := do(t, http.MethodGet, s.url+"/v1/responses/"+id, alice...)
	if readAll(t, got); got.StatusCode != 200 {
		t.Fatalf("the owner's GET after another tenant's DELETE: %d", got.StatusCode)
	}
	respond(t, s, `{"model":"offline-small","previous_response_id":"`+id+`","input":"more"}`, alice...)
}

// A flood of big responses from one tenant does not evict another's: the
// store stays within its bounds by dropping the flooder's oldest.
func TestStoredResponsesBounded(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) {
		p.models = []string{"offline-small"}
		p.server.APIKeyEnv = "HOOKHOST_KEYS"
		p.getenv = func(string) string { return "key-quiet,key-loud" }
		p.server.ResponsesEntries = 1000
		p.server.ResponsesMaxBytes = 512 << 10
	})
	quiet, loud := []string{"Authorization", "Bearer key-quiet"}, []string{"Authorization", "Bearer key-loud"}
	kept := str(t, respond(t, s, `{"model":"offline-small","input":"hello"}`, quiet...)["id"])
	big := strings.Repeat("lorem ipsum ", 4<<10) // ~48 KiB per response
	var first string
	for i := range 40 {
		id := str(t, respond(t, s, `{"model":"offline-small","input":"`+big+fmt.Sprint(i)+`"}`, loud...)["id"])
		if i == 0 {
			first = id
		}
	}
	respond(t, s, `{"model":"offline-small","previous_response_id":"`+kept+`","input":"still there?"}`, quiet...)
	wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+first+`","input":"x"}`, loud...), previousNotFound(first))
	mem := s.states.Store.(*statestore.Memory)
	if n, b, ev := mem.Usage(); b > 512<<10 || ev == 0 {
		t.Fatalf("store holds %d entries, %d bytes, evicted %d: over its bound, or nothing evicted", n, b, ev)
	}
	metrics := metricsOf(t, s.url)
	if !strings.Contains(metrics, "hookhost_gateway_responses_stored_bytes ") || strings.Contains(metrics, "hookhost_gateway_responses_evicted_total 0\n") {
		t.Errorf("the metrics do not show the store of responses and its evictions:\n%s", metrics)
	}
}

// A response too big for the store is still answered; only continuing
// from it fails, with the 404, and the server log says why.
func TestResponseTooBigToStore(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) {
		p.models = []string{"offline-small"}
		p.server.ResponsesEntries = 10
		p.server.ResponsesMaxBytes = 4 << 10
	})
	id := str(t, respond(t, s, `{"model":"offline-small","input":"`+strings.Repeat("x", 8<<10)+`"}`)["id"])
	wantNotFound(t, post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+id+`","input":"x"}`), previousNotFound(id))
	if !strings.Contains(s.logs.String(), "not stored") {
		t.Errorf("the log does not say the response was not stored:\n%s", s.logs.String())
	}
}

// Bad values of the fields hookhost resolves are 400s naming them.
func TestStateFieldsRefused(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) { p.models = []string{"offline-small"} })
	for _, tc := range []struct{ body, param string }{
		{`{"model":"offline-small","input":"x","previous_response_id":7}`, "previous_response_id"},
		{`{"model":"offline-small","input":"x","previous_response_id":""}`, "previous_response_id"},
		{`{"model":"offline-small","input":"x","store":"yes"}`, "store"},
		{`{"model":"offline-small","input":[{"type":"item_reference"}]}`, "input[0].id"},
		{`{"model":"offline-small","input":"x","conversation":"conv_1"}`, "conversation"},
	} {
		resp := post(t, s.url, "/v1/responses", tc.body)
		body := readAll(t, resp)
		var e struct {
			Error struct {
				Param string `json:"param"`
			} `json:"error"`
		}
		json.Unmarshal(body, &e)
		if resp.StatusCode != 400 || e.Error.Param != tc.param {
			t.Errorf("%s: %d %s, want a 400 about %s", tc.body, resp.StatusCode, body, tc.param)
		}
	}
}

// A conversation continued by id costs what it would cost sent whole: the
// grown body is held to server.max_body_size (a 413 saying why) and its
// extra bytes are taken from the body budget, then given back.
func TestContinuedBodyWithinLimits(t *testing.T) {
	s := stateServer(t, offline.New(), nil, func(p *parts) {
		p.models = []string{"offline-small"}
		p.server.MaxBodySize = 16 << 10
	})
	half := strings.Repeat("a", 9<<10)
	id := str(t, respond(t, s, `{"model":"offline-small","input":"`+half+`"}`)["id"])
	id2 := str(t, respond(t, s, `{"model":"offline-small","previous_response_id":"`+id+`","input":"short"}`)["id"])
	resp := post(t, s.url, "/v1/responses", `{"model":"offline-small","previous_response_id":"`+id2+`","input":"`+half+`"}`)
	body := readAll(t, resp)
	if resp.StatusCode != 413 || !strings.Contains(string(body), "server.max_body_size") || !bytes.HasPrefix(body, []byte(`{"error":{`)) {
		t.Fatalf("a continuation past max_body_size: %d %s", resp.StatusCode, body)
	}
	eventually(t, "the body budget is all given back", func() bool { return s.budget.inUse() == 0 })
}

// On the bypass route to an OpenAI upstream, stored responses are the
// provider's own: GET and DELETE go to it as they came.
func TestStoredResponsesOnTheBypassRoute(t *testing.T) {
	up := fakeapi.New(t, fakeapi.JSON(200, `{"id":"resp_up","object":"response"}`), fakeapi.JSON(200, `{"id":"resp_up","object":"response","deleted":true}`))
	s := newTest(t, bypassParts(t, "openai", up.URL()+"/v1"))
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := do(t, method, s.url+"/v1/responses/resp_up")
		if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(string(body), "resp_up") {
			t.Fatalf("%s: %d %s", method, resp.StatusCode, body)
		}
	}
	reqs := up.Requests()
	if len(reqs) != 2 || reqs[0].Method != http.MethodGet || reqs[1].Method != http.MethodDelete || reqs[1].Path != "/v1/responses/resp_up" {
		t.Fatalf("the upstream saw %+v", reqs)
	}
}
