package wire_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
)

const bad = "bad \xff byte"

// badText is a plugin subscribed to every hook that answers with text that
// is not valid UTF-8 and records the session ids it was sent.
func badText(seen *sync.Map) *hooks.Funcs {
	note := func(id string) { seen.Store(id, true) }
	return &hooks.Funcs{
		Name:               "bad",
		OnSessionStartFunc: func(_ context.Context, ev hooks.SessionStart) error { note(ev.SessionID); return nil },
		OnSessionEndFunc:   func(_ context.Context, ev hooks.SessionEnd) error { note(ev.SessionID); return nil },
		PostLLMCallFunc:    func(_ context.Context, ev hooks.Inference) error { note(ev.SessionID); return nil },
		PostToolCallFunc:   func(_ context.Context, ev hooks.ToolCallOutcome) error { note(ev.SessionID); return nil },
		PreToolListFinalizedFunc: func(_ context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			note(ev.SessionID)
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "t", Description: bad}}}, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			note(ev.SessionID)
			return &hooks.RequestPatch{System: ptr(bad), Messages: []hooks.Message{{Role: hooks.RoleUser, Content: bad}}}, nil
		},
		PreLLMCallCanProvideResponseFunc: func(_ context.Context, ev hooks.LLMRequest) (*hooks.ModelResponse, error) {
			note(ev.SessionID)
			return &hooks.ModelResponse{Message: hooks.Message{Content: bad}}, nil
		},
		PostLLMCallCanReissueFunc: func(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
			note(ev.SessionID)
			return &hooks.Reissue{Reason: bad}, nil
		},
		TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
			note(ev.SessionID)
			return &hooks.TextReplacement{Text: bad}, nil
		},
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			note(ev.SessionID)
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: bad}}, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			note(ev.SessionID)
			return &hooks.ToolResult{Content: bad}, nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			note(ev.SessionID)
			return &hooks.ToolResult{Content: bad}, nil
		},
		OnUserMessageFunc: func(_ context.Context, ev hooks.UserMessage) (*hooks.UserMessageDecision, error) {
			note(ev.SessionID)
			return &hooks.UserMessageDecision{AdditionalContext: bad}, nil
		},
		PostToolCallCanAddContextFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
			note(ev.SessionID)
			return &hooks.AddedContext{AdditionalContext: bad}, nil
		},
	}
}

// Every hook works with invalid UTF-8 in what the host sends and in what
// the plugin answers: both sides repair it, and the host is told of each
// repaired request.
func TestInvalidUTF8OnEveryHookOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var seen sync.Map
		c := connect(t, version, badText(&seen), nil).client
		var mu sync.Mutex
		repaired := map[string]int{}
		c.Apply(wire.Settings{Plugin: "bad", Repaired: func(hook string, fields int) {
			mu.Lock()
			defer mu.Unlock()
			repaired[hook] += fields
		}})

		ctx := t.Context()
		id := "session \xc3"
		ask := func(h hooks.Name, req any) any {
			t.Helper()
			v, err := c.Handle(ctx, h, req)
			if err != nil {
				t.Fatalf("%s: %v", h, err)
			}
			return v
		}
		check := func(h hooks.Name, texts ...string) {
			t.Helper()
			for _, s := range texts {
				if s != strings.ToValidUTF8(bad, "\uFFFD") {
					t.Errorf("%s: answer text %q, want it repaired", h, s)
				}
			}
		}
		ask(hooks.OnSessionStart, hooks.SessionStart{SessionID: id})
		ask(hooks.OnSessionEnd, hooks.SessionEnd{SessionID: id, Error: bad})
		ask(hooks.PostLLMCall, hooks.Inference{SessionID: id, Reason: bad})
		ask(hooks.PostToolCall, hooks.ToolCallOutcome{SessionID: id, Result: hooks.ToolResult{Content: bad}})
		o := ask(hooks.PreToolListFinalized, hooks.ToolListRequest{SessionID: id, Tools: []hooks.ToolSpec{{Name: bad}}}).(*hooks.ToolListOverride)
		check(hooks.PreToolListFinalized, o.Tools[0].Description)
		p := ask(hooks.PreAPIRequestMutable, hooks.APIRequest{SessionID: id, Request: hooks.ModelRequest{Messages: []hooks.Message{{Role: hooks.RoleUser, Content: bad}}}}).(*hooks.RequestPatch)
		check(hooks.PreAPIRequestMutable, *p.System, p.Messages[0].Content)
		pr := ask(hooks.PreLLMCallCanProvideResponse, hooks.LLMRequest{SessionID: id, Request: hooks.ModelRequest{Messages: []hooks.Message{{Role: hooks.RoleUser, Content: bad}}}}).(*hooks.ModelResponse)
		check(hooks.PreLLMCallCanProvideResponse, pr.Message.Content)
		r := ask(hooks.PostLLMCallCanReissue, hooks.LLMCall{SessionID: id, Response: hooks.ModelResponse{Message: hooks.Message{Content: bad}}}).(*hooks.Reissue)
		check(hooks.PostLLMCallCanReissue, r.Reason)
		tr := ask(hooks.TransformLLMOutput, hooks.LLMOutput{SessionID: id, Text: bad}).(*hooks.TextReplacement)
		check(hooks.TransformLLMOutput, tr.Text)
		d := ask(hooks.PreToolCall, hooks.ToolCallRequest{SessionID: id, Name: bad}).(*hooks.PreToolCallDecision)
		check(hooks.PreToolCall, d.Block.Message)
		res := ask(hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{SessionID: id, Name: bad}).(*hooks.ToolResult)
		check(hooks.PreToolCallCanProvideResult, res.Content)
		res = ask(hooks.TransformToolResult, hooks.ToolCallOutcome{SessionID: id, Result: hooks.ToolResult{Content: bad}}).(*hooks.ToolResult)
		check(hooks.TransformToolResult, res.Content)
		u := ask(hooks.OnUserMessage, hooks.UserMessage{SessionID: id, Text: bad}).(*hooks.UserMessageDecision)
		check(hooks.OnUserMessage, u.AdditionalContext)
		a := ask(hooks.PostToolCallCanAddContext, hooks.ToolCallOutcome{SessionID: id, Result: hooks.ToolResult{Content: bad}}).(*hooks.AddedContext)
		check(hooks.PostToolCallCanAddContext, a.AdditionalContext)

		if _, ok := seen.Load(strings.ToValidUTF8(id, "\uFFFD")); !ok {
			t.Error("the plugin never saw the repaired session id")
		}
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hooks.Catalogue {
			if repaired[string(h)] == 0 {
				t.Errorf("no repaired request reported for %s: %v", h, repaired)
			}
		}
	})
}
