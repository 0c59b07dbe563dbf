package python

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// toolArgs and the Python dataclass below declare the same tool
// arguments in each SDK.
type toolArgs struct {
	Text  string         `json:"text"`
	Times *int           `json:"times,omitempty"`
	Tags  []string       `json:"tags,omitempty"`
	Ratio *float64       `json:"ratio,omitempty"`
	Mode  *string        `json:"mode,omitempty" enum:"a,b"`
	Meta  map[string]int `json:"meta,omitempty"`
}

const toolPy = `
import json, sys
from dataclasses import dataclass
from typing import Dict, List, Literal, Optional
import hookhost_plugin as hp

@dataclass
class A:
    text: str
    times: Optional[int] = None
    tags: Optional[List[str]] = None
    ratio: Optional[float] = None
    mode: Optional[Literal["a", "b"]] = None
    meta: Optional[Dict[str, int]] = None

t = hp.Tool("t", "d", lambda a: {"ok": True}, A)
for raw in json.load(sys.stdin):
    r = t.call(raw)
    print(json.dumps({"content": r.content, "is_error": r.is_error}))
`

// TestToolErrorsWordedAsGo feeds the same raw arguments to a Go
// sdk.NewTool and to the Python SDK's Tool with the same argument type:
// the README promises "the same words, so a model gets the same messages
// from every plugin".
func TestToolErrorsWordedAsGo(t *testing.T) {
	needPython(t)
	inputs := []string{
		`{"text": 3}`,
		`{}`,
		`{"text":"a","times":"3"}`,
		`{"text":"a","times":2.5}`,
		`{"text":"a","times":99999999999999999999}`,
		`{"text":"a","extra":1}`,
		`[1]`,
		`{"text":"a","tags":[1,"b",null]}`,
		`{"text":"a","mode":"c"}`,
		`{"text":"a","meta":{"k":"v","a b":1.5}}`,
		`{"text":"a","ratio":1e400}`,
		`{"text":"a","times":null}`,
		`{"text":"a"} {"text":"b"}`,
		`{"text":`,
		`{"text":"a",}`,
		`{"text":'a'}`,
		`{"text":"a","times":NaN}`,
		`{"text":"a","times":-Infinity}`,
		`{"text":"a","times":Infinity}`,
		`{"text":"a\qb"}`,
		`{"text":"a\u12G4"}`,
		"{\"text\":\"a\nb\"}",
		"{\"text\":\"a\tb\"}",
		`{"text" "a"}`,
		`{"text":"a" "times":1}`,
		`{"text":"a","tags":["x" "y"]}`,
		`{"text":"a","tags":["x",]}`,
		`{"text":"abc`,
		`{"text":"a"`,
		`{"text":"a"}   x`,
		`{"text":"a", "times": 01}`,
		`{"text":"a", "times": -}`,
		`{"text":"a", "times": 1.}`,
		`{"text":"a", "times": tru}`,
		`{"text":"a", "tags": [}`,
		`{"text":"a", "meta": {"k":1,}}`,
		`{"text":"é", "times": ü}`,
		`{"text":"a", "times": 1e}`,
		`{"text":"a", "times": 1e+x}`,
		`{"text":"a", "times": nul`,
		`{"text":"a", "times": fals}`,
		`{"text":"a\u00"}`,
		"{\"text\":\"a\x01\"}",
		"{\"text\":\"a\\\x01\"}",
		`{"text":"a"}]`,
		`  `,
		`{"a":1 `,
	}
	tool := sdk.NewTool("t", "d", func(ctx context.Context, a toolArgs) (any, error) {
		return map[string]bool{"ok": true}, nil
	})
	in, _ := json.Marshal(inputs)
	cmd := exec.Command(python, "-B", "-c", toolPy)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+abs(t, "src"))
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python answered %d lines for %d inputs:\n%s", len(lines), len(inputs), out)
	}
	for i, raw := range inputs {
		g := tool.Call(context.Background(), json.RawMessage(raw))
		var p struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &p); err != nil {
			t.Fatal(err)
		}
		if g.Content != p.Content || g.IsError != p.IsError {
			t.Errorf("arguments %s:\n  Go:     %s (is_error %v)\n  Python: %s (is_error %v)", raw, g.Content, g.IsError, p.Content, p.IsError)
		}
	}
}

// TestHungV1HandlersLeaveThePluginStoppable runs, under the real host on
// protocol 1, a plugin whose pre_tool_call hangs for some calls (a
// backend call without a timeout, say). Each such call times out for the
// host, as it should, and keeps one of the SDK's 64 hook threads. Past
// them the plugin answers at once with an error naming the cause rather
// than queueing calls, and gRPC's own threads stay free: the controller's
// Shutdown still stops it gracefully.
func TestHungV1HandlersLeaveThePluginStoppable(t *testing.T) {
	needPython(t)
	script := filepath.Join(t.TempDir(), "wedge.py")
	src := fmt.Sprintf(`#!%s
import sys, threading
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

class Wedge(hp.Plugin):
    name, version = "wedge", "1.0.0"

    def pre_tool_call(self, call):
        if call.name == "slow_backend":
            threading.Event().wait()  # a call that never returns
        return None

    def transform_llm_output(self, out):
        return out.text + "!"

hp.serve(Wedge())
`, python, abs(t, "src"))
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	log := newLog(t)
	h, bus := start(t, parse(t, fmt.Sprintf("[plugins]\nenabled = [\"wedge\"]\n[plugins.entries.wedge]\npath = %q\nprotocol = 1\ntimeout = \"300ms\"\n", script)), log)
	ctx := context.Background()
	if text, _ := bus.TransformLLMOutput(ctx, hooks.LLMOutput{Text: "before"}); text != "before!" {
		t.Fatalf("transform_llm_output before: %q", text)
	}
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bus.PreToolCall(ctx, hooks.ToolCallRequest{Name: "slow_backend", CallID: fmt.Sprint(i), Arguments: json.RawMessage(`{}`)})
		}()
	}
	wg.Wait() // every one timed out for the host
	began := time.Now()
	if text, _ := bus.TransformLLMOutput(ctx, hooks.LLMOutput{Text: "after"}); text != "after" {
		t.Errorf("transform_llm_output after 64 hung pre_tool_call handlers: %q, want \"after\" (the plugin's failure passed over)", text)
	}
	if d := time.Since(began); d > 250*time.Millisecond {
		t.Errorf("transform_llm_output with every hook thread hung took %v: want an answer at once, not a wait for the deadline", d)
	}
	if !strings.Contains(log.String(), "already running 64 hook calls") {
		t.Errorf("the host's log does not say the plugin is already running 64 hook calls")
	}
	began = time.Now()
	if err := h.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(began); d > 1500*time.Millisecond {
		t.Errorf("closing the plugin took %v: its controller's Shutdown went unanswered", d)
	}
}

// TestStretchToolNeverRunsAfterItsStageTimedOut: under the real host on
// protocol 2, a plugin that provides and transforms its tool is asked
// [provide, transform] in one stretch. 64 provide handlers that outlast
// tool_timeout (a slow backend) fill the SDK's stage pool. The next
// call's provide stage must then never run in the plugin once the host
// has timed it out and gone on without it (hookstretch.Run: a provide
// never starts once its call is over): a tool with side effects would run
// for a call the model was told failed.
func TestStretchToolNeverRunsAfterItsStageTimedOut(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran.txt")
	script := filepath.Join(dir, "pay.py")
	src := fmt.Sprintf(`#!%s
import sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, %q)
import hookhost_plugin as hp

class Pay(hp.Plugin):
    name, version = "pay", "1.0.0"
    matchers = ["pay__*"]
    tools = [hp.ToolSpec("pay__send", "send money", {"type": "object"})]

    def pre_tool_call_can_provide_result(self, call):
        if call.call_id.startswith("slow"):
            time.sleep(3)  # a slow backend, past tool_timeout
        with open(%q, "a") as f:
            f.write(call.call_id + "\n")
        return hp.ToolResult.json({"sent": call.call_id})

    def transform_tool_result(self, ev):
        return None

hp.serve(Pay())
`, python, abs(t, "src"), ran)
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	log := newLog(t)
	_, bus := start(t, parse(t, fmt.Sprintf("[plugins]\nenabled = [\"pay\"]\n[plugins.entries.pay]\npath = %q\nprotocol = 2\ntimeout = \"1s\"\ntool_timeout = \"300ms\"\n", script)), log)
	ctx := context.Background()
	provide := func(id string) *hookbus.ProvidedResult {
		run := bus.StartToolCall(hooks.ToolCallRequest{SessionID: "s", CallID: id, Name: "pay__send", Arguments: json.RawMessage(`{}`)})
		defer run.Close()
		run.PreToolCall(ctx)
		return run.ProvideResult(ctx)
	}
	if r := provide("first"); r == nil || !strings.Contains(r.Content, "first") {
		t.Fatalf("first call: %+v", r)
	}
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); provide(fmt.Sprintf("slow-%d", i)) }()
	}
	wg.Wait()
	if r := provide("late"); r != nil {
		t.Logf("late call answered: %+v", r)
		return // the plugin answered it in time: nothing ran behind the host's back
	}
	// The host has given up on "late"; wait for the slow handlers to finish.
	time.Sleep(5 * time.Second)
	data, _ := os.ReadFile(ran)
	if strings.Contains(string(data), "late\n") {
		t.Errorf("the plugin ran pay__send for call \"late\" after the host had timed its provide stage out and gone on without it")
	}
}
