package relay

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// hostedLookup is a hosted tool set with one tool, srv__lookup, counting
// its runs.
func hostedLookup(t *testing.T, runs *atomic.Int32) dispatch.ToolSet {
	reg, err := dispatch.NewRegistry(dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "srv__lookup", Description: "looks a key up", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			runs.Add(1)
			return "found " + string(args), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Hosted tools (an MCP server's offered to the model) are offered beside
// the client's and run by hookhost, with no plugin at all: the round is
// hidden, the client's own call handed back, and its continuation gets the
// hidden rounds back under the upstream's ids.
func TestHostedToolMixedWithAClientToolThenContinuation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		var runs atomic.Int32
		rec := &recorder{}
		up := &scripted{steps: []step{
			calls("", 5, 1, tc("h1", "srv__lookup", `{"key":"a"}`), tc("c1", "read_file", `{"path":"a"}`)),
			text("a is 1 and the file says hi.", 7, 3),
		}}
		r := New(Config{Provider: up, Hosted: hostedLookup(t, &runs), Store: NewStore(time.Minute, 10), Observe: rec})
		front := testFront{llm.ProtocolChat}
		call := userCall("look a up and read a", readFile)
		call.Stream = stream
		var sink dialect.Sink
		if stream {
			sink = &recSink{}
		}
		res := runOK(t, r, front, call, sink)
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" || !mintedID.MatchString(res.ToolCalls[0].ID) {
			t.Fatalf("stream=%v: client got %+v, want only read_file under a minted id", stream, res.ToolCalls)
		}
		var names []string
		for _, tl := range up.calls()[0].req.Tools {
			names = append(names, tl.Name)
		}
		if !reflect.DeepEqual(names, []string{"read_file", "srv__lookup"}) {
			t.Errorf("stream=%v: tools offered %v, want the client's then the hosted one", stream, names)
		}
		next := userCall("look a up and read a", readFile)
		next.Stream = stream
		next.Request.Messages = append(next.Request.Messages,
			hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
			hooks.Message{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "hi"},
		)
		res2 := runOK(t, r, front, next, sink)
		if strings.Join(res2.Text, "") != "a is 1 and the file says hi." {
			t.Errorf("stream=%v: Text = %q", stream, res2.Text)
		}
		msgs := up.calls()[1].req.Messages
		var shape []string
		for _, m := range msgs {
			s := string(m.Role)
			for _, c := range m.ToolCalls {
				s += ":" + c.ID
			}
			if m.ToolCallID != "" {
				s += "<" + m.ToolCallID + "=" + m.Content
			}
			shape = append(shape, s)
		}
		want := []string{"user", "assistant:h1:c1", `tool<h1="found {\"key\":\"a\"}"`, "tool<c1=hi"}
		if !reflect.DeepEqual(shape, want) {
			t.Errorf("stream=%v: continuation history %q, want %q", stream, shape, want)
		}
		if runs.Load() != 1 {
			t.Errorf("stream=%v: the hosted tool ran %d times, want 1", stream, runs.Load())
		}
		if !reflect.DeepEqual(rec.tools, []string{"mcp", "client"}) {
			t.Errorf("stream=%v: observer counted %v, want mcp then client", stream, rec.tools)
		}
	}
}

// A client tool named like a hosted tool is refused before anything runs.
func TestClientToolNamedLikeAHostedToolIsRefused(t *testing.T) {
	var runs atomic.Int32
	up := &scripted{}
	r := New(Config{Provider: up, Hosted: hostedLookup(t, &runs)})
	_, err := r.Run(context.Background(), testFront{llm.ProtocolChat}, userCall("q", hooks.ToolSpec{Name: "srv__lookup"}), nil)
	var de *dialect.Error
	if !errors.As(err, &de) || de.Status != 400 || de.Param != "tools" || !strings.Contains(de.Message, "MCP server") {
		t.Fatalf("err = %v, want a 400 naming the MCP server's tool", err)
	}
	if len(up.calls()) != 0 {
		t.Error("upstream was called")
	}
}
