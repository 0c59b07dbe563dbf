package relay

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// mintedID is the shape of a call id hookhost gives a client: a prefix,
// then 128 random bits.
var mintedID = regexp.MustCompile(`^[A-Za-z]+[_-][0-9a-f]{32}$`)

func TestMintedIDsKeepThePrefixAndAreUnguessable(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	for upstream, prefix := range map[string]string{
		"toolu_01A09q90qw90lq917835lq9": "toolu_",
		"call_1":                        "call_",
		"call_1_read_file":              "call_",
		"c1":                            "call_",
		"":                              "call_",
		"_x":                            "call_",
		"fc-12":                         "fc-",
		"ünï_x":                         "call_",
		"averyveryverylongprefix_1":     "call_",
	} {
		a, b := mintID(upstream), mintID(upstream)
		if !strings.HasPrefix(a, prefix) || !mintedID.MatchString(a) || !valid.MatchString(a) {
			t.Errorf("mintID(%q) = %q, want %q then 32 hex digits", upstream, a, prefix)
		}
		if a == b {
			t.Errorf("mintID(%q) gave %q twice", upstream, a)
		}
	}
}

// rewireIDs touches only the fields that carry call ids, in each
// protocol's shape, and leaves everything else byte for byte.
func TestRewireIDsTouchesOnlyCallIDs(t *testing.T) {
	ids := map[string]string{"call_1": "call_new", "toolu_1": "toolu_new"}
	for _, tc := range []struct{ name, in, want string }{
		{"anthropic tool_use",
			`{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"id":"toolu_1"}}`,
			`{"id":"toolu_new","input":{"id":"toolu_1"},"name":"read_file","type":"tool_use"}`},
		{"anthropic thinking", `{"type":"thinking","thinking":"call_1","signature":"s"}`, `{"type":"thinking","thinking":"call_1","signature":"s"}`},
		{"anthropic tool_result",
			`{"type":"tool_result","tool_use_id":"toolu_1","content":"a <b>","cache_control":{"type":"ephemeral"}}`,
			`{"cache_control":{"type":"ephemeral"},"content":"a <b>","tool_use_id":"toolu_new","type":"tool_result"}`},
		{"anthropic message",
			`{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]}`,
			`{"content":[{"type":"text","text":"x"},{"id":"toolu_new","input":{},"name":"f","type":"tool_use"}],"role":"assistant"}`},
		{"responses function_call",
			`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"call_id\":\"call_1\"}"}`,
			`{"arguments":"{\"call_id\":\"call_1\"}","call_id":"call_new","id":"fc_1","name":"f","type":"function_call"}`},
		{"responses output", `{"type":"function_call_output","call_id":"call_1","output":"x"}`, `{"call_id":"call_new","output":"x","type":"function_call_output"}`},
		{"responses message", `{"type":"message","id":"call_1","content":[]}`, `{"type":"message","id":"call_1","content":[]}`},
		{"chat assistant",
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]}`,
			`{"content":null,"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"},"id":"call_new","type":"function"},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]}`},
		{"chat tool", `{"role":"tool","tool_call_id":"call_1","content":"x"}`, `{"content":"x","role":"tool","tool_call_id":"call_new"}`},
		{"not an object", `"call_1"`, `"call_1"`},
	} {
		got := rewireIDs([]json.RawMessage{json.RawMessage(tc.in)}, ids)
		if len(got) != 1 || string(got[0]) != tc.want {
			t.Errorf("%s: rewireIDs = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// leakyUpstream answers like an upstream that numbers its call ids per
// response (the offline model, or one whose ids hookhost fills in): a
// plugin call whose arguments name the tenant in the system prompt and a
// client call, then final answers.
func leakyUpstream(whos ...string) *scripted {
	up := &scripted{}
	for _, who := range whos {
		up.steps = append(up.steps, calls("", 1, 1,
			tc("call_1", "kora__burn", `{"who":"`+who+`"}`), tc("call_2", "read_file", `{}`)))
	}
	for range 4 {
		up.steps = append(up.steps, text("ok", 1, 1))
	}
	return up
}

// secretKora provides a result private to whoever the call names.
func secretKora() *hooks.Funcs {
	return koraAnswering(func(args json.RawMessage) string {
		var a struct{ Who string }
		_ = json.Unmarshal(args, &a)
		return "private data of " + a.Who
	})
}

func tenantCall(system, tenant string) *dialect.Call {
	c := userCall("summarize my bill", readFile)
	c.Request.System = system
	c.Tenant = tenant
	return c
}

func continued(c *dialect.Call, handed []hooks.ToolCall, result string) *dialect.Call {
	c.Request.Messages = append(c.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: handed},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: handed[0].ID, Content: result})
	return c
}

func mentions(msgs []hooks.Message, s string) bool {
	for _, m := range msgs {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	return false
}

// Two clients sending the same messages under different system prompts,
// with an upstream that numbers its call ids: each continuation gets its
// own hidden rounds back, never the other's.
func TestStoreKeepsConversationsWithSameMessagesApart(t *testing.T) {
	up := leakyUpstream("alice", "bob")
	r := New(Config{Provider: up, Bus: newBus(t, secretKora()), Store: NewStore(time.Minute, 100)})
	front := testFront{llm.ProtocolChat}
	alice := runOK(t, r, front, tenantCall("tenant alice", ""), nil)
	runOK(t, r, front, tenantCall("tenant bob", ""), nil)
	runOK(t, r, front, continued(tenantCall("tenant alice", ""), alice.ToolCalls, "file"), nil)
	msgs := up.calls()[2].req.Messages
	if mentions(msgs, "bob") {
		t.Fatalf("alice's continuation went upstream with bob's hidden result: %+v", msgs)
	}
	if !mentions(msgs, "private data of alice") || len(msgs) != 4 || msgs[3].ToolCallID != "call_2" {
		t.Errorf("alice's continuation lost her own hidden round: %+v", msgs)
	}
}

// A client that builds a continuation from call ids it can guess (the
// upstream's numbering) gets nobody's hidden rounds.
func TestGuessedCallIDsContinueNoConversation(t *testing.T) {
	up := leakyUpstream("alice")
	r := New(Config{Provider: up, Bus: newBus(t, secretKora()), Store: NewStore(time.Minute, 100)})
	front := testFront{llm.ProtocolChat}
	runOK(t, r, front, tenantCall("", ""), nil)
	guess := continued(tenantCall("", ""), []hooks.ToolCall{tc("call_2", "read_file", `{}`)}, "file")
	runOK(t, r, front, guess, nil)
	if msgs := up.calls()[1].req.Messages; mentions(msgs, "alice") || !reflect.DeepEqual(msgs, guess.Request.Messages) {
		t.Fatalf("a continuation with guessed ids went upstream as %+v, want the client's own history", msgs)
	}
}

// The kept rounds of one client protocol, model, system prompt and tenant
// are never spliced into a request that differs in any of them, even one
// that carries the right call ids.
func TestStoreKeyIncludesWhoIsTalking(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*dialect.Call, *testFront)
		splice bool
	}{
		{"same", func(*dialect.Call, *testFront) {}, true},
		{"tenant", func(c *dialect.Call, _ *testFront) { c.Tenant = "mallory" }, false},
		{"system", func(c *dialect.Call, _ *testFront) { c.Request.System = "other" }, false},
		{"model", func(c *dialect.Call, _ *testFront) { c.Request.Model = "other" }, false},
		{"protocol", func(_ *dialect.Call, f *testFront) { f.proto = llm.ProtocolMessages }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := leakyUpstream("alice")
			r := New(Config{Provider: up, Bus: newBus(t, secretKora()), Store: NewStore(time.Minute, 100)})
			front := testFront{llm.ProtocolChat}
			first := runOK(t, r, front, tenantCall("sys", "alice"), nil)
			next := continued(tenantCall("sys", "alice"), first.ToolCalls, "file")
			tc.change(next, &front)
			runOK(t, r, front, next, nil)
			if got := mentions(up.calls()[1].req.Messages, "private data of alice"); got != tc.splice {
				t.Errorf("hidden rounds spliced = %v, want %v: %+v", got, tc.splice, up.calls()[1].req.Messages)
			}
		})
	}
}

// A final answer that showed no text is recognised by nothing, so no other
// conversation's next turn gets its rounds.
func TestEmptyShownAnswerMatchesNothing(t *testing.T) {
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("k1", "kora__burn", `{"who":"alice"}`)),
		text("", 1, 1),
		text("ok", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: newBus(t, secretKora()), Store: NewStore(time.Minute, 100)})
	front := testFront{llm.ProtocolChat}
	if res := runOK(t, r, front, userCall("hi"), nil); len(res.Text) != 0 {
		t.Fatalf("answer = %q, the test needs none", res.Text)
	}
	other := userCall("hi")
	other.Request.Messages = append(other.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, Content: "something I said"},
		hooks.Message{Role: hooks.RoleUser, Content: "more"})
	runOK(t, r, front, other, nil)
	if msgs := up.calls()[2].req.Messages; !reflect.DeepEqual(msgs, other.Request.Messages) {
		t.Fatalf("another conversation's next turn went upstream as %+v, want its own history", msgs)
	}
}

// A non-streamed answer sent to the client in its upstream wire form
// carries the ids the client was handed, and nothing else changes.
func TestWholeWireCarriesTheMintedIDs(t *testing.T) {
	thinking := `{"type":"thinking","thinking":"hmm","signature":"SIG"}`
	w := &upstream.WireResponse{Message: []json.RawMessage{json.RawMessage(thinking),
		json.RawMessage(`{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}`)}}
	up := &forwarding{proto: llm.ProtocolMessages, scripted: scripted{steps: []step{
		{resp: calls("", 1, 1, tc("toolu_1", "read_file", `{}`)).resp, wire: w},
	}}}
	r := New(Config{Provider: up, Store: NewStore(time.Minute, 10)})
	res := runOK(t, r, testFront{llm.ProtocolMessages}, userCall("read", readFile), nil)
	if len(res.ToolCalls) != 1 || !mintedID.MatchString(res.ToolCalls[0].ID) {
		t.Fatalf("client got %+v, want a call under an id minted by hookhost", res.ToolCalls)
	}
	if !res.WholeWire || res.Wire == nil || len(res.Wire.Message) != 2 {
		t.Fatalf("Wire = %+v, WholeWire = %v", res.Wire, res.WholeWire)
	}
	if string(res.Wire.Message[0]) != thinking || !strings.Contains(string(res.Wire.Message[1]), `"id":"`+res.ToolCalls[0].ID+`"`) {
		t.Errorf("client's wire message = %s, want the thinking as it came and the tool_use under %s", res.Wire.Message, res.ToolCalls[0].ID)
	}
	if !strings.Contains(string(w.Message[1]), `"id":"toolu_1"`) {
		t.Errorf("the upstream's wire was changed in place: %s", w.Message[1])
	}
}
