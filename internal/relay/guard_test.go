package relay

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// windowed is a transform_llm_output plugin declared windowed that records
// the windows it is shown and answers them with answer.
func windowed(name string, window, overlap int64, seen *[]hooks.LLMOutput, mu *sync.Mutex, answer func(hooks.LLMOutput) *hooks.TextReplacement) *hooks.Funcs {
	return &hooks.Funcs{
		Name:        name,
		HookOptions: map[hooks.Name]hooks.HookOptions{hooks.TransformLLMOutput: {WindowBytes: window, OverlapBytes: overlap}},
		TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
			mu.Lock()
			*seen = append(*seen, ev)
			mu.Unlock()
			return answer(ev), nil
		},
	}
}

// Windows release all but the overlap, cut at a character boundary, and
// the windows the client gets add up to the text; two plugins chain per
// window, the second seeing the first's replacement.
func TestWindowsChainAndCutAtCharacters(t *testing.T) {
	var mu sync.Mutex
	var first, second []hooks.LLMOutput
	a := windowed("a", 16, 8, &first, &mu, func(ev hooks.LLMOutput) *hooks.TextReplacement {
		return &hooks.TextReplacement{Text: strings.ReplaceAll(ev.Text, "cat", "dog")}
	})
	b := windowed("b", 16, 8, &second, &mu, func(hooks.LLMOutput) *hooks.TextReplacement { return nil })
	up := &scripted{steps: []step{{resp: text("", 1, 1).resp, chunks: []string{"the cat é", "ééé sat on", " the mat with a cat"}}}}
	r := New(Config{Provider: up, Bus: newBus(t, a, b)})
	sink := &recSink{}
	call := userCall("q")
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	var shown strings.Builder
	for _, ev := range sink.list() {
		if d, ok := strings.CutPrefix(ev, "text:"); ok {
			// The first window's cut (at 23-8 bytes) falls inside an é.
			if !utf8.ValidString(d) {
				t.Errorf("a release splits a character: %q", d)
			}
			shown.WriteString(d)
		}
	}
	want := "the dog éééé sat on the mat with a dog"
	if shown.String() != want || strings.Join(res.Text, "") != want {
		t.Fatalf("the client got %q (Text %q), want %q", shown.String(), res.Text, want)
	}
	if got := sink.list(); got[len(got)-1] != "finish:end_turn:1/1" {
		t.Errorf("stream ends with %q", got[len(got)-1])
	}
	if len(first) < 2 || len(first) != len(second) {
		t.Fatalf("windows: %d to a, %d to b, want the same, at least 2", len(first), len(second))
	}
	var offset int64
	for i, w := range first {
		if !w.Windowed || w.Offset != offset || (i == 0) != (w.Overlap == 0) || w.Last != (i == len(first)-1) {
			t.Errorf("window %d: %+v (offset so far %d)", i, w, offset)
		}
		if second[i].Text != strings.ReplaceAll(w.Text, "cat", "dog") {
			t.Errorf("b's window %d is %q, want a's replacement of %q", i, second[i].Text, w.Text)
		}
		if i+1 < len(first) {
			offset += int64(len(second[i].Text)) - first[i+1].Overlap
		}
	}
}

// A stop in a round of tool calls ends the answer there: nothing of the
// round's calls runs or reaches the client, and it ends refused.
func TestWindowStopEndsARoundOfCalls(t *testing.T) {
	var mu sync.Mutex
	var seen []hooks.LLMOutput
	stop := windowed("stopper", 16, 4, &seen, &mu, func(ev hooks.LLMOutput) *hooks.TextReplacement {
		if strings.Contains(ev.Text, "rm -rf") {
			return &hooks.TextReplacement{Stop: &hooks.OutputStop{}}
		}
		return nil
	})
	up := &scripted{steps: []step{{resp: calls("", 1, 1, tc("c1", "shell", `{}`)).resp, chunks: []string{"I will now run ", "rm -rf / for you, ", "then report back"}}}}
	r := New(Config{Provider: up, Bus: newBus(t, stop)})
	sink := &recSink{}
	call := userCall("q")
	call.Request.Tools = []hooks.ToolSpec{{Name: "shell"}}
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	ev := sink.list()
	last := ev[len(ev)-1]
	if last != "finish:refusal:1/1" || sink.count("call:") != 0 || len(res.ToolCalls) != 0 {
		t.Fatalf("stream %q, calls %v: want no call and a refusal", ev, res.ToolCalls)
	}
	if want := `answer stopped by plugin "stopper"`; ev[len(ev)-2] != "text:"+want {
		t.Errorf("the stop's default message is not shown last: %q", ev)
	}
	for _, e := range ev {
		if strings.Contains(e, "rm -rf") {
			t.Errorf("the stopped text reached the client: %q", ev)
		}
	}
}

// A plugin undeclared makes the whole round wait, as before windows: one
// call on the whole text, nothing shown before it.
func TestAnUndeclaredPluginHoldsTheWholeText(t *testing.T) {
	var mu sync.Mutex
	var wins []hooks.LLMOutput
	w := windowed("w", 16, 4, &wins, &mu, func(hooks.LLMOutput) *hooks.TextReplacement { return nil })
	var whole []string
	plain := &hooks.Funcs{Name: "plain", TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
		whole = append(whole, ev.Text)
		return nil, nil
	}}
	up := &scripted{steps: []step{{resp: text("", 1, 1).resp, chunks: []string{"a fairly long answer ", "in three ", "deltas"}}}}
	r := New(Config{Provider: up, Bus: newBus(t, w, plain)})
	sink := &recSink{}
	call := userCall("q")
	call.Stream = true
	runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	if want := []string{"text:a fairly long answer in three deltas", "finish:end_turn:1/1"}; !reflect.DeepEqual(sink.list(), want) {
		t.Errorf("stream %q, want %q", sink.list(), want)
	}
	if len(whole) != 1 || len(wins) != 1 || wins[0].Windowed {
		t.Errorf("whole-text calls %q, windowed plugin saw %+v: want one whole-text call each", whole, wins)
	}
}
