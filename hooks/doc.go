// Package hooks is the plugin author's vocabulary: the hook names and the
// catalogue that states each one's facts, a typed payload and answer for
// every hook, the Plugin interface (and Funcs, which adapts plain
// functions to it), the manifest a plugin describes itself with, and the
// rules an answer must keep. Package hookbus fires the hooks across the
// enabled plugins; this package imports nothing of hookhost's, so that a
// plugin depends on it alone.
//
// What an answer may hold is one set of rules (validate.go, CheckAnswer:
// message roles and tool calls in patches, tool names and schemas in lists
// and patches, the shape of a pre_tool_call decision, and a bound on what
// one answer carries), the same for an in-process plugin and a remote one,
// whichever protocol carried it. An answer that breaks them is malformed
// (a MalformedError) and counts as no opinion.
//
// A pre_tool_call decision holds at most one of a block, an ask and
// modified arguments. An ask (ApprovalRequest) holds the call until a
// person approves it. Across plugins a block wins over everything; else
// any ask holds the call, the person being asked once, shown every
// asker's reason joined by "; " in priority order; modifies apply in
// order all the same, and an approved call runs with them. Who asks is
// the embedding's choice (dispatch.Pipeline.Approve); with no one to ask,
// or denied, the call is blocked with the reason.
//
// Tool results are JSON. A result a plugin provides or transforms whose
// content is not JSON is taken as plain text and carried as a JSON string
// holding it ("sunny" becomes "\"sunny\""), the same for in-process and
// remote plugins; it is not a failure. ToolResult.AsJSON is that rule; the
// tool-call pipeline applies it to each result before anyone downstream
// (post_tool_call, the next transform, the model) sees it.
//
// # Context beside the conversation
//
// Two hooks let a plugin add text the model sees without rewriting what
// the user or a tool said. on_user_message fires once per new user
// message, before the first model call of its turn (in `hookhost chat`
// for each message; on the gateway for a request whose last message is
// the user's, not for one that only continues with tool results): a
// block ends the turn with its message as the answer and no model call,
// and context goes in a user message of its own right after the user's.
// post_tool_call_can_add_context fires per tool call (matchers apply)
// after transform_tool_result, on the final result, by a plain call: a
// stretch cannot hold it, since it must see every plugin's transform. Its
// context is appended to the result's content as the model sees it, after
// a blank line (tool results are text in every provider's shape). Both
// hooks' contexts concatenate in priority order, blank-line separated,
// wrapped in <additional_context>…</additional_context> markers
// (hookbus.ContextBlock), and are never shown to a gateway's client.
//
// post_tool_call stays an observer, asynchronous and never delaying a
// request: attaching context is the separate answering hook
// post_tool_call_can_add_context, named after the catalogue's _can_
// convention, so that auditors keep costing nothing on the request path
// and only the plugins that attach context are waited for.
//
// # Adding a hook
//
// The catalogue's facts (the hook's name, observer or not, tool-scoped or
// not, its place in a stretch or a model-side stage, the texts of when it fires, what a plugin
// returns and how answers combine, and, through its Funcs field, its
// payload and answer types) are stated once, in the table of
// catalogue.go. Go reads the table (Catalogue, Name.Observer,
// Name.ToolScoped, CatalogueFacts), and `make generate`
// (internal/gencatalogue) writes from it, with the service of
// plugins/proto/v1/plugin.proto and hookbus.Bus's methods:
//
//   - the Go SDK's per-hook interface and its adapter line
//     (plugins/sdk/hooks_gen.go), and its test Harness's method
//     (plugins/sdk/plugintest/hooks_gen.go);
//   - the Python SDK's catalogue (plugins/python/src/hookhost_plugin/_catalogue.py)
//     and its test Harness's method
//     (plugins/python/src/hookhost_plugin/_testing_catalogue.py);
//   - the TypeScript SDK's catalogue and answer types
//     (plugins/typescript/src/generated/catalogue.ts), its Hooks
//     interface (plugins/typescript/src/generated/hooks.ts) and its test
//     harness's method (plugins/typescript/src/generated/harness.ts);
//   - the Go conform plugin's default handler
//     (internal/conformance/goconform/hooks_gen.go);
//   - the hook tables of README.md, PROTOCOL.md (with its lists of
//     stretches and model stages), plugins/python/README.md and plugins/typescript/README.md.
//
// `make proto` regenerates the protobuf code of every language. Generated
// files are never edited by hand, and `make check-generated` (part of
// `make test`) fails when one is stale.
//
// What the table cannot say is code, written by hand. In the order to
// write it, with every name after the hook (transform_tool_result is
// TransformToolResult in Go and the protos, which write
// pre_api_request_mutable PreApiRequestMutable where Go writes
// PreAPIRequestMutable; transform_tool_result in Python;
// transformToolResult in TypeScript), so that one grep finds every place:
//
//  1. hooks/catalogue.go: the Name constant, the Funcs field and the
//     catalogue row; hooks/types.go: the payload and answer types, unless
//     the hook shares existing ones; hooks/validate.go too when its answer
//     is of a type with rules of its own.
//  2. hookbus/bus_hooks.go: the Bus method named after the hook, with its
//     combine rule.
//  3. Where it fires: internal/loop/loop.go for a hook of the model loop
//     (the one loop that conversation/session.go and the gateway's
//     internal/relay both run), and, for a hook of a model-side stage,
//     hookbus/modelstage.go (PreCall, PostCall) and the plugin's side of
//     a stage, internal/hookstretch/model.go (RunModelStage); for one of the tool pipeline,
//     hookbus/toolrun.go (ToolRun, which asks a stretch) and the two that
//     drive it stage by stage, dispatch/pipeline.go and
//     internal/relay/run.go (which also fires post_tool_call and
//     transform_tool_result for the tools a client runs); for one of a
//     session's start or end, conversation/session.go and
//     internal/relay/relay.go.
//  4. The wire: the RPC, and its messages unless it shares existing ones,
//     in plugins/proto/v1/plugin.proto (then `make proto`), and the row
//     and conversions in internal/wire/table.go and
//     internal/wire/convert.go.
//  5. The Python SDK: the HOOKS row in
//     plugins/python/src/hookhost_plugin/convert.py, and the dataclasses of
//     new types in plugins/python/src/hookhost_plugin/types.py.
//  6. The TypeScript SDK: the TABLE row in plugins/typescript/src/wire.ts,
//     the interfaces of new types in plugins/typescript/src/types.ts, and,
//     for a new answer type with rules, its checks in
//     plugins/typescript/src/validate.ts (keyed by answer type).
//  7. The docs, for new types or rules only: an answer's rules under
//     PROTOCOL.md's hook table, a new type's interface in
//     plugins/typescript/README.md.
//
// The conformance suite needs nothing: every conform plugin serves a hook
// its spec (internal/conformance/doc.go) does not name from the catalogue
// as data (the generated defaults, each SDK's list of hooks, the Plugin
// service of plugins/proto/v1/plugin.proto), and
// internal/conformance/conformance.go asks
// every hook of the catalogue. A hook that should behave in the suite as a
// hook of its own is specified there and given a handler in each conform
// plugin. A test Harness helper with a handier signature than the payload
// is written in internal/gencatalogue/harness.go.
//
// TestCatalogueHooksEverywhere (internal/gencatalogue) holds this list: it
// fails when a file named above is gone, and when a hook of the catalogue
// lacks its part in the Bus, the wire table, the protocol, an SDK, a
// harness, the Go conform plugin, PROTOCOL.md, an SDK README or the
// README. internal/wire fails when a hook lacks its wire row or disagrees
// on being an observer; TestCatalogueFacts fails when a Funcs field is
// missing.
package hooks
