package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch/schema"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type Level string

type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type Common struct {
	Verbose bool `json:"verbose,omitempty" desc:"more detail"`
}

// everyKind has one field of each kind NewTool supports.
type everyKind struct {
	Common
	Query    string            `json:"query" desc:"what to look for"`
	Level    *Level            `json:"level" enum:"low, high" default:"low"`
	Limit    *int              `json:"limit" minimum:"1" maximum:"1000" default:"20" desc:"how many"`
	Count    uint8             `json:"count,omitempty"`
	Ratio    float32           `json:"ratio,omitempty" minimum:"-1.5" maximum:"1.5"`
	Tags     []string          `json:"tags,omitempty" enum:"a,b"`
	Points   []Point           `json:"points,omitempty"`
	Origin   *Point            `json:"origin"`
	Labels   map[string]int    `json:"labels,omitempty"`
	Extra    json.RawMessage   `json:"extra,omitempty"`
	Anything any               `json:"anything,omitempty"`
	When     time.Time         `json:"when,omitzero"`
	Nested   map[string][]bool `json:"nested,omitempty"`
	Skipped  string            `json:"-"`
	Plain    int
	hidden   int
}

const everyKindSchema = `{"type":"object","properties":{` +
	`"verbose":{"type":"boolean","description":"more detail"},` +
	`"query":{"type":"string","description":"what to look for"},` +
	`"level":{"type":"string","enum":["low","high"],"default":"low"},` +
	`"limit":{"type":"integer","description":"how many","minimum":1,"maximum":1000,"default":20},` +
	`"count":{"type":"integer","minimum":0,"maximum":255},` +
	`"ratio":{"type":"number","minimum":-1.5,"maximum":1.5},` +
	`"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},` +
	`"points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},` +
	`"origin":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false},` +
	`"labels":{"type":"object","additionalProperties":{"type":"integer"}},` +
	`"extra":{},` +
	`"anything":{},` +
	`"when":{"type":"string"},` +
	`"nested":{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}},` +
	`"Plain":{"type":"integer"}` +
	`},"required":["query","Plain"],"additionalProperties":false}`

func echoTool[Args any](name string) (sdk.Tool, *[]Args) {
	var got []Args
	return sdk.NewTool(name, "echoes", func(_ context.Context, a Args) (any, error) {
		got = append(got, a)
		return a, nil
	}), &got
}

func TestNewToolSchema(t *testing.T) {
	tool, _ := echoTool[everyKind]("t__every")
	spec := tool.Spec()
	if spec.Name != "t__every" || spec.Description != "echoes" {
		t.Fatalf("spec %+v", spec)
	}
	if string(spec.InputSchema) != everyKindSchema {
		t.Fatalf("schema\n got  %s\n want %s", spec.InputSchema, everyKindSchema)
	}
	// The host validates arguments with this schema before it asks the
	// plugin; it must accept it.
	if err := schema.Check(spec.InputSchema); err != nil {
		t.Fatalf("the host's validator refuses the schema: %v", err)
	}

	noArgs, _ := echoTool[struct{}]("t__none")
	if got := string(noArgs.Spec().InputSchema); got != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Fatalf("no arguments: %s", got)
	}
	ptr, _ := echoTool[*Point]("t__ptr")
	if got := string(ptr.Spec().InputSchema); got != `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}` {
		t.Fatalf("pointer to struct: %s", got)
	}
}

func TestNewToolDecodes(t *testing.T) {
	tool, got := echoTool[everyKind]("t__every")
	res := tool.Call(t.Context(), json.RawMessage(`{
		"verbose": true, "query": "q", "level": "high", "limit": 2e1, "count": 255, "ratio": -1.5,
		"tags": ["a","b"], "points": [{"x":1,"y":2.5}], "origin": {"x":0,"y":0},
		"labels": {"k": 3}, "extra": {"raw": [1, "<x>"]}, "anything": {"n": 1, "l": [true]},
		"when": "2026-01-02T03:04:05Z", "nested": {"a": [true, false]}, "Plain": 7.0
	}`))
	if res.IsError {
		t.Fatalf("error result: %s", res.Content)
	}
	if len(*got) != 1 {
		t.Fatalf("run called %d times", len(*got))
	}
	a := (*got)[0]
	lvl, limit := Level("high"), 20
	want := everyKind{
		Common: Common{Verbose: true}, Query: "q", Level: &lvl, Limit: &limit, Count: 255, Ratio: -1.5,
		Tags: []string{"a", "b"}, Points: []Point{{1, 2.5}}, Origin: &Point{},
		Labels: map[string]int{"k": 3}, Extra: json.RawMessage(`{"raw":[1,"<x>"]}`),
		Anything: map[string]any{"n": 1.0, "l": []any{true}},
		When:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Nested: map[string][]bool{"a": {true, false}}, Plain: 7,
	}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("decoded\n got  %+v\n want %+v", a, want)
	}
	// The value is the JSON result, HTML characters left readable.
	var back map[string]any
	if err := json.Unmarshal([]byte(res.Content), &back); err != nil || !strings.Contains(res.Content, `"<x>"`) {
		t.Fatalf("result %s: %v", res.Content, err)
	}

	// Optional fields may be left out; no arguments at all is {}.
	small, got2 := echoTool[struct {
		Name *string `json:"name"`
	}]("t__small")
	for _, raw := range []string{``, `null`, ` {} `} {
		if r := small.Call(t.Context(), json.RawMessage(raw)); r.IsError || r.Content != `{"name":null}` {
			t.Fatalf("%q: %+v", raw, r)
		}
	}
	if len(*got2) != 3 {
		t.Fatalf("run called %d times", len(*got2))
	}
}

func TestNewToolRefusesBadArguments(t *testing.T) {
	tool, got := echoTool[everyKind]("t__every")
	ok := `"query":"q","origin":{"x":0,"y":0},"Plain":1`
	cases := []struct{ args, want string }{
		{`{` + ok + `,"bogus":1}`, `args: unexpected property "bogus"; allowed properties are "verbose", "query", "level", "limit", "count", "ratio", "tags", "points", "origin", "labels", "extra", "anything", "when", "nested", "Plain"`},
		{`{"origin":{"x":0,"y":0},"Plain":1}`, `args: missing required property "query"`},
		{`{"query":"q","Plain":1,"origin":{"x":0}}`, `args.origin: missing required property "y"`},
		{`{` + ok + `,"points":[{"x":1,"y":2},{"x":"1","y":2}]}`, `args.points[1].x: must be a number, got string "1"`},
		{`{` + ok + `,"level":"medium"}`, `args.level: must be one of "low", "high", got string "medium"`},
		{`{` + ok + `,"level":null}`, `args.level: must be a string, got null`},
		{`{` + ok + `,"limit":0}`, `args.limit: must be >= 1, got 0`},
		{`{` + ok + `,"limit":1001}`, `args.limit: must be <= 1000, got 1001`},
		{`{` + ok + `,"limit":1.5}`, `args.limit: must be an integer, got number 1.5`},
		{`{` + ok + `,"count":256}`, `args.count: 256 is out of range for a 8-bit unsigned integer`},
		{`{` + ok + `,"count":-1}`, `args.count: must be >= 0, got -1`},
		{`{` + ok + `,"count":1e999999999999999999999}`, `args.count: 1e999999999999999999999 is out of range for a 8-bit unsigned integer`},
		{`{` + ok + `,"ratio":2}`, `args.ratio: must be <= 1.5, got 2`},
		{`{` + ok + `,"ratio":1e39}`, `args.ratio: 1e39 is out of range`},
		{`{` + ok + `,"tags":["a","c"]}`, `args.tags[1]: must be one of "a", "b", got string "c"`},
		{`{` + ok + `,"tags":"a"}`, `args.tags: must be an array, got string "a"`},
		{`{` + ok + `,"labels":{"k":"v","my key":true}}`, `args.labels.k: must be an integer, got string "v"; args.labels["my key"]: must be an integer, got boolean true`},
		{`{` + ok + `,"when":"yesterday"}`, `args.when: parsing time`},
		{`{` + ok + `,"when":5}`, `args.when: must be a string, got number 5`},
		{`{` + ok + `,"verbose":"yes"}`, `args.verbose: must be a boolean, got string "yes"`},
		{`{` + ok + `,"anything":1e400}`, `args.anything: 1e400 is out of range`},
		{`[1]`, `args: must be an object, got array`},
		{`{"query":`, `args: not valid JSON`},
		{`{} {}`, `args: not valid JSON: more than one JSON value`},
	}
	for _, c := range cases {
		r := tool.Call(t.Context(), json.RawMessage(c.args))
		var body struct{ Error string }
		if err := json.Unmarshal([]byte(r.Content), &body); err != nil || !r.IsError {
			t.Errorf("%s: result %+v", c.args, r)
			continue
		}
		if want := "tool t__every: arguments: " + c.want; !strings.HasPrefix(body.Error, want) {
			t.Errorf("%s:\n got  %s\n want %s", c.args, body.Error, want)
		}
	}
	if len(*got) != 0 {
		t.Fatalf("run was called on bad arguments: %+v", *got)
	}

	noArgs, _ := echoTool[struct{}]("t__none")
	if r := noArgs.Call(t.Context(), json.RawMessage(`{"x":1}`)); r.Content != `{"error":"tool t__none: arguments: args: unexpected property \"x\"; this tool takes no arguments, send {}"}` {
		t.Fatalf("no arguments: %s", r.Content)
	}
}

// The SDK's decoding and the host's validation of the derived schema agree:
// arguments one accepts, the other accepts.
func TestNewToolAgreesWithHostValidation(t *testing.T) {
	tool, _ := echoTool[everyKind]("t__every")
	ok := `"query":"q","origin":{"x":0,"y":0},"Plain":1`
	for _, args := range []string{
		`{` + ok + `}`,
		`{` + ok + `,"limit":20.0}`,
		`{` + ok + `,"limit":1.5}`,
		`{` + ok + `,"limit":0}`,
		`{` + ok + `,"level":"low"}`,
		`{` + ok + `,"level":"LOW"}`,
		`{` + ok + `,"level":null}`,
		`{` + ok + `,"tags":["b"]}`,
		`{` + ok + `,"tags":["b", 1]}`,
		`{` + ok + `,"count":-1}`,
		`{` + ok + `,"count":0}`,
		`{` + ok + `,"ratio":-1.6}`,
		`{` + ok + `,"labels":{"a":1,"b":2}}`,
		`{` + ok + `,"labels":{"a":"1"}}`,
		`{` + ok + `,"extra":null,"anything":[1,{"a":null}]}`,
		`{` + ok + `,"points":[{"x":1,"y":1,"z":1}]}`,
		`{` + ok + `,"nested":{"a":[true,null]}}`,
		`{` + ok + `,"unknown":1}`,
		`{"query":"q","Plain":1}`,
		`{"query":1,"origin":{"x":0,"y":0},"Plain":1}`,
		`{}`,
	} {
		hostErr := schema.Validate(tool.Spec().InputSchema, json.RawMessage(args))
		r := tool.Call(t.Context(), json.RawMessage(args))
		if (hostErr == nil) == r.IsError {
			t.Errorf("%s: host validation says %v, the tool answers %s", args, hostErr, r.Content)
		}
	}
}

func TestNewToolResults(t *testing.T) {
	ctx := t.Context()
	type noArgs struct{}
	failing := sdk.NewTool("t__fail", "", func(context.Context, noArgs) (any, error) {
		return nil, errors.New(`ledger unreadable: <disk> "full"`)
	})
	if r := failing.Call(ctx, nil); !r.IsError || r.Content != `{"error":"ledger unreadable: <disk> \"full\""}` {
		t.Fatalf("run error: %+v", r)
	}

	var calls int
	panicking := sdk.NewTool("t__panic", "", func(context.Context, noArgs) (any, error) {
		calls++
		var m map[string]int
		m["boom"]++
		return nil, nil
	})
	if r := panicking.Call(ctx, nil); !r.IsError || !strings.Contains(r.Content, `tool t__panic failed: it panicked: assignment to entry in nil map`) {
		t.Fatalf("panic: %+v", r)
	}
	if r := panicking.Call(ctx, nil); !r.IsError || calls != 2 {
		t.Fatalf("after a panic the tool still runs: %+v, %d calls", r, calls)
	}

	unencodable := sdk.NewTool("t__chan", "", func(context.Context, noArgs) (any, error) {
		return map[string]any{"c": make(chan int)}, nil
	})
	if r := unencodable.Call(ctx, nil); !r.IsError || !strings.Contains(r.Content, `tool t__chan: its result cannot be encoded as JSON: unsupported type: chan int`) {
		t.Fatalf("marshal failure: %+v", r)
	}

	text := sdk.NewTool("t__text", "", func(context.Context, noArgs) (any, error) { return "plain <text>", nil })
	if r := text.Call(ctx, nil); r.IsError || r.Content != `"plain <text>"` {
		t.Fatalf("string value: %+v", r)
	}
	raw := sdk.NewTool("t__raw", "", func(context.Context, noArgs) (any, error) { return json.RawMessage(` {"a": 1} `), nil })
	if r := raw.Call(ctx, nil); r.IsError || r.Content != `{"a":1}` {
		t.Fatalf("raw value: %+v", r)
	}

	// The context run gets is the call's.
	type key struct{}
	seen := sdk.NewTool("t__ctx", "", func(ctx context.Context, _ noArgs) (any, error) { return ctx.Value(key{}), nil })
	if r := seen.Call(context.WithValue(ctx, key{}, "v"), nil); r.Content != `"v"` {
		t.Fatalf("context: %+v", r)
	}

	// A Tool not made by NewTool answers an error instead of panicking.
	if r := (sdk.Tool{}).Call(ctx, nil); !r.IsError {
		t.Fatalf("zero tool: %+v", r)
	}
}

func TestNewToolPanicsOnUnsupportedTypes(t *testing.T) {
	type selfRef struct {
		Next *selfRef `json:"next"`
	}
	type embedsPtr struct {
		*Point
	}
	cases := []struct {
		name string
		make func()
		want string
	}{
		{"not a struct", func() { echoTool[string]("x") }, "argument type string: args: the argument type string must be a struct"},
		{"any", func() { echoTool[any]("x") }, "must be a struct"},
		{"chan", func() {
			echoTool[struct {
				C chan int `json:"c"`
			}]("x")
		}, "args.c: type chan int has no JSON form"},
		{"func", func() {
			echoTool[struct{ F func() }]("x")
		}, "args.F: type func() has no JSON form"},
		{"complex", func() { echoTool[struct{ C complex128 }]("x") }, "args.C: type complex128"},
		{"int keys", func() { echoTool[struct{ M map[int]string }]("x") }, "args.M: map key type int is not supported"},
		{"bytes", func() { echoTool[struct{ B []byte }]("x") }, "args.B: []uint8 is base64 text"},
		{"array", func() { echoTool[struct{ A [2]int }]("x") }, "args.A: type [2]int has no JSON form"},
		{"interface", func() { echoTool[struct{ E error }]("x") }, "args.E: interface type error is not supported"},
		{"recursive", func() { echoTool[selfRef]("x") }, "args.next: type sdk_test.selfRef contains itself"},
		{"embedded pointer", func() { echoTool[embedsPtr]("x") }, "embedded pointer *sdk_test.Point is not supported"},
		{"duplicate names", func() {
			echoTool[struct {
				Common
				V bool `json:"verbose"`
			}]("x")
		}, `args.verbose: two fields are named "verbose"`},
		{"string option", func() {
			echoTool[struct {
				N int `json:"n,string"`
			}]("x")
		}, `args.n: the ",string" option is not supported`},
		{"enum on int", func() {
			echoTool[struct {
				N int `json:"n" enum:"1,2"`
			}]("x")
		}, "args.n: the enum tag applies to strings only"},
		{"empty enum value", func() {
			echoTool[struct {
				S string `json:"s" enum:"a,,b"`
			}]("x")
		}, `args.s: enum tag "a,,b" has an empty value`},
		{"minimum on string", func() {
			echoTool[struct {
				S string `json:"s" minimum:"1"`
			}]("x")
		}, "args.s: the minimum tag applies to numbers only"},
		{"bad bound", func() {
			echoTool[struct {
				N int `json:"n" maximum:"ten"`
			}]("x")
		}, `args.n: maximum tag "ten" is not a JSON number`},
		{"crossed bounds", func() {
			echoTool[struct {
				N int `json:"n" minimum:"5" maximum:"1"`
			}]("x")
		}, "args.n: minimum 5 is greater than maximum 1"},
		{"bound beyond the type", func() {
			echoTool[struct {
				N int8 `json:"n" maximum:"1000"`
			}]("x")
		}, "args.n: maximum 1000 is above what int8 can hold (127)"},
		{"negative minimum of an unsigned field", func() {
			echoTool[struct {
				N uint `json:"n" minimum:"-1"`
			}]("x")
		}, "args.n: minimum -1 is below what uint can hold (0)"},
		{"default on a list", func() {
			echoTool[struct {
				N []int `json:"n,omitempty" default:"1"`
			}]("x")
		}, "args.n: a default on a list is not supported"},
		{"default on a required field", func() {
			echoTool[struct {
				N int `json:"n" default:"1"`
			}]("x")
		}, "args.n: a field with a default must be optional"},
		{"default of the wrong type", func() {
			echoTool[struct {
				N *int `json:"n" default:"many"`
			}]("x")
		}, `args.n: default tag "many": args.n: not valid JSON`},
		{"default outside the enum", func() {
			echoTool[struct {
				S *string `json:"s" enum:"a,b" default:"c"`
			}]("x")
		}, `args.s: default tag "c": args.s: must be one of "a", "b"`},
		{"default out of bounds", func() {
			echoTool[struct {
				N *int `json:"n" maximum:"3" default:"4"`
			}]("x")
		}, `args.n: default tag "4": args.n: must be <= 3, got 4`},
		{"decodes itself", func() { echoTool[time.Time]("x") }, "argument type time.Time: args: the argument type time.Time decodes itself"},
		{"nil run", func() { sdk.NewTool[struct{}]("x", "", nil) }, `sdk: NewTool("x"): run is nil`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				p := recover()
				msg, _ := p.(string)
				if !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, `sdk: NewTool("x"): `) {
					t.Fatalf("panic %v, want it to contain %q", p, c.want)
				}
			}()
			c.make()
		})
	}
}

// calculator has a typed tool, a hand-written tool and its own
// ResultProvider for the latter.
type calculator struct {
	sdk.Base
	matchers     []string
	hookMatchers map[hooks.Name][]string
	tools        []sdk.Tool
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func addTool() sdk.Tool {
	return sdk.NewTool("calc__add", "adds two integers", func(_ context.Context, a addArgs) (any, error) {
		return map[string]int{"sum": a.A + a.B}, nil
	})
}

func (c *calculator) Info() sdk.Info {
	return sdk.Info{
		Name: "calc", Matchers: c.matchers, HookMatchers: c.hookMatchers,
		Tools:     []hooks.ToolSpec{{Name: "calc__pi", Description: "pi"}},
		ToolFuncs: c.tools,
	}
}

type calcProvider struct{ calculator }

func (*calcProvider) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if call.Name == "calc__pi" {
		return &hooks.ToolResult{Content: "3.14159"}, nil
	}
	return nil, nil
}

func TestAdaptToolFuncs(t *testing.T) {
	ctx := t.Context()
	p := sdk.Adapt(&calcProvider{calculator{tools: []sdk.Tool{addTool()}}})
	m := p.Manifest()
	if names := toolNames(m.Tools); !reflect.DeepEqual(names, []string{"calc__pi", "calc__add"}) {
		t.Fatalf("tools %v", names)
	}
	if !reflect.DeepEqual(m.Hooks, []hooks.Name{hooks.PreToolCallCanProvideResult}) {
		t.Fatalf("hooks %v", m.Hooks)
	}
	if err := hooks.ValidateManifest(m, false); err != nil {
		t.Fatal(err)
	}
	ask := func(name, args string) *hooks.ToolResult {
		t.Helper()
		r, err := hooks.Ask[*hooks.ToolResult](ctx, p, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := ask("calc__add", `{"a":2,"b":3}`); r == nil || r.Content != `{"sum":5}` || r.IsError {
		t.Fatalf("typed tool: %+v", r)
	}
	if r := ask("calc__add", `{"a":2}`); r == nil || !r.IsError || r.Content != `{"error":"tool calc__add: arguments: args: missing required property \"b\""}` {
		t.Fatalf("typed tool, bad arguments: %+v", r)
	}
	if r := ask("calc__pi", ``); r == nil || r.Content != "3.14159" {
		t.Fatalf("the plugin's own provider: %+v", r)
	}
	if r := ask("shell", `{}`); r != nil {
		t.Fatalf("another tool: %+v", r)
	}

	// Without a ResultProvider, only the typed tools are answered.
	p = sdk.Adapt(&calculator{tools: []sdk.Tool{addTool()}})
	if r, err := hooks.Ask[*hooks.ToolResult](ctx, p, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: "calc__pi"}); r != nil || err != nil {
		t.Fatalf("no provider: %+v %v", r, err)
	}
}

func TestAdaptToolFuncMatchers(t *testing.T) {
	provide := hooks.PreToolCallCanProvideResult
	add := addTool()
	cases := []struct {
		name     string
		plugin   sdk.Plugin
		want     []string // provide's matchers
		wantSet  bool     // whether HookMatchers names provide
		wantRest map[hooks.Name][]string
	}{
		{"typed tools only", &calculator{tools: []sdk.Tool{add}}, []string{"calc__add"}, true, nil},
		{"typed tools only, plugin matchers for other hooks", &calculator{matchers: []string{"shell"}, tools: []sdk.Tool{add}}, []string{"calc__add"}, true, nil},
		{"with a provider for every tool", &calcProvider{calculator{tools: []sdk.Tool{add}}}, nil, false, nil},
		{"with a provider and matchers", &calcProvider{calculator{matchers: []string{"calc__pi"}, tools: []sdk.Tool{add}}}, []string{"calc__pi", "calc__add"}, true, nil},
		{"with a provider and matchers that cover the tool", &calcProvider{calculator{matchers: []string{"calc__*"}, tools: []sdk.Tool{add}}}, []string{"calc__*"}, true, nil},
		{"the plugin's own matchers for the hook", &calcProvider{calculator{
			hookMatchers: map[hooks.Name][]string{provide: {"calc__p*"}, hooks.PostToolCall: {}},
			tools:        []sdk.Tool{add},
		}}, []string{"calc__p*", "calc__add"}, true, map[hooks.Name][]string{hooks.PostToolCall: {}}},
		{"the plugin's own matchers: every tool", &calcProvider{calculator{
			hookMatchers: map[hooks.Name][]string{provide: {}},
			tools:        []sdk.Tool{add},
		}}, []string{}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before map[hooks.Name][]string
			if hm := c.plugin.Info().HookMatchers; hm != nil {
				before = map[hooks.Name][]string{}
				for k, v := range hm {
					before[k] = append([]string{}, v...)
				}
			}
			m := sdk.Adapt(c.plugin).Manifest()
			got, set := m.HookMatchers[provide]
			if set != c.wantSet || (set && !reflect.DeepEqual(got, c.want)) {
				t.Fatalf("provide matchers %q (set %v), want %q (set %v)", got, set, c.want, c.wantSet)
			}
			for h, globs := range c.wantRest {
				if !reflect.DeepEqual(m.HookMatchers[h], globs) {
					t.Fatalf("%s matchers %q, want %q", h, m.HookMatchers[h], globs)
				}
			}
			if err := hooks.ValidateManifest(m, false); err != nil && !strings.Contains(err.Error(), "post_tool_call") {
				t.Fatal(err)
			}
			// The plugin's own map is left as it was.
			if hm := c.plugin.Info().HookMatchers; !reflect.DeepEqual(hm, before) {
				t.Fatalf("the plugin's HookMatchers changed: %v", hm)
			}
		})
	}
}

func TestAdaptDuplicateToolNames(t *testing.T) {
	for _, tools := range [][]sdk.Tool{
		{addTool(), addTool()},
		{sdk.NewTool("calc__pi", "", func(context.Context, struct{}) (any, error) { return 3, nil })},
	} {
		m := sdk.Adapt(&calculator{tools: tools}).Manifest()
		err := hooks.ValidateManifest(m, false)
		var me *hooks.ManifestError
		if !errors.As(err, &me) || !strings.Contains(me.Problem, "declared twice") {
			t.Fatalf("duplicate tools: %v", err)
		}
	}
}

func toolNames(specs []hooks.ToolSpec) []string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return names
}

type inner struct {
	X int `json:"x"`
}

// Fields of an unexported embedded struct are promoted, as encoding/json
// promotes them, and decoded into it.
func TestNewToolPromotesEmbeddedFields(t *testing.T) {
	type args struct {
		inner
		Y int `json:"y"`
	}
	tool, got := echoTool[*args]("t__embed")
	if s := string(tool.Spec().InputSchema); s != `{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x","y"],"additionalProperties":false}` {
		t.Fatalf("schema %s", s)
	}
	if r := tool.Call(t.Context(), json.RawMessage(`{"x":1,"y":2}`)); r.IsError || len(*got) != 1 || (*got)[0].X != 1 || (*got)[0].Y != 2 {
		t.Fatalf("%+v %+v", r, *got)
	}
}

// Whatever a model sends, decoding answers without panicking, and never
// accepts what the host's validation of the same schema would refuse.
func FuzzNewToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{"query":"q","origin":{"x":0,"y":0},"Plain":1}`,
		`{"query":"q","origin":{"x":0,"y":0},"Plain":1e3,"limit":20.0,"count":0.0e5}`,
		`{"query":"q","origin":{"x":-0,"y":1E-400},"Plain":-1,"labels":{"":1}}`,
		`{"query":"\u0000","origin":{"x":0,"y":0},"Plain":1,"nested":{"a":[]},"anything":[[[{}]]]}`,
		`{"tags":["a","a"],"when":"2026-01-02T03:04:05Z","extra":"x"}`,
		`null`, `[]`, `"x"`, `{"a":1,"a":2}`,
	} {
		f.Add(seed)
	}
	tool, _ := echoTool[everyKind]("t__every")
	f.Fuzz(func(t *testing.T, args string) {
		r := tool.Call(context.Background(), json.RawMessage(args))
		if !json.Valid([]byte(r.Content)) {
			t.Fatalf("result is not JSON: %q", r.Content)
		}
		if !r.IsError && strings.TrimSpace(args) != "" && strings.TrimSpace(args) != "null" {
			if err := schema.Validate(tool.Spec().InputSchema, json.RawMessage(args)); err != nil {
				t.Fatalf("%s: decoded, but the host refuses it: %v", args, err)
			}
		}
	})
}
