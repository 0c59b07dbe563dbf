package hookbus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// lateProvider answers only after its deadline has passed: it waits for its
// context to end, then returns a result anyway, as a plugin that ignores its
// deadline would.
func lateProvider(name string) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreToolCallCanProvideResultFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		<-ctx.Done()
		return &hooks.ToolResult{Content: `"too late"`}, nil
	}}
}

func TestAResultAfterItsDeadlineIsATimeout(t *testing.T) {
	cases := []struct {
		name string
		host func(t *testing.T, p hooks.Plugin) hooks.Plugin
	}{
		{"inprocess/watchdog", func(_ *testing.T, p hooks.Plugin) hooks.Plugin { return p }},
		{"inprocess/inline", func(_ *testing.T, p hooks.Plugin) hooks.Plugin { return honouring{p} }},
	}
	for _, w := range wiretest.Wire {
		cases = append(cases, struct {
			name string
			host func(t *testing.T, p hooks.Plugin) hooks.Plugin
		}{w.Name, func(t *testing.T, p hooks.Plugin) hooks.Plugin { return wiretest.Over(t, w, p) }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBus(t, hookbus.Member{Plugin: tc.host(t, lateProvider("late")), Options: hookbus.Options{ToolTimeout: 20 * time.Millisecond}})
			used := 0
			for range 20 {
				within(t, func() {
					if r := b.PreToolCallCanProvideResult(context.Background(), call); r != nil {
						used++
					}
				})
			}
			if used > 0 {
				t.Fatalf("%d of 20 results that arrived after their deadline were used", used)
			}
			if n := b.Stats().Failures("late", hooks.PreToolCallCanProvideResult, hookbus.KindTimeout); n != 20 {
				t.Fatalf("%d of 20 late results counted as timeouts", n)
			}
		})
	}
}

// An in-process panic is warned once like any failure; its stack is logged
// at DEBUG only. (A remote plugin's stack stays in its own process.)
func TestPanicStacksAreLoggedAtDebugOnly(t *testing.T) {
	panicky := &hooks.Funcs{Name: "panicky", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		panic("bug")
	}}
	for _, level := range []hclog.Level{hclog.Warn, hclog.Debug} {
		var buf bytes.Buffer
		b, err := hookbus.New([]hookbus.Member{{Plugin: panicky}}, hookbus.Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &buf, Level: level})})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			b.PreToolCallCanProvideResult(context.Background(), call)
		}
		b.Close(context.Background())
		out := buf.String()
		hasStack := strings.Contains(out, "goroutine ")
		if level == hclog.Warn && (hasStack || strings.Count(out, "[WARN]") != 1) {
			t.Fatalf("at WARN, want one line and no stack:\n%s", out)
		}
		if level == hclog.Debug && !hasStack {
			t.Fatalf("at DEBUG, the stack is missing:\n%s", out)
		}
	}
}

// Tool results are JSON. Plain text is carried as a JSON string, so the
// model sees exactly the text and the protocol holds.
func TestAsJSONCarriesTextAsAJSONString(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{"plain text", `"plain text"`},
		{"", `""`},
		{"a <b> & c", `"a <b> & c"`},
		{`{"broken": `, `"{\"broken\": "`},
		{"bad \xff byte", "\"bad \uFFFD byte\""},
		{"{\"a\":\"\xff\"}", "{\"a\":\"\uFFFD\"}"},
		{`{"ok":true}`, `{"ok":true}`},
		{` [1, 2] `, ` [1, 2] `},
		{`"already a string"`, `"already a string"`},
	} {
		got := hooks.ToolResult{Content: tc.content, IsError: true}.AsJSON()
		if got.Content != tc.want || !got.IsError {
			t.Errorf("AsJSON(%q) = %+v, want content %s", tc.content, got, tc.want)
		}
		if !json.Valid([]byte(got.Content)) {
			t.Errorf("AsJSON(%q) = %q is not JSON", tc.content, got.Content)
		}
	}
}
