package upstream

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/llm"
)

func TestPassthroughMatchesMessagesByValueInOrder(t *testing.T) {
	var p Passthrough
	hi := llm.Message{Role: "user", Content: "what is this?"}
	p.KeepMessage(hi, json.RawMessage(`{"n":1}`))
	p.KeepMessage(hi, json.RawMessage(`{"n":2}`))
	call := llm.Message{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":`)}}}
	p.KeepMessage(call, json.RawMessage(`{"n":3}`), json.RawMessage(`{"n":4}`))

	w := p.Messages()
	for _, want := range []string{`{"n":1}`, `{"n":2}`} {
		got, ok := w.Take(hi)
		if !ok || len(got) != 1 || string(got[0]) != want {
			t.Fatalf("Take(hi) = %s, %v; want %s", got, ok, want)
		}
	}
	if got, ok := w.Take(hi); ok {
		t.Fatalf("a third equal message took %s; each wire form is used once per encoding", got)
	}
	// Invalid JSON arguments still identify their message.
	if got, ok := w.Take(call); !ok || len(got) != 2 {
		t.Fatalf("Take(call) = %s, %v", got, ok)
	}
	changed := call
	changed.ToolCalls = []llm.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}
	if _, ok := p.Messages().Take(changed); ok {
		t.Fatal("a message whose arguments changed matched the old wire form")
	}
	// A new encoding starts over.
	if _, ok := p.Messages().Take(hi); !ok {
		t.Fatal("a new encoding found no wire form")
	}
}

func TestPassthroughFieldsDoNotRunTogether(t *testing.T) {
	var p Passthrough
	p.KeepMessage(llm.Message{Role: "user", Content: "ab", ToolName: "c"}, json.RawMessage(`1`))
	if _, ok := p.Messages().Take(llm.Message{Role: "user", Content: "a", ToolName: "bc"}); ok {
		t.Fatal("two messages with different fields matched")
	}
}

func TestPassthroughTools(t *testing.T) {
	var p Passthrough
	spec := llm.ToolSpec{Name: "f", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}
	p.KeepTool(spec, json.RawMessage(`{"strict":true}`))
	if w, ok := p.Tool(spec); !ok || string(w) != `{"strict":true}` {
		t.Fatalf("Tool = %s, %v", w, ok)
	}
	spec.Description = "changed"
	if _, ok := p.Tool(spec); ok {
		t.Fatal("a changed tool matched its old wire form")
	}
	var none *Passthrough
	if _, ok := none.Tool(spec); ok {
		t.Fatal("a nil Passthrough found a tool")
	}
	if _, ok := none.Messages().Take(llm.Message{}); ok {
		t.Fatal("a nil Passthrough found a message")
	}
}

// Forms kept after an encoding started join the next encoding, still in
// the order they were kept among equal messages, and never the one under
// way.
func TestPassthroughKeepsBetweenEncodings(t *testing.T) {
	var p Passthrough
	hi := llm.Message{Role: "user", Content: "hi"}
	for i := 0; i < 100; i++ {
		p.KeepMessage(llm.Message{Role: "user", Content: fmt.Sprint(i)}, json.RawMessage(fmt.Sprint(i)))
	}
	p.KeepMessage(hi, json.RawMessage(`1`))
	during := p.Messages()
	p.KeepMessage(hi, json.RawMessage(`2`))
	p.KeepMessage(llm.Message{Role: "user", Content: "late"}, json.RawMessage(`3`))
	if got, ok := during.Take(hi); !ok || string(got[0]) != "1" {
		t.Fatalf("Take = %s, %v", got, ok)
	}
	if got, ok := during.Take(hi); ok {
		t.Fatalf("the encoding under way took a form kept after it started: %s", got)
	}
	w := p.Messages()
	for _, want := range []string{"1", "2"} {
		if got, ok := w.Take(hi); !ok || string(got[0]) != want {
			t.Fatalf("Take = %s, %v; want %s", got, ok, want)
		}
	}
	for i := 99; i >= 0; i-- {
		if got, ok := w.Take(llm.Message{Role: "user", Content: fmt.Sprint(i)}); !ok || string(got[0]) != fmt.Sprint(i) {
			t.Fatalf("message %d: Take = %s, %v", i, got, ok)
		}
	}
	if got, ok := w.Take(llm.Message{Role: "user", Content: "late"}); !ok || string(got[0]) != "3" {
		t.Fatalf("Take(late) = %s, %v", got, ok)
	}
}
