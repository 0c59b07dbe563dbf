// Command windowplugin is a plugin for the gateway's tests of windowed
// guards. Its transform_llm_output, declared windowed (window_bytes and
// overlap_bytes from the environment's WINDOW_BYTES and OVERLAP_BYTES, or
// 64 and 24), replaces every "SECRET-" followed by 12 characters with
// "[redacted]" and stops the answer at the word "FORBIDDEN". With
// REISSUE_ON set, it also serves post_llm_call_can_reissue with
// decide_after_bytes 32, asking for a reissue with the model
// "gpt-careful" when the opening it is shown contains that text. Every
// window and opening it sees is appended, one JSON line each, to the file
// SEEN_FILE when set, for the test to read.
package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type guard struct {
	sdk.Base
	mu sync.Mutex
}

var secret = regexp.MustCompile(`SECRET-[A-Za-z0-9]{12}`)

func envInt(name string, def int64) int64 {
	if n, err := strconv.ParseInt(os.Getenv(name), 10, 64); err == nil {
		return n
	}
	return def
}

func (*guard) Info() sdk.Info {
	opts := map[hooks.Name]hooks.HookOptions{
		hooks.TransformLLMOutput: {WindowBytes: envInt("WINDOW_BYTES", 64), OverlapBytes: envInt("OVERLAP_BYTES", 24)},
	}
	if os.Getenv("REISSUE_ON") != "" {
		opts[hooks.PostLLMCallCanReissue] = hooks.HookOptions{DecideAfterBytes: 32}
	}
	return sdk.Info{Name: "windowguard", Version: "1.0.0", HookOptions: opts}
}

// record appends what the plugin was shown to SEEN_FILE.
func (g *guard) record(v any) {
	path := os.Getenv("SEEN_FILE")
	if path == "" {
		return
	}
	b, _ := json.Marshal(v)
	g.mu.Lock()
	defer g.mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

func (g *guard) TransformLLMOutput(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	g.record(map[string]any{"hook": "transform_llm_output", "text": ev.Text, "windowed": ev.Windowed, "offset": ev.Offset, "overlap": ev.Overlap, "last": ev.Last})
	if i := strings.Index(ev.Text, "FORBIDDEN"); i >= 0 {
		return &hooks.TextReplacement{Stop: &hooks.OutputStop{Message: "[stopped by windowguard]"}}, nil
	}
	if !secret.MatchString(ev.Text) {
		return nil, nil
	}
	return &hooks.TextReplacement{Text: secret.ReplaceAllString(ev.Text, "[redacted]")}, nil
}

type reissuer struct{ *guard }

func (g reissuer) PostLLMCallCanReissue(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	text := ev.Response.Message.Content
	g.record(map[string]any{"hook": "post_llm_call_can_reissue", "text": text, "partial": ev.Partial, "model": ev.Request.Model})
	if ev.Request.Model == "gpt-careful" || !strings.Contains(text, os.Getenv("REISSUE_ON")) {
		return nil, nil
	}
	model := "gpt-careful"
	return &hooks.Reissue{Patch: hooks.RequestPatch{Model: &model}, Reason: "hedged opening"}, nil
}

func main() {
	g := &guard{}
	if os.Getenv("REISSUE_ON") != "" {
		sdk.Serve(reissuer{g})
		return
	}
	sdk.Serve(g)
}
