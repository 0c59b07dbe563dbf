// Package sdk is what a hookhost plugin author imports to write a plugin in
// Go: a plugin is a type with an Info method that implements any of the
// per-hook interfaces (one per hook: ToolCallGuard, ResultProvider, ...),
// and its main function is one call to Serve.
//
//	type guard struct{ sdk.Base }
//
//	func (guard) Info() sdk.Info { return sdk.Info{Name: "guard", Version: "1.0.0"} }
//
//	func (guard) PreToolCall(ctx context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
//		if call.Name == "delete_everything" {
//			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not here"}}, nil
//		}
//		return nil, nil // no opinion
//	}
//
//	func main() { sdk.Serve(&guard{}) }
//
// The hooks a plugin subscribes to are derived from the interfaces it
// implements, so there is no second list to keep in sync: guard above is
// asked pre_tool_call and nothing else. Every handler may return (nil, nil)
// for "no opinion"; an error, a panic or a missed deadline counts as no
// opinion too, so a failing plugin never breaks a conversation.
//
// # Tools
//
// A plugin contributes tools to the model in one of two ways. Typed tools
// are Go functions, declared with NewTool and listed in Info.ToolFuncs; the
// SDK derives each tool's JSON schema from its argument struct, decodes the
// model's arguments strictly into it and answers
// pre_tool_call_can_provide_result for it:
//
//	type burnArgs struct {
//		Window *string `json:"window" enum:"today,7d,all" default:"today" desc:"period to total"`
//		Limit  int     `json:"limit" minimum:"1" maximum:"100"`
//	}
//
//	burn := sdk.NewTool("ledger__get_burn", "cost in USD over a window",
//		func(ctx context.Context, a burnArgs) (any, error) { ... })
//
// The schema follows encoding/json: a property per exported field, named
// by its json tag ("-" skips it, fields of embedded structs are promoted);
// a field is required unless it is a pointer or tagged omitempty (or
// omitzero); unknown properties are refused. Go types map onto JSON types:
// strings, booleans, integers (any int or uint type: "integer", with the
// Go type's range as minimum and maximum when it is narrower than 64
// bits), floats ("number"), slices ("array" with items), structs ("object")
// and map[string]T ("object" whose additionalProperties is T's schema);
// any and json.RawMessage (and other json.Unmarshalers) take any JSON
// value; a type that reads itself from text, such as time.Time, is a
// string. More tags speak to the model: desc (the property's description),
// enum (allowed strings, comma-separated), minimum and maximum (numbers),
// default (the value the tool assumes when the property is left out: the
// SDK only tells the model, it does not fill the field in, so it is for
// optional fields). On a pointer or a slice of scalars the tags apply to
// the value or to each element. The host validates a call's arguments
// against this schema before it asks the plugin, and the SDK decodes them
// by the same rules: the enum and the bounds are checked, 20.0 is an
// integer, a value that overflows the Go type is refused, and every
// problem is named by its path (args.items[2].name) in an error result the
// model can act on.
//
// A plugin may also answer tools itself: it declares them in Info.Tools and
// implements ResultProvider. Both can be combined; the ResultProvider is
// asked only for tools that are not typed.
//
// # Matchers
//
// Tool hooks are asked only for the tool names their matchers cover
// (path.Match globs). Info.Matchers apply to every tool hook;
// Info.HookMatchers gives one hook globs of its own. A plugin that audits
// every tool but answers only its own says so, and the host does not call
// it synchronously for any other tool:
//
//	func (p *ledger) Info() sdk.Info {
//		return sdk.Info{
//			Name: "ledger",
//			HookMatchers: map[hooks.Name][]string{
//				hooks.PostToolCall:                {},             // every tool
//				hooks.PreToolCallCanProvideResult: {"ledger__*"}, // its own
//			},
//		}
//	}
//
// With typed tools the SDK sets pre_tool_call_can_provide_result's
// matchers itself when the plugin does not: exactly the typed tools'
// names, plus the plugin's Matchers when it has a ResultProvider of its
// own (every tool, if those are empty).
//
// # Config
//
// A plugin's [plugins.entries.<name>.config] table reaches its Configure
// as JSON; DecodeConfig decodes it strictly into a struct. Name that
// struct in Info.Config and the manifest declares its keys: the host then
// refuses any other top-level key before Configure, naming the file, line
// and key, so a misspelt setting never looks active:
//
//	type guardConfig struct {
//		Deny []string `json:"deny"`
//	}
//
//	func (*guard) Info() sdk.Info { return sdk.Info{Name: "guard", Config: guardConfig{}} }
//
//	func (g *guard) Configure(_ context.Context, raw json.RawMessage) error {
//		return sdk.DecodeConfig(raw, &g.cfg)
//	}
//
// A plugin without a Configure declares that it takes no config, and the
// host refuses any table; Base's Configure, for a plugin that embeds Base
// and does not override it, refuses a non-empty table itself.
//
// # Lifecycle of a plugin process
//
// The host starts the binary with go-plugin's handshake (a magic cookie in
// the environment; started by hand, the binary prints a notice and exits
// 1). Serve derives and validates the manifest, prints the handshake line
// on stdout and serves gRPC, offering both plugin protocols: version 2 (one
// stream per plugin carrying every hook call, the default) and version 1
// (one RPC per hook call); go-plugin settles on the highest version the
// host speaks too, so a plugin built with this SDK works with older and
// newer hosts alike. The host then calls Describe, then Configure once with
// the plugin's config table, then hooks, concurrently, each under a
// deadline; a call the host stops waiting for is cancelled in the plugin
// (its handler's context ends). Over version 2 the manifest says
// model_stages, and the host asks a plugin's hooks of one model call's
// pre-call stage, and of its post-call stage, in one exchange each; the
// SDK calls the handlers one after the other, each under its own
// deadline, exactly as the host would have called them hook by hook.
// Serve also serves version 2's hook stream on the lane, the Unix socket
// the host hands the process as the descriptor HOOKHOST_LANE_FD names: the
// manifest says lane, and the host sends its hook calls there, which costs
// far less per call than gRPC's transport (PROTOCOL.md, "The lane"). Serve
// takes the descriptor close-on-exec and unsets the variable, so that
// processes the plugin starts neither inherit the lane nor see it. The
// process exits when the host shuts it
// down, and also when the host dies, however it died: on Linux, macOS and
// the BSDs, Serve watches its parent and, once it is gone, kills the
// plugin's process group (its children included) when the plugin leads
// one, or exits otherwise.
//
// # GOMAXPROCS
//
// Serve sets runtime.GOMAXPROCS(1) unless GOMAXPROCS is in the plugin's
// environment. A plugin mostly waits for its host, on the same machine;
// with more than one processor, each hand-off between the goroutine that
// reads a hook call and the one that answers it wakes a thread on another
// core, which costs more than a small handler's work. A plugin whose
// handlers need several cores lists GOMAXPROCS in its entry's env (the
// host's environment reaches a plugin only through that list), and the
// Go runtime then reads it as usual:
//
//	[plugins.entries.guard]
//	env = ["GOMAXPROCS"]   # with GOMAXPROCS=4 in hookhost's environment
//
// # Debugging a plugin
//
// Started by hand with HOOKHOST_PLUGIN_DEBUG=1 in its environment, for
// instance under a debugger, a plugin serves without the handshake and
// without watching its parent, prints one line to stdout,
//
//	HOOKHOST_REATTACH_PLUGINS='{"guard":{"Protocol":"grpc","ProtocolVersion":2,...}}'
//
// and serves until interrupted (Ctrl-C or SIGTERM; it exits 0). Put that
// line in the environment of hookhost (or the object in
// plugins.entries.<name>.reattach) and the host attaches to the running
// plugin instead of launching it, calls it like any other, and leaves it
// running when it exits:
//
//	# in the foreground: set breakpoints, then continue; the line appears
//	HOOKHOST_PLUGIN_DEBUG=1 dlv debug ./examples/guard
//	# or headless, for an editor to connect to 127.0.0.1:2345
//	go build -gcflags=all='-N -l' -o bin/plugins/guard ./examples/guard
//	HOOKHOST_PLUGIN_DEBUG=1 dlv exec bin/plugins/guard --headless --listen=127.0.0.1:2345 \
//		--api-version=2 --accept-multiclient --continue
//	# then, in another terminal, with the line the plugin printed
//	HOOKHOST_REATTACH_PLUGINS='{"guard":{...}}' ./bin/hookhost chat -c examples/guard/example.toml
//
// A call that stops at a breakpoint still has the host's deadline: past
// it, the host counts the call as no opinion and goes on. Raise timeout and
// tool_timeout in the plugin's entry while debugging.
//
// What crosses to the host is bounded: an answer over the host's
// max_result_size for the plugin (4 MiB by default) is dropped and counted
// against the plugin, text that is not valid UTF-8 arrives with U+FFFD in
// place of each bad sequence, and a tool result that is not JSON reaches the
// model as a JSON string holding the text.
//
// Stdout carries the handshake, so a plugin must never write to it; log
// through Base.Logger, which writes structured lines to stderr that the
// host re-levels into its own log. See Serve for what happens to stray
// writes.
//
// Package plugintest runs a plugin in-process against a real hookbus.Bus, so
// a plugin's behaviour can be tested without building a binary.
package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// Info is what a plugin says about itself. Matchers are path.Match globs of
// the tool names its tool hooks apply to (empty: every tool). Tools are the
// tools it contributes; their names must start with "<Name>__" unless the
// host's config grants allow_tool_override.
type Info struct {
	Name     string
	Version  string
	Matchers []string
	// HookMatchers gives one tool hook globs of its own, overriding
	// Matchers for it: audit every tool in post_tool_call, provide results
	// only for "<Name>__*".
	HookMatchers map[hooks.Name][]string
	// HookOptions are per-hook options (hooks.HookOptions): windows for
	// transform_llm_output, so that a streamed answer reaches the client
	// window by window instead of once whole, and decide_after_bytes for
	// post_llm_call_can_reissue, so that the hook decides on the opening:
	//
	//	HookOptions: map[hooks.Name]hooks.HookOptions{
	//		hooks.TransformLLMOutput: {WindowBytes: 4096, OverlapBytes: 256},
	//	}
	HookOptions map[hooks.Name]hooks.HookOptions
	// Tools are tools the plugin answers itself, in its ResultProvider.
	Tools []hooks.ToolSpec
	// ToolFuncs are tools written as Go functions (NewTool), which the SDK
	// answers.
	ToolFuncs []Tool
	// Config is a value of the struct the plugin decodes its config table
	// into (with DecodeConfig), e.g. guardConfig{}. The SDK declares that
	// struct's JSON names (see ConfigKeysOf) as the plugin's config keys in
	// its manifest, and the host then refuses, before Configure, a table
	// with any other key, naming its file and line. struct{}{} declares
	// that the plugin takes no config. Leave it nil to check the config
	// only in Configure; a plugin that implements no Configure declares no
	// keys, and one that embeds Base without a Configure of its own gets
	// Base's, which refuses any non-empty table (the host cannot tell the
	// two Configures apart, so only struct{}{} makes the host say so, with
	// the key's line).
	Config any
}

// Unserving is a plugin whose hooks depend on its config: its manifest
// lists every hook it implements, since the host reads it before
// Configure, and after Configure Unserved lists those it does not serve
// as configured, which the host then never asks (see hooks.Unserving). A
// hook only some configs need so costs the others nothing.
type Unserving = hooks.Unserving

// Plugin is the one method every plugin has.
type Plugin interface {
	Info() Info
}

// Configurer receives the plugin's config table from the host's config
// ([plugins.entries.<name>.config]) as a JSON object, once, before any hook.
// An error makes the host report the plugin as failed to start.
type Configurer interface {
	Configure(ctx context.Context, config json.RawMessage) error
}

// The per-hook interfaces (SessionStarter, ToolCallGuard, ResultProvider,
// ...), one per hook of the catalogue, are in hooks_gen.go, written from
// the catalogue.

// Base gives a plugin the defaults it would otherwise write by hand: a
// Configure for a plugin that takes no config, and a Logger. Embed it.
type Base struct {
	log hclog.Logger
}

var _ Configurer = Base{}

// Configure is for a plugin that takes no config: it accepts an empty
// table and refuses any other, since settings the plugin would ignore are
// settings the operator believes in for nothing. Override it to read one.
func (Base) Configure(_ context.Context, config json.RawMessage) error {
	var table map[string]json.RawMessage
	if len(bytes.TrimSpace(config)) == 0 {
		return nil
	}
	if err := json.Unmarshal(config, &table); err != nil {
		return fmt.Errorf("the config is not a table: %v", err)
	}
	if len(table) == 0 {
		return nil
	}
	return fmt.Errorf("the plugin takes no config, but the table sets %s (it has no Configure of its own)",
		strings.Join(slices.Sorted(maps.Keys(table)), ", "))
}

// Logger returns the plugin's logger, named after the plugin. Under Serve it
// writes JSON lines to the process's stderr, which the host parses into its
// own log with their levels; under Adapt (tests) it writes text to stderr.
func (b Base) Logger() hclog.Logger {
	if b.log != nil {
		return b.log
	}
	return hclog.Default()
}

// setLogger is how Adapt and Serve reach an embedded Base. It needs a
// pointer: a plugin passed by value keeps hclog.Default as its logger.
func (b *Base) setLogger(l hclog.Logger) { b.log = l }

type loggerSetter interface{ setLogger(hclog.Logger) }
