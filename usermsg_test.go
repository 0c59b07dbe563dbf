package hookhost_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// chatWithContextPlugin opens a host on the gateway route with the
// context plugin (gateway/internal/contextplugin, a real process) in
// front of up, a fake Chat Completions upstream, and starts a session.
func chatWithContextPlugin(t *testing.T, up *fakeapi.Upstream, trace *[]string) *conversation.Session {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ctx")
	cmd := exec.Command("go", "build", "-o", bin, "./gateway/internal/contextplugin")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the context plugin: %v\n%s", err, out)
	}
	cfg := parse(t, fmt.Sprintf(`
[llm]
provider = "openai"
model = "gpt-test"
base_url = %q
api_key_env = "TEST_KEY"
max_retries = 0
[routing]
gateway = true
[plugins]
enabled = ["ctx"]
[plugins.entries.ctx]
path = %q
`, up.BaseURL(), bin))
	h := open(t, cfg, env("TEST_KEY", "sk-test"))
	if errs := h.StartErrors(); len(errs) > 0 {
		t.Fatalf("plugins did not start: %v", errs)
	}
	s, err := h.NewSession(hookhost.SessionOptions{Trace: func(e conversation.Event) { *trace = append(*trace, e.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// In `chat`, a blocked message ends the turn with the plugin's message as
// the answer and no model call; context goes to the model beside the
// user's message, and stays in the history for later turns.
func TestChatOnUserMessage(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "Ticket is open.", In: 1, Out: 1} })
	var trace []string
	s := chatWithContextPlugin(t, up, &trace)

	turn, err := s.Send(context.Background(), "something forbidden")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Answer != "That request is not allowed here." || turn.Iterations != 0 || len(turn.Inferences) != 0 {
		t.Fatalf("turn %+v, want the block's message and no model call", turn)
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("the model was called %d times for a blocked message", n)
	}
	if !strings.Contains(strings.Join(trace, "\n"), "on_user_message: ctx blocked the message") {
		t.Errorf("trace does not say who blocked:\n%s", strings.Join(trace, "\n"))
	}

	turn, err = s.Send(context.Background(), "what is the status?")
	if err != nil || turn.Answer != "Ticket is open." {
		t.Fatalf("turn %+v, err %v", turn, err)
	}
	seen := up.Requests()
	if len(seen) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(seen))
	}
	conv, err := fakeapi.Conversation(fakeapi.Chat, seen[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, it := range conv {
		if it.Role == "user" {
			users = append(users, it.Content)
		}
	}
	want := []string{"something forbidden", "what is the status?", "<additional_context>\nticket ACME-7 is open\n</additional_context>"}
	if fmt.Sprint(users) != fmt.Sprint(want) {
		t.Fatalf("the model's user messages are %q, want %q:\n%s", users, want, seen[0].Body)
	}
	if turn.Answer != "Ticket is open." || strings.Contains(turn.Answer, "ACME") {
		t.Fatalf("answer %q", turn.Answer)
	}
}

// In `chat`, post_tool_call_can_add_context's context follows the tool's
// result in what the model sees next.
func TestChatToolContext(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(func(r fakeapi.Request) fakeapi.Turn {
		if r.N == 0 {
			return fakeapi.Turn{Calls: []fakeapi.Call{{ID: "call_1", Name: "ctx__lookup", Args: "{}"}}, In: 1, Out: 1}
		}
		return fakeapi.Turn{Text: "It is open.", In: 1, Out: 1}
	})
	var trace []string
	s := chatWithContextPlugin(t, up, &trace)
	turn, err := s.Send(context.Background(), "status?")
	if err != nil || turn.Answer != "It is open." {
		t.Fatalf("turn %+v, err %v", turn, err)
	}
	seen := up.Requests()
	if len(seen) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(seen))
	}
	conv, err := fakeapi.Conversation(fakeapi.Chat, seen[1].Body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":"open"}` + "\n\n<additional_context>\nchecked by ctx: ctx__lookup\n</additional_context>"
	var got string
	for _, it := range conv {
		if it.Kind == "result" && it.ID == "call_1" {
			got = it.Content
		}
	}
	if got != want {
		t.Fatalf("the model saw the tool's result as\n%q\nwant\n%q", got, want)
	}
	if len(turn.ToolCalls) != 1 || fmt.Sprint(turn.ToolCalls[0].ContextBy) != "[ctx]" {
		t.Fatalf("tool calls %+v, want one with context by ctx", turn.ToolCalls)
	}
	if !strings.Contains(strings.Join(trace, "\n"), "post_tool_call_can_add_context: ctx added context to the result of ctx__lookup") {
		t.Errorf("trace does not say who added context:\n%s", strings.Join(trace, "\n"))
	}
}
